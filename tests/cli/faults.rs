//! Fault injection through `knack run` against the mock model server: every fault
//! is either recovered (a `retry` event shows it) or a clear error with exit 1,
//! the stored session is whole up to the last good message, and nothing panics.
//!
//! Cases `run.rs` already covers (429 without Retry-After then success, three
//! 500s, a cut mid tool call that the retry repairs, bad tool-argument JSON) are
//! not repeated here.

use serde_json::{Value, json};
use test_support::{ScriptedReply, check_invariants};

use super::common::{Env, mock, stdout_json, success};

/// Fast retries (3 attempts in all) and, optionally, a short idle timeout.
fn env_with(idle_timeout_secs: Option<u64>) -> Env {
    let env = Env::new();
    let mut config = String::from(
        "model:\n  max_retries: 2\n  retry_base_delay_ms: 10\n  retry_max_delay_ms: 50\n",
    );
    if let Some(secs) = idle_timeout_secs {
        config.push_str(&format!("  idle_timeout_secs: {secs}\n"));
    }
    env.write("config.yaml", &config);
    env
}

/// What one `knack run --json` did.
struct Run {
    code: Option<i32>,
    events: Vec<Value>,
    stderr: String,
}

impl Run {
    fn of_type(&self, kind: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == kind).collect()
    }

    fn last_type(&self) -> &str {
        self.events
            .last()
            .and_then(|e| e["type"].as_str())
            .unwrap_or("")
    }

    fn session_id(&self) -> String {
        self.of_type("session_started")[0]["session_id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Text deltas after the last retry: a retry voids what streamed before it.
    fn deltas_after_last_retry(&self) -> String {
        let start = self
            .events
            .iter()
            .rposition(|e| e["type"] == "retry")
            .map_or(0, |i| i + 1);
        self.events[start..]
            .iter()
            .filter(|e| e["type"] == "assistant_delta")
            .map(|e| e["text"].as_str().unwrap())
            .collect()
    }

    /// Recovered: exit 0, at least one retry, the answer given, no panic.
    fn assert_recovered(&self, answer: &str) {
        assert_eq!(self.code, Some(0), "stderr: {}", self.stderr);
        assert!(!self.of_type("retry").is_empty(), "no retry event");
        assert_eq!(self.last_type(), "turn_complete");
        let messages = self.of_type("assistant_message");
        assert_eq!(messages.last().unwrap()["text"], json!(answer));
        assert_eq!(self.deltas_after_last_retry(), answer);
        self.assert_no_panic();
    }

    /// Failed cleanly: exit 1, an `error` event last, a plain-text reason on stderr.
    fn assert_failed(&self, reason_contains: &str) -> String {
        assert_eq!(self.code, Some(1), "stderr: {}", self.stderr);
        assert_eq!(self.last_type(), "error", "{:?}", self.events);
        let message = self.events.last().unwrap()["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            message.contains(reason_contains),
            "'{message}' lacks '{reason_contains}'"
        );
        self.assert_no_panic();
        message
    }

    fn assert_no_panic(&self) {
        assert!(!self.stderr.contains("panicked"), "{}", self.stderr);
    }
}

fn run_json(env: &Env, base_url: &str, prompt: &str) -> Run {
    let out = env
        .knack()
        .env("KNACK_BASE_URL", base_url)
        .env("KNACK_MODEL", "mock-model")
        .timeout(std::time::Duration::from_secs(60))
        .args(["run", "--json", "--no-review", prompt])
        .output()
        .unwrap();
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    Run {
        code: out.status.code(),
        events,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The messages `knack sessions show ID --json` has stored.
fn stored_messages(env: &Env, id: &str) -> Vec<Value> {
    let out = success(env.knack().args(["sessions", "show", id, "--json"]));
    stdout_json(&out)["messages"].as_array().unwrap().clone()
}

/// A run that no request ever succeeded for leaves no session behind.
fn assert_no_session(env: &Env, id: &str) {
    let out = env.knack().args(["sessions", "show", id]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "session {id} was saved");
}

fn roles(messages: &[Value]) -> Vec<&str> {
    messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect()
}

#[test]
fn connection_refused_fails_with_the_address_and_saves_no_session() {
    let env = env_with(None);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let run = run_json(
        &env,
        &format!("http://127.0.0.1:{port}/v1"),
        "is anyone there",
    );
    run.assert_failed(&format!("127.0.0.1:{port}"));
    // A server on this machine that refuses is retried once, not max_retries times.
    assert_eq!(run.of_type("retry").len(), 1, "{:?}", run.events);
    // Nothing was ever answered, so no empty session is left behind.
    assert_no_session(&env, &run.session_id());
}

#[test]
fn rate_limit_with_retry_after_waits_as_long_as_the_server_asks() {
    let env = env_with(None);
    let server = mock();
    server.enqueue(ScriptedReply::status(429).retry_after(1));
    server.enqueue(ScriptedReply::text("worth the wait"));
    let started = std::time::Instant::now();
    let run = run_json(&env, &server.base_url(), "hi");
    run.assert_recovered("worth the wait");
    let retry = run.of_type("retry")[0];
    assert_eq!(
        retry["delay_ms"],
        json!(1000),
        "Retry-After beats the backoff"
    );
    assert!(retry["reason"].as_str().unwrap().contains("429"));
    assert!(started.elapsed() >= std::time::Duration::from_secs(1));
    assert_eq!(server.chat_requests().len(), 2);
}

#[test]
fn rate_limit_without_retry_after_that_never_clears_fails_after_the_retries() {
    let env = env_with(None);
    let server = mock();
    for _ in 0..3 {
        server.enqueue(ScriptedReply::status(429).with_error_message("slow down"));
    }
    let run = run_json(&env, &server.base_url(), "hurry");
    run.assert_failed("429");
    let retries = run.of_type("retry");
    assert_eq!(retries.len(), 2);
    // Without Retry-After the fast backoff applies (config caps it at 50 ms).
    assert!(
        retries
            .iter()
            .all(|r| r["delay_ms"].as_u64().unwrap() <= 50)
    );
    assert_eq!(server.chat_requests().len(), 3);
    assert_no_session(&env, &run.session_id());
}

#[test]
fn gateway_errors_502_and_503_are_retried_until_an_answer_comes() {
    let env = env_with(None);
    let server = mock();
    server.enqueue(ScriptedReply::status(502));
    server.enqueue(ScriptedReply::status(503).with_error_message("warming up"));
    server.enqueue(ScriptedReply::text("up again"));
    let run = run_json(&env, &server.base_url(), "ping");
    run.assert_recovered("up again");
    let reasons: Vec<&str> = run
        .of_type("retry")
        .iter()
        .map(|r| r["reason"].as_str().unwrap())
        .collect();
    assert_eq!(reasons.len(), 2);
    assert!(reasons[0].contains("502"), "{reasons:?}");
    assert!(reasons[1].contains("503"), "{reasons:?}");
    let stored = stored_messages(&env, &run.session_id());
    assert_eq!(roles(&stored), ["user", "assistant"]);
    assert_eq!(stored[1]["content"], json!("up again"));
}

#[test]
fn server_errors_after_a_tool_round_keep_everything_before_them() {
    let env = env_with(None);
    let server = mock();
    server.enqueue(ScriptedReply::tool_calls([("c1", "skills_list", "{}")]));
    server.enqueue(ScriptedReply::status(500));
    server.enqueue(ScriptedReply::status(502));
    server.enqueue(ScriptedReply::status(503));
    let run = run_json(&env, &server.base_url(), "list then answer");
    run.assert_failed("503");
    assert_eq!(run.of_type("tool_call_end").len(), 1);
    let stored = stored_messages(&env, &run.session_id());
    assert_eq!(roles(&stored), ["user", "assistant", "tool"]);
    assert_eq!(stored[1]["tool_calls"][0]["id"], json!("c1"));
    assert_eq!(stored[2]["tool_call_id"], json!("c1"));
    check_invariants(&server.requests()).unwrap();
}

#[test]
fn a_stream_cut_mid_message_is_resent_and_the_partial_text_is_voided() {
    let env = env_with(None);
    let server = mock();
    server.enqueue(ScriptedReply::text("first draft that never ends").cut_after_chunks(2));
    server.enqueue(ScriptedReply::text("the complete answer"));
    let run = run_json(&env, &server.base_url(), "explain");
    run.assert_recovered("the complete answer");
    // The voided attempt did stream something before the retry.
    let first_retry = run
        .events
        .iter()
        .position(|e| e["type"] == "retry")
        .unwrap();
    assert!(
        run.events[..first_retry]
            .iter()
            .any(|e| e["type"] == "assistant_delta"),
        "{:?}",
        run.events
    );
    let stored = stored_messages(&env, &run.session_id());
    assert_eq!(roles(&stored), ["user", "assistant"]);
    assert_eq!(stored[1]["content"], json!("the complete answer"));
}

#[test]
fn a_stream_that_always_stops_mid_tool_call_fails_without_running_the_tool() {
    let env = env_with(None);
    let server = mock();
    for _ in 0..3 {
        server.enqueue(
            ScriptedReply::tool_calls([("c1", "memory", r#"{"action":"add","content":"x"}"#)])
                .cut_after_chunks(2),
        );
    }
    let run = run_json(&env, &server.base_url(), "remember x");
    run.assert_failed("");
    assert_eq!(run.of_type("retry").len(), 2);
    assert!(run.of_type("tool_call_begin").is_empty(), "a half call ran");
    // No half tool call was stored; with no answer at all, no session is.
    assert_no_session(&env, &run.session_id());
    assert!(!env.home_path("memories/MEMORY.md").exists());
}

#[test]
fn chunks_5s_apart_trip_a_1s_idle_timeout_and_the_retry_recovers() {
    let env = env_with(Some(1));
    let server = mock();
    // Every frame waits 5 s. The first one falls under the (longer) first-byte
    // timeout and arrives; the 5 s gap before the second trips the idle timeout.
    server.enqueue(ScriptedReply::text("too slow").chunk_delay_ms(5_000));
    server.enqueue(ScriptedReply::text("on time"));
    let run = run_json(&env, &server.base_url(), "quick");
    // Waiting the slow reply out would answer "too slow" with no retry; the
    // retry's reason shows the idle timeout, not some other fault, ended it.
    run.assert_recovered("on time");
    let reason = run.of_type("retry")[0]["reason"].as_str().unwrap();
    assert!(reason.contains("idle_timeout_secs"), "{reason}");
}

#[test]
fn chunks_5s_apart_complete_when_the_idle_timeout_is_larger() {
    let env = env_with(Some(30));
    let server = mock();
    // One frame, then [DONE]; each waits 5 s.
    server.enqueue(ScriptedReply::raw_frames([
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"patient answer"},"finish_reason":"stop"}]}"#,
    ])
    .chunk_delay_ms(5_000));
    let run = run_json(&env, &server.base_url(), "take your time");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.of_type("retry").is_empty());
    assert_eq!(
        run.of_type("assistant_message")[0]["text"],
        json!("patient answer")
    );
    run.assert_no_panic();
}

#[test]
fn an_invalid_json_chunk_is_retried_and_never_silently_dropped() {
    let env = env_with(None);
    let server = mock();
    server.enqueue(ScriptedReply::text("half readable").with_invalid_json_chunk());
    server.enqueue(ScriptedReply::text("whole again"));
    let run = run_json(&env, &server.base_url(), "go");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let retries = run.of_type("retry");
    assert_eq!(retries.len(), 1, "{:?}", run.events);
    assert_eq!(retries[0]["reason"], json!("unreadable stream chunk"));
    assert_eq!(
        run.of_type("assistant_message")[0]["text"],
        json!("whole again")
    );
    run.assert_no_panic();
}

#[test]
fn a_stream_of_nothing_but_garbage_fails_clearly_after_the_retries() {
    let env = env_with(None);
    let server = mock();
    for _ in 0..3 {
        server.enqueue(ScriptedReply::raw_frames([
            "<html>bad gateway</html>",
            "{oops",
        ]));
    }
    let run = run_json(&env, &server.base_url(), "go");
    let message = run.assert_failed("");
    assert!(
        message.contains("<html>") || message.contains("JSON"),
        "{message}"
    );
    assert_no_session(&env, &run.session_id());
}

#[test]
fn an_empty_choices_chunk_in_the_middle_changes_nothing() {
    let env = env_with(None);
    let server = mock();
    server.enqueue(
        ScriptedReply::tool_calls([("c1", "skills_list", "{}")]).with_empty_choices_chunk(),
    );
    server.enqueue(ScriptedReply::text("listed").with_empty_choices_chunk());
    let run = run_json(&env, &server.base_url(), "list");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.of_type("tool_call_end")[0]["success"], json!(true));
    assert_eq!(run.of_type("assistant_message")[0]["text"], json!("listed"));
    run.assert_no_panic();
    check_invariants(&server.requests()).unwrap();
}

