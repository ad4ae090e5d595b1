//! Long sessions against the scripted mock with a small context window: the history is
//! compacted by a `compact` request that carries the session's own system prompt and tools,
//! later requests fit, a skill loaded early survives, resume starts from the compacted
//! history, and a huge tool output reaches the model capped.

use serde_json::{Value, json};
use test_support::{CapturedRequest, MockModelServer, Purpose, ScriptedReply};

use super::common::{Env, success};

const WINDOW: usize = 8_000;

fn run(env: &Env, server: &MockModelServer, args: &[&str]) -> Vec<Value> {
    let mut cmd = env.knack();
    cmd.env("KNACK_BASE_URL", server.base_url())
        .env("KNACK_MODEL", "mock-model")
        .env("KNACK_CONTEXT_WINDOW", WINDOW.to_string())
        .args(["run", "--json", "--no-review"])
        .args(args)
        .timeout(std::time::Duration::from_secs(120));
    let out = success(&mut cmd);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn session_id(events: &[Value]) -> String {
    events[0]["session_id"].as_str().unwrap().to_owned()
}

/// The text of every message of a request, joined.
fn all_text(req: &CapturedRequest) -> String {
    req.messages()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A size a model would not exceed: four characters a token, as the budget counts.
fn rough_tokens(req: &CapturedRequest) -> usize {
    (serde_json::to_string(req.messages()).unwrap().len()
        + serde_json::to_string(&req.body["tools"]).unwrap().len())
        / 4
}

fn filler(tag: &str, words: usize) -> String {
    (0..words).map(|i| format!("{tag}{i} ")).collect()
}

#[test]
fn a_long_session_compacts_keeps_its_prefix_and_resumes_from_the_summary() {
    let env = Env::new();
    env.write(
        "skills/deploy-notes/SKILL.md",
        "---\nname: deploy-notes\ndescription: How we deploy.\n---\n# Deploy\n\nSKILLMARK: always tag the release first.\n",
    );
    let server = MockModelServer::start_blocking().unwrap();
    for i in 0..8 {
        server.enqueue_for(
            Purpose::Compact,
            ScriptedReply::text(format!("SUMMARY-{i}: the user is deploying; notes so far.")),
        );
    }
    server.enqueue(ScriptedReply::text("noted"));
    let first = run(
        &env,
        &server,
        &[&format!("/deploy-notes OLDEST-MARKER {}", filler("a", 250))],
    );
    let id = session_id(&first);
    let opening = server.requests()[0].messages()[1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(opening.contains("SKILLMARK"), "{opening}");
    let mut compactions = 0;
    for turn in 0..24 {
        if turn == 3 {
            // A tool call in the middle: its result must stay paired with it.
            server.enqueue(ScriptedReply::tool_calls([(
                "call_t",
                "terminal",
                json!({"command": "echo tool-ran"}).to_string(),
            )]));
        }
        server.enqueue(ScriptedReply::text(format!("answer {turn}")));
        let events = run(
            &env,
            &server,
            &[
                "--resume",
                &id,
                &format!("turn {turn}: {}", filler("w", 220)),
            ],
        );
        compactions += events.iter().filter(|e| e["type"] == "compaction").count();
        for e in events.iter().filter(|e| e["type"] == "compaction") {
            assert!(e["before_tokens"].as_u64().unwrap() > e["after_tokens"].as_u64().unwrap());
        }
    }
    // More than one, so a summary of a summary happens too; fewer than one
    // a turn, so the cache is not thrown away every time.
    assert!((2..=6).contains(&compactions), "{compactions} compactions");

    let requests = server.requests();
    let compact: Vec<&CapturedRequest> = requests
        .iter()
        .filter(|r| r.purpose() == Some("compact"))
        .collect();
    assert_eq!(compact.len(), compactions);
    let turns: Vec<&CapturedRequest> = requests
        .iter()
        .filter(|r| r.purpose() == Some("turn"))
        .collect();
    // The same prefix on every request, the compaction's included.
    for req in requests.iter() {
        assert_eq!(req.messages()[0], turns[0].messages()[0]);
        assert_eq!(req.body["tools"], turns[0].body["tools"]);
    }
    // The summarising request asks for a summary and has no answer to give yet.
    let last_message = compact[0].messages().last().unwrap();
    assert_eq!(last_message["role"], "user");
    assert!(
        last_message["content"]
            .as_str()
            .unwrap()
            .contains("summary")
    );
    // Every turn request after the first compaction fits the window.
    let first_compact_at = requests
        .iter()
        .position(|r| r.purpose() == Some("compact"))
        .unwrap();
    for req in requests[first_compact_at..]
        .iter()
        .filter(|r| r.purpose() == Some("turn"))
    {
        assert!(rough_tokens(req) < WINDOW, "{} tokens", rough_tokens(req));
    }
    let last = turns.last().unwrap();
    let text = all_text(last);
    assert!(
        text.contains("SUMMARY-"),
        "the summary is in the conversation"
    );
    assert!(!text.contains("OLDEST-MARKER"), "the oldest text is gone");
    assert!(
        text.contains("SKILLMARK"),
        "the skill loaded first is still there: {}",
        serde_json::to_string_pretty(last.messages()).unwrap()
    );
    assert!(text.contains("turn 23"), "the newest turn is kept verbatim");

    // The store keeps the lineage; a resume starts from the compacted history.
    let out = success(env.knack().args(["sessions", "show", &id, "--json"]));
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        shown["compactions"].as_array().map(Vec::len),
        Some(compactions),
        "{shown}"
    );
    server.enqueue(ScriptedReply::text("resumed"));
    run(&env, &server, &["--resume", &id, "one more"]);
    let resumed = server.requests().into_iter().last().unwrap();
    let second = resumed.messages()[1]["content"].as_str().unwrap();
    assert!(second.contains("SUMMARY-"), "{second}");
}

#[test]
fn a_huge_tool_output_reaches_the_model_capped() {
    let env = Env::new();
    let server = MockModelServer::start_blocking().unwrap();
    server.enqueue(ScriptedReply::tool_calls([(
        "big",
        "terminal",
        json!({"command": "python3 -c \"print('x' * 200000)\""}).to_string(),
    )]));
    server.enqueue(ScriptedReply::text("seen"));
    env.write(
        "config.yaml",
        "terminal:\n  output_cap_chars: 500000\ntools:\n  max_output_chars: 30000\n",
    );
    let mut cmd = env.knack();
    cmd.env("KNACK_BASE_URL", server.base_url())
        .env("KNACK_MODEL", "mock-model")
        .env("KNACK_CONTEXT_WINDOW", "200000")
        .args(["run", "--no-review", "make noise"]);
    success(&mut cmd);
    let last = server.requests().into_iter().last().unwrap();
    let tool = last
        .messages()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(tool.chars().count() <= 30_000, "{}", tool.len());
    assert!(tool.contains("characters cut here"), "says so");
}

#[test]
fn a_window_too_small_for_the_prompt_fails_clearly() {
    let env = Env::new();
    let server = MockModelServer::start_blocking().unwrap();
    let mut cmd = env.knack();
    cmd.env("KNACK_BASE_URL", server.base_url())
        .env("KNACK_MODEL", "mock-model")
        .env("KNACK_CONTEXT_WINDOW", "1000")
        .args(["run", "hello"]);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("context window (1000 tokens"), "{err}");
    assert!(server.requests().is_empty(), "no request was sent");

    let out = env
        .knack()
        .env("KNACK_BASE_URL", server.base_url())
        .env("KNACK_MODEL", "mock-model")
        .env("KNACK_CONTEXT_WINDOW", "lots")
        .args(["run", "hello"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("KNACK_CONTEXT_WINDOW"));
}

#[test]
fn sessions_compact_summarises_a_stored_session_on_demand() {
    let env = Env::new();
    let server = MockModelServer::start_blocking().unwrap();
    let big = |env: &Env, server: &MockModelServer, args: &[&str]| {
        let mut cmd = env.knack();
        cmd.env("KNACK_BASE_URL", server.base_url())
            .env("KNACK_MODEL", "mock-model")
            .env("KNACK_CONTEXT_WINDOW", "200000");
        cmd.args(args);
        success(&mut cmd)
    };
    server.enqueue(ScriptedReply::text("one"));
    let out = big(&env, &server, &["run", "--json", "--no-review", "first"]);
    let first: Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap()).unwrap();
    let id = first["session_id"].as_str().unwrap().to_owned();
    // One turn only: nothing to summarise yet.
    let out = big(&env, &server, &["sessions", "compact", &id]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("too short"));
    for turn in 0..3 {
        server.enqueue(ScriptedReply::text(format!("reply {turn}")));
        big(
            &env,
            &server,
            &[
                "run",
                "--no-review",
                "--resume",
                &id,
                &format!("more {turn}"),
            ],
        );
    }
    server.enqueue_for(Purpose::Compact, ScriptedReply::text("SUMMARY-ON-DEMAND"));
    let out = big(&env, &server, &["sessions", "compact", &id]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("compacted"));
    let compact = server
        .requests()
        .into_iter()
        .find(|r| r.purpose() == Some("compact"))
        .unwrap();
    assert_eq!(compact.messages()[0], server.requests()[0].messages()[0]);
    let out = big(&env, &server, &["sessions", "show", &id, "--json"]);
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(shown["compactions"][0]["summary"], "SUMMARY-ON-DEMAND");
    let out = big(&env, &server, &["sessions", "show", &id]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("compacted"));
}

#[test]
fn a_long_command_output_is_cut_and_saved_whole_for_the_model_to_read() {
    let env = Env::new();
    let server = MockModelServer::start_blocking().unwrap();
    server.enqueue(ScriptedReply::tool_calls([(
        "big",
        "terminal",
        json!({"command": "seq 1 100000"}).to_string(),
    )]));
    server.enqueue(ScriptedReply::text("seen"));
    let mut cmd = env.knack();
    cmd.env("KNACK_BASE_URL", server.base_url())
        .env("KNACK_MODEL", "mock-model")
        .env("KNACK_CONTEXT_WINDOW", "200000")
        .args(["run", "--no-review", "count"]);
    success(&mut cmd);
    let last = server.requests().into_iter().last().unwrap();
    let tool: Value = serde_json::from_str(
        last.messages()
            .iter()
            .find(|m| m["role"] == "tool")
            .unwrap()["content"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(tool["truncated"], true);
    let path = tool["full_output"].as_str().unwrap();
    assert!(tool["output"].as_str().unwrap().contains(path));
    let saved = std::fs::read_to_string(path).unwrap();
    assert_eq!(saved.lines().count(), 100_000);
    assert!(saved.ends_with("99999\n100000\n"));
    let _ = std::fs::remove_file(path);
}

#[test]
fn a_failed_summary_leaves_the_history_untouched_and_says_so() {
    let env = Env::new();
    env.write(
        "config.yaml",
        "model:\n  max_retries: 1\n  retry_base_delay_ms: 10\n  retry_max_delay_ms: 20\n",
    );
    let server = MockModelServer::start_blocking().unwrap();
    let big = |env: &Env, server: &MockModelServer, args: &[&str]| {
        let mut cmd = env.knack();
        cmd.env("KNACK_BASE_URL", server.base_url())
            .env("KNACK_MODEL", "mock-model")
            .env("KNACK_CONTEXT_WINDOW", "200000")
            .args(args);
        cmd.output().unwrap()
    };
    server.enqueue(ScriptedReply::text("one"));
    let out = big(&env, &server, &["run", "--json", "--no-review", "first"]);
    let first: Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap()).unwrap();
    let id = first["session_id"].as_str().unwrap().to_owned();
    server.enqueue(ScriptedReply::text("two"));
    big(
        &env,
        &server,
        &["run", "--no-review", "--resume", &id, "second"],
    );
    let before =
        String::from_utf8_lossy(&big(&env, &server, &["sessions", "show", &id, "--json"]).stdout)
            .into_owned();
    // The summarising request fails (the server errors every time).
    server.enqueue_for(Purpose::Compact, ScriptedReply::status(500));
    server.enqueue_for(Purpose::Compact, ScriptedReply::status(500));
    let out = big(&env, &server, &["sessions", "compact", &id]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("left as it was"), "{err}");
    let after =
        String::from_utf8_lossy(&big(&env, &server, &["sessions", "show", &id, "--json"]).stdout)
            .into_owned();
    assert_eq!(before, after, "nothing changed in the store");
}
