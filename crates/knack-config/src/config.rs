//! The typed `config.yaml`. A missing or empty file means all defaults; an
//! invalid one is an error that names the file and line, never a silent default.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{Error, KnackHome, Result};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub model: ModelConfig,
    pub agent: AgentConfig,
    pub terminal: TerminalConfig,
    pub skills: SkillsConfig,
    pub memory: MemoryConfig,
    pub hub: HubConfig,
    /// Named model providers; `model.provider` picks one (CONTRACT.md "Providers").
    pub providers: BTreeMap<String, ProviderConfig>,
    /// Model Context Protocol servers whose tools the agent may call (docs/mcp.md).
    pub mcp_servers: BTreeMap<String, crate::mcp::McpServerConfig>,
    /// The context budget and compaction (docs/agent.md "Long sessions").
    pub context: ContextConfig,
    /// Limits that apply to every tool's result.
    pub tools: ToolsConfig,
    /// Rules that approve or refuse tool calls before anyone is asked (docs/approvals.md).
    pub permissions: crate::permissions::PermissionsConfig,
}

/// `context`: when a session compacts its history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContextConfig {
    /// Compact when the next request would pass this share of the window.
    pub compact_at: f64,
}

impl Default for ContextConfig {
    fn default() -> Self {
        Self { compact_at: 0.8 }
    }
}

/// `tools`: limits on what a tool call puts into the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolsConfig {
    /// A tool result longer than this keeps its head and tail, with a line
    /// saying how much was cut.
    pub max_output_chars: usize,
    /// Whether `web_fetch` may run in plan mode. It changes nothing, so it
    /// does by default; a user who wants planning to stay offline says no.
    pub web_fetch_in_plan: bool,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        Self {
            max_output_chars: 30_000,
            web_fetch_in_plan: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    /// A key of `providers`; without it the environment-only setup applies.
    pub provider: Option<String>,
    /// OpenAI-compatible base URL, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: Option<String>,
    /// Model name sent in requests.
    pub name: Option<String>,
    /// Environment variable that holds the API key.
    pub api_key_env: String,
    pub connect_timeout_secs: u64,
    /// Longest wait for the first streamed byte of a reply.
    pub first_byte_timeout_secs: u64,
    /// Longest silence between two streamed chunks.
    pub idle_timeout_secs: u64,
    pub max_retries: u32,
    /// First backoff delay; doubled per retry (with jitter) up to the maximum.
    pub retry_base_delay_ms: u64,
    pub retry_max_delay_ms: u64,
    /// The model's context window in tokens, when no provider profile or
    /// `KNACK_CONTEXT_WINDOW` names it.
    pub context_window: Option<u64>,
}

impl Default for ModelConfig {
    fn default() -> Self {
        Self {
            provider: None,
            base_url: None,
            name: None,
            api_key_env: "OPENAI_API_KEY".into(),
            connect_timeout_secs: 10,
            first_byte_timeout_secs: 120,
            idle_timeout_secs: 90,
            max_retries: 4,
            retry_base_delay_ms: 1_000,
            retry_max_delay_ms: 30_000,
            context_window: None,
        }
    }
}

/// The wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Wire {
    /// OpenAI Chat Completions (`{base_url}/chat/completions`).
    #[default]
    Chat,
    /// Anthropic Messages (`{base_url}/messages`).
    Anthropic,
    /// OpenAI Responses (`{base_url}/responses`).
    Responses,
}

impl Wire {
    /// Every wire, in the order messages list them.
    pub const ALL: [Wire; 3] = [Wire::Chat, Wire::Anthropic, Wire::Responses];

    /// The name config.yaml and `KNACK_WIRE` use.
    pub fn name(self) -> &'static str {
        match self {
            Self::Chat => "chat",
            Self::Anthropic => "anthropic",
            Self::Responses => "responses",
        }
    }

    /// The wire named `name` (as config.yaml spells it), if there is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|wire| wire.name() == name.trim())
    }
}

