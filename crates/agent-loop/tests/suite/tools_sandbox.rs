//! The boundary around the terminal and file tools, with the real kernel sandbox: writes
//! outside the workspace fail, knack's own files stay untouched, and leaving the sandbox
//! or writing elsewhere waits for the user (or is refused under `approval: never`).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_loop::tools::ApprovalFuture;
use agent_loop::{ApprovalAnswer, ApprovalAsk, ApprovalDecision, Approver, AutoApprove};
use knack_config::{ApprovalPolicy, Config, SandboxMode};
use serde_json::json;

use super::tool_env::{ToolEnv, assert_ok, error_of};

/// A folder outside every writable root: temp folders are writable, so not
/// beneath /tmp.
fn outside_dir() -> tempfile::TempDir {
    let var_tmp = PathBuf::from("/var/tmp");
    let base = match var_tmp.canonicalize() {
        Ok(real) if !real.starts_with("/tmp") => real,
        _ => PathBuf::from(env!("CARGO_TARGET_TMPDIR")),
    };
    let dir = tempfile::tempdir_in(base).unwrap();
    std::fs::write(dir.path().join("keep.txt"), "precious").unwrap();
    dir
}

struct Counting {
    decision: ApprovalDecision,
    asked: AtomicUsize,
}

impl Approver for Counting {
    fn approve<'a>(&'a self, _ask: &'a ApprovalAsk) -> ApprovalFuture<'a> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let decision = self.decision;
        Box::pin(async move { ApprovalAnswer::of(decision) })
    }
}

fn counting(decision: ApprovalDecision) -> Arc<Counting> {
    Arc::new(Counting {
        decision,
        asked: AtomicUsize::new(0),
    })
}

#[tokio::test]
async fn a_write_outside_the_workspace_is_denied_by_the_kernel_with_a_hint() {
    let victim = outside_dir();
    // Approving everything shows that the kernel, not a pattern, says no.
    let env = ToolEnv::new().approver(Arc::new(AutoApprove));
    let out = env
        .call(
            "terminal",
            json!({"command": format!("rm -rf {0}/keep.txt; touch {0}/new; echo inside > made.txt", victim.path().display())}),
        )
        .await;
    assert_eq!(
        std::fs::read_to_string(victim.path().join("keep.txt")).unwrap(),
        "precious"
    );
    assert!(!victim.path().join("new").exists());
    assert!(env.cwd_path("made.txt").exists(), "{out}");
    let text = out["output"].as_str().unwrap();
    // The read-only mount answers first (EROFS); Landlock (EACCES) where namespaces are off.
    assert!(
        text.contains("Read-only file system") || text.contains("Permission denied"),
        "{out}"
    );

    let out = env
        .call(
            "terminal",
            json!({"command": format!("touch {}/new", victim.path().display())}),
        )
        .await;
    error_of(&out);
    let hint = out["hint"].as_str().unwrap();
    assert!(
        hint.contains("sandbox") && hint.contains("outside_sandbox"),
        "{hint}"
    );
}

#[tokio::test]
async fn leaving_the_sandbox_asks_first_and_runs_only_when_approved() {
    let victim = outside_dir();
    let command = format!("touch {}/approved", victim.path().display());
    let args = json!({"command": command, "outside_sandbox": true, "justification": "test"});

    let deny = counting(ApprovalDecision::Deny);
    let env = ToolEnv::new().approver(deny.clone());
    let out = env.call("terminal", args.clone()).await;
    assert!(error_of(&out).contains("refused"), "{out}");
    assert_eq!(deny.asked.load(Ordering::SeqCst), 1);
    assert!(!victim.path().join("approved").exists());

    let approve = counting(ApprovalDecision::ApproveOnce);
    let env = ToolEnv::new().approver(approve.clone());
    let out = env.call("terminal", args.clone()).await;
    assert_ok(&out);
    assert!(victim.path().join("approved").exists());

    let mut config = Config::default();
    config.agent.approval = ApprovalPolicy::Never;
    let approve = counting(ApprovalDecision::ApproveOnce);
    let env = ToolEnv::with_config(config).approver(approve.clone());
    std::fs::remove_file(victim.path().join("approved")).unwrap();
    let out = env.call("terminal", args).await;
    assert!(error_of(&out).contains("refused"), "{out}");
    assert_eq!(
        approve.asked.load(Ordering::SeqCst),
        0,
        "never means never ask"
    );
    assert!(!victim.path().join("approved").exists());
}

