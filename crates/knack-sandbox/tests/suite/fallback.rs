//! The fallback for kernels that refuse user namespaces, forced on this machine: the support
//! probe runs once per process, so the checks run in a second copy of this test binary
//! started with the switch set.

use std::process::Command;

use knack_sandbox::{FORCE_FALLBACK_ENV, Method, ReadOnlyMethod, SandboxPolicy, confine, support};

use super::confine::{sh, stderr, stdout};

#[test]
fn the_fallback_holds_the_core_rules() {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .env(FORCE_FALLBACK_ENV, "1")
        .args([
            "--exact",
            "suite::fallback::in_the_fallback",
            "--include-ignored",
            "--test-threads=1",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[ignore = "run by the_fallback_holds_the_core_rules with the fallback forced"]
fn in_the_fallback() {
    assert_eq!(support().method, Method::Narrowing);
    assert!(support().forced_fallback);
    assert!(support().degraded_reason().is_some());

    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("notes.txt"), "mine\n").unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(work.join(".knack")).unwrap();
    std::fs::create_dir_all(work.join("src")).unwrap();
    // The link a command planted before `.knack/` existed.
    std::os::unix::fs::symlink(outside.path(), work.join("vendor")).unwrap();
    let policy = SandboxPolicy {
        writable_roots: vec![work.clone()],
        read_only: vec![work.join(".knack")],
        ..SandboxPolicy::default()
    };
    let mut command = Command::new("sh");
    command.arg("-c").arg(format!(
        "cd {}; echo owned > vendor/notes.txt; echo planted > vendor/new; \
         echo x > .knack/config.yaml; echo ok > src/a.txt",
        work.display()
    ));
    let confinement = confine(&mut command, &policy).unwrap();
    let out = command.output().unwrap();
    assert!(matches!(
        confinement.read_only,
        ReadOnlyMethod::NarrowedRoots(_)
    ));
    assert_eq!(
        std::fs::read_to_string(outside.path().join("notes.txt")).unwrap(),
        "mine\n",
        "{}",
        stderr(&out)
    );
    assert!(!outside.path().join("new").exists());
    assert!(!work.join(".knack/config.yaml").exists());
    assert!(work.join("src/a.txt").exists(), "{}", stderr(&out));

    // The seccomp layer is the same without namespaces.
    let out = sh(
        "python3 -c \"import socket\ntry:\n  socket.socket(socket.AF_UNIX)\n  print('open')\nexcept OSError as e:\n  print('refused', e.errno)\"",
        &SandboxPolicy::default(),
    );
    assert_eq!(stdout(&out).trim(), "refused 13", "{}", stderr(&out));
}
