//! `knack skills reset NAME [--restore]`: stop tracking a customized copy, or
//! replace it with the bundled version (keeping a backup of the replaced copy).

use std::path::{Path, PathBuf};

use serde::Serialize;
use skill_bundle::BundleTree;

use crate::disk::{self, Replaced};
use crate::inspect::resolve;
use crate::manifest;
use crate::sync::lock;
use crate::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ResetOutcome {
    /// The copy equals the bundled version; it stays tracked and will receive updates.
    Rebaselined { id: String },
    /// The manifest entry was removed; the differing copy is kept and is no
    /// longer tracked: later bundled versions do not touch it.
    Untracked { id: String },
    /// The user had deleted the copy; with the entry gone, the next sync
    /// (at the next start) seeds it again.
    Forgotten { id: String },
    /// The bundled version replaced (or re-created) the copy; a replaced copy
    /// that differed is kept under `backup`.
    Restored { id: String, backup: Option<PathBuf> },
}

/// Without `restore` (as Hermes does): drop the manifest entry, then judge the
/// copy the way a sync judges an unrecorded folder: identical to the bundle →
/// recorded again; different → left alone and untracked. With `restore`:
/// install the bundled version and record it.
pub fn reset(
    skills_dir: &Path,
    bundle: &BundleTree,
    query: &str,
    restore: bool,
) -> Result<ResetOutcome> {
    let skill = resolve(bundle, query)?;
    let _guard = lock(skills_dir, true)?;
    let mut manifest = manifest::read(skills_dir)?.manifest();
    let dest = skills_dir.join(&skill.id);
    if restore {
        let differs = dest.is_dir() && disk::hash_dir(&dest)? != skill.hash;
        let backups = skills_dir.join(disk::BACKUP_DIR).join(timestamp());
        let replaced = if differs {
            Replaced::KeepUnder(backups)
        } else {
            Replaced::Discard
        };
        // Drop the set line first: if this is interrupted, the next start
        // runs a full sync, which repairs a half-done swap.
        let set_hash = manifest.set_hash.take();
        manifest::write(skills_dir, &manifest)?;
        let backup = disk::install(skills_dir, bundle, skill, replaced)?;
        manifest
            .entries
            .insert(skill.id.clone(), skill.hash.clone());
        manifest.set_hash = set_hash;
        manifest::write(skills_dir, &manifest)?;
        return Ok(ResetOutcome::Restored {
            id: skill.id.clone(),
            backup,
        });
    }
    if manifest.entries.remove(&skill.id).is_none() {
        return Err(Error::NotTracked(skill.id.clone()));
    }
    let present = std::fs::symlink_metadata(&dest).is_ok();
    let identical = dest.is_dir() && disk::hash_dir(&dest)? == skill.hash;
    let outcome = if !present {
        // Without its set line the manifest makes the next start run a full
        // sync, which is what brings the skill back.
        manifest.set_hash = None;
        ResetOutcome::Forgotten {
            id: skill.id.clone(),
        }
    } else if identical {
        manifest
            .entries
            .insert(skill.id.clone(), skill.hash.clone());
        ResetOutcome::Rebaselined {
            id: skill.id.clone(),
        }
    } else {
        ResetOutcome::Untracked {
            id: skill.id.clone(),
        }
    };
    manifest::write(skills_dir, &manifest)?;
    Ok(outcome)
}

fn timestamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{}-{:09}", now.as_secs(), now.subsec_nanos())
}
