//! The seeding decision for every bundled skill (SPEC §10): copy new ones,
//! update untouched copies, and never overwrite an edit or revive a deletion.

use std::fs::File;
use std::path::Path;

use serde::Serialize;
use skill_bundle::{BundleTree, BundledSkill};

use crate::disk::{self, Replaced};
use crate::manifest::{self, Loaded, Manifest};
use crate::{Error, Result};

/// Lock file that serialises syncs of one skills folder across processes.
pub const LOCK_FILE: &str = ".bundled_manifest.lock";

/// The state the manifest was found in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ManifestState {
    #[default]
    Ok,
    Missing,
    Corrupt,
}

/// What one sync did, skill ids per outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SyncReport {
    /// The bundle had not changed since the last complete sync: nothing was read.
    pub fast_path: bool,
    /// Another process held the sync lock; this one left the work to it.
    pub busy: bool,
    pub manifest: ManifestState,
    /// Copied because the user had no copy and the manifest did not know them.
    pub added: Vec<String>,
    /// Replaced by a newer bundled version; the user's copy was untouched.
    pub updated: Vec<String>,
    /// Edited by the user; kept as is (bundled changes do not reach them).
    pub customized: Vec<String>,
    /// Recorded but gone from the skills folder: the user deleted them; not re-added.
    pub deleted: Vec<String>,
    pub unchanged: Vec<String>,
    /// A folder the manifest never recorded sits at a bundled skill's path
    /// (the user's own skill, a symlink, or a copy after `reset`); kept as is.
    pub conflicts: Vec<String>,
    /// Copies found identical to the bundle and recorded (manifest recovery).
    pub adopted: Vec<String>,
    /// Manifest entries dropped: no longer bundled and no copy left.
    pub cleaned: Vec<String>,
    /// Categories whose missing `DESCRIPTION.md` was seeded.
    pub descriptions: Vec<String>,
    /// Copies put back after an interrupted update.
    pub recovered: Vec<String>,
    pub errors: Vec<String>,
}

impl SyncReport {
    /// Whether anything on disk changed.
    pub fn changed_anything(&self) -> bool {
        !(self.added.is_empty()
            && self.updated.is_empty()
            && self.adopted.is_empty()
            && self.cleaned.is_empty()
            && self.descriptions.is_empty()
            && self.recovered.is_empty())
    }

    /// What a normal command should warn about: failures, a damaged manifest,
    /// interrupted updates and bundled skills blocked by a folder in the way.
    /// Empty when seeding went as expected.
    pub fn problems(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .errors
            .iter()
            .map(|e| format!("bundled skills: {e}"))
            .collect();
        if self.manifest == ManifestState::Corrupt {
            out.push(format!(
                "bundled skills: {} was damaged and has been rebuilt; copies that differ from the bundle are kept as customized",
                manifest::MANIFEST_FILE
            ));
        }
        for id in &self.recovered {
            out.push(format!(
                "bundled skills: restored '{id}' after an interrupted update"
            ));
        }
        for id in &self.conflicts {
            out.push(format!(
                "bundled skills: '{id}' was not seeded because a folder that knack did not create is in the way; see `knack skills diff {id} --bundled`"
            ));
        }
        out
    }
}

/// The cheap start-up check: when the manifest says the last complete sync
/// used exactly this bundle, there is nothing to do (one small file read).
/// Otherwise a full sync runs, unless another process is already syncing.
///
/// Nothing else needs checking on the fast path: with the bundle unchanged, a
/// full sync can only find user edits (kept) and deletions (respected), so its
/// outcome would be "no change" anyway. A lost manifest has no set line and
/// an interrupted sync never writes one, so both fall through to a full sync.
pub fn sync_if_needed(skills_dir: &Path, bundle: &BundleTree) -> SyncReport {
    if is_current(skills_dir, bundle) {
        return SyncReport {
            fast_path: true,
            ..SyncReport::default()
        };
    }
    match lock(skills_dir, false) {
        Ok(Some(_guard)) => sync_locked(skills_dir, bundle),
        Ok(None) => SyncReport {
            busy: true,
            ..SyncReport::default()
        },
        Err(e) => failed(e),
    }
}

/// Whether the manifest records this bundle's set hash.
pub fn is_current(skills_dir: &Path, bundle: &BundleTree) -> bool {
    match std::fs::read(skills_dir.join(manifest::MANIFEST_FILE)) {
        Ok(bytes) => matches!(
            manifest::parse(&bytes),
            Loaded::Ok(Manifest { set_hash: Some(set), .. }) if set == bundle.set_hash()
        ),
        Err(_) => false,
    }
}

/// A full sync of every bundled skill, waiting for any other sync to finish.
pub fn sync(skills_dir: &Path, bundle: &BundleTree) -> SyncReport {
    match lock(skills_dir, true) {
        Ok(Some(_guard)) => sync_locked(skills_dir, bundle),
        Ok(None) => SyncReport {
            busy: true,
            ..SyncReport::default()
        },
        Err(e) => failed(e),
    }
}

fn failed(e: Error) -> SyncReport {
    SyncReport {
        errors: vec![e.to_string()],
        ..SyncReport::default()
    }
}

