//! Provider profiles end to end: the same task and review on every wire, judged by
//! what knack sent; `knack model list`; and the configuration mistakes that exit 3.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use test_support::{CapturedRequest, MockModelServer, ModelWire, Purpose, ScriptedReply};

use super::common::{Env, stdout_json, success};

const KEY: &str = "provider-key-7f3a9c";

fn provider_config(wire: &str, base_url: &str) -> String {
    let effort = if wire == "responses" {
        "    reasoning_effort: low"
    } else {
        ""
    };
    [
        "model:",
        "  provider: mock",
        "  name: mock-model",
        "  max_retries: 2",
        "  retry_base_delay_ms: 10",
        "  retry_max_delay_ms: 50",
        "providers:",
        "  mock:",
        &format!("    wire: {wire}"),
        &format!("    base_url: {base_url}"),
        "    api_key_env: MOCK_PROVIDER_KEY",
        "    context_window: 200000",
        "    prompt_cache_key: true",
        "    prices: {input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75}",
        effort,
        "  spare:",
        "    wire: chat",
        "    base_url: http://127.0.0.1:9/v1",
        "    model: spare-model",
    ]
    .iter()
    .filter(|line| !line.is_empty())
    .map(|line| format!("{line}\n"))
    .collect()
}

fn events(output: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// The frozen prefix of a request as its wire carries it: (system prompt, tools).
fn frozen(req: &CapturedRequest) -> (String, String) {
    let system = match req.wire() {
        Some(ModelWire::Chat) => req.messages()[0].to_string(),
        Some(ModelWire::Anthropic) => req.body["system"].to_string(),
        _ => req.body["instructions"].to_string(),
    };
    (system, req.body["tools"].to_string())
}

/// Every user-role text the request carries, whatever the wire's shape.
fn user_texts(req: &CapturedRequest) -> Vec<String> {
    let items = req
        .body
        .get("messages")
        .or_else(|| req.body.get("input"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut texts = Vec::new();
    for item in items.iter().filter(|m| m["role"] == "user") {
        match &item["content"] {
            Value::String(text) => texts.push(text.clone()),
            Value::Array(blocks) => texts.extend(
                blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str().map(str::to_owned)),
            ),
            _ => {}
        }
    }
    texts
}

fn count_key(value: &Value, key: &str) -> usize {
    match value {
        Value::Object(map) => {
            usize::from(map.contains_key(key))
                + map.values().map(|v| count_key(v, key)).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(|v| count_key(v, key)).sum(),
        _ => 0,
    }
}

#[test]
fn every_wire_runs_a_six_call_task_and_the_review_on_one_frozen_prefix() {
    for (wire, path) in [
        ("chat", "/v1/chat/completions"),
        ("anthropic", "/v1/messages"),
        ("responses", "/v1/responses"),
    ] {
        let env = Env::new();
        env.skill("ops/flow-notes", "flow-notes", "Use when noting the flow");
        let server = MockModelServer::start_blocking().unwrap();
        env.write("config.yaml", &provider_config(wire, &server.base_url()));
        for i in 0..6u64 {
            server.enqueue(
                ScriptedReply::tool_calls([(format!("t{i}"), "skills_list", "{}")])
                    .with_reasoning(format!("step {i}"))
                    .with_cache_usage(1000 + i * 100, 10, 900, 50),
            );
        }
        server.enqueue(ScriptedReply::text("all done").with_usage(1700, 5, 1600));
        let content = "---\\nname: learned-flow\\ndescription: Use when repeating the learned flow\\n---\\n# Flow\\n1. Do it.\\n";
        server.enqueue_for(
            Purpose::Review,
            ScriptedReply::tool_calls([(
                "r1",
                "skill_manage",
                format!(r#"{{"action":"create","name":"learned-flow","content":"{content}"}}"#),
            )])
            .with_reasoning("worth saving"),
        );
        server.enqueue_for(Purpose::Review, ScriptedReply::text("Saved learned-flow."));

        let out = success(
            env.knack()
                .env("MOCK_PROVIDER_KEY", KEY)
                .timeout(std::time::Duration::from_secs(60))
                .args(["run", "--json", "/flow-notes do the long task"]),
        );
        let ev = events(&out);
        assert_eq!(ev.last().unwrap()["type"], "turn_complete", "{wire}");
        let finished = ev.iter().find(|e| e["type"] == "review_finished").unwrap();
        assert_eq!(
            finished["summary"], "review: created skill learned-flow",
            "{wire}"
        );
        let session_id = ev[0]["session_id"].as_str().unwrap().to_owned();

        // Thinking streams as reasoning_delta events and never becomes the answer.
        let thinking: String = ev
            .iter()
            .filter(|e| e["type"] == "reasoning_delta")
            .map(|e| e["text"].as_str().unwrap())
            .collect();
        assert!(
            thinking.contains("step 0") && thinking.contains("step 5"),
            "{wire}: {thinking:?}"
        );
        assert!(
            !thinking.contains("worth saving"),
            "{wire}: review thinking shown"
        );
        for message in ev.iter().filter(|e| e["type"] == "assistant_message") {
            assert!(
                !message["text"].as_str().unwrap().contains("step"),
                "{wire}"
            );
        }

        // Usage: one record shape on every wire, priced.
        let usage: Vec<&Value> = ev.iter().filter(|e| e["type"] == "usage").collect();
        assert!(usage.len() >= 7, "{wire}: {usage:?}");
        assert_eq!(usage[0]["prompt_tokens"], 1000, "{wire}");
        assert_eq!(usage[0]["cached_tokens"], 900, "{wire}");
        assert!(usage[0]["cost_usd"].as_f64().unwrap() > 0.0, "{wire}");
        let expected_write = if wire == "anthropic" { 50 } else { 0 };
        assert_eq!(usage[0]["cache_write_tokens"], expected_write, "{wire}");

        // `sessions show` totals what the usage events reported, request by request.
        let sum = |key: &str| usage.iter().map(|u| u[key].as_u64().unwrap()).sum::<u64>();
        let shown = stdout_json(&success(env.knack().args([
            "sessions",
            "show",
            &session_id,
            "--json",
        ])));
        let totals = &shown["usage"];
        assert_eq!(totals["requests"], usage.len(), "{wire}: {totals}");
        assert_eq!(totals["cache_read_tokens"], sum("cached_tokens"), "{wire}");
        assert_eq!(
            totals["cache_write_tokens"],
            sum("cache_write_tokens"),
            "{wire}"
        );
        assert_eq!(
            totals["fresh_input_tokens"],
            sum("prompt_tokens") - sum("cached_tokens") - sum("cache_write_tokens"),
            "{wire}"
        );
        assert_eq!(totals["output_tokens"], sum("completion_tokens"), "{wire}");
        let cost: f64 = usage.iter().map(|u| u["cost_usd"].as_f64().unwrap()).sum();
        assert!(
            (totals["cost_usd"].as_f64().unwrap() - cost).abs() < 1e-9,
            "{wire}: {totals}"
        );
        let text = success(env.knack().args(["sessions", "show", &session_id]));
        let text = String::from_utf8_lossy(&text.stdout);
        assert!(
            text.contains(&format!("usage: {} requests", usage.len())),
            "{wire}: {text}"
        );

        let sent = server.model_requests();
        assert_eq!(sent.len(), 9, "{wire}");
        let reviews = sent
            .iter()
            .filter(|r| r.purpose() == Some("review"))
            .count();
        assert_eq!(reviews, 2, "{wire}");
        for req in &sent {
            assert_eq!(req.path, path, "{wire}");
            assert_eq!(req.session(), Some(session_id.as_str()), "{wire}");
            assert_eq!(frozen(req), frozen(&sent[0]), "{wire}: the prefix moved");
            assert!(!frozen(req).0.contains("Steps for flow-notes"), "{wire}");
            assert!(
                user_texts(req)
                    .iter()
                    .any(|t| t.contains("Steps for flow-notes")),
                "{wire}: the invoked skill is not in a user message"
            );
            let key_header = match wire {
                "anthropic" => req.header("x-api-key").map(str::to_owned),
                _ => req.header("authorization").map(str::to_owned),
            };
            assert!(key_header.unwrap().ends_with(KEY), "{wire}");
            match wire {
                "anthropic" => {
                    assert!(count_key(&req.body, "cache_control") <= 4, "{wire}");
                    assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
                }
                _ => assert_eq!(req.body["prompt_cache_key"], session_id.as_str(), "{wire}"),
            }
        }
        // Reasoning from each step goes back with the following requests.
        let last_turn = sent.iter().rfind(|r| r.purpose() == Some("turn")).unwrap();
        let body = last_turn.raw_body.as_str();
        for i in 0..6 {
            match wire {
                "anthropic" => assert!(
                    body.contains(&format!("\"signature\":\"sig:step {i}\"")),
                    "{wire}: {i}"
                ),
                "responses" => assert!(
                    body.contains(&format!("\"encrypted_content\":\"enc:step {i}\"")),
                    "{wire}: {i}"
                ),
                _ => assert!(
                    !body.contains("step 0"),
                    "{wire}: reasoning leaked into chat"
                ),
            }
        }
        if wire == "anthropic" {
            let messages = last_turn.body["messages"].as_array().unwrap();
            // Each tool_result answers the tool_use of the message just before it.
            for pair in messages.windows(2) {
                for block in pair[1]["content"].as_array().unwrap() {
                    if block["type"] == "tool_result" {
                        let id = &block["tool_use_id"];
                        assert!(
                            pair[0]["content"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .any(|b| &b["id"] == id),
                            "{id} answers no tool_use before it"
                        );
                    }
                }
            }
        }
        assert!(
            env.home_path("skills/learned-flow/SKILL.md").is_file(),
            "{wire}"
        );
    }
}

#[test]
fn model_flag_and_provider_flag_choose_what_is_sent() {
    let env = Env::new();
    let server = MockModelServer::start_blocking().unwrap();
    env.write(
        "config.yaml",
        &format!(
            "model:\n  provider: main\n  name: main-model\nproviders:\n  main:\n    base_url: http://127.0.0.1:9/v1\n  other:\n    wire: anthropic\n    base_url: {}\n    model: other-model\n",
            server.base_url()
        ),
    );
    server.enqueue(ScriptedReply::text("first"));
    server.enqueue(ScriptedReply::text("second"));
    success(
        env.knack()
            .args(["run", "--no-review", "--provider", "other", "hi"]),
    );
    success(env.knack().args([
        "run",
        "--no-review",
        "--provider",
        "other",
        "--model",
        "flagged-model",
        "hi",
    ]));
    let sent = server.model_requests();
    assert_eq!(sent[0].path, "/v1/messages");
    assert_eq!(sent[0].body["model"], "other-model");
    assert_eq!(sent[1].body["model"], "flagged-model");
}

#[test]
fn model_list_shows_every_provider_and_marks_the_active_one() {
    let env = Env::new();
    env.write(
        "config.yaml",
        &provider_config("anthropic", "http://127.0.0.1:9/v1"),
    );
    let out = success(env.knack().args(["model", "list", "--json"]));
    assert_eq!(
        stdout_json(&out),
        json!([
            {"name": "mock", "wire": "anthropic", "base_url": "http://127.0.0.1:9/v1",
             "model": "mock-model", "context_window": 200000, "reasoning_effort": null,
             "thinking_budget": null, "active": true},
            {"name": "spare", "wire": "chat", "base_url": "http://127.0.0.1:9/v1",
             "model": "spare-model", "context_window": null, "reasoning_effort": null,
             "thinking_budget": null, "active": false},
        ])
    );
    let text = success(env.knack().args(["model", "list"]));
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("* mock") && text.contains("spare"), "{text}");
}

/// Runs `knack run` and expects exit 3 with every fragment on stderr.
fn expect_config_error(env: &Env, extra_env: &[(&str, &str)], args: &[&str], fragments: &[&str]) {
    let mut cmd = env.knack();
    for (key, value) in extra_env {
        cmd.env(key, value);
    }
    let out = cmd.args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{args:?}: {stderr}");
    for fragment in fragments {
        assert!(stderr.contains(fragment), "{fragment:?} missing: {stderr}");
    }
}

#[test]
fn provider_mistakes_exit_3_naming_the_key_and_the_fix() {
    let env = Env::new();
    env.write(
        "config.yaml",
        &provider_config("anthropic", "http://127.0.0.1:9/v1"),
    );
    expect_config_error(
        &env,
        &[("MOCK_PROVIDER_KEY", KEY)],
        &["run", "--provider", "nope", "hi"],
        &["unknown provider 'nope'", "providers.nope", "mock, spare"],
    );
    expect_config_error(
        &env,
        &[],
        &["run", "hi"],
        &[
            "providers.mock.api_key_env",
            "MOCK_PROVIDER_KEY",
            "$KNACK_HOME/.env",
        ],
    );

    env.write(
        "config.yaml",
        "model:\n  provider: p\n  name: m\nproviders:\n  p:\n    base_url: api.example.org/v1\n",
    );
    expect_config_error(
        &env,
        &[],
        &["run", "hi"],
        &["providers.p.base_url", "https://api.example.org/v1"],
    );

    env.write("config.yaml", "providers:\n  p:\n    wire: grpc\n");
    expect_config_error(
        &env,
        &[],
        &["run", "hi"],
        &["grpc", "anthropic", "responses"],
    );

    env.write("config.yaml", "");
    expect_config_error(
        &env,
        &[
            ("KNACK_BASE_URL", "http://127.0.0.1:9/v1"),
            ("KNACK_MODEL", "m"),
            ("KNACK_WIRE", "grpc"),
        ],
        &["run", "hi"],
        &["KNACK_WIRE=grpc", "chat, anthropic or responses"],
    );
    expect_config_error(
        &env,
        &[
            ("KNACK_BASE_URL", "127.0.0.1:8080/v1"),
            ("KNACK_MODEL", "m"),
        ],
        &["run", "hi"],
        &["KNACK_BASE_URL", "http://"],
    );
}

#[test]
fn the_environment_only_setup_reaches_every_wire() {
    let env = Env::new();
    let server = MockModelServer::start_blocking().unwrap();
    for _ in 0..2 {
        server.enqueue(ScriptedReply::text("fine"));
    }
    for wire in ["anthropic", "responses"] {
        let out = success(
            env.knack()
                .env("KNACK_BASE_URL", server.base_url())
                .env("KNACK_MODEL", "env-model")
                .env("KNACK_WIRE", wire)
                .env("KNACK_API_KEY", KEY)
                .args(["run", "--no-review", "hi"]),
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "fine");
    }
    let sent = server.model_requests();
    assert_eq!(sent[0].path, "/v1/messages");
    assert_eq!(sent[0].header("x-api-key"), Some(KEY));
    assert_eq!(sent[1].path, "/v1/responses");
    assert_eq!(sent[1].body["model"], "env-model");
}

#[test]
fn prompt_show_names_the_model_the_session_would_use() {
    let env = Env::new();
    env.write(".env", "KNACK_MODEL=model-from-dotenv\n");
    env.write("config.yaml", "model:\n  name: model-from-config\n");
    let out = success(env.knack().args(["prompt", "show", "--json"]));
    let text = stdout_json(&out)["text"].as_str().unwrap().to_owned();
    assert!(text.contains("model-from-dotenv"), "{text}");
    assert!(!text.contains("model-from-config"), "{text}");
}

/// One provider per wire, all asking for `reasoning_effort: high`; the
/// Anthropic ones differ in how the budget is given.
const THINKING_CONFIG: &str = "\
providers:
  chat:
    wire: chat
    base_url: BASE
    reasoning_effort: high
  responses:
    wire: responses
    base_url: BASE
    reasoning_effort: high
  claude:
    wire: anthropic
    base_url: BASE
    reasoning_effort: high
  claude-budget:
    wire: anthropic
    base_url: BASE
    reasoning_effort: low
    thinking_budget: 5000
    max_output_tokens: 4000
  plain:
    wire: anthropic
    base_url: BASE
";

#[test]
fn reasoning_effort_reaches_every_wire_and_model_list() {
    let env = Env::new();
    let server = MockModelServer::start_blocking().unwrap();
    env.write(
        "config.yaml",
        &THINKING_CONFIG.replace("BASE", &server.base_url()),
    );
    let providers = ["chat", "responses", "claude", "claude-budget", "plain"];
    for _ in providers {
        server.enqueue(ScriptedReply::text("fine"));
    }
    for provider in providers {
        success(env.knack().args([
            "run",
            "--no-review",
            "--provider",
            provider,
            "--model",
            "m",
            "hi",
        ]));
    }
    let sent = server.model_requests();
    assert_eq!(sent[0].body["reasoning_effort"], "high");
    assert_eq!(sent[1].body["reasoning"]["effort"], "high");
    assert_eq!(
        sent[2].body["thinking"],
        json!({"type": "enabled", "budget_tokens": 24576})
    );
    let max_tokens = sent[2].body["max_tokens"].as_u64().unwrap();
    assert!(max_tokens > 24_576, "room for the answer: {max_tokens}");
    // An explicit budget wins over the effort; a cap below it gets the budget on top.
    assert_eq!(sent[3].body["thinking"]["budget_tokens"], 5000);
    assert_eq!(sent[3].body["max_tokens"], 9000);
    // No setting, no thinking.
    assert!(sent[4].body.get("thinking").is_none(), "{}", sent[4].body);

    let rows = stdout_json(&success(env.knack().args(["model", "list", "--json"])));
    let row = |name: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(row("claude")["reasoning_effort"], "high");
    assert_eq!(row("claude")["thinking_budget"], 24576);
    assert_eq!(row("claude-budget")["thinking_budget"], 5000);
    assert_eq!(row("chat")["reasoning_effort"], "high");
    assert_eq!(row("chat")["thinking_budget"], Value::Null);
    let text = success(env.knack().args(["model", "list"]));
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("effort high, thinking 24576 tokens"),
        "{text}"
    );
}

#[test]
fn an_effort_the_anthropic_wire_cannot_map_is_a_configuration_error() {
    let env = Env::new();
    env.write(
        "config.yaml",
        "model:\n  provider: c\n  name: m\nproviders:\n  c:\n    wire: anthropic\n    base_url: http://127.0.0.1:9/v1\n    reasoning_effort: extreme\n",
    );
    expect_config_error(
        &env,
        &[],
        &["run", "hi"],
        &[
            "providers.c.reasoning_effort",
            "extreme",
            "minimal, low, medium, high",
            "thinking_budget",
        ],
    );
    env.write(
        "config.yaml",
        "model:\n  provider: c\n  name: m\nproviders:\n  c:\n    wire: anthropic\n    base_url: http://127.0.0.1:9/v1\n    thinking_budget: 100\n",
    );
    expect_config_error(
        &env,
        &[],
        &["run", "hi"],
        &["providers.c.thinking_budget", "1024"],
    );
}