#[test]
fn a_reply_that_says_nothing_is_retried_then_reported_as_an_error() {
    let env = env_with(None);
    let server = mock();
    let nothing = ScriptedReply::raw_frames([
        r#"{"id":"x","choices":[]}"#,
        r#"{"id":"x","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":0}}"#,
    ]);
    // max_retries is 2: three empty attempts, then the run fails.
    for _ in 0..3 {
        server.enqueue(nothing.clone());
    }
    let run = run_json(&env, &server.base_url(), "say nothing");
    run.assert_no_panic();
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert_eq!(run.of_type("retry").len(), 2);
    assert_eq!(run.of_type("retry")[0]["reason"], json!("empty reply"));
    assert!(run.of_type("assistant_message").is_empty());
    assert_eq!(run.last_type(), "error");
    let message = run.of_type("error")[0]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.contains("neither text nor a tool call"),
        "{message}"
    );
    // Nothing was answered, so no session is left to resume.
    assert_no_session(&env, &run.session_id());

    // One empty attempt followed by a real answer is just a retry.
    let server = mock();
    server.enqueue(ScriptedReply::default().with_reasoning("only thinking"));
    server.enqueue(ScriptedReply::text("here it is"));
    let run = run_json(&env, &server.base_url(), "say something");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.of_type("retry").len(), 1);
    assert_eq!(
        run.of_type("assistant_message")[0]["text"],
        json!("here it is")
    );
}

