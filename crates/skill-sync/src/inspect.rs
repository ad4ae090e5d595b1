//! Read-only views of the user's bundled copies: which ones the user changed
//! (`list-modified`) and how a copy differs from the bundle (`diff`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use skill_bundle::{BundleTree, BundledSkill, Lookup};

use crate::disk::{self, DiskEntry};
use crate::manifest;
use crate::{Error, Result};

/// A bundled skill whose copy no longer matches what knack seeded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModifiedSkill {
    pub id: String,
    pub path: PathBuf,
    /// The bundle has also changed since the copy was seeded, so an update
    /// is being held back by the user's edit.
    pub bundled_changed: bool,
}

/// Tracked bundled skills whose copy differs from the hash recorded when
/// knack seeded it, sorted by id. Deleted copies are not listed.
pub fn list_modified(skills_dir: &Path, bundle: &BundleTree) -> Result<Vec<ModifiedSkill>> {
    let manifest = manifest::read(skills_dir)?.manifest();
    let mut out = Vec::new();
    for (id, origin) in &manifest.entries {
        let Some(skill) = bundle.skill(id) else {
            continue;
        };
        let dest = skills_dir.join(id);
        if !std::fs::symlink_metadata(&dest).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        if &disk::hash_dir(&dest)? != origin {
            out.push(ModifiedSkill {
                id: id.clone(),
                path: dest,
                bundled_changed: &skill.hash != origin,
            });
        }
    }
    Ok(out)
}

/// Resolves a user-given name to a bundled skill (id, `user:` id, or name).
pub fn resolve<'a>(bundle: &'a BundleTree, query: &str) -> Result<&'a BundledSkill> {
    match bundle.find(query) {
        Lookup::Found(skill) => Ok(skill),
        Lookup::Ambiguous(all) => Err(Error::Ambiguous {
            query: query.to_owned(),
            candidates: all.iter().map(|s| s.id.clone()).collect(),
        }),
        Lookup::NotFound => Err(Error::NotBundled(query.to_owned())),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileStatus {
    Modified,
    /// Only in the user's copy.
    Added,
    /// Only in the bundle.
    Removed,
    /// Differs, and one side is not UTF-8 text (or is a symlink).
    Binary,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    pub path: String,
    pub status: FileStatus,
    /// A unified diff from the bundled file to the user's, for text files.
    pub diff: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillDiff {
    pub id: String,
    pub path: PathBuf,
    pub files: Vec<FileDiff>,
}

/// How the user's copy of a bundled skill differs from the bundled version,
/// per file (knack's own `.knack-*` files are not compared).
pub fn diff(skills_dir: &Path, bundle: &BundleTree, query: &str) -> Result<SkillDiff> {
    let skill = resolve(bundle, query)?;
    let dest = skills_dir.join(&skill.id);
    if !dest.is_dir() {
        return Err(Error::NoCopy(skill.id.clone()));
    }
    let mut sides: BTreeMap<String, (Option<DiskEntry>, Option<DiskEntry>)> = BTreeMap::new();
    for (rel, bytes) in bundle.skill_files(skill) {
        sides.entry(rel.to_owned()).or_default().0 = Some(DiskEntry::File(bytes.to_vec()));
    }
    for (rel, entry) in disk::read_entries(&dest)? {
        sides.entry(rel).or_default().1 = Some(entry);
    }
    let mut files = Vec::new();
    for (rel, (ours, theirs)) in sides {
        if ours == theirs {
            continue;
        }
        let status = match (&ours, &theirs) {
            (None, _) => FileStatus::Added,
            (_, None) => FileStatus::Removed,
            _ => FileStatus::Modified,
        };
        let old = text_of(ours.as_ref());
        let new = text_of(theirs.as_ref());
        let (status, diff) = match (old, new) {
            (Some(old), Some(new)) => {
                let header_old = format!("bundled/{}/{rel}", skill.id);
                let header_new = format!("user/{}/{rel}", skill.id);
                let text = similar::TextDiff::from_lines(old, new)
                    .unified_diff()
                    .context_radius(3)
                    .header(&header_old, &header_new)
                    .to_string();
                (status, Some(text))
            }
            _ => (FileStatus::Binary, None),
        };
        files.push(FileDiff {
            path: rel,
            status,
            diff,
        });
    }
    Ok(SkillDiff {
        id: skill.id.clone(),
        path: dest,
        files,
    })
}

/// The text of one side; a missing side is empty text, a symlink or non-UTF-8
/// file has none.
fn text_of(entry: Option<&DiskEntry>) -> Option<&str> {
    match entry {
        None => Some(""),
        Some(DiskEntry::File(bytes)) => std::str::from_utf8(bytes).ok(),
        Some(DiskEntry::Link(_)) => None,
    }
}
