//! The bundled (`skills/`) and optional (`optional-skills/`) skill trees,
//! compiled into the binary so an installed knack needs no repository.

mod rules;
mod tree;

pub use rules::{HashEntry, KNACK_PRIVATE_PREFIX, content_hash, content_hash_entries, is_excluded};
pub use tree::{BundleFile, BundleTree, BundledSkill, Lookup};

use std::path::PathBuf;
use std::sync::OnceLock;

mod data {
    include!(concat!(env!("OUT_DIR"), "/bundle_data.rs"));
}

/// The environment variable that replaces the compiled-in bundled set with a
/// folder on disk (tests, and people trying out skills before a release).
pub const BUNDLED_OVERRIDE_ENV: &str = "KNACK_BUNDLED_SKILLS";

/// Errors from reading a bundle tree from disk.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0} is not a folder")]
    NotADirectory(PathBuf),
}

pub type Result<T> = std::result::Result<T, Error>;

/// The bundled skills as compiled into this binary.
pub fn bundled() -> &'static BundleTree {
    static TREE: OnceLock<BundleTree> = OnceLock::new();
    TREE.get_or_init(|| {
        BundleTree::from_static(
            data::BUNDLED_FILES,
            data::BUNDLED_SKILLS,
            data::BUNDLED_SET_HASH,
        )
    })
}

/// The optional skills as compiled into this binary (installed only through the hub).
pub fn optional() -> &'static BundleTree {
    static TREE: OnceLock<BundleTree> = OnceLock::new();
    TREE.get_or_init(|| {
        BundleTree::from_static(
            data::OPTIONAL_FILES,
            data::OPTIONAL_SKILLS,
            data::OPTIONAL_SET_HASH,
        )
    })
}

/// The bundled set seeding should use: the folder named by
/// `KNACK_BUNDLED_SKILLS` when it is set and non-empty, else the compiled-in one.
pub fn bundled_source() -> Result<std::borrow::Cow<'static, BundleTree>> {
    match std::env::var_os(BUNDLED_OVERRIDE_ENV).filter(|v| !v.is_empty()) {
        Some(dir) => Ok(std::borrow::Cow::Owned(BundleTree::from_dir(
            std::path::Path::new(&dir),
        )?)),
        None => Ok(std::borrow::Cow::Borrowed(bundled())),
    }
}
