//! A disk snapshot of the last discovery result under `$KNACK_HOME/cache/`, so a
//! fresh process skips parsing every SKILL.md when nothing on disk changed.
//!
//! The snapshot is trusted only when three things hold: it was written by this
//! build for the very same `DiscoveryOptions`, every (path, mtime, size) stamp
//! the walk recorded (roots, walked folders, SKILL.md and DESCRIPTION.md files)
//! is unchanged, and no stamp was "racy" when it was written (see `is_racy`).
//! Writing is best effort: a snapshot that cannot be written costs speed only.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::discovery::{Fingerprint, discover};
use crate::frontmatter::Frontmatter;
use crate::roots::DiscoveryOptions;
use crate::skill::Skill;
use crate::skill_set::{DoctorEntry, EntryStatus, Gate, RootReport, SkillSet};

/// File name of the snapshot inside the cache directory.
pub const SNAPSHOT_FILE: &str = "skills-snapshot.json";
/// Bumped whenever the stored shape or the meaning of a field changes.
const SNAPSHOT_VERSION: u32 = 4;
/// A file modified this close to the end of discovery may be modified again
/// within the same timestamp tick without changing its stamp; such a result is
/// not written to disk (the next process writes it once the tree is quiet).
const RACY_WINDOW: Duration = Duration::from_secs(2);

/// Where the skill set handed out by `load_with_outcome` came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotOutcome {
    /// The snapshot was valid; no SKILL.md was parsed.
    Loaded,
    /// Discovery ran and the snapshot was (re)written.
    Written,
    /// Discovery ran; the snapshot was not written (racy stamps or an I/O problem).
    Discovered,
}

/// `(path, (seconds, nanoseconds), size)`: a fingerprint stamp, compact and exact.
type StoredStamp = (PathBuf, Option<(u64, u32)>, u64);

#[derive(Serialize, Deserialize)]
struct SnapshotFile {
    version: u32,
    /// Digest of the discovery options and the build that wrote the file.
    options_key: String,
    stamps: Vec<StoredStamp>,
    skills: Vec<StoredSkill>,
    gates: Vec<Option<Gate>>,
    category_descriptions: BTreeMap<String, (usize, String)>,
    roots: Vec<StoredRoot>,
    entries: Vec<DoctorEntry>,
    notices: Vec<String>,
    ambiguous_names: BTreeSet<String>,
}

