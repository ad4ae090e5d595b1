//! What the sandbox adds to starting a command: `true` spawned and reaped plainly, then under
//! a bare workspace policy, then under a policy like knack's (protected paths that exist,
//! a missing one masked, a hidden file, a process limit), and through `run` (output pipe,
//! poll, kill guard). With namespaces each sandboxed spawn makes a user, mount and PID
//! namespace and applies Landlock and seccomp. Prints `BENCH` lines that
//! `cargo xtask bench sandbox` reads.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use knack_sandbox::{RunLimits, SandboxPolicy, confine_guarded, run, support};

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

fn fail(what: &str) -> ! {
    eprintln!("{what}");
    std::process::exit(1);
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
            let masks = match policy.map(|p| confine_guarded(&mut command, p)) {
                Some(Err(e)) => fail(&format!("the sandbox is not available: {e}")),
                Some(Ok((_, masks))) => Some(masks),
                None => None,
            };
            match command.status() {
                Ok(status) if status.success() => {}
                other => fail(&format!("a sandboxed `true` failed: {other:?}")),
            }
            drop(masks);
            started.elapsed()
        })
        .collect()
}

fn time_runs(policy: &SandboxPolicy) -> Vec<Duration> {
    (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let finished = run(
                Command::new("/bin/true"),
                Some(policy),
                None,
                RunLimits::new(Duration::from_secs(30)),
                None,
                &mut |_| {},
            );
            if !matches!(finished, Ok(ref f) if f.ending == knack_sandbox::Ending::Exited(0)) {
                fail(&format!("a sandboxed `true` failed: {finished:?}"));
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
        fail("cannot make a temp folder");
    };
    let work = dir.path().join("work");
    let home = dir.path().join("home");
    for (path, is_dir) in [
        (work.join(".git"), true),
        (home.clone(), true),
        (home.join(".env"), false),
    ] {
        let made = if is_dir {
            std::fs::create_dir_all(&path)
        } else {
            std::fs::write(&path, "KEY=x\n")
        };
        if let Err(e) = made {
            fail(&format!(
                "cannot prepare {}: {e}",
                Path::new(&path).display()
            ));
        }
    }
    let workspace = SandboxPolicy {
        writable_roots: vec![work.clone()],
        ..SandboxPolicy::default()
    };
    let like_knack = SandboxPolicy {
        writable_roots: vec![work.clone(), dir.path().to_path_buf()],
        read_only: vec![
            home.clone(),
            work.join(".git"),
            work.join(".knack"),
            work.join(".agents"),
        ],
        hidden_files: vec![home.join(".env")],
        max_processes: Some(2048),
        ..SandboxPolicy::default()
    };
    // Warm-up: page cache, the support probe.
    let _ = time_spawns(Some(&like_knack));
    let plain = report("spawn_plain", time_spawns(None));
    let bare = report("spawn_sandboxed", time_spawns(Some(&workspace)));
    let full = report("spawn_sandboxed_like_knack", time_spawns(Some(&like_knack)));
    let through_run = report("run_sandboxed_like_knack", time_runs(&like_knack));
    for (name, value) in [
        ("overhead_sandboxed", bare),
        ("overhead_sandboxed_like_knack", full),
        ("overhead_run_like_knack", through_run),
    ] {
        println!("BENCH {name}={:.4} ms n={RUNS}", (value - plain).max(0.0));
    }
}
