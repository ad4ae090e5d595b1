//! Approval modes at the tool boundary: plan is read-only (reads and read-only commands
//! run, edits and other commands are refused), ask-edits makes every edit wait for the
//! user and shows the diff, auto-edits is today's behaviour.

use std::sync::{Arc, Mutex};

use agent_loop::tools::ApprovalFuture;
use agent_loop::{ApprovalAnswer, ApprovalAsk, ApprovalDecision, Approver, AutoDeny};
use agent_protocol::ApprovalMode;
use serde_json::json;

use super::tool_env::{ToolEnv, assert_ok, error_of};

/// Approves once and keeps what it was shown.
#[derive(Default)]
struct Recording {
    asks: Mutex<Vec<ApprovalAsk>>,
}

impl Approver for Recording {
    fn approve<'a>(&'a self, ask: &'a ApprovalAsk) -> ApprovalFuture<'a> {
        self.asks.lock().unwrap().push(ask.clone());
        Box::pin(async { ApprovalAnswer::of(ApprovalDecision::ApproveOnce) })
    }
}

fn in_mode(mode: ApprovalMode, approver: Arc<dyn Approver>) -> ToolEnv {
    let mut env = ToolEnv::new().approver(approver);
    env.ctx = env.ctx.clone().with_mode(mode);
    env
}

#[tokio::test]
async fn plan_mode_reads_but_never_writes() {
    let env = in_mode(ApprovalMode::Plan, Arc::new(Recording::default()));
    env.write(&env.cwd_path("notes.txt"), "one\n");
    assert_ok(&env.call("read_file", json!({"path": "notes.txt"})).await);
    let out = env.call("terminal", json!({"command": "ls"})).await;
    assert_ok(&out);
    for (tool, args) in [
        ("write_file", json!({"path": "new.txt", "content": "x"})),
        (
            "patch",
            json!({"path": "notes.txt", "old_string": "one", "new_string": "two"}),
        ),
        ("terminal", json!({"command": "touch made"})),
        (
            "terminal",
            json!({"command": "ls", "outside_sandbox": true}),
        ),
    ] {
        let out = env.call(tool, args).await;
        assert!(error_of(&out).contains("plan mode"), "{tool}: {out}");
    }
    assert!(!env.cwd_path("new.txt").exists());
    assert!(!env.cwd_path("made").exists());
    assert_eq!(
        std::fs::read_to_string(env.cwd_path("notes.txt")).unwrap(),
        "one\n"
    );
}

#[tokio::test]
async fn ask_edits_asks_before_each_edit_and_shows_the_diff() {
    let recording = Arc::new(Recording::default());
    let env = in_mode(ApprovalMode::AskEdits, recording.clone());
    env.write(&env.cwd_path("notes.txt"), "one\ntwo\n");
    let out = env
        .call(
            "patch",
            json!({"path": "notes.txt", "old_string": "two", "new_string": "2"}),
        )
        .await;
    assert_ok(&out);
    let asks = recording.asks.lock().unwrap().clone();
    assert_eq!(asks.len(), 1);
    assert!(asks[0].reason.contains("ask-edits"), "{:?}", asks[0]);
    let diff = asks[0].diff.as_deref().unwrap();
    assert!(diff.contains("-two") && diff.contains("+2"), "{diff}");
    // Commands are not edits: they run as in auto-edits.
    assert_ok(&env.call("terminal", json!({"command": "touch made"})).await);
    assert_eq!(recording.asks.lock().unwrap().len(), 1);

    // With nobody to ask (headless), the edit is refused.
    let env = in_mode(ApprovalMode::AskEdits, Arc::new(AutoDeny));
    let out = env
        .call("write_file", json!({"path": "new.txt", "content": "x"}))
        .await;
    assert!(error_of(&out).contains("did not approve"), "{out}");
    assert!(!env.cwd_path("new.txt").exists());
}

#[tokio::test]
async fn auto_edits_writes_without_asking() {
    let env = in_mode(ApprovalMode::AutoEdits, Arc::new(AutoDeny));
    let out = env
        .call("write_file", json!({"path": "new.txt", "content": "x"}))
        .await;
    assert_ok(&out);
}

#[tokio::test]
async fn web_fetch_always_saves_the_domain_and_never_more() {
    /// Answers "always" for this domain, and counts questions.
    #[derive(Default)]
    struct Always {
        asks: Mutex<Vec<ApprovalAsk>>,
    }
    impl Approver for Always {
        fn approve<'a>(&'a self, ask: &'a ApprovalAsk) -> ApprovalFuture<'a> {
            self.asks.lock().unwrap().push(ask.clone());
            let rule = ask.exact_rule.clone();
            Box::pin(async move {
                ApprovalAnswer {
                    decision: ApprovalDecision::ApproveAlways,
                    rule,
                    message: None,
                }
            })
        }
    }
    let always = Arc::new(Always::default());
    let env = ToolEnv::new().approver(always.clone());
    // Nothing listens on port 9 of 127.0.0.1: the fetch fails after the approval,
    // which is all this test needs.
    env.call("web_fetch", json!({"url": "http://127.0.0.1:9/a"}))
        .await;
    env.call("web_fetch", json!({"url": "http://127.0.0.1:9/b"}))
        .await;
    env.call("web_fetch", json!({"url": "http://localhost:9/a"}))
        .await;
    let asks = always.asks.lock().unwrap().clone();
    assert_eq!(asks.len(), 2, "{asks:?}");
    assert_eq!(asks[0].exact_rule.as_deref(), Some("web_fetch(127.0.0.1)"));
    assert_eq!(asks[0].prefix_rule, None);
    assert_eq!(asks[1].exact_rule.as_deref(), Some("web_fetch(localhost)"));
}

#[tokio::test]
async fn plan_mode_fetches_unless_the_user_keeps_planning_offline() {
    // On by default: the fetch reaches the approval (which the recorder grants)
    // and fails only because nothing listens on the port.
    let recording = Arc::new(Recording::default());
    let env = in_mode(ApprovalMode::Plan, recording.clone());
    let out = env
        .call("web_fetch", json!({"url": "http://127.0.0.1:9/a"}))
        .await;
    assert!(!error_of(&out).contains("plan mode"), "{out}");
    assert_eq!(recording.asks.lock().unwrap().len(), 1);

    let mut config = knack_config::Config::default();
    config.tools.web_fetch_in_plan = false;
    let recording = Arc::new(Recording::default());
    let mut env = ToolEnv::with_config(config).approver(recording.clone());
    env.ctx = env.ctx.clone().with_mode(ApprovalMode::Plan);
    let out = env
        .call("web_fetch", json!({"url": "http://127.0.0.1:9/a"}))
        .await;
    assert!(error_of(&out).contains("plan mode"), "{out}");
    assert!(error_of(&out).contains("web_fetch_in_plan"), "{out}");
    assert!(
        recording.asks.lock().unwrap().is_empty(),
        "nothing was asked"
    );
}
