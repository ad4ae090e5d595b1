//! Starting a session, decided in one place for every frontend (`knack run`, the TUI,
//! `tool call`, `prompt show`, `eval`): which model and client, which tools (with the MCP
//! servers'), who answers approvals, the session's options and the prompt inputs.
//! Frontends add only what is theirs (flags, rendering, what to say on stderr).

mod provider;

use std::path::PathBuf;
use std::sync::Arc;

use knack_config::{Config, KnackHome};
use mcp_client::McpHub;
use prompt_builder::{Platform, PromptInputs, SessionFacts};

use crate::session::{ChannelApprover, SessionOptions};
use crate::tools::{Approver, AutoApprove, AutoDeny, ToolRegistry};

pub use provider::{
    ModelChoice, ModelFlags, ProfileSummary, Resolution, SetupError, model_and_window, profiles,
    resolve, resolve_settings,
};

/// What every way of starting a session shares: the home, the config, the working
/// directory, the frontend, and whether `--yolo` was given.
#[derive(Debug, Clone)]
pub struct SessionSetup {
    pub home: KnackHome,
    pub config: Config,
    pub cwd: PathBuf,
    pub platform: Platform,
    /// `--yolo` on the command line (`agent.yolo` counts as well, see [`Self::yolo`]).
    pub yolo_flag: bool,
}

impl SessionSetup {
    pub fn new(home: KnackHome, config: Config, cwd: PathBuf, platform: Platform) -> Self {
        Self {
            home,
            config,
            cwd,
            platform,
            yolo_flag: false,
        }
    }

    /// The same setup with `--yolo` as given on the command line.
    pub fn with_yolo_flag(mut self, yolo: bool) -> Self {
        self.yolo_flag = yolo;
        self
    }

    /// Whether every approval is answered yes: `--yolo` or the user's `agent.yolo`.
    pub fn yolo(&self) -> bool {
        self.yolo_flag || self.config.agent.yolo
    }

    /// The model `flags` pick and its client (see [`resolve`]).
    pub fn model(&self, flags: &ModelFlags) -> Result<ModelChoice, SetupError> {
        resolve(&self.home, &self.config, flags)
    }

    /// Who answers approvals: yes to all under yolo; else the person behind
    /// `asker` when a frontend can ask one; else nobody, so they are refused.
    pub fn approver(&self, asker: Option<&ChannelApprover>) -> Arc<dyn Approver> {
        match asker {
            _ if self.yolo() => Arc::new(AutoApprove),
            Some(asker) => Arc::new(asker.clone()),
            None => Arc::new(AutoDeny),
        }
    }

    /// Starts the configured MCP servers (see [`crate::session::start_mcp_servers`]).
    pub async fn start_mcp(&self) -> Option<Arc<McpHub>> {
        crate::session::start_mcp_servers(&self.home, &self.config).await
    }

    /// A new session's options for `model` with the config's defaults, refusing
    /// approvals unless yolo; frontends change fields with `..` syntax.
    pub fn options(&self, model: impl Into<String>) -> SessionOptions {
        SessionOptions {
            approver: self.approver(None),
            ..SessionOptions::new(
                self.home.clone(),
                self.config.clone(),
                self.cwd.clone(),
                self.platform,
                model,
            )
        }
    }
}

/// The built-in tools of `toolsets`, then the tools of the MCP servers in `mcp`:
/// a session's registry, and what `tool list|call` and `prompt show` see.
pub fn registry(toolsets: &[String], mcp: Option<&Arc<McpHub>>) -> ToolRegistry {
    let builder = ToolRegistry::builder().builtin_toolsets(toolsets);
    match mcp {
        Some(hub) => builder.mcp(hub).build(),
        None => builder.build(),
    }
}

impl SessionOptions {
    /// What the system prompt of a session with these options and `tools` is built
    /// from; `prompt show` and `skills doctor` build theirs the same way.
    pub fn prompt_inputs(
        &self,
        session_id: impl Into<String>,
        tools: &ToolRegistry,
    ) -> PromptInputs {
        PromptInputs {
            home: self.home.clone(),
            config: self.config.clone(),
            cwd: self.cwd.clone(),
            session: SessionFacts {
                session_id: session_id.into(),
                started: prompt_builder::utc_date(std::time::SystemTime::now()),
                model: self.model.clone(),
            },
            platform: self.platform,
            tools: tools.names().into_iter().map(str::to_owned).collect(),
            toolsets: self.config.agent.toolsets.clone(),
            system_message: self.system_message.clone(),
        }
    }
}
