//! knack's Model Context Protocol client: the servers of `mcp_servers` in config.yaml are
//! started in parallel, their tools listed once, and calls sent to them with a timeout.
//!
//! A server that fails to start is reported, never fatal; a stdio server that dies is
//! restarted on its next call (a few times per session at most). Tool names the model sees
//! are made here ([`qualified_name`]) so every surface agrees on them.

mod content;
mod hub;
mod naming;
mod server;

pub use content::{CallOutcome, MAX_OUTPUT_CHARS};
pub use hub::{McpHub, ServerState, ServerStatus, StartOptions, ToolInfo};
pub use naming::{MAX_TOOL_NAME_LEN, qualified_name, sanitize};

/// What went wrong talking to an MCP server; every message is one sentence for a person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("there is no MCP server named '{0}' in config.yaml")]
    UnknownServer(String),
    #[error("the MCP server '{server}' has no tool named '{tool}'")]
    UnknownTool { server: String, tool: String },
    #[error("the MCP server '{server}' is not running: {reason}")]
    NotRunning { server: String, reason: String },
    #[error("the MCP server '{server}' could not start: {reason}")]
    Start { server: String, reason: String },
    #[error(
        "the MCP server '{server}' did not answer {tool} within {secs}s (mcp_servers.{server}.tool_timeout_secs)"
    )]
    Timeout {
        server: String,
        tool: String,
        secs: u64,
    },
    #[error("the MCP server '{server}' failed during {tool}: {message}")]
    Call {
        server: String,
        tool: String,
        message: String,
    },
}

pub type Result<T> = std::result::Result<T, Error>;