/// How long Anthropic keeps a cached prefix (`providers.<name>.cache_ttl`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CacheTtl {
    #[default]
    #[serde(rename = "5m")]
    FiveMinutes,
    #[serde(rename = "1h")]
    OneHour,
}

/// USD per million tokens; what a request cost is computed from these.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Prices {
    pub input: f64,
    pub output: f64,
    /// Prompt tokens served from the cache; the input price when absent.
    pub cache_read: Option<f64>,
    /// Prompt tokens written to the cache; the input price when absent.
    pub cache_write: Option<f64>,
}

/// One entry of `providers`: where a model lives and how to talk to it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProviderConfig {
    pub wire: Wire,
    pub base_url: Option<String>,
    /// The environment variable (or `.env` entry) holding the key.
    pub api_key_env: Option<String>,
    /// Extra headers sent with every request.
    pub headers: BTreeMap<String, String>,
    /// The model used with this provider when `model.name` is for another one.
    pub model: Option<String>,
    pub context_window: Option<u64>,
    /// The reply's token limit (`max_tokens`; Anthropic requires one).
    pub max_output_tokens: Option<u32>,
    /// Anthropic only: how long cached prefixes live.
    pub cache_ttl: CacheTtl,
    /// Chat and Responses: send the session id as `prompt_cache_key`
    /// (default: on for responses, off for chat, which not every server accepts).
    pub prompt_cache_key: Option<bool>,
    /// Chat only: put Anthropic `cache_control` markers on the messages, for
    /// routers such as OpenRouter that pass them on to Claude models.
    pub cache_control: bool,
    pub prices: Option<Prices>,
    /// How hard a reasoning model thinks (`minimal`, `low`, `medium`, `high`),
    /// honoured on every wire: Chat sends `reasoning_effort`, Responses
    /// `reasoning.effort` (and asks for the encrypted reasoning replayed on
    /// the next request), Anthropic extended thinking with a budget mapped
    /// from the level unless `thinking_budget` names one.
    pub reasoning_effort: Option<String>,
    /// Anthropic only: the extended-thinking budget in tokens (at least 1024);
    /// it turns thinking on by itself and wins over `reasoning_effort`'s budget.
    pub thinking_budget: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// Toolsets whose tools the model may call, in this order.
    pub toolsets: Vec<String>,
    pub max_iterations: u32,
    pub system_message: Option<String>,
    /// Answer yes to every approval the tools would ask for. Honoured only
    /// from the user's own config.yaml or `--yolo`: the model's tools can
    /// write neither.
    pub yolo: bool,
    /// How far the terminal's commands are confined (see docs/security.md).
    pub sandbox: SandboxMode,
    /// Whether sandboxed commands may use the network.
    pub sandbox_network: bool,
    /// Unix sockets (paths) sandboxed commands may connect to; empty: none at all.
    /// Each one is a door out of the sandbox (`/var/run/docker.sock` is root on the host).
    pub sandbox_unix_sockets: Vec<String>,
    /// Most processes (threads count) one sandboxed command may have at once; 0 for no
    /// limit. Enforced per user namespace, or for root by a pids cgroup (cgroup v1).
    pub sandbox_max_processes: u32,
    /// When a tool call waits for the user's approval.
    pub approval: ApprovalPolicy,
    /// Longest the self-improvement review after an answer may run (every frontend).
    pub review_timeout_secs: u64,
    /// Secret-looking environment variables (`*_API_KEY`, `*_TOKEN`,
    /// `*_SECRET`, `*_PASSWORD`, ...; see `knack_config::is_secret_name`) that
    /// commands run for the model may still inherit, by exact name. Everything
    /// else secret-looking is removed from their environment. Their values are
    /// still redacted from tool output.
    pub env_passthrough: Vec<String>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            toolsets: [
                "skills",
                "terminal",
                "file",
                "memory",
                "session_search",
                "web",
            ]
            .map(String::from)
            .to_vec(),
            max_iterations: 50,
            system_message: None,
            yolo: false,
            sandbox: SandboxMode::default(),
            sandbox_network: false,
            sandbox_unix_sockets: Vec::new(),
            sandbox_max_processes: 2048,
            approval: ApprovalPolicy::default(),
            review_timeout_secs: 300,
            env_passthrough: Vec::new(),
        }
    }
}

