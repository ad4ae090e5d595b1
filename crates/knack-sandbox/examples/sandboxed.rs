//! Runs `sh -c SCRIPT` under a workspace policy, for trying the sandbox by hand:
//! `cargo run -p knack-sandbox --example sandboxed -- WORKDIR SCRIPT [PROTECTED...]`.
//! The working directory and the temp folder are writable; each PROTECTED path stays
//! read-only (or is masked). Prints the output, how it ended and what was put in place.

use std::path::PathBuf;
use std::time::Duration;

use knack_sandbox::{RunLimits, SandboxPolicy, run, support};

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(workdir), Some(script)) = (args.next(), args.next()) else {
        eprintln!("usage: sandboxed WORKDIR SCRIPT [PROTECTED...]");
        std::process::exit(2);
    };
    let policy = SandboxPolicy {
        writable_roots: vec![PathBuf::from(&workdir), std::env::temp_dir()],
        read_only: args.map(PathBuf::from).collect(),
        max_processes: Some(64),
        ..SandboxPolicy::default()
    };
    eprintln!("support: {}", support().describe());
    let mut command = std::process::Command::new("sh");
    command.arg("-c").arg(script).current_dir(&workdir);
    let mut out = Vec::new();
    let finished = run(
        command,
        Some(&policy),
        None,
        RunLimits::new(Duration::from_secs(20)),
        None,
        &mut |bytes| out.extend_from_slice(bytes),
    );
    print!("{}", String::from_utf8_lossy(&out));
    eprintln!("{finished:?}");
}
