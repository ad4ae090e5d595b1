//! Seeds the bundled skills into `$KNACK_HOME/skills/` and keeps them current
//! without ever overwriting a user's edit or reviving a skill they deleted.
//!
//! The record of what was seeded is `skills/.bundled_manifest` (see
//! [`manifest`]); the rules per skill are in [`sync`]; content hashes come from
//! [`skill_bundle::content_hash`] and skip knack's own `.knack-*` files.

pub mod disk;
pub mod inspect;
pub mod manifest;
pub mod reset;
pub mod sync;

use std::path::PathBuf;

pub use inspect::{FileDiff, FileStatus, ModifiedSkill, SkillDiff, diff, list_modified};
pub use manifest::{MANIFEST_FILE, Manifest};
pub use reset::{ResetOutcome, reset};
pub use sync::{ManifestState, SyncReport, is_current, sync, sync_if_needed};

/// Errors from seeding and from the `skills sync` family of commands.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("bundled skills source: {0}")]
    Bundle(#[from] skill_bundle::Error),
    #[error("'{0}' is not a bundled skill")]
    NotBundled(String),
    #[error("'{query}' matches several bundled skills: {}; use the full id", candidates.join(", "))]
    Ambiguous {
        query: String,
        candidates: Vec<String>,
    },
    #[error("'{0}' is not a tracked bundled skill (the manifest has no entry for it)")]
    NotTracked(String),
    #[error("there is no copy of '{0}' in the skills folder (it was deleted or never seeded)")]
    NoCopy(String),
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

/// The start-up hook: unless the user opted out, bring the user's bundled
/// copies up to date with the bundle this binary carries (or the folder named
/// by `KNACK_BUNDLED_SKILLS`). Cheap when nothing changed; see [`sync_if_needed`].
/// `None` when opted out.
pub fn seed_on_start(
    home: &knack_config::KnackHome,
    config: &knack_config::Config,
) -> Result<Option<SyncReport>> {
    if config.skills.bundled_opt_out {
        return Ok(None);
    }
    let bundle = skill_bundle::bundled_source()?;
    Ok(Some(sync_if_needed(&home.skills_dir(), &bundle)))
}
