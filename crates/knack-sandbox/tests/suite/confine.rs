//! Every rule is checked against a real `sh` child: a write outside the writable roots must
//! fail with EACCES, so a sandbox that was silently not applied cannot pass.

use std::path::Path;
use std::process::{Command, Output};

use knack_sandbox::{ReadOnlyMethod, SandboxPolicy, confine, support};

fn sh(script: &str, policy: &SandboxPolicy) -> Output {
    let mut command = Command::new("sh");
    command.arg("-c").arg(script);
    confine(&mut command, policy).expect("sandbox available on this kernel");
    command.output().unwrap()
}

fn workspace_policy(root: &Path) -> SandboxPolicy {
    SandboxPolicy {
        writable_roots: vec![root.join("work")],
        ..SandboxPolicy::default()
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn this_kernel_has_landlock() {
    // CI and development machines run a kernel with Landlock; a build where
    // the probe fails must not pass quietly.
    assert!(support().filesystem, "{}", support().describe());
}

#[test]
fn writes_outside_the_workspace_fail_with_eacces_and_inside_succeed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("work")).unwrap();
    std::fs::create_dir_all(dir.path().join("victim")).unwrap();
    std::fs::write(dir.path().join("victim/keep.txt"), "precious").unwrap();
    let policy = workspace_policy(dir.path());

    let out = sh(
        &format!(
            "cd {}; echo ok > inside.txt && rm -rf ../victim/keep.txt; echo gone > ../victim/new.txt",
            dir.path().join("work").display()
        ),
        &policy,
    );
    assert!(dir.path().join("work/inside.txt").exists());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("victim/keep.txt")).unwrap(),
        "precious"
    );
    assert!(!dir.path().join("victim/new.txt").exists());
    assert!(
        stderr(&out).contains("Permission denied"),
        "{}",
        stderr(&out)
    );

    // The raw errno, from a tool that reports it: EACCES (13).
    let out = sh(
        &format!(
            "python3 -c \"import os\ntry:\n  open('{}','w')\nexcept OSError as e:\n  print(e.errno)\"",
            dir.path().join("victim/x").display()
        ),
        &policy,
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "13");
}

#[test]
fn an_empty_policy_makes_everything_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let out = sh(
        &format!("touch {}/x", dir.path().display()),
        &SandboxPolicy::default(),
    );
    assert!(!out.status.success());
    assert!(!dir.path().join("x").exists());
    // Reading still works, and so does /dev/null.
    let out = sh(
        "cat /etc/passwd >/dev/null && echo read",
        &SandboxPolicy::default(),
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "read",
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_read_only_folder_beneath_a_writable_root_stays_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(work.join(".knack")).unwrap();
    std::fs::write(work.join(".knack/config.yaml"), "agent: {}\n").unwrap();
    let policy = SandboxPolicy {
        writable_roots: vec![work.clone()],
        read_only: vec![work.join(".knack")],
        ..SandboxPolicy::default()
    };
    let mut command = Command::new("sh");
    command.arg("-c").arg(format!(
        "cd {}; echo 'agent: {{yolo: true}}' > .knack/config.yaml; touch .knack/new; mkdir -p src && echo ok > src/a.txt",
        work.display()
    ));
    let confinement = confine(&mut command, &policy).unwrap();
    let out = command.output().unwrap();
    assert_eq!(
        std::fs::read_to_string(work.join(".knack/config.yaml")).unwrap(),
        "agent: {}\n",
        "{}",
        stderr(&out)
    );
    assert!(!work.join(".knack/new").exists());
    assert!(work.join("src/a.txt").exists(), "{}", stderr(&out));
    match confinement.read_only {
        ReadOnlyMethod::MountNamespace => {}
        ReadOnlyMethod::NarrowedRoots(closed) => {
            assert!(closed.contains(&work.canonicalize().unwrap()))
        }
        ReadOnlyMethod::NotNeeded => panic!("a protected folder was ignored"),
    }
}

#[test]
fn hidden_files_read_empty_where_a_mount_namespace_is_available() {
    if !support().mount_namespace {
        eprintln!("skipped: no mount namespace for this user");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join(".env");
    std::fs::write(&secret, "KEY=sk-very-secret\n").unwrap();
    let policy = SandboxPolicy {
        hidden_files: vec![secret.clone()],
        ..SandboxPolicy::default()
    };
    let out = sh(&format!("cat {}", secret.display()), &policy);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(out.stdout, b"");
    // The host still sees the file as it was.
    assert!(
        std::fs::read_to_string(&secret)
            .unwrap()
            .contains("sk-very")
    );
}

#[test]
fn tcp_is_blocked_unless_the_policy_allows_network() {
    if !support().network {
        eprintln!("skipped: this kernel has no Landlock network rules");
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!(
        "python3 -c \"import socket\ntry:\n  socket.create_connection(('127.0.0.1',{port}),timeout=5)\n  print('connected')\nexcept OSError as e:\n  print('refused', e.errno)\""
    );
    let out = sh(&script, &SandboxPolicy::default());
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("refused 13"),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        stderr(&out)
    );
    let open = SandboxPolicy {
        network: true,
        ..SandboxPolicy::default()
    };
    let out = sh(&script, &open);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "connected");
}

#[test]
fn signals_cannot_reach_processes_outside_the_sandbox() {
    if !support().signals {
        eprintln!("skipped: this kernel has no Landlock signal scoping");
        return;
    }
    let mut outside = Command::new("sleep").arg("30").spawn().unwrap();
    let out = sh(
        &format!("kill -9 {}", outside.id()),
        &SandboxPolicy::default(),
    );
    assert!(!out.status.success(), "the kill went through");
    assert!(
        outside.try_wait().unwrap().is_none(),
        "the outside process died"
    );
    outside.kill().unwrap();
    outside.wait().unwrap();
}

#[test]
fn udp_and_raw_sockets_are_blocked_but_unix_sockets_work_without_network() {
    let script = "python3 -c \"import socket\nfor family, kind in [(socket.AF_INET, socket.SOCK_DGRAM), (socket.AF_INET6, socket.SOCK_DGRAM), (socket.AF_UNIX, socket.SOCK_STREAM)]:\n  try:\n    socket.socket(family, kind).close()\n    print('open')\n  except OSError as e:\n    print('refused', e.errno)\"";
    let out = sh(script, &SandboxPolicy::default());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "refused 13\nrefused 13\nopen\n",
        "{}",
        stderr(&out)
    );
    let open = SandboxPolicy {
        network: true,
        ..SandboxPolicy::default()
    };
    let out = sh(script, &open);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "open\nopen\nopen\n");
}

#[test]
fn a_new_session_leads_its_own_group_without_a_terminal() {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg("echo $$; cut -d' ' -f5,6,7 /proc/$$/stat");
    knack_sandbox::new_session(&mut command);
    confine(&mut command, &SandboxPolicy::default()).unwrap();
    let out = command.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let pid = lines.next().unwrap();
    // Fields 5, 6 and 7 of /proc/PID/stat: process group, session, tty (0 = none).
    let ids: Vec<&str> = lines.next().unwrap().split(' ').collect();
    assert_eq!(ids, [pid, pid, "0"], "{text}{}", stderr(&out));
}
