//! Permission rules end to end: `knack permissions list`, a bad rule named in the error,
//! and a headless run where only a rule lets a command through (and says so).

use serde_json::{Value, json};
use test_support::ScriptedReply;

use test_support::git_repo;

use super::common::{Env, mock, run_cmd, stdout_json, success};

const RULES: &str = "agent:\n  approval: untrusted\npermissions:\n  allow:\n    - terminal(touch:*)\n  deny:\n    - terminal(git push:*)\n";

#[test]
fn permissions_list_shows_every_rule_deny_first() {
    let env = Env::new();
    env.write("config.yaml", RULES);
    let out = success(env.knack().args(["permissions", "list", "--json"]));
    let source = env.home_path("config.yaml").display().to_string();
    assert_eq!(
        stdout_json(&out),
        json!([
            {"rule": "terminal(git push:*)", "effect": "deny", "scope": "user", "source": source,
             "applied": true},
            {"rule": "terminal(touch:*)", "effect": "allow", "scope": "user", "source": source,
             "applied": true},
        ])
    );
    let out = success(env.knack().args(["permissions", "list"]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("terminal(touch:*)"), "{text}");
    // None at all says how rules come about.
    let empty = Env::new();
    let out = success(empty.knack().args(["permissions", "list"]));
    assert!(String::from_utf8_lossy(&out.stdout).contains("No permission rules"));
}

#[test]
fn a_rule_that_covers_a_whole_kind_of_action_is_a_config_error() {
    let env = Env::new();
    env.write(
        "config.yaml",
        "permissions:\n  allow:\n    - terminal(:*)\n",
    );
    let out = env.knack().args(["permissions", "list"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("terminal(:*)"), "{err}");
    assert!(err.contains("permissions.allow"), "{err}");
}

fn events(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The result the model was sent for its one tool call.
fn tool_result(server: &test_support::MockModelServer) -> Value {
    let second = &server.chat_requests()[1];
    let tool = second
        .messages()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    serde_json::from_str(tool["content"].as_str().unwrap()).unwrap()
}

#[test]
fn headless_runs_what_a_rule_allows_and_says_which_rule() {
    let env = Env::new();
    env.write("config.yaml", RULES);
    let server = mock();
    server.enqueue(ScriptedReply::tool_calls([(
        "call_1",
        "terminal",
        r#"{"command":"touch made.txt"}"#,
    )]));
    server.enqueue(ScriptedReply::text("done"));
    let out = success(run_cmd(&env, &server).args(["run", "--json", "make it"]));
    let ev = events(&out);
    assert!(
        ev.contains(&json!({"type": "auto_approved", "call_id": "call_1",
                            "rule": "terminal(touch:*)"})),
        "{ev:?}"
    );
    assert!(env.cwd.path().join("made.txt").exists());
    assert_eq!(tool_result(&server)["success"], json!(true));
}

#[test]
fn headless_refuses_what_no_rule_allows_and_what_a_deny_rule_names() {
    for command in ["mkdir made", "git push origin main"] {
        let env = Env::new();
        env.write("config.yaml", RULES);
        let server = mock();
        let args = json!({ "command": command }).to_string();
        server.enqueue(ScriptedReply::tool_calls([(
            "call_1",
            "terminal",
            args.as_str(),
        )]));
        server.enqueue(ScriptedReply::text("ok"));
        let out = success(run_cmd(&env, &server).args(["run", "--json", "go"]));
        assert!(
            !events(&out).iter().any(|e| e["type"] == "auto_approved"),
            "{command}"
        );
        let result = tool_result(&server);
        assert_eq!(result["success"], json!(false), "{command}: {result}");
        assert!(!env.cwd.path().join("made").exists());
        if command.starts_with("git push") {
            assert!(
                result["error"]
                    .as_str()
                    .unwrap()
                    .contains("terminal(git push:*)"),
                "{result}"
            );
        }
    }
}

/// Runs `touch made.txt` through a headless turn in `cwd`; whether it ran.
fn touch_ran(env: &Env, cwd: &std::path::Path) -> bool {
    let server = mock();
    server.enqueue(ScriptedReply::tool_calls([(
        "call_1",
        "terminal",
        r#"{"command":"touch made.txt"}"#,
    )]));
    server.enqueue(ScriptedReply::text("done"));
    success(
        run_cmd(env, &server)
            .current_dir(cwd)
            .args(["run", "make it"]),
    );
    tool_result(&server)["success"] == json!(true)
}

#[test]
fn a_projects_allow_rules_apply_only_once_it_is_trusted_and_its_deny_rules_always() {
    let env = Env::new();
    env.write("config.yaml", "agent:\n  approval: untrusted\n");
    let repo = git_repo(&[(
        ".knack/permissions.yaml",
        "allow:\n  - terminal(touch:*)\ndeny:\n  - terminal(git push:*)\n",
    )]);
    let cwd = repo.path();
    let listed = |env: &Env| {
        stdout_json(&success(env.knack().current_dir(cwd).args([
            "permissions",
            "list",
            "--json",
        ])))
    };
    let rules = listed(&env);
    let allow = rules
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["effect"] == "allow")
        .unwrap();
    assert_eq!(allow["scope"], json!("project"));
    assert_eq!(allow["applied"], json!(false), "{rules}");
    let deny = rules
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["effect"] == "deny")
        .unwrap();
    assert_eq!(deny["applied"], json!(true), "{rules}");
    // A cloned repository cannot approve commands for itself.
    assert!(!touch_ran(&env, cwd));
    assert!(!cwd.join("made.txt").exists());

    success(env.knack().current_dir(cwd).args(["skills", "trust"]));
    let rules = listed(&env);
    let allow = rules
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["effect"] == "allow")
        .unwrap();
    assert_eq!(allow["applied"], json!(true), "{rules}");
    assert!(touch_ran(&env, cwd));
    assert!(cwd.join("made.txt").exists());
}
