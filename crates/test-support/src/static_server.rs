//! A static-file HTTP server on 127.0.0.1 for hub tests: routes set by the test,
//! each a fixed status, headers and body, or a connection that never answers.

use crate::listener::{ServerThread, spawn_server};
use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// What the server answers on one path.
#[derive(Debug, Clone)]
pub struct StaticRoute {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Accept the request and then stay silent (for timeout tests).
    pub hang: bool,
}

impl StaticRoute {
    pub fn ok(body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            headers: Vec::new(),
            body: body.into(),
            hang: false,
        }
    }

    pub fn status(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            hang: false,
        }
    }

    pub fn hanging() -> Self {
        Self {
            hang: true,
            ..Self::status(200)
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }
}

/// One request as received: the target (path and query) and its headers,
/// names lower-cased.
#[derive(Debug, Clone)]
pub struct StaticRequest {
    pub target: String,
    pub headers: HashMap<String, String>,
}

#[derive(Default)]
struct State {
    routes: Mutex<HashMap<String, StaticRoute>>,
    requests: Mutex<Vec<StaticRequest>>,
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A server of fixed routes. Unknown paths answer 404. Dropping it stops it.
pub struct StaticServer {
    addr: SocketAddr,
    state: Arc<State>,
    _thread: ServerThread,
}

impl StaticServer {
    /// Starts on a free port, on its own thread and runtime (usable from sync tests).
    pub fn start_blocking() -> io::Result<Self> {
        let state = Arc::new(State::default());
        let thread_state = Arc::clone(&state);
        let (thread, ready_rx) = spawn_server("static-server", 0, move |stream| {
            answer(stream, Arc::clone(&thread_state))
        });
        let addr = ready_rx
            .blocking_recv()
            .map_err(|_| io::Error::other("static server thread died"))??;
        Ok(Self {
            addr,
            state,
            _thread: thread,
        })
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `base_url` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url())
    }

    /// Serves `body` with status 200 at `path` (a query string, when given, must match too).
    pub fn put(&self, path: &str, body: impl Into<Vec<u8>>) {
        self.route(path, StaticRoute::ok(body));
    }

    pub fn route(&self, path: &str, route: StaticRoute) {
        locked(&self.state.routes).insert(path.to_owned(), route);
    }

    pub fn remove(&self, path: &str) {
        locked(&self.state.routes).remove(path);
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<StaticRequest> {
        locked(&self.state.requests).clone()
    }
}

const MAX_HEAD: usize = 64 * 1024;

async fn answer(mut stream: TcpStream, state: Arc<State>) {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
        if head.len() > MAX_HEAD {
            return;
        }
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let mut lines = text.split("\r\n");
    let target = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("/")
        .to_owned();
    let headers: HashMap<String, String> = lines
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    locked(&state.requests).push(StaticRequest {
        target: target.clone(),
        headers,
    });
    let route = {
        let routes = locked(&state.routes);
        let path_only = target.split('?').next().unwrap_or(&target);
        routes
            .get(&target)
            .or_else(|| routes.get(path_only))
            .cloned()
    };
    let route = route.unwrap_or_else(|| StaticRoute::status(404));
    if route.hang {
        // Hold the connection open until the client gives up or the test
        // drops the server (its runtime drops this task): a timeout test
        // cannot pass by outwaiting the server.
        std::future::pending::<()>().await;
        return;
    }
    let mut out = format!(
        "HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n",
        route.status,
        route.body.len()
    );
    for (k, v) in &route.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let _ = stream.write_all(out.as_bytes()).await;
    let _ = stream.write_all(&route.body).await;
    let _ = stream.shutdown().await;
}
