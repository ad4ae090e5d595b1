//! One connection to one MCP server: starting it (a child process with a scrubbed
//! environment, or a Streamable HTTP session), and killing what it started when dropped.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use knack_config::McpServerConfig;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{MaybeSendFuture, NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::io::AsyncBufReadExt;

use crate::hub::StartOptions;

/// Lines of a stdio server's stderr kept to explain why it failed.
const STDERR_TAIL_LINES: usize = 8;

/// Longest wait for a failed server's last stderr lines.
const STDERR_DRAIN: std::time::Duration = std::time::Duration::from_secs(2);

/// The client side of the protocol: says who knack is and notes `tools/list_changed`.
pub(crate) struct Handler {
    list_changed: Arc<AtomicBool>,
}

impl ClientHandler for Handler {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.list_changed.store(true, Ordering::SeqCst);
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("knack", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// The last lines a child wrote to stderr.
pub(crate) type StderrTail = Arc<Mutex<VecDeque<String>>>;

/// A running session with a server.
pub(crate) struct Connection {
    pub(crate) service: RunningService<RoleClient, Handler>,
    /// The stdio server's process group (its own, so grandchildren such as the
    /// `node` that `npx` starts are killed with it).
    process_group: Option<i32>,
}

impl Connection {
    /// Whether the server has gone away (its process exited, the HTTP session broke).
    pub(crate) fn is_dead(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        let pid = self.process_group.and_then(rustix::process::Pid::from_raw);
        if let Some(pid) = pid
            && let Err(e) = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL)
        {
            // Already gone is the usual case after a crash.
            tracing::debug!("killing MCP server process group {pid:?}: {e}");
        }
    }
}

/// Starts the server `name` and runs the `initialize` handshake. The caller
/// bounds the time; dropping the future kills a half-started child.
pub(crate) async fn connect(
    name: &str,
    config: &McpServerConfig,
    options: &StartOptions,
    list_changed: Arc<AtomicBool>,
    stderr: StderrTail,
) -> Result<Connection, String> {
    let handler = Handler { list_changed };
    if let Some(url) = &config.url {
        let transport = http_transport(url, config, options)?;
        let service = handler
            .serve(transport)
            .await
            .map_err(|e| format!("the handshake with {url} failed: {e}"))?;
        return Ok(Connection {
            service,
            process_group: None,
        });
    }
    let Some(command) = &config.command else {
        return Err("neither `command` nor `url` is set".to_owned());
    };
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(&config.args);
    // Like the terminal's commands: no inherited secrets, only what the user
    // gave this server by name.
    for secret in knack_config::secret_env::secret_env_names_here(&options.env_passthrough) {
        cmd.env_remove(secret);
    }
    cmd.envs(&config.env);
    if let Some(cwd) = &config.cwd {
        cmd.current_dir(expand_home(cwd));
    }
    cmd.kill_on_drop(true);
    cmd.process_group(0);
    let (transport, child_stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run '{command}': {e}"))?;
    let process_group = transport.id().and_then(|id| i32::try_from(id).ok());
    let reader = child_stderr.map(|child_stderr| {
        tokio::spawn(keep_tail(
            name.to_owned(),
            child_stderr,
            Arc::clone(&stderr),
        ))
    });
    match handler.serve(transport).await {
        Ok(service) => Ok(Connection {
            service,
            process_group,
        }),
        Err(e) => {
            if let Some(pid) = process_group.and_then(rustix::process::Pid::from_raw) {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
            // The child is gone, so its stderr ends; read it to the end for the
            // reason (bounded, in case a grandchild still holds the pipe).
            if let Some(reader) = reader {
                let _ = tokio::time::timeout(STDERR_DRAIN, reader).await;
            }
            Err(with_tail(format!("the handshake failed: {e}"), &stderr))
        }
    }
}

fn http_transport(
    url: &str,
    config: &McpServerConfig,
    options: &StartOptions,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, String> {
    let mut transport = StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(var) = &config.bearer_token_env {
        match options.env_file.lookup(var) {
            Some(token) => transport = transport.auth_header(token),
            None => {
                return Err(format!(
                    "its bearer_token_env names {var}, which is set neither in the environment nor in .env"
                ));
            }
        }
    }
    let mut headers = HashMap::new();
    for (key, value) in &config.headers {
        let name = reqwest::header::HeaderName::from_bytes(key.as_bytes())
            .map_err(|_| format!("'{key}' is not a valid header name"))?;
        let value = reqwest::header::HeaderValue::from_str(value)
            .map_err(|_| format!("the value of header '{key}' is not valid in HTTP"))?;
        headers.insert(name, value);
    }
    if !headers.is_empty() {
        transport = transport.custom_headers(headers);
    }
    Ok(StreamableHttpClientTransport::<reqwest::Client>::from_config(transport))
}

/// `~/x` as the user writes it in config.yaml, under the home directory.
fn expand_home(path: &str) -> std::path::PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => std::path::Path::new(&home).join(rest),
        _ => std::path::PathBuf::from(path),
    }
}

/// Reads a child's stderr to the end: each line to the log, the last few kept.
async fn keep_tail(name: String, stderr: tokio::process::ChildStderr, tail: StderrTail) {
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::debug!(server = %name, "mcp stderr: {line}");
        let mut tail = lock(&tail);
        if tail.len() == STDERR_TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}

/// `message`, followed by what the server last wrote to stderr, if anything.
pub(crate) fn with_tail(message: String, tail: &StderrTail) -> String {
    let tail = lock(tail);
    let lines: Vec<&str> = tail
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        message
    } else {
        format!("{message} (its stderr: {})", lines.join(" | "))
    }
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}