/// `agent.sandbox`: what the terminal's commands (and the file tools) may write.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Nothing may be written.
    ReadOnly,
    /// The working directory and the temp folders; knack's own files never.
    #[default]
    WorkspaceWrite,
    /// No sandbox: commands run with the user's full rights.
    FullAccess,
}

/// `agent.approval`: when the user is asked before a tool call runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalPolicy {
    /// Ask for every command except a short list of read-only ones.
    Untrusted,
    /// Run sandboxed commands freely; ask for flagged commands and for
    /// anything that must leave the sandbox.
    #[default]
    OnRequest,
    /// Never ask: what would need approval is refused.
    Never,
}

impl SandboxMode {
    /// The name config.yaml uses.
    pub fn name(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
            Self::FullAccess => "full-access",
        }
    }
}

impl ApprovalPolicy {
    /// The name config.yaml uses.
    pub fn name(self) -> &'static str {
        match self {
            Self::Untrusted => "untrusted",
            Self::OnRequest => "on-request",
            Self::Never => "never",
        }
    }

    // The policies' decisions, one exhaustive match each: a new policy must
    // say what it does everywhere before it compiles.

    /// Whether what needs approval is put to the user (`false`: refused unasked).
    pub fn asks(self) -> bool {
        match self {
            Self::Untrusted | Self::OnRequest => true,
            Self::Never => false,
        }
    }

    /// Whether a sandboxed command outside the read-only allowlist needs approval.
    pub fn approves_every_command(self) -> bool {
        match self {
            Self::Untrusted => true,
            Self::OnRequest | Self::Never => false,
        }
    }

    /// Whether an MCP tool that says it changes nothing irreversibly runs unasked.
    pub fn trusts_non_destructive_tools(self) -> bool {
        match self {
            Self::Untrusted => false,
            Self::OnRequest | Self::Never => true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TerminalConfig {
    pub timeout_secs: u64,
    /// Output kept from a command; past it the head and tail are kept.
    pub output_cap_chars: usize,
    /// Most bytes of one command's whole output saved in
    /// `$KNACK_HOME/tool-output/` when the result had to be cut.
    pub spill_max_file_bytes: u64,
    /// Most bytes that folder holds; the oldest files go first. 0 saves nothing.
    pub spill_max_total_bytes: u64,
    /// Saved outputs older than this many days are deleted.
    pub spill_max_age_days: u64,
}

impl Default for TerminalConfig {
    fn default() -> Self {
        Self {
            timeout_secs: 120,
            output_cap_chars: 20_000,
            spill_max_file_bytes: 10 * 1024 * 1024,
            spill_max_total_bytes: 100 * 1024 * 1024,
            spill_max_age_days: 7,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SkillsConfig {
    pub external_dirs: Vec<String>,
    pub disabled: Vec<String>,
    pub project_discovery: bool,
    pub trusted_projects: Vec<String>,
    pub template_vars: bool,
    pub inline_shell: bool,
    pub inline_shell_timeout: u64,
    /// The skills index's budget in characters when the model's context
    /// window is unknown.
    pub index_budget_chars: usize,
    /// The skills index's budget as a share of the context window.
    pub index_budget_share: f64,
    /// Most characters of one description the skills index shows.
    pub index_description_chars: usize,
    /// Tool calls since the last skill write that trigger a review; 0 disables it.
    pub review_after_tool_calls: u32,
    /// Days without a use after which a skill counts as stale (from the
    /// later of its creation and its last use).
    pub stale_after_days: u32,
    pub guard_agent_writes: bool,
    pub scan_max_depth: usize,
    pub scan_max_dirs: usize,
    /// Plugin namespaces and their skill folders (`namespace:name` addressing).
    pub plugins: BTreeMap<String, String>,
    /// Stop seeding the bundled skills.
    pub bundled_opt_out: bool,
    /// Where the agent's and the review's skill writes go.
    pub agent_writes: AgentWrites,
    /// Most input tokens one self-improvement review may send, summed over
    /// its requests; the review stops cleanly when the next would pass it.
    pub review_max_input_tokens: u64,
    /// Most model requests one self-improvement review may make.
    pub review_max_iterations: u32,
}

/// `skills.agent_writes`: whether skills the agent writes join the library
/// at once or wait in the inbox for the user.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AgentWrites {
    /// Straight into the library and the next session's index.
    #[default]
    Direct,
    /// Into `skills/.inbox/`, out of the index until accepted.
    Inbox,
}

impl Default for SkillsConfig {
    fn default() -> Self {
        Self {
            external_dirs: Vec::new(),
            disabled: Vec::new(),
            project_discovery: true,
            trusted_projects: Vec::new(),
            template_vars: true,
            inline_shell: false,
            inline_shell_timeout: 10,
            index_budget_chars: 12_000,
            index_budget_share: 0.02,
            index_description_chars: 1_536,
            review_after_tool_calls: 5,
            stale_after_days: 60,
            guard_agent_writes: true,
            scan_max_depth: 6,
            scan_max_dirs: 5000,
            plugins: BTreeMap::new(),
            bundled_opt_out: false,
            agent_writes: AgentWrites::Direct,
            review_max_input_tokens: 200_000,
            review_max_iterations: 16,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// A command whose output becomes the external memory layer of the prompt.
    pub provider_command: Option<String>,
    pub memory_char_limit: usize,
    pub user_char_limit: usize,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        Self {
            provider_command: None,
            memory_char_limit: 2_200,
            user_char_limit: 1_375,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HubConfig {
    pub github_api: String,
    /// Repositories whose skills install with trust `trusted`.
    pub trusted_repos: Vec<String>,
    pub fetch_timeout_secs: u64,
    pub max_package_bytes: u64,
    pub max_package_files: usize,
}

impl Default for HubConfig {
    fn default() -> Self {
        Self {
            github_api: "https://api.github.com".into(),
            trusted_repos: Vec::new(),
            fetch_timeout_secs: 30,
            max_package_bytes: 20 * 1024 * 1024,
            max_package_files: 500,
        }
    }
}

impl Config {
    /// Reads `config.yaml` from the home; a missing file gives the defaults.
    pub fn load(home: &KnackHome) -> Result<Self> {
        Self::load_file(&home.config_path())
    }

    /// Any problem reading the file is a configuration error (exit 3), as a
    /// problem in its text is: the user fixes both in the same place.
    pub fn load_file(path: &Path) -> Result<Self> {
        let invalid = |message: String| Error::InvalidConfig {
            path: path.to_path_buf(),
            message,
        };
        let bytes = match crate::regular_file::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(invalid(format!("cannot be read: {e}"))),
        };
        let text = String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let before = &e.as_bytes()[..at];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let column = at - before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
            invalid(format!(
                "not valid UTF-8 at line {line}, column {column} (byte {at}); save the file as UTF-8"
            ))
        })?;
        Self::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        let config = serde_saphyr::from_str::<Config>(text).map_err(|e| Error::yaml(path, &e))?;
        crate::mcp::validate_servers(&config.mcp_servers).map_err(|message| {
            Error::InvalidConfig {
                path: path.to_path_buf(),
                message,
            }
        })?;
        let problems = config.permissions.problems();
        if !problems.is_empty() {
            return Err(Error::InvalidConfig {
                path: path.to_path_buf(),
                message: problems.join("; "),
            });
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn unreadable_or_non_utf8_config_is_a_config_error_naming_the_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, b"model:\n  default: a\xff\n").unwrap();
        let err = Config::load_file(&path).unwrap_err();
        assert!(matches!(err, Error::InvalidConfig { .. }), "{err:?}");
        let text = err.to_string();
        assert!(text.contains("config.yaml"), "{text}");
        assert!(text.contains("line 2, column 13"), "{text}");
        let folder = dir.path().join("folder.yaml");
        std::fs::create_dir(&folder).unwrap();
        assert!(matches!(
            Config::load_file(&folder),
            Err(Error::InvalidConfig { .. })
        ));
        assert_eq!(
            Config::load_file(&dir.path().join("missing.yaml")).unwrap(),
            Config::default()
        );
    }

    #[test]
    fn empty_text_is_all_defaults() {
        assert_eq!(
            Config::parse("", Path::new("c")).unwrap(),
            Config::default()
        );
        assert_eq!(
            Config::parse("  \n", Path::new("c")).unwrap(),
            Config::default()
        );
    }

    #[test]
    fn partial_sections_keep_other_defaults() {
        let cfg = Config::parse(
            "skills:\n  disabled: [a, b]\n  index_budget_chars: 500\nmodel:\n  name: m\n",
            Path::new("c"),
        )
        .unwrap();
        assert_eq!(cfg.skills.disabled, vec!["a", "b"]);
        assert_eq!(cfg.skills.index_budget_chars, 500);
        assert!(cfg.skills.project_discovery);
        assert_eq!(cfg.model.name.as_deref(), Some("m"));
        assert_eq!(cfg.model.api_key_env, "OPENAI_API_KEY");
    }

    #[test]
    fn invalid_yaml_names_file_and_line() {
        let err = Config::parse("skills:\n  disabled: [a\n", Path::new("/h/config.yaml"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("/h/config.yaml:"), "{err}");
        assert!(err.contains("line"), "{err}");
    }

    #[test]
    fn env_passthrough_defaults_empty_and_parses() {
        assert!(Config::default().agent.env_passthrough.is_empty());
        let cfg = Config::parse(
            "agent:\n  env_passthrough: [GITHUB_TOKEN, NPM_TOKEN]\n",
            Path::new("c"),
        )
        .unwrap();
        assert_eq!(cfg.agent.env_passthrough, vec!["GITHUB_TOKEN", "NPM_TOKEN"]);
    }

    #[test]
    fn providers_parse_with_their_defaults() {
        let cfg = Config::parse(
            "model:\n  provider: claude\n  name: claude-x\nproviders:\n  claude:\n    wire: anthropic\n    base_url: https://api.anthropic.com/v1\n    api_key_env: ANTHROPIC_API_KEY\n    cache_ttl: 1h\n    prices: {input: 3.0, output: 15.0, cache_read: 0.3}\n  local: {base_url: 'http://127.0.0.1:8080/v1'}\n",
            Path::new("c"),
        )
        .unwrap();
        assert_eq!(cfg.model.provider.as_deref(), Some("claude"));
        let claude = &cfg.providers["claude"];
        assert_eq!(claude.wire, Wire::Anthropic);
        assert_eq!(claude.cache_ttl, CacheTtl::OneHour);
        assert_eq!(claude.prices.unwrap().cache_write, None);
        assert_eq!(cfg.providers["local"].wire, Wire::Chat);
        assert_eq!(cfg.providers["local"].cache_ttl, CacheTtl::FiveMinutes);
    }

    #[test]
    fn an_unknown_wire_names_the_choices() {
        let err = Config::parse("providers:\n  x:\n    wire: grpc\n", Path::new("c"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("grpc") && err.contains("anthropic"), "{err}");
    }

    #[test]
    fn unknown_key_is_an_error() {
        let err = Config::parse("skills:\n  disabeld: [a]\n", Path::new("c"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("disabeld"), "{err}");
    }
}