#[test]
fn an_empty_reply_cut_short_by_the_output_limit_is_not_retried() {
    let env = env_with(None);
    let server = mock();
    server.enqueue(
        ScriptedReply::default()
            .with_reasoning("a long chain of thought")
            .finish_reason("length"),
    );
    let run = run_json(&env, &server.base_url(), "think hard");
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.of_type("retry").is_empty());
    let message = run.of_type("error")[0]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.contains("max_output_tokens"), "{message}");
}

#[test]
fn a_call_to_an_unknown_tool_is_answered_with_an_error_and_the_loop_goes_on() {
    let env = env_with(None);
    let server = mock();
    server.enqueue(ScriptedReply::tool_calls([(
        "c1",
        "launch_rockets",
        r#"{"count":3}"#,
    )]));
    server.enqueue(ScriptedReply::text("that tool does not exist"));
    let run = run_json(&env, &server.base_url(), "launch");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    run.assert_no_panic();
    let end = run.of_type("tool_call_end")[0];
    assert_eq!(end["success"], json!(false));
    let second = &server.chat_requests()[1];
    let result = second
        .messages()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    let text = result["content"].as_str().unwrap();
    assert!(text.contains("launch_rockets"), "{text}");
    check_invariants(&server.requests()).unwrap();
    let stored = stored_messages(&env, &run.session_id());
    assert_eq!(roles(&stored), ["user", "assistant", "tool", "assistant"]);
}

