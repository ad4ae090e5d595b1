//! `--mode` on `knack run`: plan refuses edits and tells the model so; ask-edits refuses
//! edits headless (nobody to ask) unless a rule allows them.

use serde_json::{Value, json};
use test_support::ScriptedReply;

use super::common::{Env, mock, run_cmd, success};

/// Runs one write_file call in `mode` and returns the tool result and the first request.
fn write_in_mode(env: &Env, mode: &str) -> (Value, Value) {
    let server = mock();
    server.enqueue(ScriptedReply::tool_calls([(
        "call_1",
        "write_file",
        r#"{"path":"plan.txt","content":"x"}"#,
    )]));
    server.enqueue(ScriptedReply::text("ok"));
    success(run_cmd(env, &server).args(["run", "--mode", mode, "write it"]));
    let requests = server.chat_requests();
    let tool = requests[1]
        .messages()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    let result = serde_json::from_str(tool["content"].as_str().unwrap()).unwrap();
    (result, Value::Array(requests[0].messages().to_vec()))
}

#[test]
fn plan_mode_refuses_edits_and_the_model_is_told() {
    let env = Env::new();
    let (result, first_request) = write_in_mode(&env, "plan");
    assert_eq!(result["success"], json!(false), "{result}");
    assert!(result["error"].as_str().unwrap().contains("plan mode"));
    assert!(!env.cwd.path().join("plan.txt").exists());
    assert!(
        first_request.to_string().contains("[Approval mode: plan]"),
        "{first_request}"
    );
}

#[test]
fn ask_edits_headless_refuses_unless_a_rule_allows() {
    let env = Env::new();
    let (result, first_request) = write_in_mode(&env, "ask-edits");
    assert_eq!(result["success"], json!(false), "{result}");
    assert!(!env.cwd.path().join("plan.txt").exists());
    assert!(
        first_request
            .to_string()
            .contains("[Approval mode: ask-edits]")
    );

    let env = Env::new();
    let path = env.cwd.path().canonicalize().unwrap().join("plan.txt");
    env.write(
        "config.yaml",
        &format!("permissions:\n  allow:\n    - write({})\n", path.display()),
    );
    let (result, _) = write_in_mode(&env, "ask-edits");
    assert_eq!(result["success"], json!(true), "{result}");
    assert!(path.exists());
}

#[test]
fn auto_edits_is_the_default_and_says_nothing() {
    let env = Env::new();
    let (result, first_request) = write_in_mode(&env, "auto-edits");
    assert_eq!(result["success"], json!(true), "{result}");
    assert!(!first_request.to_string().contains("[Approval mode"));
}

#[test]
fn an_unknown_mode_is_a_usage_error() {
    let env = Env::new();
    let out = env
        .knack()
        .args(["run", "--mode", "yolo", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
