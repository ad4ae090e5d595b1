//! A scripted model server on 127.0.0.1 speaking all three wires, hand-rolled on a TcpListener.
//! It runs on its own thread and runtime so sync tests and subprocesses can talk to it too.

use crate::invariants::InvariantChecker;
use crate::listener::{ServerThread, spawn_server};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

use crate::reply::ScriptedReply;

/// Which queue a request draws its reply from, by its `X-Knack-Purpose` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// The conversation (also any request without a purpose header).
    #[default]
    Turn,
    /// The self-improvement review.
    Review,
    /// A compaction's summarising request.
    Compact,
}

impl Purpose {
    fn from_header(value: Option<&str>) -> Self {
        match value {
            Some(v) if v.eq_ignore_ascii_case("review") => Self::Review,
            Some(v) if v.eq_ignore_ascii_case("compact") => Self::Compact,
            _ => Self::Turn,
        }
    }
}

/// The wire protocol of a model request, by its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelWire {
    /// `POST …/chat/completions`
    Chat,
    /// `POST …/messages`
    Anthropic,
    /// `POST …/responses`
    Responses,
}

/// One request as the server received it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapturedRequest {
    pub method: String,
    pub path: String,
    /// Header names in lower case.
    pub headers: BTreeMap<String, String>,
    /// The body parsed as JSON (`Value::Null` when it was not JSON).
    pub body: Value,
    /// The body exactly as sent, for byte-level comparisons.
    pub raw_body: String,
}

impl CapturedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    pub fn purpose(&self) -> Option<&str> {
        self.header("x-knack-purpose")
    }

    pub fn session(&self) -> Option<&str> {
        self.header("x-knack-session")
    }

    pub fn is_chat_completion(&self) -> bool {
        self.wire() == Some(ModelWire::Chat)
    }

    /// Which wire this model request speaks; `None` for anything else.
    pub fn wire(&self) -> Option<ModelWire> {
        if self.method != "POST" {
            return None;
        }
        let path = self.path.split('?').next().unwrap_or_default();
        if path.ends_with("/chat/completions") {
            Some(ModelWire::Chat)
        } else if path.ends_with("/messages") {
            Some(ModelWire::Anthropic)
        } else if path.ends_with("/responses") {
            Some(ModelWire::Responses)
        } else {
            None
        }
    }

    pub fn messages(&self) -> &[Value] {
        self.body
            .get("messages")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }
}

#[derive(Default)]
struct Shared {
    queues: Mutex<HashMap<Purpose, VecDeque<ScriptedReply>>>,
    requests: Mutex<Vec<CapturedRequest>>,
    /// Checks each chat request against the invariants as it arrives.
    checker: Mutex<InvariantChecker>,
    /// Invariant violations not yet taken by the test; dropping the server
    /// with any left fails the test.
    violations: Mutex<Vec<String>>,
    /// Append each captured request as a JSON line here (for end-to-end runs).
    request_log: Option<PathBuf>,
    /// Answers a request whose purpose has no scripted reply left: a rule
    /// keyed on what the request holds, for runs whose order is not known.
    policy: Mutex<Option<Arc<ReplyPolicy>>>,
}

/// A scripted policy: decides the reply from the request itself.
pub type ReplyPolicy = dyn Fn(&CapturedRequest) -> ScriptedReply + Send + Sync;

/// The header every reply of the mock carries, so a harness can tell it is
/// talking to a scripted server (knack eval says so in its reports).
pub const MOCK_HEADER: &str = "x-knack-mock";

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking test thread must not hide the captured requests from the next assertion.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The message tests see when they sent more requests than they scripted.
pub const NO_REPLY_LEFT: &str = "mock: no scripted reply left";

/// The start of the error message a request breaking an invariant gets.
pub const INVARIANT_VIOLATED: &str = "mock: request breaks the invariants";

/// A scripted model server. Dropping it stops the server.
///
/// Every `/chat/completions` request is checked against the invariants of
/// [`crate::check_invariants`] as it arrives. A request that breaks one is
/// answered `400` with the violations in the error message (so the client
/// fails at once, as a real server would refuse it), and the violations are
/// kept: dropping the server while any are left panics, so the test fails
/// even when the client swallowed the error. Tests that send bad requests on
/// purpose read them with [`MockModelServer::take_violations`].
pub struct MockModelServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    _thread: ServerThread,
}

impl MockModelServer {
    /// Starts on a free port; usable from any async test.
    pub async fn start() -> io::Result<Self> {
        let (server, ready) = Self::spawn(0, None);
        let addr = ready
            .await
            .map_err(|_| io::Error::other("mock server thread died"))??;
        Ok(server.with_addr(addr))
    }

    /// Starts on a free port from sync code (plain `#[test]`, subprocess tests).
    pub fn start_blocking() -> io::Result<Self> {
        Self::start_blocking_with(0, None)
    }

