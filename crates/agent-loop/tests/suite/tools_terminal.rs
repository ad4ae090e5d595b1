//! The terminal tool: exit codes, working directory, timeouts, output caps,
//! interrupts and the approval gate for destructive commands.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agent_loop::tools::ApprovalFuture;
use agent_loop::{ApprovalDecision, Approver, AutoApprove};
use knack_config::Config;
use serde_json::json;

use super::tool_env::{ToolEnv, assert_ok, error_of};

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
    let started = Instant::now();
    // The background sleep shares the pipe: only a process-group kill ends it.
    let out = env
        .call(
            "terminal",
            json!({"command": "echo begun; sleep 30 & sleep 30", "timeout_secs": 1}),
        )
        .await;
    let elapsed = started.elapsed();
    assert!(error_of(&out).contains("longer than 1s"), "{out}");
    assert_eq!(out["timed_out"], true);
    assert_eq!(out["output"], "begun\n");
    assert!(
        out.get("note").is_none(),
        "the pipe closed with the group: {out}"
    );
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
}

#[tokio::test]
async fn the_requested_timeout_is_capped_by_config() {
    let mut config = Config::default();
    config.terminal.timeout_secs = 1;
    let env = ToolEnv::with_config(config);
    let started = Instant::now();
    let out = env
        .call(
            "terminal",
            json!({"command": "sleep 20", "timeout_secs": 600}),
        )
        .await;
    assert_eq!(out["timed_out"], true, "{out}");
    assert!(started.elapsed() < Duration::from_secs(5));
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
    let started = Instant::now();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let out = env.call("terminal", json!({"command": "sleep 30"})).await;
    canceller.await.unwrap();
    assert_eq!(out["interrupted"], true, "{out}");
    assert!(error_of(&out).contains("interrupted"));
    assert!(started.elapsed() < Duration::from_secs(5));
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
    let marker = env.cwd_path("survived");
    // A subshell outlives a killed parent shell unless the whole group dies.
    let command = format!("(sleep 1; touch {}) & wait", marker.display());
    let call = env.call("terminal", json!({ "command": command }));
    // Abandon the call after it started; the sleeping shell must die with it.
    let abandoned = tokio::time::timeout(Duration::from_millis(300), call).await;
    assert!(abandoned.is_err());
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!marker.exists(), "the command kept running after the drop");
}
