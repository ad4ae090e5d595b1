//! knack's agent core: the model client, the tool registry with the built-in tools, and the
//! session store the turn loop builds on. It never draws on a terminal.

mod agent_error;
pub mod compaction;
pub mod edit_diff;
mod error;
pub mod invocation;
pub mod mentions;
pub mod model;
pub mod secrets;
pub mod session;
pub mod session_store;
pub mod skill_usage;
pub mod tool_preview;
pub mod tools;

pub use agent_error::{Error, Result};
pub use error::ModelError;
/// The MCP client, for frontends that list servers and tools (`knack mcp`).
pub use mcp_client;
pub use secrets::Redactor;
pub use session_store::{
    NewSession, SearchHit, SessionMeta, SessionStore, SessionSummary, StoredMessage, StoredSession,
    UsageTotals,
};
pub use tools::{
    ApprovalAnswer, ApprovalAsk, ApprovalDecision, Approver, AutoApprove, AutoDeny, CatalogChanges,
    CatalogDelta, Tool, ToolContext, ToolError, ToolFuture, ToolOutcome, ToolRegistry,
    ToolRegistryBuilder, ToolReply, Toolset,
};