/// Takes the advisory lock of a skills folder; `None` when `wait` is false
/// and another process holds it. The lock is released when the file drops.
pub(crate) fn lock(skills_dir: &Path, wait: bool) -> Result<Option<File>> {
    std::fs::create_dir_all(skills_dir).map_err(|e| Error::io(skills_dir, e))?;
    let path = skills_dir.join(LOCK_FILE);
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    if wait {
        file.lock().map_err(|e| Error::io(&path, e))?;
        return Ok(Some(file));
    }
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(Error::io(&path, e)),
    }
}

pub(crate) fn sync_locked(skills_dir: &Path, bundle: &BundleTree) -> SyncReport {
    let mut report = SyncReport::default();
    match disk::recover_staging(skills_dir, bundle) {
        Ok(restored) => report.recovered = restored,
        Err(e) => report.errors.push(e.to_string()),
    }
    let loaded = match manifest::read(skills_dir) {
        Ok(l) => l,
        // Guessing here could re-add skills the user deleted: stop instead.
        Err(e) => {
            report.errors.push(e.to_string());
            return report;
        }
    };
    report.manifest = match &loaded {
        Loaded::Ok(_) => ManifestState::Ok,
        Loaded::Missing => ManifestState::Missing,
        Loaded::Corrupt { .. } => ManifestState::Corrupt,
    };
    let recovering = !matches!(loaded, Loaded::Ok(_));
    let mut manifest = loaded.manifest();

    for skill in bundle.skills() {
        if let Err(e) = decide(
            skills_dir,
            bundle,
            skill,
            recovering,
            &mut manifest,
            &mut report,
        ) {
            report.errors.push(format!("{}: {e}", skill.id));
        }
    }
    seed_descriptions(skills_dir, bundle, &mut report);
    if let Err(e) = disk::prune_staging(skills_dir) {
        report.errors.push(e.to_string());
    }
    let stale: Vec<String> = manifest
        .entries
        .keys()
        .filter(|id| bundle.skill(id).is_none())
        .filter(|id| std::fs::symlink_metadata(skills_dir.join(id)).is_err())
        .cloned()
        .collect();
    for id in stale {
        manifest.entries.remove(&id);
        report.cleaned.push(id);
    }
    // Only a sync without errors may let later starts take the fast path;
    // otherwise the next start retries.
    manifest.set_hash = report
        .errors
        .is_empty()
        .then(|| bundle.set_hash().to_owned());
    if let Err(e) = manifest::write(skills_dir, &manifest) {
        report.errors.push(e.to_string());
    }
    report
}

/// The decision table for one skill (see docs/bundled-skills.md).
fn decide(
    skills_dir: &Path,
    bundle: &BundleTree,
    skill: &BundledSkill,
    recovering: bool,
    manifest: &mut Manifest,
    report: &mut SyncReport,
) -> Result<()> {
    let id = skill.id.clone();
    let dest = skills_dir.join(&skill.id);
    let meta = match std::fs::symlink_metadata(&dest) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(&dest, e)),
    };
    let recorded = manifest.entries.get(&skill.id).cloned();
    let Some(meta) = meta else {
        if recorded.is_some() {
            report.deleted.push(id);
        } else {
            disk::install(skills_dir, bundle, skill, Replaced::Discard)?;
            manifest.entries.insert(id.clone(), skill.hash.clone());
            report.added.push(id);
        }
        return Ok(());
    };
    if !meta.is_dir() {
        // A symlink or a file: never follow it, never replace it.
        report.conflicts.push(id);
        return Ok(());
    }
    let user = disk::hash_dir(&dest)?;
    match recorded {
        None if user == skill.hash => {
            manifest.entries.insert(id.clone(), skill.hash.clone());
            report.adopted.push(id);
        }
        None if recovering => {
            // The record of what was seeded is lost, so the difference may
            // be an edit: keep the copy and treat it as customized.
            manifest.entries.insert(id.clone(), skill.hash.clone());
            report.customized.push(id);
        }
        None => report.conflicts.push(id),
        Some(_) if user == skill.hash => {
            manifest.entries.insert(id.clone(), skill.hash.clone());
            report.unchanged.push(id);
        }
        Some(origin) if user == origin => {
            disk::install(skills_dir, bundle, skill, Replaced::Discard)?;
            manifest.entries.insert(id.clone(), skill.hash.clone());
            report.updated.push(id);
        }
        Some(_) => report.customized.push(id),
    }
    Ok(())
}

/// Copies category `DESCRIPTION.md` files that are missing, into categories
/// that exist (a category the user removed entirely is not recreated).
fn seed_descriptions(skills_dir: &Path, bundle: &BundleTree, report: &mut SyncReport) {
    for (category, bytes) in bundle.category_descriptions() {
        let dir = skills_dir.join(category);
        let target = dir.join("DESCRIPTION.md");
        if !dir.is_dir() || std::fs::symlink_metadata(&target).is_ok() {
            continue;
        }
        match disk::write_file_atomic(&target, bytes) {
            Ok(()) => report.descriptions.push(category.to_owned()),
            Err(e) => report.errors.push(e.to_string()),
        }
    }
}
