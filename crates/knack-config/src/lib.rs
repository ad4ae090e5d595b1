//! knack's home directory and its `config.yaml`.
//! Every path, limit and default a user may change is declared here, once.

mod config;
mod dotted;
mod env_file;
mod home;
pub mod private;
pub mod secret_env;

pub use config::{
    AgentConfig, ApprovalPolicy, CacheTtl, Config, HubConfig, MemoryConfig, ModelConfig, Prices,
    ProviderConfig, SandboxMode, SkillsConfig, TerminalConfig, Wire,
};
pub use dotted::{get_dotted, set_dotted};
pub use env_file::{EnvFile, parse_env_file};
pub use home::KnackHome;
pub use secret_env::is_secret_name;

use std::path::PathBuf;

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
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
