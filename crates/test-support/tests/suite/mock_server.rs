//! Drives the mock server with a raw std TcpStream, the way any HTTP/1.1 client would.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use test_support::{MockModelServer, NO_REPLY_LEFT, Purpose, ScriptedReply, check_invariants};

fn post(server_addr: std::net::SocketAddr, purpose: &str, body: &Value) -> String {
    let body = body.to_string();
    let mut stream = TcpStream::connect(server_addr).unwrap();
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Knack-Purpose: {purpose}\r\nX-Knack-Session: s-1\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

/// The assistant text a response streamed, joined from its `data:` frames.
fn streamed_text(response: &str) -> String {
    response
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .filter_map(|chunk| {
            chunk["choices"][0]["delta"]["content"]
                .as_str()
                .map(String::from)
        })
        .collect()
}

fn body() -> Value {
    json!({"model": "m", "stream": true, "messages": [{"role": "system", "content": "sys"}]})
}

#[test]
fn streams_text_as_chunked_sse_and_captures_the_request() {
    let server = MockModelServer::start_blocking().unwrap();
    server.enqueue(ScriptedReply::text("hello world").with_usage(7, 2, 3));
    let response = post(server.addr(), "turn", &body());

    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(response.contains("Transfer-Encoding: chunked"));
    assert!(response.contains("Connection: close"));
    assert!(response.contains("data: [DONE]\n\n"));
    assert!(response.ends_with("0\r\n\r\n"));
    assert!(response.contains(r#""cached_tokens":3"#));
    assert_eq!(streamed_text(&response), "hello world");

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].purpose(), Some("turn"));
    assert_eq!(requests[0].session(), Some("s-1"));
    assert_eq!(requests[0].body, body());
    assert_eq!(check_invariants(&requests), Ok(()));
}

#[test]
fn status_errors_carry_retry_after_and_a_json_message() {
    let server = MockModelServer::start_blocking().unwrap();
    server.enqueue(ScriptedReply::status(429).retry_after(2));
    server.enqueue(ScriptedReply::status(503).with_error_message("overloaded"));
    let limited = post(server.addr(), "turn", &body());
    assert!(
        limited.starts_with("HTTP/1.1 429 Too Many Requests\r\n"),
        "{limited}"
    );
    assert!(limited.contains("Retry-After: 2\r\n"));
    let unavailable = post(server.addr(), "turn", &body());
    assert!(unavailable.starts_with("HTTP/1.1 503"));
    assert!(!unavailable.contains("Retry-After"));
    assert!(unavailable.contains(r#""message":"overloaded""#));
}

#[test]
fn an_empty_queue_answers_500_with_a_loud_message() {
    let server = MockModelServer::start_blocking().unwrap();
    let response = post(server.addr(), "turn", &body());
    assert!(response.starts_with("HTTP/1.1 500"), "{response}");
    assert!(response.contains(NO_REPLY_LEFT));
}

#[test]
fn review_requests_draw_from_their_own_queue() {
    let server = MockModelServer::start_blocking().unwrap();
    server.enqueue(ScriptedReply::text("for the turn"));
    server.enqueue_for(Purpose::Review, ScriptedReply::text("for the review"));
    let review = post(server.addr(), "review", &body());
    assert_eq!(streamed_text(&review), "for the review");
    assert_eq!(server.pending(Purpose::Turn), 1);
    assert_eq!(server.pending(Purpose::Review), 0);
}

#[test]
fn a_cut_stream_closes_without_done_or_final_chunk() {
    let server = MockModelServer::start_blocking().unwrap();
    server.enqueue(
        ScriptedReply::tool_calls([("call_1", "skills_list", r#"{"category":"x"}"#)])
            .cut_after_chunks(2),
    );
    let response = post(server.addr(), "turn", &body());
    assert_eq!(response.matches("data: ").count(), 2, "{response}");
    assert!(!response.contains("[DONE]"));
    assert!(!response.ends_with("0\r\n\r\n"));
}

#[tokio::test]
async fn starts_inside_an_async_test_and_delays_chunks() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(ScriptedReply::text("abcdef").chunk_delay_ms(30));
    let addr = server.addr();
    let started = std::time::Instant::now();
    let response = tokio::task::spawn_blocking(move || post(addr, "turn", &body()))
        .await
        .unwrap();
    // 3 text frames + finish + [DONE], each delayed.
    assert!(
        started.elapsed().as_millis() >= 150,
        "{:?}",
        started.elapsed()
    );
    assert!(response.contains("[DONE]"));
}

#[test]
fn the_binary_serves_a_script_file_and_logs_requests() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    let log = dir.path().join("requests.jsonl");
    std::fs::write(
        &script,
        r#"[{"text": "from the script"}, {"purpose": "review", "status": 502}]"#,
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mock-model-server"))
        .arg(&script)
        .arg("--request-log")
        .arg(&log)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base_url = line.trim().to_owned();
    let addr = base_url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/v1"))
        .unwrap()
        .parse()
        .unwrap();

    let review = post(addr, "review", &body());
    let turn = post(addr, "turn", &body());
    child.kill().unwrap();
    child.wait().unwrap();

    assert!(review.starts_with("HTTP/1.1 502"), "{review}");
    assert_eq!(streamed_text(&turn), "from the script");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(logged.lines().count(), 2);
    let first: Value = serde_json::from_str(logged.lines().next().unwrap()).unwrap();
    assert_eq!(first["headers"]["x-knack-purpose"], "review");
}

#[test]
fn a_request_breaking_the_invariants_is_refused_and_recorded() {
    let server = MockModelServer::start_blocking().unwrap();
    server.enqueue(ScriptedReply::text("first"));
    server.enqueue(ScriptedReply::text("never served"));
    assert!(post(server.addr(), "turn", &body()).starts_with("HTTP/1.1 200 OK\r\n"));
    // Same session, another system prompt, and a tool result nobody asked for.
    let bad = json!({"model": "m", "messages": [
        {"role": "system", "content": "changed"},
        {"role": "tool", "tool_call_id": "ghost", "content": "{}"},
        {"role": "wizard", "content": "?"},
    ]});
    let response = post(server.addr(), "turn", &bad);
    assert!(response.starts_with("HTTP/1.1 400 "), "{response}");
    assert!(
        response.contains(test_support::INVARIANT_VIOLATED),
        "{response}"
    );
    assert!(response.contains("mock_invariant_violation"), "{response}");
    // A refused request uses up no scripted reply.
    assert_eq!(server.pending(Purpose::Turn), 1);
    assert_eq!(server.requests().len(), 2);
    let violations = server.take_violations();
    assert_eq!(violations.len(), 3, "{violations:#?}");
    assert!(
        violations[0].contains("unknown role 'wizard'"),
        "{violations:#?}"
    );
    assert!(
        violations[1].contains("unknown call 'ghost'"),
        "{violations:#?}"
    );
    assert!(
        violations[2].contains("request #1: messages[0] differs from request #0"),
        "{violations:#?}"
    );
    assert!(server.violations().is_empty());
}

#[test]
fn another_session_may_have_another_prompt() {
    let server = MockModelServer::start_blocking().unwrap();
    server.enqueue(ScriptedReply::text("a"));
    server.enqueue(ScriptedReply::text("b"));
    post(server.addr(), "turn", &body());
    let other = json!({"model": "m", "messages": [{"role": "system", "content": "other"}]});
    let body = other.to_string();
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Knack-Session: s-2\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(server.violations().is_empty());
}

#[test]
#[should_panic(expected = "received requests that break the invariants")]
fn dropping_the_server_with_violations_left_fails_the_test() {
    let server = MockModelServer::start_blocking().unwrap();
    let no_system = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    let response = post(server.addr(), "turn", &no_system);
    assert!(response.starts_with("HTTP/1.1 400 "), "{response}");
    drop(server);
}

#[tokio::test]
async fn a_stalled_stream_stays_open_until_the_server_is_dropped() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(ScriptedReply::text("abcdef").stall_after_chunks(1));
    let addr = server.addr();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let body = body().to_string();
        let mut stream = TcpStream::connect(addr).unwrap();
        write!(
            stream,
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Knack-Session: s-1\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut reader = BufReader::new(stream);
        let mut seen = String::new();
        let mut line = String::new();
        // Report the first frame, then read on until the server goes away.
        while reader.read_line(&mut line).unwrap_or(0) > 0 {
            if line.starts_with("data: ") {
                let _ = tx.send(line.clone());
            }
            seen.push_str(&line);
            line.clear();
        }
        seen
    });
    let first = tokio::task::spawn_blocking(move || rx.recv().unwrap())
        .await
        .unwrap();
    assert!(first.contains("\"choices\""), "{first}");
    drop(server);
    let seen = tokio::task::spawn_blocking(move || reader.join().unwrap())
        .await
        .unwrap();
    assert_eq!(seen.matches("data: ").count(), 1, "{seen}");
    assert!(!seen.contains("[DONE]"), "{seen}");
}
