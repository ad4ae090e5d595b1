//! File-system side of seeding: hashing a user's copy, staging a bundled
//! skill next to its destination, and swapping it in with renames.

use std::path::{Path, PathBuf};

use skill_bundle::{BundleTree, BundledSkill, HashEntry, content_hash_entries, is_excluded};

use crate::{Error, Result};

/// Sidecar naming who created a skill (skill-core's). It starts with
/// `.knack-`, so it is left out of every content hash: writing it never looks
/// like a user edit.
pub use skill_core::manage::PROVENANCE_FILE;
/// Work area inside the skills folder (a dot folder, so discovery skips it);
/// on the same file system as the destinations, so renames are atomic.
pub const STAGING_DIR: &str = ".sync-staging";
/// Where `reset --restore` moves a copy it replaces, so no edit is ever lost.
pub const BACKUP_DIR: &str = ".restore-backups";

/// One entry of a skill folder on disk, as hashing and diffing see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiskEntry {
    File(Vec<u8>),
    Link(String),
}

/// Every hashed entry of a folder, sorted by `/`-separated relative path.
/// Symlinks are read, never followed; `.knack-*` files and caches are skipped.
pub fn read_entries(dir: &Path) -> Result<Vec<(String, DiskEntry)>> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir).follow_links(false).min_depth(1) {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(dir).to_path_buf();
            Error::io(path, e.into())
        })?;
        let rel = relative(dir, entry.path());
        if is_excluded(&rel) {
            continue;
        }
        let kind = entry.file_type();
        if kind.is_symlink() {
            let target =
                std::fs::read_link(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
            out.push((rel, DiskEntry::Link(target.to_string_lossy().into_owned())));
        } else if kind.is_file() {
            let bytes = std::fs::read(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
            out.push((rel, DiskEntry::File(bytes)));
        }
    }
    out.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    Ok(out)
}

/// The content hash of a user's copy, comparable with a bundled skill's hash.
pub fn hash_dir(dir: &Path) -> Result<String> {
    let entries = read_entries(dir)?;
    Ok(content_hash_entries(entries.iter().map(
        |(path, e)| match e {
            DiskEntry::File(bytes) => HashEntry {
                path,
                is_link: false,
                payload: bytes,
            },
            DiskEntry::Link(target) => HashEntry {
                path,
                is_link: true,
                payload: target.as_bytes(),
            },
        },
    )))
}

fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// What to do with the copy a swap replaces.
pub enum Replaced {
    Discard,
    /// Move it under this folder (keeping its id as the relative path).
    KeepUnder(PathBuf),
}

/// Writes `skill` into the staging area, then renames it into `dest`. An
/// existing `dest` is first renamed aside and only removed once the new copy
/// is in place; if the second rename fails the old copy is put back.
/// Returns where a kept old copy went.
pub fn install(
    skills_dir: &Path,
    bundle: &BundleTree,
    skill: &BundledSkill,
    replaced: Replaced,
) -> Result<Option<PathBuf>> {
    let dest = skills_dir.join(&skill.id);
    let staging = skills_dir.join(STAGING_DIR);
    let fresh = staging.join("new").join(&skill.id);
    remove_tree(&fresh)?;
    write_skill(bundle, skill, &fresh)?;
    let parent = dest.parent().unwrap_or(skills_dir);
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;

    let present = std::fs::symlink_metadata(&dest).is_ok();
    let aside = staging.join("old").join(&skill.id);
    if present {
        remove_tree(&aside)?;
        make_parent(&aside)?;
        std::fs::rename(&dest, &aside).map_err(|e| Error::io(&dest, e))?;
    }
    if let Err(e) = std::fs::rename(&fresh, &dest) {
        if present {
            // Put the user's copy back; the error below still reports the failure.
            let _ = std::fs::rename(&aside, &dest);
        }
        return Err(Error::io(&dest, e));
    }
    if !present {
        return Ok(None);
    }
    match replaced {
        Replaced::Discard => {
            remove_tree(&aside)?;
            Ok(None)
        }
        Replaced::KeepUnder(dir) => {
            let kept = dir.join(&skill.id);
            make_parent(&kept)?;
            std::fs::rename(&aside, &kept).map_err(|e| Error::io(&kept, e))?;
            Ok(Some(kept))
        }
    }
}

/// A crash between the two renames of [`install`] leaves a skill's old copy
/// in the staging area and nothing at its destination: put such copies back,
/// then clear the staging area. Returns the ids it restored.
pub fn recover_staging(skills_dir: &Path, bundle: &BundleTree) -> Result<Vec<String>> {
    let staging = skills_dir.join(STAGING_DIR);
    if !staging.exists() {
        return Ok(Vec::new());
    }
    let mut restored = Vec::new();
    for skill in bundle.skills() {
        let aside = staging.join("old").join(&skill.id);
        let dest = skills_dir.join(&skill.id);
        if aside.is_dir() && std::fs::symlink_metadata(&dest).is_err() {
            make_parent(&dest)?;
            std::fs::rename(&aside, &dest).map_err(|e| Error::io(&dest, e))?;
            restored.push(skill.id.clone());
        }
    }
    remove_tree(&staging)?;
    Ok(restored)
}