#[tokio::test]
async fn knacks_own_files_are_read_only_to_commands_and_file_tools() {
    let env = ToolEnv::new().approver(Arc::new(AutoApprove));
    env.write(&env.home_path("config.yaml"), "agent: {}\n");
    env.write(
        &env.home_path(".env"),
        "OPENAI_API_KEY=sk-test-0123456789abcdef\n",
    );
    env.write(&env.cwd_path(".knack/skills/x/SKILL.md"), "project skill\n");
    let home = env.home.path().display().to_string();

    let out = env
        .call(
            "terminal",
            json!({"command": format!("echo 'agent: {{yolo: true}}' >> {home}/config.yaml; rm -f {home}/.env; echo x > .knack/skills/x/SKILL.md; echo ok > fine.txt")}),
        )
        .await;
    assert_eq!(
        std::fs::read_to_string(env.home_path("config.yaml")).unwrap(),
        "agent: {}\n",
        "{out}"
    );
    assert!(env.home_path(".env").exists(), "{out}");
    assert_eq!(
        std::fs::read_to_string(env.cwd_path(".knack/skills/x/SKILL.md")).unwrap(),
        "project skill\n"
    );
    assert!(env.cwd_path("fine.txt").exists(), "{out}");

    // Each refused by its own rule: knack's configuration, a skill folder.
    for (path, rule) in [
        (format!("{home}/config.yaml"), "no tool writes there"),
        (
            ".knack/skills/x/SKILL.md".to_owned(),
            "which file tools do not write",
        ),
    ] {
        let out = env
            .call(
                "write_file",
                json!({"path": path, "content": "agent: {yolo: true}\n"}),
            )
            .await;
        assert!(error_of(&out).contains(rule), "{out}");
    }
    let out = env
        .call("read_file", json!({"path": format!("{home}/.env")}))
        .await;
    assert!(error_of(&out).contains("keys"), "{out}");
    // search_files follows the same rule, for the file itself and inside a folder.
    let out = env
        .call(
            "search_files",
            json!({"pattern": "sk-test", "path": format!("{home}/.env")}),
        )
        .await;
    assert!(error_of(&out).contains("keys"), "{out}");
    env.write(&env.home_path("signing.key"), "sk-test-in-a-key-file\n");
    let out = env
        .call("search_files", json!({"pattern": "sk-test", "path": home}))
        .await;
    assert_eq!(out["count"], 0, "{out}");
    // The terminal cannot read it either where the sandbox can hide it.
    if knack_sandbox::support().mount_namespace {
        let out = env
            .call("terminal", json!({"command": format!("cat {home}/.env")}))
            .await;
        assert!(
            !out["output"].as_str().unwrap().contains("sk-test"),
            "{out}"
        );
    }
}

#[tokio::test]
async fn a_file_write_elsewhere_asks_and_the_modes_change_what_runs() {
    let victim = outside_dir();
    let target = victim.path().join("note.txt").display().to_string();
    let deny = counting(ApprovalDecision::Deny);
    let env = ToolEnv::new().approver(deny.clone());
    let out = env
        .call("write_file", json!({"path": target, "content": "x"}))
        .await;
    assert!(error_of(&out).contains("outside the workspace"), "{out}");
    assert_eq!(deny.asked.load(Ordering::SeqCst), 1);
    assert!(!victim.path().join("note.txt").exists());

    let mut config = Config::default();
    config.agent.sandbox = SandboxMode::ReadOnly;
    let env = ToolEnv::with_config(config);
    let out = env
        .call("terminal", json!({"command": "touch here.txt"}))
        .await;
    error_of(&out);
    assert!(!env.cwd_path("here.txt").exists());

    let mut config = Config::default();
    config.agent.sandbox = SandboxMode::FullAccess;
    let env = ToolEnv::with_config(config);
    let out = env
        .call(
            "terminal",
            json!({"command": format!("touch {}/free", victim.path().display())}),
        )
        .await;
    assert_ok(&out);
    assert!(victim.path().join("free").exists());
}
