//! Threat scanner for skills, context files and memory text.
//! One pattern catalog, one matching engine, structural checks, verdicts and the trust policy.

mod behaviour;
mod catalog;
mod finding;
mod hash;
mod ignore;
mod normalize;
mod policy;
mod report;
mod scan;
mod structure;
mod unicode;
mod walk;

pub use catalog::{ThreatPattern, catalog, prepare};
pub use finding::{Finding, Severity, ThreatCategory, TrustLevel, Verdict};
pub use hash::content_hash;
pub use ignore::{IGNORE_FILE, SkillIgnore};
pub use policy::{PolicyDecision, decide, verdict_of};
pub use report::ScanReport;
pub use scan::{ScanScope, scan_text};
pub use structure::{MAX_FILE_COUNT, MAX_SINGLE_FILE_BYTES, MAX_TOTAL_BYTES, normalize_lexically};
pub use walk::{scan_skill_dir, scan_skill_dir_with};

use std::path::PathBuf;

/// Errors from reading a skill directory.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}: not a directory")]
    NotADirectory(PathBuf),
    #[error("unknown {kind} '{value}'")]
    UnknownName { kind: &'static str, value: String },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
