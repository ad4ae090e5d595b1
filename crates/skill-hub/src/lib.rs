//! The skills hub: find skills in official, git, GitHub, well-known, URL and local
//! sources, and install, check, update, audit and remove them under a trust policy.

mod audit_log;
mod hub;
mod identifier;
mod lock;
mod net;
mod publish;
mod quarantine;
mod safe_tree;
mod search;
pub mod source;
mod taps;

pub use audit_log::{AUDIT_LOG_FILE, AuditAction, append_audit_line, audit_line};
pub use hub::{
    AuditResult, CheckStatus, Hub, InstallOptions, Installed, Staged, StagedMember, UpdateOutcome,
    UpdateStatus,
};
pub use identifier::Identifier;
pub use lock::{HubLock, LOCK_FILE, LockEntry};
pub use publish::{INDEX_FILE, PublishReport, Published, SkippedSkill, WELL_KNOWN_DIR, publish};
pub use safe_tree::{Limits, tree_hash};
pub use search::{BROWSE_PAGE_SIZE, SearchOutcome, SourceProblem};
pub use source::{Member, SkillMeta, SkillSource};
pub use taps::{TAPS_FILE, Tap, Taps};

/// Fuzzing entry point for archive unpacking; not part of the hub's API.
#[doc(hidden)]
pub use safe_tree::unpack_tar_gz as fuzz_unpack_tar_gz;

use std::path::PathBuf;

/// Everything that can go wrong in the hub. Messages are full sentences for the user.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The identifier does not name a source we know.
    #[error("{0}")]
    Identifier(String),
    /// A download, clone or index read failed.
    #[error("{0}")]
    Fetch(String),
    /// The package holds something we refuse to unpack.
    #[error("unsafe package: {0}")]
    Unsafe(String),
    /// The fetched skill breaks the SKILL.md rules.
    #[error("{0}")]
    Invalid(String),
    /// The trust policy refused the skill.
    #[error("{reason}")]
    Blocked { reason: String },
    /// The identifier names a collection of several skills, not one.
    #[error("{}", collection_message(identifier, members))]
    Collection {
        identifier: String,
        members: Vec<Member>,
    },
    /// A skill of that name already exists.
    #[error("{0}")]
    Collision(String),
    /// The user (or a missing terminal) said no.
    #[error("{0}")]
    Declined(String),
    /// Not a skill the hub installed.
    #[error("{0}")]
    NotInstalled(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot scan the skill: {0}")]
    Scan(#[from] skill_guard::Error),
    /// A hub state file (the lock, the taps) exists but cannot be read; it
    /// is never taken as empty.
    #[error("{0}")]
    Damaged(String),
}

/// How many of a collection's members an error message names.
const MEMBERS_NAMED: usize = 20;

/// Whether a collection identifier is a whole marketplace, whose members are
/// plugins (each a collection of skills) rather than skills.
pub fn lists_plugins(identifier: &str) -> bool {
    identifier.starts_with("marketplace:") && !identifier.contains(identifier::PLUGIN_SEPARATOR)
}

fn collection_message(identifier: &str, members: &[Member]) -> String {
    let named: Vec<&str> = members
        .iter()
        .take(MEMBERS_NAMED)
        .map(|m| m.identifier.as_deref().unwrap_or(&m.path))
        .collect();
    let more = members.len().saturating_sub(MEMBERS_NAMED);
    format!(
        "{identifier} holds {} {}; install one of them by its own identifier, or all of them with --all: {}{}",
        members.len(),
        if lists_plugins(identifier) {
            "plugins"
        } else {
            "skills"
        },
        named.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )
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