    /// Starts on `port` (0 = any free port), logging each request as a JSON
    /// line to `request_log` when given.
    pub fn start_blocking_with(port: u16, request_log: Option<PathBuf>) -> io::Result<Self> {
        let (server, ready) = Self::spawn(port, request_log);
        let addr = ready
            .blocking_recv()
            .map_err(|_| io::Error::other("mock server thread died"))??;
        Ok(server.with_addr(addr))
    }

    fn with_addr(mut self, addr: SocketAddr) -> Self {
        self.addr = addr;
        self
    }

    fn spawn(
        port: u16,
        request_log: Option<PathBuf>,
    ) -> (Self, oneshot::Receiver<io::Result<SocketAddr>>) {
        let shared = Arc::new(Shared {
            request_log,
            ..Shared::default()
        });
        let thread_shared = Arc::clone(&shared);
        let (thread, ready_rx) = spawn_server("mock-model-server", port, move |stream| {
            serve_connection(stream, Arc::clone(&thread_shared))
        });
        let server = Self {
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            shared,
            _thread: thread,
        };
        (server, ready_rx)
    }

    /// `http://127.0.0.1:PORT/v1`
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Queues a reply for the conversation (`X-Knack-Purpose: turn`).
    pub fn enqueue(&self, reply: ScriptedReply) {
        self.enqueue_for(Purpose::Turn, reply);
    }

    pub fn enqueue_for(&self, purpose: Purpose, reply: ScriptedReply) {
        locked(&self.shared.queues)
            .entry(purpose)
            .or_default()
            .push_back(reply);
    }

    /// Answers every request whose queue is empty with `policy(request)`:
    /// deterministic rules keyed on the request (its messages, its purpose),
    /// for many sessions at once in any order.
    pub fn set_policy(
        &self,
        policy: impl Fn(&CapturedRequest) -> ScriptedReply + Send + Sync + 'static,
    ) {
        *locked(&self.shared.policy) = Some(Arc::new(policy));
    }

    /// Replies scripted but not yet served, for `purpose`.
    pub fn pending(&self, purpose: Purpose) -> usize {
        locked(&self.shared.queues)
            .get(&purpose)
            .map_or(0, VecDeque::len)
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<CapturedRequest> {
        locked(&self.shared.requests).clone()
    }

    /// The `/chat/completions` requests received so far.
    pub fn chat_requests(&self) -> Vec<CapturedRequest> {
        self.requests()
            .into_iter()
            .filter(CapturedRequest::is_chat_completion)
            .collect()
    }

    /// The model requests received so far, on any wire.
    pub fn model_requests(&self) -> Vec<CapturedRequest> {
        self.requests()
            .into_iter()
            .filter(|request| request.wire().is_some())
            .collect()
    }

    /// The invariant violations seen so far, one per line, without taking them.
    pub fn violations(&self) -> Vec<String> {
        locked(&self.shared.violations).clone()
    }

    /// Takes the invariant violations seen so far, so dropping the server
    /// does not fail the test; for tests that break the invariants on purpose.
    pub fn take_violations(&self) -> Vec<String> {
        std::mem::take(&mut *locked(&self.shared.violations))
    }
}

impl Drop for MockModelServer {
    fn drop(&mut self) {
        let violations = self.take_violations();
        if violations.is_empty() {
            return;
        }
        let report = format!(
            "the mock model server received requests that break the invariants:\n{}",
            violations.join("\n")
        );
        // A second panic while unwinding would abort the whole test binary
        // and hide the first failure; print the report instead.
        if std::thread::panicking() {
            eprintln!("{report}");
        } else {
            panic!("{report}");
        }
    }
}

/// Headers larger than this are a broken client, not a test case.
const MAX_HEAD_BYTES: usize = 64 * 1024;

async fn serve_connection(mut stream: TcpStream, shared: Arc<Shared>) {
    let Ok(Some(request)) = read_request(&mut stream).await else {
        return;
    };
    let number = record(&shared, &request);
    let problems = locked(&shared.checker).check(number, &request);
    if !problems.is_empty() {
        let message = format!("{INVARIANT_VIOLATED}: {}", problems.join("; "));
        eprintln!("mock-model-server: {message}");
        locked(&shared.violations).extend(problems);
        // 400, not 500: a real server refuses such a request and the client
        // must not retry it; no scripted reply is used up.
        let body = json!({"error": {"message": message, "type": "mock_invariant_violation"}});
        let _ = send_json(&mut stream, 400, &body, None).await;
        let _ = stream.shutdown().await;
        return;
    }
    let wire = request.wire();
    let reply = wire.map(|_| {
        let purpose = Purpose::from_header(request.purpose());
        let queued = locked(&shared.queues)
            .get_mut(&purpose)
            .and_then(VecDeque::pop_front);
        queued.or_else(|| {
            let policy = locked(&shared.policy).clone();
            policy.map(|policy| policy(&request))
        })
    });

    // Write errors mean the client went away; the test will see that on its side.
    let _ = match reply {
        Some(Some(reply)) => send_reply(&mut stream, &reply, wire.unwrap_or(ModelWire::Chat)).await,
        Some(None) => send_json(&mut stream, 500, &error_body(NO_REPLY_LEFT), None).await,
        None if request.method == "GET" && request.path.ends_with("/models") => {
            let models =
                json!({"object": "list", "data": [{"id": "mock-model", "object": "model"}]});
            send_json(&mut stream, 200, &models, None).await
        }
        None => {
            let message = format!("mock: no route for {} {}", request.method, request.path);
            send_json(&mut stream, 404, &error_body(&message), None).await
        }
    };
    let _ = stream.shutdown().await;
}

/// Captures `request`; returns its number (its place among all requests).
fn record(shared: &Shared, request: &CapturedRequest) -> usize {
    let number = {
        let mut requests = locked(&shared.requests);
        requests.push(request.clone());
        requests.len() - 1
    };
    if let Some(path) = &shared.request_log {
        let line = serde_json::to_string(request).unwrap_or_default();
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut file| writeln!(file, "{line}"));
        if let Err(err) = appended {
            eprintln!("mock-model-server: cannot write {}: {err}", path.display());
        }
    }
    number
}

