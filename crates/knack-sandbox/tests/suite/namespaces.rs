//! What only the namespaces give: a private `/proc`, metadata outside the roots that cannot
//! change, protected links and missing paths that cannot be replaced or created, pinned
//! parents, and (through `run`) a command whose processes all end with it.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use knack_sandbox::{CappedOutput, Ending, RunLimits, SandboxPolicy, StopHandle, run};

use super::confine::{sh, stderr, stdout};

fn workspace(dir: &std::path::Path) -> SandboxPolicy {
    SandboxPolicy {
        writable_roots: vec![dir.join("work")],
        ..SandboxPolicy::default()
    }
}

fn run_sh(script: &str, policy: &SandboxPolicy, timeout: Duration) -> (Ending, String) {
    let mut command = Command::new("sh");
    command.arg("-c").arg(script);
    let mut output = CappedOutput::new(64 * 1024);
    let finished = run(
        command,
        Some(policy),
        None,
        RunLimits::new(timeout),
        None,
        &mut |bytes| output.push(bytes),
    )
    .unwrap();
    (finished.ending, output.text())
}

/// Whether a live process anywhere on the machine has `token` among its arguments.
fn runs_with(token: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        let dir = entry.path();
        let alive = std::fs::read_to_string(dir.join("stat")).is_ok_and(|stat| {
            !matches!(
                stat.rsplit_once(") ")
                    .and_then(|(_, rest)| rest.chars().next()),
                Some('Z' | 'X')
            )
        });
        alive
            && std::fs::read(dir.join("cmdline"))
                .is_ok_and(|c| c.split(|b| *b == 0).any(|arg| arg == token.as_bytes()))
    })
}

/// A `sleep` argument no other process on the machine has.
fn unique_sleep(tag: u32) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{}.{nanos:09}{}", 800 + tag, std::process::id())
}

#[test]
fn proc_shows_only_the_commands_own_processes() {
    // cargo gives this test process CARGO_MANIFEST_DIR; the command does not get it, so
    // finding it in any /proc/*/environ means an outside environment was read (the init
    // is a fork of this process and never runs another program).
    let mut command = Command::new("sh");
    command.env_remove("CARGO_MANIFEST_DIR").arg("-c").arg(
        "echo ppid=$PPID; echo pids=$(ls /proc | grep -c '^[0-9]'); \
         echo hits=$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c '^CARGO_MANIFEST_DIR=')",
    );
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    let mut output = CappedOutput::new(4096);
    run(
        command,
        Some(&SandboxPolicy::default()),
        None,
        RunLimits::new(Duration::from_secs(30)),
        None,
        &mut |bytes| output.push(bytes),
    )
    .unwrap();
    let out = output.text();
    // The shell's parent is the namespace's init (pid 1); only a handful of pids exist,
    // and no process outside is visible, so none of their environments can be read.
    assert!(out.contains("ppid=1"), "{out}");
    let pids: usize = out
        .split("pids=")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(pids <= 6, "{out}");
    assert!(out.contains("hits=0"), "{out}");
}

#[test]
fn metadata_outside_the_roots_cannot_change() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("work")).unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "x").unwrap();
    let before = std::fs::metadata(&victim).unwrap();
    let v = victim.display();
    let out = sh(
        &format!(
            "chmod 4777 {v}; chown 1:1 {v}; touch -d 2001-01-01 {v}; \
             python3 -c \"import os; os.setxattr('{v}', 'user.k', b'1')\" 2>&1 | tail -1"
        ),
        &workspace(dir.path()),
    );
    let after = std::fs::metadata(&victim).unwrap();
    assert_eq!(
        (after.mode(), after.uid(), after.gid(), after.mtime()),
        (before.mode(), before.uid(), before.gid(), before.mtime()),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("Read-only file system"),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("Read-only file system"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_protected_link_cannot_be_replaced_and_its_target_stays_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(work.join("real")).unwrap();
    std::os::unix::fs::symlink(work.join("real"), work.join(".knack")).unwrap();
    let policy = SandboxPolicy {
        read_only: vec![work.join(".knack")],
        ..workspace(dir.path())
    };
    let out = sh(
        &format!(
            "cd {}; rm .knack; ln -sfn /tmp .knack; mv .knack gone; touch real/planted; echo ok > other",
            work.display()
        ),
        &policy,
    );
    assert_eq!(
        std::fs::read_link(work.join(".knack")).unwrap(),
        work.join("real"),
        "{}",
        stderr(&out)
    );
    assert!(!work.join("real/planted").exists());
    assert!(work.join("other").exists(), "{}", stderr(&out));
}

#[test]
fn a_missing_protected_path_cannot_be_created_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let policy = SandboxPolicy {
        read_only: vec![work.join(".agents/skills"), work.join(".knack")],
        ..workspace(dir.path())
    };
    let (ending, out) = run_sh(
        &format!(
            "cd {}; mkdir -p .agents/skills/x; mkdir .knack; rm -f .knack; echo ok > fine; ls -a",
            work.display()
        ),
        &policy,
        Duration::from_secs(30),
    );
    assert_eq!(ending, Ending::Exited(0), "{out}");
    let mut left: Vec<String> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["fine"], "{out}");
}

