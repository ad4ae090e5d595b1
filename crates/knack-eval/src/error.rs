//! The eval engine's one error type: bad input names the file and the fix,
//! an unreachable provider is its own case (an error, never a failed task).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An eval file or family folder that does not say what it must.
    #[error("{path}: {message}")]
    Spec { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The agent process could not be started at all.
    #[error("cannot start the agent ({program}): {source}")]
    Spawn {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A session never got an answer from the model: the run is an error, not a failure.
    #[error("the provider could not be reached: {0}")]
    ProviderDown(String),
    #[error(transparent)]
    Config(#[from] knack_config::Error),
    #[error("reading the session store: {0}")]
    Store(#[from] agent_loop::Error),
    #[error("writing the report: {0}")]
    Json(#[from] serde_json::Error),
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub fn spec(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Error::Spec {
            path: path.into(),
            message: message.into(),
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
