//! Every rule is checked against a real `sh` child: a write outside the writable roots must
//! fail, so a sandbox that was silently not applied cannot pass. These run with the method
//! this machine supports (namespaces here); `fallback.rs` repeats the core ones without.

use std::path::Path;
use std::process::{Command, Output};

use knack_sandbox::{Method, ReadOnlyMethod, SandboxPolicy, confine, support};

pub(crate) fn sh(script: &str, policy: &SandboxPolicy) -> Output {
    let mut command = Command::new("sh");
    command.arg("-c").arg(script);
    let (_, masks) =
        knack_sandbox::confine_guarded(&mut command, policy).expect("sandbox available");
    let out = command.output().unwrap();
    drop(masks);
    out
}

fn workspace_policy(root: &Path) -> SandboxPolicy {
    SandboxPolicy {
        writable_roots: vec![root.join("work")],
        ..SandboxPolicy::default()
    }
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The errno a refused write outside the roots gets: the read-only mount answers first
/// with namespaces (EROFS), Landlock without (EACCES).
fn refused_errno() -> &'static str {
    match support().method {
        Method::Namespaces => "30",
        Method::Narrowing => "13",
    }
}

#[test]
fn this_kernel_has_landlock_and_namespaces() {
    // CI and development machines run a kernel with Landlock and user namespaces; a build
    // where a probe fails must not pass quietly.
    assert!(support().filesystem, "{}", support().describe());
    assert_eq!(
        support().method,
        Method::Namespaces,
        "{}",
        support().describe()
    );
    assert!(support().seccomp);
}

#[test]
fn writes_outside_the_workspace_fail_and_inside_succeed() {
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
    assert!(
        dir.path().join("work/inside.txt").exists(),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("victim/keep.txt")).unwrap(),
        "precious"
    );
    assert!(!dir.path().join("victim/new.txt").exists());

    // The raw errno, from a tool that reports it.
    let out = sh(
        &format!(
            "python3 -c \"import os\ntry:\n  open('{}','w')\nexcept OSError as e:\n  print(e.errno)\"",
            dir.path().join("victim/x").display()
        ),
        &policy,
    );
    assert_eq!(stdout(&out).trim(), refused_errno(), "{}", stderr(&out));
}

#[test]
fn a_relative_path_in_the_working_directory_is_writable() {
    // The child enters its working directory again after the mounts: the directory `std`
    // entered first lies beneath them, read-only.
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut command = Command::new("sh");
    command.arg("-c").arg("echo hi > rel.txt && pwd");
    command.current_dir(&work);
    confine(&mut command, &workspace_policy(dir.path())).unwrap();
    let out = command.output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(work.join("rel.txt")).unwrap(),
        "hi\n"
    );
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
    assert_eq!(stdout(&out).trim(), "read", "{}", stderr(&out));
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
        "cd {}; echo 'agent: {{yolo: true}}' > .knack/config.yaml; touch .knack/new; \
         mv .knack .knack-old; rm -rf .knack; mkdir -p src && echo ok > src/a.txt",
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
    assert!(!work.join(".knack-old").exists());
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
fn hidden_files_read_empty_for_every_user() {
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
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!(
        "python3 -c \"import socket\ntry:\n  socket.create_connection(('127.0.0.1',{port}),timeout=5)\n  print('connected')\nexcept OSError as e:\n  print('refused', e.errno)\""
    );
    let out = sh(&script, &SandboxPolicy::default());
    assert!(
        stdout(&out).starts_with("refused 13"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let open = SandboxPolicy {
        network: true,
        ..SandboxPolicy::default()
    };
    let out = sh(&script, &open);
    assert_eq!(stdout(&out).trim(), "connected", "{}", stderr(&out));
}

#[test]
fn signals_cannot_reach_processes_outside_the_sandbox() {
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

const SOCKETS: &str = "python3 -c \"import socket\nfor family, kind in [(socket.AF_INET, socket.SOCK_DGRAM), (socket.AF_INET6, socket.SOCK_DGRAM), (socket.AF_UNIX, socket.SOCK_STREAM), (socket.AF_NETLINK, socket.SOCK_RAW), (40, socket.SOCK_STREAM)]:\n  try:\n    socket.socket(family, kind).close()\n    print('open')\n  except OSError as e:\n    print('refused', e.errno)\na, b = socket.socketpair(); print('pair')\"";

#[test]
fn only_ip_sockets_with_network_and_unix_sockets_with_a_list_can_be_opened() {
    let out = sh(SOCKETS, &SandboxPolicy::default());
    assert_eq!(
        stdout(&out),
        "refused 13\nrefused 13\nrefused 13\nrefused 13\nrefused 13\npair\n",
        "{}",
        stderr(&out)
    );
    let open = SandboxPolicy {
        network: true,
        ..SandboxPolicy::default()
    };
    let out = sh(SOCKETS, &open);
    assert_eq!(
        stdout(&out),
        "open\nopen\nrefused 13\nrefused 13\nrefused 13\npair\n"
    );
    let listed = SandboxPolicy {
        unix_sockets: vec!["/run/some.sock".into()],
        ..SandboxPolicy::default()
    };
    let out = sh(SOCKETS, &listed);
    assert_eq!(
        stdout(&out),
        "refused 13\nrefused 13\nopen\nrefused 13\nrefused 13\npair\n"
    );
    let outside = SandboxPolicy::outside(Vec::new());
    let out = sh(SOCKETS, &outside);
    // Nothing filtered (vsock answers as this kernel's modules do).
    let text = stdout(&out);
    assert!(
        text.starts_with("open\nopen\nopen\nopen\n") && text.ends_with("pair\n"),
        "{text}"
    );
}

#[test]
fn io_uring_cannot_be_set_up() {
    // io_uring can open sockets without the `socket` call, so it is refused outright.
    let out = sh(
        "python3 -c \"import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nparams = ctypes.create_string_buffer(120)\nr = libc.syscall(425, 4, params)\nprint('fd' if r >= 0 else 'refused', ctypes.get_errno())\"",
        &SandboxPolicy::default(),
    );
    assert_eq!(stdout(&out).trim(), "refused 13", "{}", stderr(&out));
}

#[test]
fn a_confined_child_leads_its_own_session_without_a_terminal() {
    let mut command = Command::new("sleep");
    command.arg("5");
    confine(&mut command, &SandboxPolicy::default()).unwrap();
    let mut child = command.spawn().unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap();
    // After `(comm)`: state, ppid, pgrp, session, tty.
    let fields: Vec<&str> = stat.rsplit_once(") ").unwrap().1.split(' ').collect();
    let pid = child.id().to_string();
    assert_eq!(
        (fields[2], fields[3], fields[4]),
        (&*pid, &*pid, "0"),
        "{stat}"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}
