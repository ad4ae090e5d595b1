//! The crate-wide error: a failed model request, a fatal tool failure, or a session-store failure.
//! Tool failures the model should see are not errors here; they travel back to it as tool results.

use std::path::PathBuf;

use model_client::ModelError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Model(#[from] ModelError),

    /// A tool hit something the turn cannot recover from (the model cannot fix it by retrying).
    #[error("tool '{tool}' failed: {message}")]
    ToolFatal { tool: String, message: String },

    #[error("session store {path}: {source}")]
    Store {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },

    #[error("session store: {0}")]
    Sqlite(#[from] rusqlite::Error),

    #[error(
        "{path} was written by a newer knack (schema version {found}; this build knows up to {known})"
    )]
    StoreTooNew {
        path: PathBuf,
        found: i64,
        known: i64,
    },

    #[error("no session with id '{0}'; `knack sessions list` shows the stored ones")]
    SessionNotFound(String),

    #[error("'{prefix}' is the start of more than one session id ({}); give more of it", .matches.join(", "))]
    SessionAmbiguous {
        prefix: String,
        matches: Vec<String>,
    },

    #[error("session store holds unreadable data: {0}")]
    Corrupt(String),

    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A session-level refusal with a sentence for the user (bad `-s`, an
    /// ambiguous `/skill`, the iteration limit).
    #[error("{0}")]
    Session(String),

    #[error("cannot encode JSON: {0}")]
    Json(#[from] serde_json::Error),
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