#[test]
fn the_parents_of_a_protected_path_cannot_be_renamed() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let home = work.join("a/b/home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.yaml"), "safe\n").unwrap();
    let policy = SandboxPolicy {
        read_only: vec![home.clone()],
        ..workspace(dir.path())
    };
    let out = sh(
        &format!(
            "cd {}; mv a a2; mv a/b a/b2; mkdir -p a/b/home; echo evil > a/b/home/config.yaml",
            work.display()
        ),
        &policy,
    );
    assert_eq!(
        std::fs::read_to_string(home.join("config.yaml")).unwrap(),
        "safe\n",
        "{}",
        stderr(&out)
    );
    assert!(!work.join("a2").exists() && !work.join("a/b2").exists());
}

#[test]
fn a_git_file_protects_the_git_folder_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let gitdir = work.join("repo/.git/worktrees/wt");
    std::fs::create_dir_all(gitdir.join("hooks")).unwrap();
    std::fs::create_dir_all(work.join("wt")).unwrap();
    std::fs::write(
        work.join("wt/.git"),
        format!("gitdir: {}\n", gitdir.display()),
    )
    .unwrap();
    let policy = SandboxPolicy {
        read_only: vec![work.join("wt/.git")],
        ..workspace(dir.path())
    };
    let out = sh(
        &format!(
            "echo evil > {0}/hooks/post-checkout; echo 'gitdir: /tmp' > {1}/wt/.git",
            gitdir.display(),
            work.display()
        ),
        &policy,
    );
    assert!(
        !gitdir.join("hooks/post-checkout").exists(),
        "{}",
        stderr(&out)
    );
    assert!(
        std::fs::read_to_string(work.join("wt/.git"))
            .unwrap()
            .contains("worktrees/wt")
    );
}

#[test]
fn background_and_detached_processes_end_with_the_command() {
    let tokens: Vec<String> = (0..3).map(unique_sleep).collect();
    let (ending, out) = run_sh(
        &format!(
            "sleep {} & setsid sleep {} & (nohup sleep {} > /dev/null 2>&1 &); echo started",
            tokens[0], tokens[1], tokens[2]
        ),
        &SandboxPolicy::default(),
        Duration::from_secs(60),
    );
    assert_eq!(ending, Ending::Exited(0), "{out}");
    for token in &tokens {
        assert!(!runs_with(token), "sleep {token} survived");
    }
}

#[test]
fn a_timeout_kills_everything_and_returns() {
    let token = unique_sleep(5);
    let (ending, _) = run_sh(
        &format!("setsid sleep {token} & sleep 1000"),
        &SandboxPolicy::default(),
        Duration::from_millis(500),
    );
    assert_eq!(ending, Ending::TimedOut);
    assert!(!runs_with(&token));
}

#[test]
fn a_stop_kills_everything_and_returns() {
    let token = unique_sleep(6);
    let stop = StopHandle::new().unwrap();
    let stopper = stop.clone();
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("echo ready; exec sleep {token}"));
    let mut ready = false;
    let finished = run(
        command,
        Some(&SandboxPolicy::default()),
        None,
        RunLimits::new(Duration::from_secs(120)),
        Some(&stop),
        &mut |bytes| {
            // Stop once the command said it runs: an event, not a delay.
            if !ready && bytes.starts_with(b"ready") {
                ready = true;
                stopper.stop();
            }
        },
    )
    .unwrap();
    assert_eq!(finished.ending, Ending::Stopped);
    assert!(!runs_with(&token));
}

#[test]
fn input_is_fed_and_exit_codes_pass_through() {
    let mut command = Command::new("sh");
    command.arg("-c").arg("tr a-z A-Z; exit 7");
    let mut output = CappedOutput::new(1024);
    let finished = run(
        command,
        Some(&SandboxPolicy::default()),
        Some(b"hello"),
        RunLimits::new(Duration::from_secs(30)),
        None,
        &mut |bytes| output.push(bytes),
    )
    .unwrap();
    assert_eq!(finished.ending, Ending::Exited(7));
    assert_eq!(output.text(), "HELLO");
    assert!(finished.output_complete);
}

#[test]
fn the_outside_policy_writes_anywhere_but_knacks_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.yaml"), "safe\n").unwrap();
    let elsewhere: PathBuf = dir.path().join("elsewhere.txt");
    let (ending, out) = run_sh(
        &format!(
            "echo yes > {}; echo evil > {}/config.yaml; echo net=$(python3 -c 'import socket; socket.socket(socket.AF_INET); print(1)')",
            elsewhere.display(),
            home.display()
        ),
        &SandboxPolicy::outside(vec![home.clone()]),
        Duration::from_secs(30),
    );
    assert_eq!(ending, Ending::Exited(0), "{out}");
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "yes\n");
    assert_eq!(
        std::fs::read_to_string(home.join("config.yaml")).unwrap(),
        "safe\n"
    );
    assert!(
        out.contains("Read-only file system") && out.contains("net=1"),
        "{out}"
    );
}

/// The process limit: `RLIMIT_NPROC` in the user namespace for other users, a pids cgroup
/// for root (whom the kernel exempts from the rlimit).
#[test]
fn the_process_limit_holds() {
    assert_ne!(
        knack_sandbox::support().pids_limit,
        knack_sandbox::PidsLimit::Unavailable,
        "no process limit on this machine"
    );
    let policy = SandboxPolicy {
        max_processes: Some(16),
        ..SandboxPolicy::default()
    };
    let token = unique_sleep(8);
    let (_, out) = run_sh(
        &format!("for i in $(seq 40); do sleep {token} & done; echo all-started"),
        &policy,
        Duration::from_secs(60),
    );
    assert!(!out.contains("all-started"), "{out}");
    assert!(!runs_with(&token));
}
