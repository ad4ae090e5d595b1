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
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
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
}

impl Default for ModelConfig {
    fn default() -> Self {
        Self {
            base_url: None,
            name: None,
            api_key_env: "OPENAI_API_KEY".into(),
            connect_timeout_secs: 10,
            first_byte_timeout_secs: 120,
            idle_timeout_secs: 90,
            max_retries: 4,
            retry_base_delay_ms: 1_000,
            retry_max_delay_ms: 30_000,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// Toolsets whose tools the model may call, in this order.
    pub toolsets: Vec<String>,
    pub max_iterations: u32,
    pub system_message: Option<String>,
    /// Run commands the terminal tool would ask about without asking.
    pub yolo: bool,
    /// Longest the headless runner waits for the self-improvement review.
    pub review_timeout_secs: u64,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            toolsets: ["skills", "terminal", "file", "memory", "session_search"]
                .map(String::from)
                .to_vec(),
            max_iterations: 50,
            system_message: None,
            yolo: false,
            review_timeout_secs: 300,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TerminalConfig {
    pub timeout_secs: u64,
    /// Output kept from a command; past it the head and tail are kept.
    pub output_cap_chars: usize,
}

impl Default for TerminalConfig {
    fn default() -> Self {
        Self {
            timeout_secs: 120,
            output_cap_chars: 20_000,
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
    pub index_budget_chars: usize,
    /// Tool calls since the last skill write that trigger a review; 0 disables it.
    pub review_after_tool_calls: u32,
    pub guard_agent_writes: bool,
    pub scan_max_depth: usize,
    pub scan_max_dirs: usize,
    /// Plugin namespaces and their skill folders (`namespace:name` addressing).
    pub plugins: BTreeMap<String, String>,
    /// Stop seeding the bundled skills.
    pub bundled_opt_out: bool,
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
            review_after_tool_calls: 5,
            guard_agent_writes: true,
            scan_max_depth: 6,
            scan_max_dirs: 5000,
            plugins: BTreeMap::new(),
            bundled_opt_out: false,
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

    pub fn load_file(path: &Path) -> Result<Self> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(&text, path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(Error::io(path, e)),
        }
    }

    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        serde_saphyr::from_str::<Config>(text).map_err(|e| Error::InvalidConfig {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

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
    fn unknown_key_is_an_error() {
        let err = Config::parse("skills:\n  disabeld: [a]\n", Path::new("c"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("disabeld"), "{err}");
    }
}
