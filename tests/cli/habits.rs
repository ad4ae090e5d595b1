//! Habits a Claude Code or Codex user brings: `--continue`, a `doctor` that talks to
//! the server, providers set from the command line, and errors naming the right key.

use pretty_assertions::assert_eq;
use serde_json::Value;
use test_support::ScriptedReply;

use super::common::{Env, mock, run_cmd, stdout_json, success};

/// Every user-role text of a chat request.
fn user_texts(request: &test_support::CapturedRequest) -> Vec<String> {
    request
        .messages()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str().map(str::to_owned))
        .collect()
}

/// The session id a `run --json` reported.
fn session_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|event| event["type"] == "session_started")
        .and_then(|event| event["session_id"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("no session_started event: {output:?}"))
}

#[test]
fn run_continue_resumes_the_session_last_used_in_this_directory() {
    let env = Env::new();
    let server = mock();
    let elsewhere = tempfile::tempdir().unwrap();
    for text in ["one", "two", "three", "four"] {
        server.enqueue(ScriptedReply::text(text));
    }
    let first =
        success(run_cmd(&env, &server).args(["run", "--json", "--no-review", "first here"]));
    let second =
        success(run_cmd(&env, &server).args(["run", "--json", "--no-review", "second here"]));
    // A later session in another directory is not this directory's.
    success(run_cmd(&env, &server).current_dir(elsewhere.path()).args([
        "run",
        "--no-review",
        "over there",
    ]));
    let continued = success(run_cmd(&env, &server).args([
        "run",
        "--json",
        "--no-review",
        "--continue",
        "and again",
    ]));
    assert_ne!(session_of(&first), session_of(&second));
    assert_eq!(session_of(&continued), session_of(&second));
    let sent = server.model_requests();
    assert_eq!(
        user_texts(&sent[3]),
        ["second here", "and again"],
        "the continued request carries the second session only"
    );
}

#[test]
fn continue_without_a_session_here_fails_and_conflicts_with_resume() {
    let env = Env::new();
    let server = mock();
    let out = run_cmd(&env, &server)
        .args(["run", "--continue", "hello"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no session to continue") && stderr.contains("--resume"),
        "{stderr}"
    );
    assert!(server.model_requests().is_empty(), "nothing was sent");

    let out = run_cmd(&env, &server)
        .args(["run", "--continue", "--resume", "x", "hello"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = env
        .knack()
        .args(["chat", "--continue", "--resume", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A port nothing listens on: bound, then released.
fn dead_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/v1")
}

#[test]
fn doctor_asks_a_live_server_for_one_short_reply() {
    let env = Env::new();
    let server = mock();
    server.enqueue(ScriptedReply::text("ok"));
    let out = success(run_cmd(&env, &server).args(["doctor", "--json"]));
    let report = stdout_json(&out);
    assert_eq!(report["model"], "mock-model");
    assert_eq!(report["server"]["ok"], true, "{report}");
    let sent = server.model_requests();
    assert_eq!(sent.len(), 1, "exactly one request");
    assert_eq!(sent[0].path, "/v1/chat/completions");
    assert_eq!(sent[0].body["model"], "mock-model");
    assert_eq!(sent[0].body["max_tokens"], 16);
    assert!(sent[0].body.get("tools").is_none(), "no tools in a check");

    server.enqueue(ScriptedReply::text("ok"));
    let out = success(run_cmd(&env, &server).args(["doctor"]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("mock-model at") && text.contains("answered in"),
        "{text}"
    );
}

#[test]
fn doctor_fails_against_a_dead_server_and_without_a_model() {
    let env = Env::new();
    let url = dead_url();
    let out = env
        .knack()
        .env("KNACK_BASE_URL", &url)
        .env("KNACK_MODEL", "m")
        .args(["doctor"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAILED") && text.contains("nothing is listening"),
        "{text}"
    );
    let out = env
        .knack()
        .env("KNACK_BASE_URL", &url)
        .env("KNACK_MODEL", "m")
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report = stdout_json(&out);
    assert_eq!(report["server"]["ok"], false);
    assert!(
        report["server"]["error"]
            .as_str()
            .is_some_and(|e| e.contains(&url)),
        "{report}"
    );

    // Nothing configured: a configuration error, and the rest of the report still printed.
    let out = env.knack().args(["doctor", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let report = stdout_json(&out);
    assert_eq!(report["model"], Value::Null);
    assert!(
        report["model_error"]
            .as_str()
            .is_some_and(|e| e.contains("KNACK_BASE_URL"))
    );
    assert_eq!(report["server"], Value::Null, "no request without a model");
    assert!(report["sandbox"]["mode"].is_string());
}

#[test]
fn a_rejected_key_names_the_profiles_own_variable() {
    let env = Env::new();
    let server = mock();
    env.write(
        "config.yaml",
        &format!(
            "model:\n  provider: claude\n  name: m\nproviders:\n  claude:\n    wire: anthropic\n    base_url: {}\n    api_key_env: CLAUDE_TEST_KEY\n",
            server.base_url()
        ),
    );
    server.enqueue(ScriptedReply::status(401));
    let out = env
        .knack()
        .env("CLAUDE_TEST_KEY", "wrong")
        .args(["doctor"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("(401)") && text.contains("CLAUDE_TEST_KEY (providers.claude.api_key_env)"),
        "{text}"
    );
    assert!(!text.contains("KNACK_API_KEY"), "{text}");

    server.enqueue(ScriptedReply::status(401));
    let out = env
        .knack()
        .env("CLAUDE_TEST_KEY", "wrong")
        .args(["run", "--no-review", "hi"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("CLAUDE_TEST_KEY"), "{stderr}");
}

#[test]
fn providers_are_added_with_config_set_and_unknown_ones_refused() {
    let env = Env::new();
    let server = mock();
    for (key, value) in [
        ("providers.claude.wire", "anthropic"),
        ("providers.claude.base_url", server.base_url().as_str()),
        ("providers.claude.model", "claude-test"),
        ("providers.claude.thinking_budget", "2048"),
        ("model.provider", "claude"),
    ] {
        success(env.knack().args(["config", "set", key, value]));
    }
    let out = success(env.knack().args(["config", "get", "providers.claude.wire"]));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "anthropic");

    let out = env
        .knack()
        .args(["config", "set", "model.provider", "nosuch"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("'nosuch'") && stderr.contains("configured: claude"),
        "{stderr}"
    );
    let out = env
        .knack()
        .args(["config", "set", "providers.claude.wrie", "chat"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("api_key_env"));

    // The profile made from the command line is the one a run uses.
    server.enqueue(ScriptedReply::text("hello"));
    success(env.knack().args(["run", "--no-review", "hi"]));
    let sent = server.model_requests();
    assert_eq!(sent[0].path, "/v1/messages");
    assert_eq!(sent[0].body["model"], "claude-test");
    assert_eq!(sent[0].body["thinking"]["budget_tokens"], 2048);
}
