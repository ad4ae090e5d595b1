//! Secrets end to end: a `knack run` whose model runs `env`, echoes a token and cats a file
//! holding keys; no key value reaches the mock (what the model got), `state.db`, or other users.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};
use test_support::{MockModelServer, ScriptedReply};

use super::common::{Env, success};

const API_KEY: &str = "sk-knack-e2e-0123456789abcdef";
const SERVICE_TOKEN: &str = "svc-token-e2e-987654321";
const DOTENV_SECRET: &str = "dotenv-secret-e2e-24680";

/// A home with a world-readable root and `.env` (as older versions left
/// them), a file in the working directory that holds every key, and a
/// config without the review so the script below is the whole conversation.
fn setup() -> (Env, MockModelServer) {
    let env = Env::new();
    env.write(
        "config.yaml",
        "skills:\n  review_after_tool_calls: 0\nmodel:\n  max_retries: 0\n",
    );
    env.write(".env", &format!("EXTRA_API_KEY={DOTENV_SECRET}\n"));
    std::fs::set_permissions(
        env.home_path(".env"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    std::fs::set_permissions(env.home.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        env.cwd.path().join("notes.txt"),
        format!("api={API_KEY}\nservice={SERVICE_TOKEN}\ndotenv={DOTENV_SECRET}\n"),
    )
    .unwrap();
    let server = MockModelServer::start_blocking().unwrap();
    (env, server)
}

fn terminal_call(id: &str, command: &str) -> (String, String, String) {
    (
        id.to_owned(),
        "terminal".to_owned(),
        json!({ "command": command }).to_string(),
    )
}

fn run(env: &Env, server: &MockModelServer, calls: Vec<(String, String, String)>) {
    server.enqueue(ScriptedReply::tool_calls(calls));
    server.enqueue(ScriptedReply::text("done"));
    success(
        env.knack()
            .env("KNACK_BASE_URL", server.base_url())
            .env("KNACK_MODEL", "mock-model")
            .env("KNACK_API_KEY", API_KEY)
            .env("MY_SERVICE_TOKEN", SERVICE_TOKEN)
            .env("KNACK_LOG", "debug")
            .timeout(std::time::Duration::from_secs(60))
            .args(["run", "inspect the environment"]),
    );
}

/// The tool messages of the last request, by call id: what the model read.
fn tool_results(server: &MockModelServer) -> Vec<(String, String)> {
    let requests = server.chat_requests();
    let last = requests.last().unwrap();
    last.messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().to_owned(),
                m["content"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn output_of(results: &[(String, String)], id: &str) -> String {
    let (_, content) = results.iter().find(|(call, _)| call == id).unwrap();
    let value: Value = serde_json::from_str(content).unwrap();
    value["output"].as_str().unwrap_or_default().to_owned()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Every request body the mock got and every byte of the database files.
fn assert_no_secret_anywhere(env: &Env, server: &MockModelServer) {
    for request in server.chat_requests() {
        let body = request.body.to_string();
        for secret in [API_KEY, SERVICE_TOKEN, DOTENV_SECRET] {
            assert!(
                !body.contains(secret),
                "a request to the model carried {secret}:\n{body}"
            );
        }
    }
    for file in ["state.db", "state.db-wal", "state.db-shm"] {
        let Ok(bytes) = std::fs::read(env.home_path(file)) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        for secret in [API_KEY, SERVICE_TOKEN, DOTENV_SECRET] {
            assert!(!text.contains(secret), "{file} holds {secret}");
        }
    }
}

#[test]
fn known_secret_values_are_redacted_and_the_home_is_private() {
    let (env, server) = setup();
    run(
        &env,
        &server,
        vec![terminal_call("call_cat", "cat notes.txt")],
    );

    let results = tool_results(&server);
    let cat = output_of(&results, "call_cat");
    assert!(cat.contains("api=[REDACTED:KNACK_API_KEY]"), "{cat}");
    assert!(cat.contains("service=[REDACTED:MY_SERVICE_TOKEN]"), "{cat}");
    assert!(cat.contains("dotenv=[REDACTED:EXTRA_API_KEY]"), "{cat}");
    assert_no_secret_anywhere(&env, &server);

    // The request still authenticated with the real key.
    let first = &server.chat_requests()[0];
    assert_eq!(
        first.header("authorization"),
        Some(format!("Bearer {API_KEY}").as_str())
    );

    assert_eq!(mode(env.home.path()), 0o700, "KNACK_HOME");
    assert_eq!(mode(&env.home_path(".env")), 0o600, ".env");
    for file in ["state.db", "state.db-wal", "state.db-shm"] {
        let path = env.home_path(file);
        if path.exists() {
            assert_eq!(mode(&path), 0o600, "{file}");
        }
    }
    assert!(env.home_path("state.db").exists());
    let log = env.home_path("logs/knack.log");
    assert!(log.exists(), "KNACK_LOG=debug writes a log");
    assert_eq!(mode(&log), 0o600, "logs/knack.log");
    assert_eq!(mode(&env.home_path("logs")), 0o700, "logs/");
}

/// Needs the terminal tool to call `agent_loop::secrets::scrub_env` on the
/// `bash` it spawns: then the variables are not there to print at all.
#[test]
fn commands_run_for_the_model_do_not_inherit_secret_variables() {
    let (env, server) = setup();
    run(
        &env,
        &server,
        vec![
            terminal_call("call_env", "env"),
            terminal_call(
                "call_echo",
                "echo \"token=[$MY_SERVICE_TOKEN] key=[$KNACK_API_KEY]\"",
            ),
        ],
    );
    let results = tool_results(&server);
    let env_out = output_of(&results, "call_env");
    assert!(env_out.contains("KNACK_HOME="), "env ran:\n{env_out}");
    for name in ["KNACK_API_KEY=", "MY_SERVICE_TOKEN="] {
        assert!(
            !env_out.contains(name),
            "the command inherited {name}:\n{env_out}"
        );
    }
    let echo = output_of(&results, "call_echo");
    assert!(echo.contains("token=[] key=[]"), "{echo}");
    assert_no_secret_anywhere(&env, &server);
}
