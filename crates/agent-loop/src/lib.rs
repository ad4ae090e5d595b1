//! knack's agent core: the tool registry with the built-in tools, the turn loop and the
//! session store it builds on. It never draws on a terminal. The wire clients live in
//! `model-client`, re-exported as [`model`] so frontends name one crate.

mod agent_error;
pub mod checkpoint;
pub mod compaction;
pub mod edit_diff;
pub mod invocation;
pub mod mentions;
pub mod secrets;
pub mod session;
pub mod session_store;
pub mod setup;
pub mod skill_usage;
pub mod tool_preview;
pub mod tools;

pub use agent_error::{Error, Result};
/// The MCP client, for frontends that list servers and tools (`knack mcp`).
pub use mcp_client;
/// The model clients (their own crate), under the path the rest of the tree uses.
pub use model_client as model;
pub use model_client::ModelError;
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
