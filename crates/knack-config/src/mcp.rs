//! `mcp_servers.<name>` in config.yaml: the Model Context Protocol servers whose tools the
//! agent may call, each reached over stdio (a child process) or Streamable HTTP.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One MCP server. Exactly one of `command` (stdio) and `url` (HTTP) is set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpServerConfig {
    /// stdio: the program to start; it speaks MCP on its stdin and stdout.
    pub command: Option<String>,
    pub args: Vec<String>,
    /// Variables added to the server's environment (after secrets are removed from the inherited one).
    pub env: BTreeMap<String, String>,
    /// The server's working directory; knack's own when unset.
    pub cwd: Option<String>,
    /// Streamable HTTP: the server's endpoint.
    pub url: Option<String>,
    /// Extra headers sent with every HTTP request.
    pub headers: BTreeMap<String, String>,
    /// The environment variable (or `.env` entry) holding a bearer token for HTTP.
    pub bearer_token_env: Option<String>,
    /// A disabled server is listed but never started.
    pub enabled: bool,
    pub tools: McpToolFilter,
    /// Overrides the tools' own annotations when deciding whether to ask.
    pub approval: McpApproval,
    pub startup_timeout_secs: u64,
    pub tool_timeout_secs: u64,
}

impl Default for McpServerConfig {
    fn default() -> Self {
        Self {
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            bearer_token_env: None,
            enabled: true,
            tools: McpToolFilter::default(),
            approval: McpApproval::default(),
            startup_timeout_secs: 20,
            tool_timeout_secs: 60,
        }
    }
}

/// Which of a server's tools the model sees, by the names the server gives them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpToolFilter {
    /// When non-empty, only these tools.
    pub include: Vec<String>,
    /// Never these tools (applied after `include`).
    pub exclude: Vec<String>,
}

impl McpToolFilter {
    /// Whether the tool the server calls `name` passes the filter.
    pub fn allows(&self, name: &str) -> bool {
        (self.include.is_empty() || self.include.iter().any(|n| n == name))
            && !self.exclude.iter().any(|n| n == name)
    }
}

/// `mcp_servers.<name>.approval`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum McpApproval {
    /// Follow the tool's annotations and `agent.approval`.
    #[default]
    Auto,
    /// Treat every tool of the server as one that needs approval.
    Always,
    /// Run every tool of the server without asking (you trust it).
    Never,
}

impl McpApproval {
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Always => "always",
            Self::Never => "never",
        }
    }
}

/// How a server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpTransportKind {
    Stdio,
    Http,
}

impl McpTransportKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stdio => "stdio",
            Self::Http => "http",
        }
    }
}

impl McpServerConfig {
    /// The transport this entry configures; `None` when it names neither or both
    /// (which [`validate_servers`] rejects, so a loaded config always has one).
    pub fn transport(&self) -> Option<McpTransportKind> {
        match (&self.command, &self.url) {
            (Some(_), None) => Some(McpTransportKind::Stdio),
            (None, Some(_)) => Some(McpTransportKind::Http),
            _ => None,
        }
    }
}

/// Whether `name` may name a server: it becomes part of tool names, which
/// every provider's wire restricts to `[a-zA-Z0-9_-]`.
pub fn is_valid_server_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Checks what serde cannot: server names, and one transport per server.
/// The message is one sentence naming the server.
pub fn validate_servers(servers: &BTreeMap<String, McpServerConfig>) -> Result<(), String> {
    for (name, server) in servers {
        if !is_valid_server_name(name) {
            return Err(format!(
                "mcp_servers: the server name '{name}' may use only letters, digits, '_' and '-'"
            ));
        }
        match (&server.command, &server.url) {
            (Some(command), None) if command.trim().is_empty() => {
                return Err(format!("mcp_servers.{name}: `command` is empty"));
            }
            (None, Some(url)) if !(url.starts_with("http://") || url.starts_with("https://")) => {
                return Err(format!(
                    "mcp_servers.{name}: `url` must start with http:// or https://, not '{url}'"
                ));
            }
            (Some(_), Some(_)) => {
                return Err(format!(
                    "mcp_servers.{name}: set either `command` (stdio) or `url` (HTTP), not both"
                ));
            }
            (None, None) => {
                return Err(format!(
                    "mcp_servers.{name}: set `command` (a stdio server) or `url` (a Streamable HTTP server)"
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_transports_are_checked() {
        let stdio = McpServerConfig {
            command: Some("srv".into()),
            ..McpServerConfig::default()
        };
        let mut servers = BTreeMap::from([("ok_name-1".to_owned(), stdio.clone())]);
        assert_eq!(validate_servers(&servers), Ok(()));
        servers.insert("bad name".into(), stdio.clone());
        let err = validate_servers(&servers).unwrap_err();
        assert!(err.contains("'bad name'"), "{err}");

        let neither = BTreeMap::from([("x".to_owned(), McpServerConfig::default())]);
        assert!(
            validate_servers(&neither)
                .unwrap_err()
                .contains("`command`")
        );
        let both = McpServerConfig {
            url: Some("http://127.0.0.1:1/mcp".into()),
            ..stdio
        };
        let both = BTreeMap::from([("x".to_owned(), both)]);
        assert!(validate_servers(&both).unwrap_err().contains("not both"));
    }

    #[test]
    fn filter_applies_include_then_exclude() {
        let filter = McpToolFilter {
            include: vec!["a".into(), "b".into()],
            exclude: vec!["b".into()],
        };
        assert!(filter.allows("a"));
        assert!(!filter.allows("b"));
        assert!(!filter.allows("c"));
        assert!(McpToolFilter::default().allows("anything"));
    }

    #[test]
    fn the_contract_example_parses_and_a_bad_name_is_one_clear_error() {
        let yaml = "mcp_servers:\n  everything:\n    command: npx\n    args: [\"-y\", \"@modelcontextprotocol/server-everything\"]\n    env: {}\n    cwd: null\n    enabled: true\n    tools: {include: [], exclude: []}\n    approval: auto\n    startup_timeout_secs: 20\n    tool_timeout_secs: 60\n  remote:\n    url: https://example.com/mcp\n    headers: {}\n    bearer_token_env: REMOTE_TOKEN\n    approval: always\n";
        let cfg = crate::Config::parse(yaml, std::path::Path::new("c")).unwrap();
        let everything = &cfg.mcp_servers["everything"];
        assert_eq!(everything.transport(), Some(McpTransportKind::Stdio));
        assert_eq!(everything.args.len(), 2);
        let remote = &cfg.mcp_servers["remote"];
        assert_eq!(remote.transport(), Some(McpTransportKind::Http));
        assert_eq!(remote.approval, McpApproval::Always);
        assert_eq!(remote.tool_timeout_secs, 60);
        assert!(remote.enabled);

        let err = crate::Config::parse(
            "mcp_servers:\n  'a.b': {command: x}\n",
            std::path::Path::new("/h/config.yaml"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("/h/config.yaml: "), "{err}");
        assert!(err.contains("'a.b'"), "{err}");
    }
}