/// A `Skill` without its scope: the scope follows from `root_index` and the
/// options the snapshot is keyed on, so it cannot disagree with them.
#[derive(Serialize, Deserialize)]
struct StoredSkill {
    name: String,
    description: String,
    category: Option<String>,
    id: String,
    /// SKILL.md; the skill folder is its parent.
    path: PathBuf,
    root_index: usize,
    frontmatter: Frontmatter,
    warnings: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct StoredRoot {
    path: PathBuf,
    skills: usize,
    truncated: bool,
}

/// The skill set for `options`: from the snapshot in `cache_dir` when it is
/// still valid, else from a fresh discovery (which then refreshes the snapshot).
pub fn load_or_discover(options: &DiscoveryOptions, cache_dir: &Path) -> SkillSet {
    load_with_outcome(options, cache_dir).0
}

/// `load_or_discover`, also saying whether the snapshot was used.
pub fn load_with_outcome(
    options: &DiscoveryOptions,
    cache_dir: &Path,
) -> (SkillSet, SnapshotOutcome) {
    let (set, _, outcome) = load_with_fingerprint(options, cache_dir);
    (set, outcome)
}

/// `load_with_outcome`, also returning the stamps the set depends on, so an
/// in-process cache can keep validating it (`DiscoveryCache::with_snapshot`).
pub fn load_with_fingerprint(
    options: &DiscoveryOptions,
    cache_dir: &Path,
) -> (SkillSet, Fingerprint, SnapshotOutcome) {
    let path = cache_dir.join(SNAPSHOT_FILE);
    let key = options_key(options);
    if let Some((set, fingerprint)) = read_valid(&path, &key, options) {
        return (set, fingerprint, SnapshotOutcome::Loaded);
    }
    let (set, fingerprint) = discover(options);
    let finished = SystemTime::now();
    if is_racy(&fingerprint, finished) {
        tracing::debug!("skills snapshot not written: files changed within the last seconds");
        return (set, fingerprint, SnapshotOutcome::Discovered);
    }
    match write(&path, &key, &set, &fingerprint) {
        Ok(()) => (set, fingerprint, SnapshotOutcome::Written),
        Err(e) => {
            tracing::debug!("skills snapshot not written to {}: {e}", path.display());
            (set, fingerprint, SnapshotOutcome::Discovered)
        }
    }
}

/// Deletes the snapshot; every successful skill write calls this.
pub fn invalidate(cache_dir: &Path) {
    let _ = fs::remove_file(cache_dir.join(SNAPSHOT_FILE));
}

/// Digest of everything that changes discovery's answer besides the files:
/// the options (roots, scopes, limits, disabled names, platform, notices) and
/// the build, since a new parser may read the same file differently.
fn options_key(options: &DiscoveryOptions) -> String {
    let mut hasher = Sha256::new();
    hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
    hasher.update([0]);
    hasher.update(format!("{options:?}").as_bytes());
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// True when a stamp is so recent that a later same-size edit could share it.
fn is_racy(fingerprint: &Fingerprint, finished: SystemTime) -> bool {
    let threshold = finished.checked_sub(RACY_WINDOW).unwrap_or(finished);
    fingerprint
        .stamps
        .iter()
        .any(|(_, mtime, _)| mtime.is_some_and(|m| m >= threshold))
}

fn read_valid(
    path: &Path,
    key: &str,
    options: &DiscoveryOptions,
) -> Option<(SkillSet, Fingerprint)> {
    let bytes = fs::read(path).ok()?;
    let file: SnapshotFile = serde_json::from_slice(&bytes).ok()?;
    if file.version != SNAPSHOT_VERSION || file.options_key != key {
        return None;
    }
    if file.roots.len() != options.roots.len() || file.gates.len() != file.skills.len() {
        return None;
    }
    let fingerprint = Fingerprint {
        stamps: file
            .stamps
            .into_iter()
            .map(|(path, time, size)| {
                let time =
                    time.map(|(secs, nanos)| SystemTime::UNIX_EPOCH + Duration::new(secs, nanos));
                (path, time, size)
            })
            .collect(),
    };
    if !fingerprint.is_current() {
        return None;
    }
    let mut skills = Vec::with_capacity(file.skills.len());
    for s in file.skills {
        let scope = options.roots.get(s.root_index)?.scope.clone();
        skills.push(Skill {
            name: s.name,
            description: s.description,
            category: s.category,
            id: s.id,
            scope,
            skill_dir: s.path.parent()?.to_path_buf(),
            path: s.path,
            root_index: s.root_index,
            frontmatter: s.frontmatter,
            warnings: s.warnings,
        });
    }
    let roots = file
        .roots
        .into_iter()
        .zip(&options.roots)
        .map(|(r, root)| RootReport {
            path: r.path,
            scope: root.scope.clone(),
            skills: r.skills,
            truncated: r.truncated,
        })
        .collect();
    let mut entries = file.entries;
    for (skill, gate) in skills.iter().zip(&file.gates) {
        if gate.is_none() && !file.ambiguous_names.contains(&skill.name) {
            entries.push(DoctorEntry::for_skill(
                skill,
                EntryStatus::Ok,
                String::new(),
            ));
        }
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    let set = SkillSet {
        skills,
        gates: file.gates,
        category_descriptions: file.category_descriptions,
        roots,
        entries,
        notices: file.notices,
        ambiguous_names: file.ambiguous_names,
    };
    Some((set, fingerprint))
}

fn write(path: &Path, key: &str, set: &SkillSet, fingerprint: &Fingerprint) -> std::io::Result<()> {
    let file = SnapshotFile {
        version: SNAPSHOT_VERSION,
        options_key: key.to_owned(),
        stamps: fingerprint
            .stamps
            .iter()
            .map(|(path, time, size)| {
                let time = time
                    .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                    .map(|d| (d.as_secs(), d.subsec_nanos()));
                (path.clone(), time, *size)
            })
            .collect(),
        skills: set
            .skills
            .iter()
            .map(|s| StoredSkill {
                name: s.name.clone(),
                description: s.description.clone(),
                category: s.category.clone(),
                id: s.id.clone(),
                path: s.path.clone(),
                root_index: s.root_index,
                // The raw metadata map is only read while parsing; keeping it
                // out makes the snapshot several times smaller.
                // Name and description live on the skill itself, and the raw
                // metadata map is only read while parsing: a loaded snapshot's
                // frontmatter carries the remaining fields only, which keeps
                // the file about half the size.
                frontmatter: Frontmatter {
                    metadata: None,
                    name: None,
                    description: None,
                    ..s.frontmatter.clone()
                },
                warnings: s.warnings.clone(),
            })
            .collect(),
        gates: set.gates.clone(),
        category_descriptions: set.category_descriptions.clone(),
        roots: set
            .roots
            .iter()
            .map(|r| StoredRoot {
                path: r.path.clone(),
                skills: r.skills,
                truncated: r.truncated,
            })
            .collect(),
        // `ok` entries follow from the skills themselves and are rebuilt on load.
        entries: set
            .entries
            .iter()
            .filter(|e| e.status != EntryStatus::Ok)
            .cloned()
            .collect(),
        notices: set.notices.clone(),
        ambiguous_names: set.ambiguous_names.clone(),
    };
    // Paths that are not UTF-8 cannot be stored in JSON; such trees are just not snapshotted.
    let bytes = serde_json::to_vec(&file).map_err(std::io::Error::other)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    // Write then rename, so a concurrent reader sees the old file or the new one.
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(&bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roots::SkillRoot;
    use crate::skill::Scope;

    fn backdate_tree(root: &Path, age: Duration) {
        let when = SystemTime::now() - age;
        let mut stack = vec![root.to_path_buf()];
        while let Some(p) = stack.pop() {
            if p.is_dir() {
                for e in fs::read_dir(&p).unwrap() {
                    stack.push(e.unwrap().path());
                }
            }
            fs::File::open(&p).unwrap().set_modified(when).unwrap();
        }
    }

    fn tree() -> (tempfile::TempDir, DiscoveryOptions) {
        let dir = tempfile::tempdir().unwrap();
        let skills = dir.path().join("skills");
        let d = skills.join("ops/deploy");
        fs::create_dir_all(&d).unwrap();
        fs::write(
            d.join("SKILL.md"),
            "---\nname: deploy\ndescription: Ship it\n---\nbody\n",
        )
        .unwrap();
        backdate_tree(&skills, Duration::from_secs(3600));
        let opts = DiscoveryOptions::with_roots(vec![SkillRoot {
            path: skills,
            scope: Scope::User,
        }]);
        (dir, opts)
    }

    #[test]
    fn recent_files_are_racy_and_old_ones_are_not() {
        let now = SystemTime::now();
        let mut fp = Fingerprint::default();
        fp.stamps
            .push((PathBuf::from("/a"), Some(now - Duration::from_secs(60)), 1));
        assert!(!is_racy(&fp, now));
        fp.stamps.push((PathBuf::from("/b"), Some(now), 1));
        assert!(is_racy(&fp, now));
    }

    #[test]
    fn second_load_comes_from_the_snapshot_and_equals_discovery() {
        let (dir, opts) = tree();
        let cache = dir.path().join("cache");
        let (first, outcome) = load_with_outcome(&opts, &cache);
        assert_eq!(outcome, SnapshotOutcome::Written);
        let (second, outcome) = load_with_outcome(&opts, &cache);
        assert_eq!(outcome, SnapshotOutcome::Loaded);
        // Everything but the three frontmatter fields the snapshot leaves out
        // (they are on the skill itself, or only used while parsing).
        let without_folded = |mut set: SkillSet| {
            for skill in &mut set.skills {
                skill.frontmatter.name = None;
                skill.frontmatter.description = None;
                skill.frontmatter.metadata = None;
            }
            set
        };
        assert_eq!(without_folded(first), second);
        assert_eq!(second, without_folded(discover(&opts).0));
        assert!(
            second
                .skills
                .iter()
                .all(|s| !s.name.is_empty() && !s.description.is_empty())
        );
    }

    #[test]
    fn nested_same_size_edit_with_a_newer_mtime_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let skills = dir.path().join("skills");
        let deep = skills.join("a/b/c/tool");
        fs::create_dir_all(&deep).unwrap();
        let md = deep.join("SKILL.md");
        fs::write(&md, "---\nname: tool\ndescription: Old words\n---\nbody\n").unwrap();
        fs::write(
            skills.join("a/b/DESCRIPTION.md"),
            "---\ndescription: Category one\n---\n",
        )
        .unwrap();
        backdate_tree(&skills, Duration::from_secs(3600));
        let opts = DiscoveryOptions::with_roots(vec![SkillRoot {
            path: skills.clone(),
            scope: Scope::User,
        }]);
        let cache = dir.path().join("cache");
        assert_eq!(load_with_outcome(&opts, &cache).1, SnapshotOutcome::Written);
        assert_eq!(load_with_outcome(&opts, &cache).1, SnapshotOutcome::Loaded);

        // Same size, and no folder changes: only the file's own stamp moves.
        fs::write(&md, "---\nname: tool\ndescription: New words\n---\nbody\n").unwrap();
        let later = SystemTime::now() - Duration::from_secs(1800);
        fs::File::open(&md).unwrap().set_modified(later).unwrap();
        let (set, outcome) = load_with_outcome(&opts, &cache);
        assert_ne!(outcome, SnapshotOutcome::Loaded);
        assert_eq!(set.skills[0].description, "New words");

        let desc = skills.join("a/b/DESCRIPTION.md");
        fs::write(&desc, "---\ndescription: Category two\n---\n").unwrap();
        fs::File::open(&desc).unwrap().set_modified(later).unwrap();
        let (set, outcome) = load_with_outcome(&opts, &cache);
        assert_ne!(outcome, SnapshotOutcome::Loaded);
        assert_eq!(set.category_description("a/b"), Some("Category two"));
        assert_eq!(load_with_outcome(&opts, &cache).1, SnapshotOutcome::Loaded);
    }

    #[test]
    fn other_options_do_not_use_the_snapshot() {
        let (dir, opts) = tree();
        let cache = dir.path().join("cache");
        load_or_discover(&opts, &cache);
        let mut other = opts;
        other.disabled = vec!["deploy".into()];
        let (set, outcome) = load_with_outcome(&other, &cache);
        assert_ne!(outcome, SnapshotOutcome::Loaded);
        assert!(set.visible().is_empty());
    }

    #[test]
    fn fresh_tree_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("skills/x");
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join("SKILL.md"), "---\ndescription: d\n---\n").unwrap();
        let opts = DiscoveryOptions::with_roots(vec![SkillRoot {
            path: dir.path().join("skills"),
            scope: Scope::User,
        }]);
        let (_, outcome) = load_with_outcome(&opts, &dir.path().join("cache"));
        assert_eq!(outcome, SnapshotOutcome::Discovered);
        assert!(!dir.path().join("cache").join(SNAPSHOT_FILE).exists());
    }

    #[test]
    fn corrupt_snapshot_falls_back_to_discovery() {
        let (dir, opts) = tree();
        let cache = dir.path().join("cache");
        fs::create_dir_all(&cache).unwrap();
        fs::write(cache.join(SNAPSHOT_FILE), "{not json").unwrap();
        let (set, outcome) = load_with_outcome(&opts, &cache);
        assert_eq!(outcome, SnapshotOutcome::Written);
        assert_eq!(set.visible().len(), 1);
    }
}