#[test]
fn one_megabyte_of_tool_arguments_is_handled_and_stored_whole() {
    let env = env_with(None);
    let server = mock();
    let big = "x".repeat(1024 * 1024);
    let arguments = json!({"name": big}).to_string();
    server.enqueue(ScriptedReply::tool_calls([(
        "c1",
        "skill_view",
        arguments.clone(),
    )]));
    server.enqueue(ScriptedReply::text("no such skill"));
    let run = run_json(&env, &server.base_url(), "view it");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    run.assert_no_panic();
    assert_eq!(run.of_type("tool_call_end")[0]["success"], json!(false));
    // The tool result sent back stays small even though the arguments were huge.
    let second = &server.chat_requests()[1];
    let echoed = &second.messages()[2];
    assert_eq!(
        echoed["tool_calls"][0]["function"]["arguments"],
        json!(arguments)
    );
    let result = second.messages()[3]["content"].as_str().unwrap();
    assert!(result.len() < 64 * 1024, "result of {} bytes", result.len());
    let stored = stored_messages(&env, &run.session_id());
    assert_eq!(roles(&stored), ["user", "assistant", "tool", "assistant"]);
    assert_eq!(
        stored[1]["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap()
            .len(),
        arguments.len()
    );
    check_invariants(&server.requests()).unwrap();
}

/// The review is best-effort and the user's next message waits behind it: a
/// failing review request is retried once, whatever `model.max_retries` says,
/// and the run still ends well.
#[test]
fn a_failing_review_is_retried_once_and_the_run_still_succeeds() {
    let env = env_with(None);
    let server = mock();
    for i in 0..6 {
        server.enqueue(ScriptedReply::tool_calls([(
            format!("t{i}"),
            "skills_list",
            "{}",
        )]));
    }
    server.enqueue(ScriptedReply::text("all done"));
    for _ in 0..3 {
        server.enqueue_for(test_support::Purpose::Review, ScriptedReply::status(500));
    }
    let out =
        success(super::common::run_cmd(&env, &server).args(["run", "--json", "do the long task"]));
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let started = events
        .iter()
        .position(|e| e["type"] == "review_started")
        .expect("the review ran");
    let review_retries = events[started..]
        .iter()
        .filter(|e| e["type"] == "retry")
        .count();
    assert_eq!(review_retries, 1, "max_retries is 2, the review gets 1");
    let review_requests = server
        .chat_requests()
        .iter()
        .filter(|r| r.purpose() == Some("review"))
        .count();
    assert_eq!(review_requests, 2);
    assert_eq!(events.last().unwrap()["type"], "turn_complete");
}
