//! Every configured server of a session: started together, their tools listed once and
//! kept for the session, calls routed by server, dead servers restarted on their next call.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use knack_config::{EnvFile, McpApproval, McpServerConfig, McpTransportKind};
use rmcp::model::CallToolRequestParams;
use rmcp::service::ServiceError;
use serde_json::{Map, Value};

use crate::server::{Connection, StderrTail, connect, lock, with_tail};
use crate::{CallOutcome, Error, Result};

/// Restarts of one server per session: a server that keeps crashing stays down.
const MAX_RESTARTS: u32 = 3;

/// What the servers inherit from knack.
#[derive(Debug, Clone, Default)]
pub struct StartOptions {
    /// `agent.env_passthrough`: secret-looking variables a stdio server may still inherit.
    pub env_passthrough: Vec<String>,
    /// `$KNACK_HOME/.env`, where `bearer_token_env` may also be found.
    pub env_file: EnvFile,
}

/// One tool as the server describes it (after `tools.include`/`exclude`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    pub server: String,
    /// The name the server gives it.
    pub name: String,
    pub description: String,
    /// The JSON schema of its arguments, as the server sent it.
    pub input_schema: Value,
    /// `annotations.readOnlyHint`.
    pub read_only: bool,
    /// `annotations.destructiveHint`, when given.
    pub destructive: Option<bool>,
    /// The server's `approval` setting.
    pub approval: McpApproval,
}

/// Where a server stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    Ready,
    Failed(String),
    Disabled,
}

impl ServerState {
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Ready => "ready",
            Self::Failed(_) => "failed",
            Self::Disabled => "disabled",
        }
    }
}

/// A row of `knack mcp list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    pub name: String,
    pub transport: McpTransportKind,
    pub state: ServerState,
    pub tools: usize,
}

struct Server {
    name: String,
    config: McpServerConfig,
    tools: Vec<ToolInfo>,
    connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
    state: Mutex<ServerState>,
    list_changed: Arc<AtomicBool>,
    restarts: AtomicU32,
    stderr: StderrTail,
}

/// The session's MCP servers. Dropping it kills every child process.
pub struct McpHub {
    servers: Vec<Server>,
    options: StartOptions,
}

impl McpHub {
    /// A hub with no servers (no `mcp_servers` configured).
    pub fn empty() -> Self {
        Self {
            servers: Vec::new(),
            options: StartOptions::default(),
        }
    }

    /// Starts every enabled server at once, each bounded by its
    /// `startup_timeout_secs`; one that fails is recorded as failed.
    pub async fn start(servers: &BTreeMap<String, McpServerConfig>, options: StartOptions) -> Self {
        let started = futures::future::join_all(
            servers
                .iter()
                .map(|(name, config)| start_server(name, config, &options)),
        )
        .await;
        Self {
            servers: started,
            options,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Every server in name order.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.servers
            .iter()
            .map(|s| ServerStatus {
                name: s.name.clone(),
                transport: s.config.transport().unwrap_or(McpTransportKind::Stdio),
                state: lock(&s.state).clone(),
                tools: s.tools.len(),
            })
            .collect()
    }

    /// Whether `name` is a configured server.
    pub fn has_server(&self, name: &str) -> bool {
        self.servers.iter().any(|s| s.name == name)
    }

    /// Every tool of every ready server, by server name then in the server's order.
    pub fn tools(&self) -> Vec<ToolInfo> {
        self.servers
            .iter()
            .flat_map(|s| s.tools.iter().cloned())
            .collect()
    }

    /// Servers that announced `tools/list_changed` since the last call; each is reported once.
    pub fn take_list_changed(&self) -> Vec<String> {
        self.servers
            .iter()
            .filter(|s| s.list_changed.swap(false, Ordering::SeqCst))
            .map(|s| s.name.clone())
            .collect()
    }

    /// Calls `tool` of `server` with `arguments`, bounded by the server's
    /// `tool_timeout_secs`. A server that died is restarted first.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<CallOutcome> {
        let Some(srv) = self.servers.iter().find(|s| s.name == server) else {
            return Err(Error::UnknownServer(server.to_owned()));
        };
        if !srv.tools.iter().any(|t| t.name == tool) {
            return Err(Error::UnknownTool {
                server: server.to_owned(),
                tool: tool.to_owned(),
            });
        }
        let connection = srv.live_connection(&self.options).await?;
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let secs = srv.config.tool_timeout_secs.max(1);
        let call = connection.service.call_tool(params);
        match tokio::time::timeout(Duration::from_secs(secs), call).await {
            Err(_) => Err(Error::Timeout {
                server: server.to_owned(),
                tool: tool.to_owned(),
                secs,
            }),
            Ok(Ok(result)) => {
                let wire = serde_json::to_value(&result).map_err(|e| Error::Call {
                    server: server.to_owned(),
                    tool: tool.to_owned(),
                    message: format!("its result could not be read: {e}"),
                })?;
                Ok(CallOutcome::from_wire(&wire))
            }
            Ok(Err(e)) => {
                let lost = connection.is_dead()
                    || matches!(
                        e,
                        ServiceError::TransportClosed
                            | ServiceError::TransportSend(_)
                            | ServiceError::Cancelled { .. }
                    );
                let message = match &e {
                    ServiceError::McpError(data) => data.message.to_string(),
                    other => other.to_string(),
                };
                if lost {
                    let reason = with_tail(format!("it stopped during {tool}"), &srv.stderr);
                    srv.mark_dead(&connection, reason.clone()).await;
                    return Err(Error::Call {
                        server: server.to_owned(),
                        tool: tool.to_owned(),
                        message: format!("{reason}; it is restarted on the next call"),
                    });
                }
                Err(Error::Call {
                    server: server.to_owned(),
                    tool: tool.to_owned(),
                    message,
                })
            }
        }
    }
}

