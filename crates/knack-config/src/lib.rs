//! knack's home directory and its `config.yaml`.
//! Every path, limit and default a user may change is declared here, once.

// knack is Unix-only: file modes, process groups, symbolic links and the
// sandbox are used without fallbacks. Every knack crate that touches files
// depends on this one, so this is where a build elsewhere stops, in plain words.
#[cfg(not(unix))]
compile_error!("knack builds on Unix only; it is developed and tested on Linux");

mod config;
mod dotted;
mod env_file;
mod home;
pub mod mcp;
pub mod permissions;
pub mod private;
pub mod regular_file;
pub mod secret_env;
pub mod state_file;
mod yaml_edit;

pub use config::{
    AgentConfig, AgentWrites, ApprovalPolicy, CacheTtl, Config, ContextConfig, HubConfig,
    MemoryConfig, ModelConfig, Prices, ProviderConfig, SandboxMode, SkillsConfig, TerminalConfig,
    ToolsConfig, Wire,
};
pub use dotted::{SetOutcome, get_dotted, set_dotted};
pub use env_file::{EnvFile, SaveEnvError, is_env_name, parse_env_file, save_env_value};
pub use home::KnackHome;
pub use mcp::{McpApproval, McpServerConfig, McpToolFilter, McpTransportKind};
pub use permissions::{Action, PermissionRule, PermissionsConfig};
pub use secret_env::is_secret_name;

use std::path::{Path, PathBuf};

/// Errors from reading or writing the home directory and its config file.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {message}")]
    InvalidConfig { path: PathBuf, message: String },
    #[error("unknown config key '{key}': {hint}")]
    UnknownKey { key: String, hint: String },
    #[error("invalid value for '{key}': {message}")]
    InvalidValue { key: String, message: String },
    #[error("cannot find a home directory; set KNACK_HOME")]
    NoHome,
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// A YAML error of the file at `path`, its source snippet headed by the
    /// file's path rather than the parser's `<input>`.
    pub fn yaml(path: &Path, err: &serde_saphyr::Error) -> Self {
        let name = path.display().to_string();
        let message = err.render_with_options(serde_saphyr::render_options! {
            source_name: Some(name.as_str()),
        });
        Error::InvalidConfig {
            path: path.to_path_buf(),
            message,
        }
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