/// Removes the staging area's empty folders (and the area itself once it is
/// empty) after a sync. Each install renames its skill out of
/// `new/<category>/` and leaves the category folder behind; files are never
/// removed here, so a copy a failed install left stays for [`recover_staging`].
pub fn prune_staging(skills_dir: &Path) -> Result<()> {
    let staging = skills_dir.join(STAGING_DIR);
    if std::fs::symlink_metadata(&staging).is_ok_and(|m| m.is_dir()) {
        prune_empty(&staging)?;
    }
    Ok(())
}

/// Removes `dir` and its sub-folders bottom-up where they hold nothing.
/// Returns whether `dir` is gone.
fn prune_empty(dir: &Path) -> Result<bool> {
    let mut empty = true;
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if !(is_dir && prune_empty(&entry.path())?) {
            empty = false;
        }
    }
    if empty {
        std::fs::remove_dir(dir).map_err(|e| Error::io(dir, e))?;
    }
    Ok(empty)
}

fn write_skill(bundle: &BundleTree, skill: &BundledSkill, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    for (rel, bytes) in bundle.skill_files(skill) {
        let path = dir.join(rel);
        make_parent(&path)?;
        std::fs::write(&path, bytes).map_err(|e| Error::io(&path, e))?;
        if rel.starts_with("scripts/") && bytes.starts_with(b"#!") {
            make_executable(&path)?;
        }
    }
    // Seeded copies are `bundled` skills: the review may not rewrite them.
    skill_core::manage::record_provenance(dir, "bundled")
        .map_err(|e| Error::io(dir.join(PROVENANCE_FILE), e))
}

fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| Error::io(path, e))
}

/// Writes a small file through a temp file and a rename.
pub fn write_file_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write as _;
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".knack-sync.")
        .tempfile_in(parent)
        .map_err(|e| Error::io(parent, e))?;
    tmp.write_all(bytes).map_err(|e| Error::io(tmp.path(), e))?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

fn make_parent(path: &Path) -> Result<()> {
    match path.parent() {
        Some(parent) => std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e)),
        None => Ok(()),
    }
}

fn remove_tree(path: &Path) -> Result<()> {
    match std::fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use skill_bundle::BundleFile;

    use super::*;

    fn tree(files: &[(&str, &str)]) -> BundleTree {
        BundleTree::from_files(
            files
                .iter()
                .map(|(p, t)| BundleFile {
                    path: Cow::Owned((*p).to_owned()),
                    bytes: Cow::Owned(t.as_bytes().to_vec()),
                })
                .collect(),
        )
    }

    #[test]
    fn an_installed_copy_hashes_like_the_bundle_despite_its_sidecar() {
        let bundle = tree(&[
            ("ops/x/SKILL.md", "x"),
            ("ops/x/scripts/run.sh", "#!/bin/sh\necho hi\n"),
        ]);
        let home = tempfile::tempdir().unwrap();
        let skill = bundle.skill("ops/x").unwrap();
        install(home.path(), &bundle, skill, Replaced::Discard).unwrap();
        let dest = home.path().join("ops/x");
        assert!(dest.join(PROVENANCE_FILE).is_file());
        assert_eq!(hash_dir(&dest).unwrap(), skill.hash);
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(dest.join("scripts/run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111);
    }

    #[test]
    fn install_keeps_the_replaced_copy_when_asked() {
        let bundle = tree(&[("ops/x/SKILL.md", "new")]);
        let home = tempfile::tempdir().unwrap();
        let dest = home.path().join("ops/x");
        std::fs::create_dir_all(&dest).unwrap();
        std::fs::write(dest.join("SKILL.md"), "mine").unwrap();
        let backups = home.path().join(BACKUP_DIR).join("1");
        let kept = install(
            home.path(),
            &bundle,
            bundle.skill("ops/x").unwrap(),
            Replaced::KeepUnder(backups.clone()),
        )
        .unwrap()
        .unwrap();
        assert_eq!(kept, backups.join("ops/x"));
        assert_eq!(
            std::fs::read_to_string(kept.join("SKILL.md")).unwrap(),
            "mine"
        );
        assert_eq!(
            std::fs::read_to_string(dest.join("SKILL.md")).unwrap(),
            "new"
        );
    }

    #[test]
    fn recovery_puts_back_a_copy_stranded_between_renames() {
        let bundle = tree(&[("ops/x/SKILL.md", "new")]);
        let home = tempfile::tempdir().unwrap();
        let aside = home.path().join(STAGING_DIR).join("old/ops/x");
        std::fs::create_dir_all(&aside).unwrap();
        std::fs::write(aside.join("SKILL.md"), "mine").unwrap();
        let restored = recover_staging(home.path(), &bundle).unwrap();
        assert_eq!(restored, ["ops/x"]);
        let back = home.path().join("ops/x/SKILL.md");
        assert_eq!(std::fs::read_to_string(back).unwrap(), "mine");
        assert!(!home.path().join(STAGING_DIR).exists());
    }

    #[test]
    fn symlinks_are_hashed_by_target_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("SKILL.md"), "x").unwrap();
        let plain = hash_dir(dir.path()).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).unwrap();
        let entries = read_entries(dir.path()).unwrap();
        assert_eq!(
            entries[1],
            ("link".into(), DiskEntry::Link("/etc/passwd".into()))
        );
        assert_ne!(hash_dir(dir.path()).unwrap(), plain);
    }
}
