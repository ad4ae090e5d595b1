//! The terminal tool: exit codes, working directory, timeouts, output caps,
//! interrupts and the approval gate for destructive commands.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_loop::tools::ApprovalFuture;
use agent_loop::{ApprovalDecision, Approver, AutoApprove};
use knack_config::Config;
use serde_json::json;

use super::tool_env::{ToolEnv, assert_ok, error_of};
use super::{HANG, within};

#[tokio::test]
async fn runs_in_the_working_directory_and_reports_exit_codes() {
    let env = ToolEnv::new();
    std::fs::create_dir(env.cwd_path("sub")).unwrap();
    let out = env
        .call("terminal", json!({"command": "pwd; echo err >&2"}))
        .await;
    assert_ok(&out);
    assert_eq!(out["exit_code"], 0);
    let text = out["output"].as_str().unwrap();
    let real_cwd = env.cwd.path().canonicalize().unwrap();
    assert!(text.contains(real_cwd.to_str().unwrap()), "{text}");
    assert!(text.contains("err"), "stderr is merged: {text}");

    let sub = env
        .call(
            "terminal",
            json!({"command": "basename \"$PWD\"", "workdir": "sub"}),
        )
        .await;
    assert_eq!(sub["output"], "sub\n");

    let failed = env
        .call("terminal", json!({"command": "echo half; exit 3"}))
        .await;
    assert!(error_of(&failed).contains("status 3"), "{failed}");
    assert_eq!(failed["exit_code"], 3);
    assert_eq!(failed["output"], "half\n");

    let missing = env
        .call("terminal", json!({"command": "true", "workdir": "nope"}))
        .await;
    assert!(error_of(&missing).contains("not a directory"), "{missing}");
}

#[tokio::test]
async fn a_command_past_its_timeout_is_killed_with_its_children() {
    let env = ToolEnv::new();
    // The background sleep shares the pipe: only a process-group kill ends it,
    // and the missing `note` shows the pipe closed, so it died. The sleeps
    // outlast any guard, so a kill that does not happen cannot pass.
    let out = within(
        HANG,
        env.call(
            "terminal",
            json!({"command": "echo begun; sleep 1000 & sleep 1000", "timeout_secs": 1}),
        ),
    )
    .await;
    assert!(error_of(&out).contains("longer than 1s"), "{out}");
    assert_eq!(out["timed_out"], true);
    assert_eq!(out["output"], "begun\n");
    assert!(
        out.get("note").is_none(),
        "the pipe closed with the group: {out}"
    );
}

#[tokio::test]
async fn the_requested_timeout_is_capped_by_config() {
    let mut config = Config::default();
    config.terminal.timeout_secs = 1;
    let env = ToolEnv::with_config(config);
    let out = within(
        HANG,
        env.call(
            "terminal",
            json!({"command": "sleep 1000", "timeout_secs": 600}),
        ),
    )
    .await;
    assert_eq!(out["timed_out"], true, "{out}");
    // The message names the timeout that applied: the config's, not the request's.
    assert!(error_of(&out).contains("longer than 1s"), "{out}");
}

#[tokio::test]
async fn long_output_keeps_head_and_tail() {
    let mut config = Config::default();
    config.terminal.output_cap_chars = 1_000;
    let env = ToolEnv::with_config(config);
    let out = env
        .call("terminal", json!({"command": "seq 1 100000"}))
        .await;
    assert_ok(&out);
    assert_eq!(out["truncated"], true);
    let text = out["output"].as_str().unwrap();
    assert!(text.starts_with("1\n2\n3\n"), "{}", &text[..50]);
    assert!(
        text.ends_with("99999\n100000\n"),
        "{}",
        &text[text.len() - 50..]
    );
    assert!(text.contains("of output cut here"), "marker present");
    assert!(
        text.chars().count() < 1_200,
        "{} chars",
        text.chars().count()
    );
}

#[tokio::test]
async fn an_interrupt_stops_a_running_command() {
    let env = ToolEnv::new();
    let cancel = env.ctx.cancel.clone();
    let started = env.cwd_path("started");
    // Interrupt once the command is running, whenever that is.
    let canceller = tokio::spawn(async move {
        wait_for_file(&started).await;
        cancel.cancel();
    });
    let out = within(
        HANG,
        env.call("terminal", json!({"command": "touch started; sleep 1000"})),
    )
    .await;
    canceller.await.unwrap();
    assert_eq!(out["interrupted"], true, "{out}");
    assert!(error_of(&out).contains("interrupted"));
}

