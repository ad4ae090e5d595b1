//! MCP servers in a session: started before the session's tools freeze, their tools added
//! to the registry after the built-in ones, and a changed tool list told as a one-line note.

use std::sync::Arc;

use knack_config::{Config, KnackHome};
use mcp_client::{McpHub, StartOptions};

use super::{Session, SessionOptions};
use crate::Result;
use crate::model::ModelClient;

/// Starts every configured MCP server in parallel; `None` when there are none.
/// A server that fails is reported by `McpHub::statuses` and logged, never fatal.
pub async fn start_mcp_servers(home: &KnackHome, config: &Config) -> Option<Arc<McpHub>> {
    if config.mcp_servers.is_empty() {
        return None;
    }
    let options = StartOptions {
        env_passthrough: config.agent.env_passthrough.clone(),
        env_file: home.env_file(),
    };
    Some(Arc::new(McpHub::start(&config.mcp_servers, options).await))
}

impl Session {
    /// [`Session::start`], after starting the MCP servers of `config.mcp_servers`
    /// (unless `options.mcp` already holds them), so their tools are in the frozen list.
    pub async fn launch(
        mut options: SessionOptions,
        client: Arc<dyn ModelClient>,
        events: super::EventSink,
    ) -> Result<Self> {
        if options.mcp.is_none() {
            options.mcp = start_mcp_servers(&options.home, &options.config).await;
        }
        Self::start(options, client, events)
    }

    /// A note for the model when a server announced new tools: they are not
    /// callable until the next session, since the tool list never changes within one.
    pub(crate) fn mcp_tools_note(&self) -> Option<String> {
        let changed = self.registry.mcp()?.take_list_changed();
        if changed.is_empty() {
            return None;
        }
        Some(format!(
            "[MCP tools update] The tools of MCP server {} changed; the tool list of this \
             session stays as it is, and the new tools arrive with the next session.",
            changed.join(", ")
        ))
    }
}
