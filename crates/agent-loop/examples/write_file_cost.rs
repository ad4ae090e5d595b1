//! What a `write_file` through the boundary costs: the gate (path resolution, skill-folder
//! and protected-folder rules) and the fd-relative replacement (openat2 beneath the workspace,
//! temporary file, rename; no fsync, see tools/beneath.rs). `cargo xtask bench file-write` runs it.
//!
//! Prints `BENCH name=<median> ms min=… max=… n=…` lines: `write_file` (a 4 KB file in a
//! folder that exists; target ≤ 2 ms), `write_file_new_folders` (two missing folders made
//! first) and `patch` (read, patch and replace the same file).

use std::time::Instant;

use agent_loop::tools::{ToolContext, ToolRegistry};
use knack_config::{Config, KnackHome};
use serde_json::json;
use test_support::print_bench;

const WARMUP: usize = 50;
const SAMPLES: usize = 1_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tmp = tempfile::tempdir()?;
    let root = tmp.path().canonicalize()?;
    let home = KnackHome::at(root.join("home"));
    let cwd = root.join("work");
    std::fs::create_dir_all(cwd.join("src"))?;
    std::fs::create_dir_all(home.skills_dir())?;
    let ctx = ToolContext::new(home, Config::default(), cwd.clone(), "bench");
    let registry = ToolRegistry::for_toolsets(&["file".to_owned()]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let content = format!("alpha\n{}", "x".repeat(4_090));
    println!("openat2 beneath {}", cwd.display());

    let run = |name: &str, args: &dyn Fn(usize) -> serde_json::Value| {
        let tool = if name == "patch" {
            "patch"
        } else {
            "write_file"
        };
        let mut samples = Vec::with_capacity(SAMPLES);
        for round in 0..WARMUP + SAMPLES {
            let started = Instant::now();
            let reply = runtime.block_on(registry.dispatch_value(tool, args(round), &ctx));
            let took = started.elapsed();
            match reply {
                Ok(reply) if reply.success() => {}
                Ok(reply) => return Err(format!("{name} failed: {}", reply.content())),
                Err(e) => return Err(format!("{name} failed: {e}")),
            }
            if round >= WARMUP {
                samples.push(took);
            }
        }
        print_bench(name, samples);
        Ok(())
    };
    run(
        "write_file",
        &|_| json!({"path": "src/lib.rs", "content": content}),
    )?;
    run(
        "write_file_new_folders",
        &|round| json!({"path": format!("gen/{round}/deep/file.rs"), "content": content}),
    )?;
    // Back and forth, so every round has exactly one place to change.
    run("patch", &|round| {
        let (old, new) = if round % 2 == 0 {
            ("alpha", "omega")
        } else {
            ("omega", "alpha")
        };
        json!({"path": "src/lib.rs", "old_string": old, "new_string": new})
    })?;
    Ok(())
}
