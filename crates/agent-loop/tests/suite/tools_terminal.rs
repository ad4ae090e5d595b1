//! The terminal tool: exit codes, working directory, timeouts, output caps,
//! interrupts and the approval gate for destructive commands.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_loop::tools::ApprovalFuture;
use agent_loop::{ApprovalAnswer, ApprovalAsk, ApprovalDecision, Approver, AutoApprove, AutoDeny};
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

/// Answers with a fixed decision (and, for "always", a chosen rule) and keeps every
/// question it was asked.
struct Counting {
    decision: ApprovalDecision,
    asked: AtomicUsize,
    rule: Option<String>,
    asks: Mutex<Vec<ApprovalAsk>>,
}

impl Counting {
    fn new(decision: ApprovalDecision) -> Self {
        Self {
            decision,
            asked: AtomicUsize::new(0),
            rule: None,
            asks: Mutex::new(Vec::new()),
        }
    }
}

impl Approver for Counting {
    fn approve<'a>(&'a self, ask: &'a ApprovalAsk) -> ApprovalFuture<'a> {
        assert!(!ask.reason.is_empty());
        self.asked.fetch_add(1, Ordering::SeqCst);
        self.asks.lock().unwrap().push(ask.clone());
        let answer = ApprovalAnswer {
            decision: self.decision,
            rule: self.rule.clone(),
            message: None,
        };
        Box::pin(async move { answer })
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
    let approver = Arc::new(Counting::new(ApprovalDecision::ApproveAlways));
    let env = ToolEnv::new().approver(approver.clone());
    for _ in 0..3 {
        let out = env.call("terminal", json!({"command": "echo mkfs"})).await;
        assert_ok(&out);
    }
    assert_eq!(approver.asked.load(Ordering::SeqCst), 1);
    // "Always" covered that exact command, not the pattern it tripped.
    let out = env
        .call("terminal", json!({"command": "echo mkfs again"}))
        .await;
    assert_ok(&out);
    assert_eq!(approver.asked.load(Ordering::SeqCst), 2);
    // A different rule asks again (a shell function stands in for the real reboot).
    let out = env
        .call(
            "terminal",
            json!({"command": "reboot() { echo pretend; }; reboot"}),
        )
        .await;
    assert_eq!(out["output"], "pretend\n", "{out}");
    assert_eq!(approver.asked.load(Ordering::SeqCst), 3);

    let once = Arc::new(Counting::new(ApprovalDecision::ApproveOnce));
    let env = ToolEnv::new().approver(once.clone());
    env.call("terminal", json!({"command": "echo mkfs"})).await;
    env.call("terminal", json!({"command": "echo mkfs"})).await;
    assert_eq!(once.asked.load(Ordering::SeqCst), 2);
}

/// `approval: untrusted`: every command off the read-only list asks, so rules matter.
fn untrusted() -> Config {
    let mut config = Config::default();
    config.agent.approval = knack_config::ApprovalPolicy::Untrusted;
    config
}

#[tokio::test]
async fn an_always_answer_is_saved_as_a_rule_and_never_widens() {
    // The user edits the offered prefix `touch one` down to `touch`: later `touch …`
    // commands run unasked, anything else still asks.
    let mut approver = Counting::new(ApprovalDecision::ApproveAlways);
    approver.rule = Some("terminal(touch:*)".into());
    let approver = Arc::new(approver);
    let env = ToolEnv::with_config(untrusted()).approver(approver.clone());
    assert_ok(&env.call("terminal", json!({"command": "touch one"})).await);
    {
        let asks = approver.asks.lock().unwrap();
        assert_eq!(asks[0].exact_rule.as_deref(), Some("terminal(touch one)"));
        assert_eq!(
            asks[0].prefix_rule.as_deref(),
            Some("terminal(touch one:*)")
        );
    }
    assert_ok(&env.call("terminal", json!({"command": "touch two"})).await);
    assert_eq!(approver.asked.load(Ordering::SeqCst), 1);
    assert!(env.cwd_path("two").exists());
    // A chained command is never covered by a prefix.
    env.call("terminal", json!({"command": "touch three; rm one"}))
        .await;
    assert_eq!(approver.asked.load(Ordering::SeqCst), 2);
    // Nor is a destructive one, whatever prefix it starts with.
    let destructive = Counting::new(ApprovalDecision::Deny);
    let destructive = Arc::new(destructive);
    let mut config = untrusted();
    config.permissions.allow = vec!["terminal(echo:*)".into()];
    let env2 = ToolEnv::with_config(config).approver(destructive.clone());
    env2.call("terminal", json!({"command": "echo mkfs"})).await;
    assert_eq!(destructive.asked.load(Ordering::SeqCst), 1);
    // The rule was saved in the user's config.
    let config = Config::load_file(&env.home_path("config.yaml")).unwrap();
    assert!(
        config
            .permissions
            .allow
            .contains(&"terminal(touch:*)".to_owned()),
        "{:?}",
        config.permissions.allow
    );
}

#[tokio::test]
async fn an_answer_for_a_run_outside_the_sandbox_saves_only_the_exact_command() {
    let mut approver = Counting::new(ApprovalDecision::ApproveAlways);
    // Even if a frontend sends a prefix (or another kind), only the exact command is saved.
    approver.rule = Some("outside_sandbox(echo:*)".into());
    let approver = Arc::new(approver);
    let env = ToolEnv::new().approver(approver.clone());
    let run = |command: &str| json!({"command": command, "outside_sandbox": true});
    env.call("terminal", run("echo hello")).await;
    assert_eq!(approver.asks.lock().unwrap()[0].prefix_rule, None);
    env.call("terminal", run("echo hello")).await;
    assert_eq!(approver.asked.load(Ordering::SeqCst), 1);
    env.call("terminal", run("echo other")).await;
    assert_eq!(approver.asked.load(Ordering::SeqCst), 2);
    let config = Config::load_file(&env.home_path("config.yaml")).unwrap();
    assert_eq!(
        config.permissions.allow,
        vec![
            "outside_sandbox(echo hello)".to_owned(),
            "outside_sandbox(echo other)".to_owned()
        ]
    );
}

#[tokio::test]
async fn permission_rules_from_config_allow_and_deny_without_asking() {
    let mut config = untrusted();
    config.permissions.allow = vec!["terminal(touch:*)".into()];
    config.permissions.deny = vec!["terminal(rm:*)".into()];
    // Nobody to ask: only the rules decide.
    let env = ToolEnv::with_config(config).approver(Arc::new(AutoDeny));
    let out = env.call("terminal", json!({"command": "touch made"})).await;
    assert_ok(&out);
    assert!(env.cwd_path("made").exists());
    // Not covered: refused, as before.
    let out = env.call("terminal", json!({"command": "mkdir d"})).await;
    assert!(error_of(&out).contains("did not approve"), "{out}");
    // Deny wins, in any part of a chain.
    let out = env
        .call("terminal", json!({"command": "touch x && rm made"}))
        .await;
    assert!(error_of(&out).contains("terminal(rm:*)"), "{out}");
    assert!(env.cwd_path("made").exists());
    // Denied too under --yolo, for a command that would run unasked.
    let env = ToolEnv::with_config({
        let mut c = Config::default();
        c.permissions.deny = vec!["terminal(rm:*)".into()];
        c
    })
    .approver(Arc::new(AutoApprove));
    std::fs::write(env.cwd_path("keep"), "k").unwrap();
    let out = env.call("terminal", json!({"command": "rm keep"})).await;
    assert!(error_of(&out).contains("forbids"), "{out}");
    assert!(env.cwd_path("keep").exists());
}

#[tokio::test]
async fn no_and_tell_the_model_why_reaches_the_model() {
    struct Explaining;
    impl Approver for Explaining {
        fn approve<'a>(&'a self, _ask: &'a ApprovalAsk) -> ApprovalFuture<'a> {
            Box::pin(async {
                ApprovalAnswer {
                    decision: ApprovalDecision::Deny,
                    rule: None,
                    message: Some("format the spare disk instead".into()),
                }
            })
        }
    }
    let env = ToolEnv::new().approver(Arc::new(Explaining));
    let out = env.call("terminal", json!({"command": "echo mkfs"})).await;
    assert!(
        error_of(&out).contains("The user says: format the spare disk instead"),
        "{out}"
    );
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