impl Server {
    /// The running connection, restarting a dead server within the bound.
    async fn live_connection(&self, options: &StartOptions) -> Result<Arc<Connection>> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref()
            && !connection.is_dead()
        {
            return Ok(Arc::clone(connection));
        }
        let previous = lock(&self.state).clone();
        if matches!(previous, ServerState::Disabled) || slot.is_none() && self.tools.is_empty() {
            let reason = match previous {
                ServerState::Failed(reason) => reason,
                ServerState::Disabled => "it is disabled in config.yaml".to_owned(),
                ServerState::Ready => "it has not started".to_owned(),
            };
            return Err(Error::NotRunning {
                server: self.name.clone(),
                reason,
            });
        }
        // Whatever is left of the old one goes first (its process group is killed).
        *slot = None;
        if self.restarts.fetch_add(1, Ordering::SeqCst) >= MAX_RESTARTS {
            let reason = format!("it stopped and was already restarted {MAX_RESTARTS} times");
            *lock(&self.state) = ServerState::Failed(reason.clone());
            return Err(Error::NotRunning {
                server: self.name.clone(),
                reason,
            });
        }
        tracing::info!(server = %self.name, "restarting MCP server");
        match self.connect_bounded(options).await {
            Ok(connection) => {
                let connection = Arc::new(connection);
                *slot = Some(Arc::clone(&connection));
                *lock(&self.state) = ServerState::Ready;
                Ok(connection)
            }
            Err(reason) => {
                *lock(&self.state) = ServerState::Failed(reason.clone());
                Err(Error::NotRunning {
                    server: self.name.clone(),
                    reason: format!("it could not be restarted: {reason}"),
                })
            }
        }
    }

    /// Forgets `connection` (if it is still the current one) so the next call restarts.
    async fn mark_dead(&self, connection: &Arc<Connection>, reason: String) {
        let mut slot = self.connection.lock().await;
        if slot.as_ref().is_some_and(|c| Arc::ptr_eq(c, connection)) {
            *slot = None;
            *lock(&self.state) = ServerState::Failed(reason);
        }
    }

    async fn connect_bounded(
        &self,
        options: &StartOptions,
    ) -> std::result::Result<Connection, String> {
        let secs = self.config.startup_timeout_secs.max(1);
        let attempt = connect(
            &self.name,
            &self.config,
            options,
            Arc::clone(&self.list_changed),
            Arc::clone(&self.stderr),
        );
        match tokio::time::timeout(Duration::from_secs(secs), attempt).await {
            Ok(result) => result,
            Err(_) => Err(with_tail(
                format!(
                    "it did not finish starting within {secs}s (mcp_servers.{}.startup_timeout_secs)",
                    self.name
                ),
                &self.stderr,
            )),
        }
    }
}

async fn start_server(name: &str, config: &McpServerConfig, options: &StartOptions) -> Server {
    let mut server = Server {
        name: name.to_owned(),
        config: config.clone(),
        tools: Vec::new(),
        connection: tokio::sync::Mutex::new(None),
        state: Mutex::new(ServerState::Disabled),
        list_changed: Arc::new(AtomicBool::new(false)),
        restarts: AtomicU32::new(0),
        stderr: Arc::new(Mutex::new(VecDeque::new())),
    };
    if !config.enabled {
        return server;
    }
    let secs = config.startup_timeout_secs.max(1);
    let started = tokio::time::timeout(Duration::from_secs(secs), async {
        let connection = server.connect_bounded(options).await?;
        let tools = connection
            .service
            .list_all_tools()
            .await
            .map_err(|e| format!("listing its tools failed: {e}"))?;
        Ok::<_, String>((connection, tools))
    })
    .await
    .unwrap_or_else(|_| {
        Err(format!(
            "it did not list its tools within {secs}s (mcp_servers.{name}.startup_timeout_secs)"
        ))
    });
    match started {
        Ok((connection, tools)) => {
            server.tools = tools
                .iter()
                .filter_map(|tool| serde_json::to_value(tool).ok())
                .filter_map(|wire| tool_info(name, config, &wire))
                .filter(|tool| config.tools.allows(&tool.name))
                .collect();
            server.connection = tokio::sync::Mutex::new(Some(Arc::new(connection)));
            server.state = Mutex::new(ServerState::Ready);
            // The start itself may have sent list_changed; it describes the list we have.
            server.list_changed.store(false, Ordering::SeqCst);
            tracing::info!(server = %name, tools = server.tools.len(), "MCP server ready");
        }
        Err(reason) => {
            tracing::warn!(server = %name, %reason, "MCP server failed to start");
            server.state = Mutex::new(ServerState::Failed(reason));
        }
    }
    server
}

/// A tool from its `tools/list` wire form.
fn tool_info(server: &str, config: &McpServerConfig, wire: &Value) -> Option<ToolInfo> {
    let annotations = wire.get("annotations");
    let hint = |key: &str| {
        annotations
            .and_then(|a| a.get(key))
            .and_then(Value::as_bool)
    };
    Some(ToolInfo {
        server: server.to_owned(),
        name: wire.get("name")?.as_str()?.to_owned(),
        description: wire
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        input_schema: wire
            .get("inputSchema")
            .cloned()
            .unwrap_or_else(|| serde_json::json!({"type": "object"})),
        read_only: hint("readOnlyHint") == Some(true),
        destructive: hint("destructiveHint"),
        approval: config.approval,
    })
}
