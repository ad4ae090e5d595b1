//! What the sandbox adds to starting a command: `true` spawned and reaped plainly, then under
//! the default workspace policy (Landlock alone), then with a protected folder and a hidden
//! file beneath the writable root (a mount namespace as well, where one can be made).
//! Prints `BENCH` lines that `cargo xtask bench sandbox` reads.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use knack_sandbox::{SandboxPolicy, confine, support};

const RUNS: usize = 300;

fn median_ms(mut samples: Vec<Duration>) -> (f64, f64, f64) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    (
        ms(samples[samples.len() / 2]),
        ms(samples[0]),
        ms(samples[samples.len() - 1]),
    )
}

fn time_spawns(policy: Option<&SandboxPolicy>) -> Vec<Duration> {
    (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let mut command = Command::new("/bin/true");
            command
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            if let Some(policy) = policy
                && let Err(e) = confine(&mut command, policy)
            {
                eprintln!("the sandbox is not available: {e}");
                std::process::exit(1);
            }
            match command.status() {
                Ok(status) if status.success() => {}
                other => {
                    eprintln!("a sandboxed `true` failed: {other:?}");
                    std::process::exit(1);
                }
            }
            started.elapsed()
        })
        .collect()
}

fn report(name: &str, samples: Vec<Duration>) -> f64 {
    let (median, min, max) = median_ms(samples);
    println!("BENCH {name}={median:.4} ms min={min:.4} max={max:.4} n={RUNS}");
    median
}

fn main() {
    println!("sandbox support: {}", support().describe());
    let Ok(dir) = tempfile::tempdir() else {
        eprintln!("cannot make a temp folder");
        std::process::exit(1);
    };
    let work = dir.path().join("work");
    let protected = work.join(".knack");
    let secret = dir.path().join(".env");
    for (path, is_dir) in [(&protected, true), (&secret, false)] {
        let made = if is_dir {
            std::fs::create_dir_all(path)
        } else {
            std::fs::write(path, "KEY=x\n")
        };
        if let Err(e) = made {
            eprintln!("cannot prepare {}: {e}", Path::new(path).display());
            std::process::exit(1);
        }
    }
    let workspace = SandboxPolicy {
        writable_roots: vec![work.clone()],
        ..SandboxPolicy::default()
    };
    let protecting = SandboxPolicy {
        writable_roots: vec![work],
        read_only: vec![protected],
        hidden_files: vec![secret],
        ..SandboxPolicy::default()
    };
    // Warm-up: page cache, the support probe.
    let _ = time_spawns(Some(&protecting));
    let plain = report("spawn_plain", time_spawns(None));
    let landlock = report("spawn_landlock", time_spawns(Some(&workspace)));
    let full = report("spawn_landlock_mounts", time_spawns(Some(&protecting)));
    println!(
        "BENCH overhead_landlock={:.4} ms n={RUNS}",
        (landlock - plain).max(0.0)
    );
    println!(
        "BENCH overhead_landlock_mounts={:.4} ms n={RUNS}",
        (full - plain).max(0.0)
    );
}