/// Waits until `path` exists: an event, not a time. The caller bounds the wait.
async fn wait_for_file(path: &std::path::Path) {
    while !path.exists() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Whether process `pid` has ended: gone, or a zombie nobody reaped yet.
/// Whether a live process anywhere on the machine has `token` among its arguments. Pids
/// inside the sandbox's PID namespace are not the host's, so a test finds its processes
/// by a word in their command line.
fn runs_with(token: &str) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let dir = entry.path();
        let Ok(cmdline) = std::fs::read(dir.join("cmdline")) else {
            return false;
        };
        let alive = std::fs::read_to_string(dir.join("stat")).is_ok_and(|stat| {
            !matches!(
                stat.rsplit_once(") ")
                    .and_then(|(_, rest)| rest.chars().next()),
                Some('Z' | 'X')
            )
        });
        alive
            && cmdline
                .split(|b| *b == 0)
                .any(|arg| arg == token.as_bytes())
    })
}

/// A `sleep` duration no other process on the machine uses: the token [`runs_with`] finds.
fn unique_sleep() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("1000.{nanos:09}{}", std::process::id())
}

/// Answers with a fixed decision and counts how often it was asked.
struct Counting {
    decision: ApprovalDecision,
    asked: AtomicUsize,
}

impl Approver for Counting {
    fn approve<'a>(&'a self, _command: &'a str, reason: &'a str) -> ApprovalFuture<'a> {
        assert!(!reason.is_empty());
        self.asked.fetch_add(1, Ordering::SeqCst);
        let decision = self.decision;
        Box::pin(async move { decision })
    }
}

#[tokio::test]
async fn destructive_commands_need_approval() {
    // A harmless command that trips the mkfs rule.
    let flagged = json!({"command": "echo mkfs.ext4 /dev/null-device"});

    let denied = ToolEnv::new();
    let out = denied.call("terminal", flagged.clone()).await;
    assert!(error_of(&out).contains("refused"), "{out}");
    assert!(out["error"].as_str().unwrap().contains("mkfs"), "{out}");
    assert!(
        out.get("output").is_none(),
        "the command did not run: {out}"
    );

    let approved = ToolEnv::new().approver(Arc::new(AutoApprove));
    let out = approved.call("terminal", flagged.clone()).await;
    assert_ok(&out);
    assert_eq!(out["output"], "mkfs.ext4 /dev/null-device\n");
}

#[tokio::test]
async fn approve_always_is_remembered_for_the_session() {
    let approver = Arc::new(Counting {
        decision: ApprovalDecision::ApproveAlways,
        asked: AtomicUsize::new(0),
    });
    let env = ToolEnv::new().approver(approver.clone());
    for _ in 0..3 {
        let out = env.call("terminal", json!({"command": "echo mkfs"})).await;
        assert_ok(&out);
    }
    assert_eq!(approver.asked.load(Ordering::SeqCst), 1);
    // A different rule asks again (a shell function stands in for the real reboot).
    let out = env
        .call(
            "terminal",
            json!({"command": "reboot() { echo pretend; }; reboot"}),
        )
        .await;
    assert_eq!(out["output"], "pretend\n", "{out}");
    assert_eq!(approver.asked.load(Ordering::SeqCst), 2);

    let once = Arc::new(Counting {
        decision: ApprovalDecision::ApproveOnce,
        asked: AtomicUsize::new(0),
    });
    let env = ToolEnv::new().approver(once.clone());
    env.call("terminal", json!({"command": "echo mkfs"})).await;
    env.call("terminal", json!({"command": "echo mkfs"})).await;
    assert_eq!(once.asked.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn dropping_a_running_call_kills_its_process_group() {
    let env = ToolEnv::new();
    let started = env.cwd_path("started");
    let token = unique_sleep();
    // A subshell outlives a killed parent shell unless everything the command started dies.
    // It says when it runs; written in full, then renamed into place.
    let command = format!("(echo 1 > s.tmp && mv s.tmp started; exec sleep {token}) & wait");
    let call = env.call("terminal", json!({ "command": command }));
    // Abandon the call once the marker runs; it must die with the call.
    tokio::select! {
        out = call => panic!("the command ended by itself: {out}"),
        () = within(HANG, async {
            wait_for_file(&started).await;
            while !runs_with(&token) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }) => {}
    }
    within(HANG, async {
        while runs_with(&token) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}