async fn read_request(stream: &mut TcpStream) -> io::Result<Option<CapturedRequest>> {
    let mut buf = Vec::with_capacity(8 * 1024);
    let head_end = loop {
        if let Some(pos) = find(&buf, b"\r\n\r\n") {
            break pos;
        }
        if buf.len() > MAX_HEAD_BYTES {
            return Ok(None);
        }
        let mut chunk = [0u8; 8 * 1024];
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split_whitespace();
    let method = request_line.next().unwrap_or_default().to_owned();
    let path = request_line.next().unwrap_or_default().to_owned();
    let headers: BTreeMap<String, String> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let content_length: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);

    let mut body = buf.split_off(head_end + 4);
    while body.len() < content_length {
        let mut chunk = vec![0u8; content_length - body.len()];
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let raw_body = String::from_utf8_lossy(&body).into_owned();
    let body = serde_json::from_str(&raw_body).unwrap_or(Value::Null);
    Ok(Some(CapturedRequest {
        method,
        path,
        headers,
        body,
        raw_body,
    }))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn error_body(message: &str) -> Value {
    json!({"error": {"message": message, "type": "mock_error"}})
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Status",
    }
}

async fn send_json(
    stream: &mut TcpStream,
    status: u16,
    body: &Value,
    retry_after: Option<u64>,
) -> io::Result<()> {
    let body = body.to_string();
    let retry_after = retry_after
        .map(|secs| format!("Retry-After: {secs}\r\n"))
        .unwrap_or_default();
    let response = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{MOCK_HEADER}: scripted\r\n{retry_after}Connection: close\r\n\r\n{body}",
        reason_phrase(status),
        body.len(),
    );
    stream.write_all(response.as_bytes()).await?;
    stream.flush().await
}

async fn send_reply(
    stream: &mut TcpStream,
    reply: &ScriptedReply,
    wire: ModelWire,
) -> io::Result<()> {
    if reply.first_byte_delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(reply.first_byte_delay_ms)).await;
    }
    if let Some(status) = reply.status {
        let message = reply
            .error_message
            .clone()
            .unwrap_or_else(|| format!("mock: scripted status {status}"));
        return send_json(stream, status, &error_body(&message), reply.retry_after).await;
    }

    // Chunked like real SSE servers, so a cut stream is a visible protocol error.
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n{MOCK_HEADER}: scripted\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await?;
    stream.flush().await?;
    let frames = reply.frames_for(wire);
    let limit = reply
        .stall_after_chunks
        .or(reply.cut_after_chunks)
        .unwrap_or(frames.len());
    for frame in frames.iter().take(limit) {
        if reply.chunk_delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(reply.chunk_delay_ms)).await;
        }
        // Anthropic and Responses streams name each event, as the real APIs do.
        let name = match wire {
            ModelWire::Chat => None,
            _ => serde_json::from_str::<Value>(frame)
                .ok()
                .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_owned)),
        };
        let event = match name {
            Some(name) => format!("event: {name}\ndata: {frame}\n\n"),
            None => format!("data: {frame}\n\n"),
        };
        let framed = format!("{:x}\r\n{event}\r\n", event.len());
        stream.write_all(framed.as_bytes()).await?;
        stream.flush().await?;
    }
    if reply.stall_after_chunks.is_some() {
        // The server's runtime drops this task when the test drops the server.
        std::future::pending::<()>().await;
    }
    if limit >= frames.len() {
        stream.write_all(b"0\r\n\r\n").await?;
        stream.flush().await?;
    }
    Ok(())
}
