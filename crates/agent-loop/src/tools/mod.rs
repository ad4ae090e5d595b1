//! The tools the model can call: the `Tool` seam, the registry that freezes their specs
//! once per session and dispatches calls, and the built-in tools grouped by toolset.
//!
//! A tool call ends in one of three ways (the codex split): a result object
//! (`{"success": true, ...}` or a tool's own `{"success": false, ...}` with
//! extra keys), an error the model should see (rendered as
//! `{"success": false, "error", "hint"?}`), or a fatal error that aborts the turn.

mod approval;
pub(crate) mod beneath;
pub mod boundary;
mod call_record;
mod context;
mod files;
mod mcp;
mod memory;
mod read_only;
mod registry;
mod schema;
mod session_search;
mod skills;
mod terminal;
mod web_fetch;

use std::future::Future;
use std::pin::Pin;

use serde_json::{Map, Value};

pub use approval::{
    ApprovalAnswer, ApprovalAsk, ApprovalDecision, ApprovalFuture, Approver, AutoApprove, AutoDeny,
};
pub use call_record::{CallRecord, FileDiff, recording};
pub(crate) use context::lock;
pub use context::{CatalogChanges, CatalogDelta, SkillWriteMode, ToolContext};
pub(crate) use files::looks_binary;
pub use mcp::{McpTool, mcp_tools};
pub use memory::{MEMORY_ENTRY_DELIMITER, MemoryTarget};
pub use registry::{REVIEW_TOOLS, TOOLSETS, ToolRegistry, ToolRegistryBuilder, ToolReply};
pub use schema::parameters_schema;
pub use terminal::{DestructiveRule, destructive_rule};

/// A tool's answer; see the module docs for the three outcomes.
pub type ToolOutcome = std::result::Result<Value, ToolError>;

/// A boxed future so `Tool` stays object-safe (`Arc<dyn Tool>`).
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = ToolOutcome> + Send + 'a>>;

/// Why a tool call did not produce a result object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The model gets this back as the tool result and may try again differently.
    #[error("{error}")]
    RespondToModel { error: String, hint: Option<String> },
    /// Something the model cannot fix; the turn ends.
    #[error("{0}")]
    Fatal(String),
}

impl ToolError {
    pub fn model(error: impl Into<String>) -> Self {
        Self::RespondToModel {
            error: error.into(),
            hint: None,
        }
    }

    pub fn model_with_hint(error: impl Into<String>, hint: impl Into<String>) -> Self {
        Self::RespondToModel {
            error: error.into(),
            hint: Some(hint.into()),
        }
    }

    /// The `{"success": false, "error", "hint"?}` object for a model-visible error.
    pub(crate) fn failure_object(error: &str, hint: Option<&str>) -> Value {
        let mut map = Map::new();
        map.insert("success".into(), Value::Bool(false));
        map.insert("error".into(), Value::String(error.to_owned()));
        if let Some(hint) = hint {
            map.insert("hint".into(), Value::String(hint.to_owned()));
        }
        Value::Object(map)
    }
}

/// The toolset a tool belongs to (`agent.toolsets` in config.yaml enables them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Toolset {
    Skills,
    Terminal,
    File,
    Memory,
    SessionSearch,
    /// `web_fetch`: pages read by knack itself, each site approved by the user.
    Web,
    /// Tools of the configured MCP servers (`mcp_servers`), not switched by `agent.toolsets`.
    Mcp,
}

impl Toolset {
    /// The built-in toolsets (`agent.toolsets`); MCP tools come from config.yaml's servers.
    pub const ALL: [Toolset; 6] = [
        Toolset::Skills,
        Toolset::Terminal,
        Toolset::File,
        Toolset::Memory,
        Toolset::SessionSearch,
        Toolset::Web,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Toolset::Skills => "skills",
            Toolset::Terminal => "terminal",
            Toolset::File => "file",
            Toolset::Memory => "memory",
            Toolset::SessionSearch => "session_search",
            Toolset::Web => "web",
            Toolset::Mcp => "mcp",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|set| set.as_str() == name.trim())
    }
}

/// One callable tool.
pub trait Tool: Send + Sync {
    /// Built-in tools name themselves with a literal; MCP tools' names are made at session start.
    fn name(&self) -> &str;
    fn toolset(&self) -> Toolset;
    /// What the model reads to decide when to call the tool.
    fn description(&self) -> &str;
    /// The JSON schema of the arguments object.
    fn parameters(&self) -> Value;
    /// Whether the tool changes anything outside the conversation; mutating
    /// calls are dispatched one at a time, in order.
    fn is_mutating(&self) -> bool {
        false
    }
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a>;
}

/// Reads the arguments object into a tool's typed args; a mismatch is the model's to fix.
pub(crate) fn parse_args<T: serde::de::DeserializeOwned>(
    tool: &str,
    args: Value,
) -> Result<T, ToolError> {
    serde_json::from_value(args).map_err(|e| {
        ToolError::model_with_hint(
            format!("invalid arguments for {tool}: {e}"),
            "Check the parameter names and types against the tool's schema.",
        )
    })
}
