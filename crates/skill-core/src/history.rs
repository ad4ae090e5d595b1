//! Every successful skill write keeps the folder as it was before, with a record
//! of who did what; history lists those versions with diffs and rolls back.

use std::fs;
use std::path::{Path, PathBuf};

use knack_config::KnackHome;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use similar::TextDiff;

use crate::manage::{Actor, atomic, lock};
use crate::{Error, Result};

const RECORD_FILE: &str = "record.json";
/// The copy of the skill folder inside a version.
const SNAPSHOT_DIR: &str = "skill";
const PENDING_PREFIX: &str = ".pending-";

/// One write to a skill. Version N holds the folder as it was *before* write N.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryRecord {
    pub version: usize,
    /// `create`, `edit`, `patch`, `delete`, `write_file`, `remove_file` or `rollback`.
    pub action: String,
    pub actor: Actor,
    /// RFC 3339, UTC.
    pub time: String,
    /// Content hash of the folder after the write; none when the write removed it.
    pub hash: Option<String>,
    pub previous_hash: Option<String>,
    /// False for a create: there was no folder to keep.
    pub existed_before: bool,
    pub name: String,
    pub id: String,
    pub qualified_id: String,
    pub skill_dir: PathBuf,
    /// The file the write touched, relative to the skill folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// A version with the unified diff of SKILL.md from before to after its write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VersionDiff {
    #[serde(flatten)]
    pub record: HistoryRecord,
    pub diff: String,
}

/// What a rollback did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RollbackOutcome {
    /// The version whose "before" state was restored.
    pub restored: usize,
    /// The version recording the rollback itself.
    pub version: usize,
    pub skill_dir: PathBuf,
}

pub fn history_root(home: &KnackHome) -> PathBuf {
    home.skills_dir().join(".history")
}

/// The folder of one skill's history, named after its qualified id.
pub fn skill_history_dir(home: &KnackHome, qualified_id: &str) -> PathBuf {
    let readable: String = qualified_id
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' | '-' => c,
            _ => '_',
        })
        .collect();
    let digest = Sha256::digest(qualified_id.as_bytes());
    let short: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    history_root(home).join(format!("{readable}-{short}"))
}

/// Who is identified by a skill: what a history entry needs to know.
#[derive(Debug, Clone)]
pub(crate) struct SkillIdentity {
    pub name: String,
    pub id: String,
    pub qualified_id: String,
    pub skill_dir: PathBuf,
}

/// A version being prepared: the copy of the folder taken before a write,
/// committed only when the write succeeds.
#[derive(Debug)]
pub(crate) struct Pending {
    dir: PathBuf,
    history_dir: PathBuf,
    identity: SkillIdentity,
    existed_before: bool,
    previous_hash: Option<String>,
}

/// Copies the skill folder aside before a write. The caller holds the lock.
pub(crate) fn begin(home: &KnackHome, identity: &SkillIdentity) -> Result<Pending> {
    let history_dir = skill_history_dir(home, &identity.qualified_id);
    fs::create_dir_all(&history_dir).map_err(|e| io(&history_dir, e))?;
    sweep_pending(&history_dir);
    let dir = history_dir.join(format!(
        "{PENDING_PREFIX}{}-{}",
        std::process::id(),
        unique_suffix()
    ));
    let snapshot = dir.join(SNAPSHOT_DIR);
    fs::create_dir_all(&snapshot).map_err(|e| io(&snapshot, e))?;
    let existed_before = identity.skill_dir.is_dir();
    let mut previous_hash = None;
    if existed_before {
        copy_tree(&identity.skill_dir, &snapshot)?;
        previous_hash = skill_guard::content_hash(&identity.skill_dir).ok();
    }
    Ok(Pending {
        dir,
        history_dir,
        identity: identity.clone(),
        existed_before,
        previous_hash,
    })
}

impl Pending {
    /// Turns the copy into the next version, with its record.
    pub(crate) fn commit(self, action: &str, actor: Actor, file: Option<&str>) -> Result<usize> {
        let version = next_version(&self.history_dir)?;
        let hash = if self.identity.skill_dir.is_dir() {
            skill_guard::content_hash(&self.identity.skill_dir).ok()
        } else {
            None
        };
        let record = HistoryRecord {
            version,
            action: action.to_owned(),
            actor,
            time: crate::clock::now_rfc3339(),
            hash,
            previous_hash: self.previous_hash.clone(),
            existed_before: self.existed_before,
            name: self.identity.name.clone(),
            id: self.identity.id.clone(),
            qualified_id: self.identity.qualified_id.clone(),
            skill_dir: self.identity.skill_dir.clone(),
            file: file.map(str::to_owned),
        };
        let record_path = self.dir.join(RECORD_FILE);
        let text = serde_json::to_string_pretty(&record)
            .map_err(|e| Error::History(format!("cannot encode a history record: {e}")))?;
        atomic::write(&record_path, text.as_bytes()).map_err(|e| io(&record_path, e))?;
        let target = self.history_dir.join(version.to_string());
        fs::rename(&self.dir, &target).map_err(|e| io(&target, e))?;
        atomic::sync_dir(&self.history_dir).map_err(|e| io(&self.history_dir, e))?;
        Ok(version)
    }

    /// Drops the copy: the write did not happen.
    pub(crate) fn discard(self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn unique_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// Removes copies of writers that died; called under the skill's lock.
fn sweep_pending(history_dir: &Path) {
    let Ok(entries) = fs::read_dir(history_dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(PENDING_PREFIX)
        {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

fn versions(history_dir: &Path) -> Vec<usize> {
    let mut out: Vec<usize> = fs::read_dir(history_dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<usize>().ok())
                .collect()
        })
        .unwrap_or_default();
    out.sort_unstable();
    out
}

fn next_version(history_dir: &Path) -> Result<usize> {
    Ok(versions(history_dir).last().map_or(1, |v| v + 1))
}

fn read_record(history_dir: &Path, version: usize) -> Result<HistoryRecord> {
    let path = history_dir.join(version.to_string()).join(RECORD_FILE);
    let text = fs::read_to_string(&path).map_err(|e| io(&path, e))?;
    serde_json::from_str(&text)
        .map_err(|e| Error::History(format!("{} is not a history record: {e}", path.display())))
}

/// Finds the history folder of `skill`: a qualified id, an id or a name, as
/// recorded. Works for skills that no longer exist (deleted ones).
pub fn find(home: &KnackHome, skill: &str) -> Result<PathBuf> {
    let skill = skill.trim();
    let direct = skill_history_dir(home, skill);
    if direct.is_dir() && !versions(&direct).is_empty() {
        return Ok(direct);
    }
    let mut by_id = Vec::new();
    let mut by_name = Vec::new();
    if let Ok(entries) = fs::read_dir(history_root(home)) {
        for entry in entries.flatten() {
            let dir = entry.path();
            let Some(latest) = versions(&dir).last().copied() else {
                continue;
            };
            let Ok(record) = read_record(&dir, latest) else {
                continue;
            };
            if record.qualified_id == skill {
                return Ok(dir);
            }
            if record.id == skill {
                by_id.push((record.qualified_id.clone(), dir.clone()));
            }
            if record.name == skill {
                by_name.push((record.qualified_id, dir));
            }
        }
    }
    let found = if by_id.is_empty() { by_name } else { by_id };
    match found.len() {
        0 => Err(Error::History(format!(
            "no history for '{skill}': it has not been written through skill_manage"
        ))),
        1 => Ok(found.into_iter().map(|(_, d)| d).next().unwrap_or_default()),
        _ => {
            let mut ids: Vec<String> = found.into_iter().map(|(q, _)| q).collect();
            ids.sort();
            Err(Error::History(format!(
                "'{skill}' names more than one skill's history ({}); use the qualified id",
                ids.join(", ")
            )))
        }
    }
}

/// The records of `skill`, oldest first.
pub fn list(home: &KnackHome, skill: &str) -> Result<Vec<HistoryRecord>> {
    let dir = find(home, skill)?;
    versions(&dir)
        .into_iter()
        .map(|v| read_record(&dir, v))
        .collect()
}

/// The records of `skill` with the SKILL.md diff each write made.
pub fn list_with_diffs(home: &KnackHome, skill: &str) -> Result<Vec<VersionDiff>> {
    let dir = find(home, skill)?;
    let numbers = versions(&dir);
    let mut out = Vec::with_capacity(numbers.len());
    for (i, &v) in numbers.iter().enumerate() {
        let record = read_record(&dir, v)?;
        let before = snapshot_skill_md(&dir, v);
        let after = match numbers.get(i + 1) {
            Some(&next) => snapshot_skill_md(&dir, next),
            None => fs::read_to_string(record.skill_dir.join("SKILL.md")).unwrap_or_default(),
        };
        out.push(VersionDiff {
            diff: unified_diff(&before, &after),
            record,
        });
    }
    Ok(out)
}

fn snapshot_skill_md(history_dir: &Path, version: usize) -> String {
    fs::read_to_string(
        history_dir
            .join(version.to_string())
            .join(SNAPSHOT_DIR)
            .join("SKILL.md"),
    )
    .unwrap_or_default()
}

/// A unified diff of two SKILL.md texts; empty when they are equal.
pub fn unified_diff(before: &str, after: &str) -> String {
    if before == after {
        return String::new();
    }
    TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header("a/SKILL.md", "b/SKILL.md")
        .to_string()
}

/// Restores the folder as it was before write `to` (default: the latest
/// write), and records the rollback as a write of its own.
pub fn rollback(home: &KnackHome, skill: &str, to: Option<usize>) -> Result<RollbackOutcome> {
    rollback_as(home, skill, to, Actor::User)
}

pub fn rollback_as(
    home: &KnackHome,
    skill: &str,
    to: Option<usize>,
    actor: Actor,
) -> Result<RollbackOutcome> {
    let dir = find(home, skill)?;
    let numbers = versions(&dir);
    let latest = numbers.last().copied().unwrap_or(0);
    let target = to.unwrap_or(latest);
    if !numbers.contains(&target) {
        return Err(Error::History(format!(
            "there is no version {target} of '{skill}'; versions run from 1 to {latest} (see `knack skills history {skill}`)"
        )));
    }
    let record = read_record(&dir, target)?;
    if !record.existed_before {
        return Err(Error::History(format!(
            "version {target} is the moment before '{}' was created, so there is nothing to restore; delete the skill instead",
            record.name
        )));
    }
    let identity = SkillIdentity {
        name: record.name.clone(),
        id: record.id.clone(),
        qualified_id: record.qualified_id.clone(),
        skill_dir: record.skill_dir,
    };
    let _lock = lock::lock_skill(&home.skills_dir(), &identity.skill_dir)
        .map_err(|e| io(&identity.skill_dir, e))?;
    let pending = begin(home, &identity)?;
    let source = dir.join(target.to_string()).join(SNAPSHOT_DIR);
    if let Err(e) = replace_folder(&source, &identity.skill_dir) {
        pending.discard();
        return Err(e);
    }
    let version = pending.commit("rollback", actor, None)?;
    Ok(RollbackOutcome {
        restored: target,
        version,
        skill_dir: identity.skill_dir,
    })
}

/// Swaps `dest` for a copy of `source`: build the copy beside it, move the
/// old folder aside, move the copy in, remove the old one.
fn replace_folder(source: &Path, dest: &Path) -> Result<()> {
    let dest = if dest.exists() {
        fs::canonicalize(dest).map_err(|e| io(dest, e))?
    } else {
        dest.to_path_buf()
    };
    let parent = dest
        .parent()
        .ok_or_else(|| Error::History(format!("{} has no parent folder", dest.display())))?;
    atomic::create_dirs(parent).map_err(|e| io(parent, e))?;
    let base = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tag = format!("{}-{}", std::process::id(), unique_suffix());
    let incoming = parent.join(format!(".{base}.knack-restore-{tag}"));
    let outgoing = parent.join(format!(".{base}.knack-old-{tag}"));
    fs::create_dir_all(&incoming).map_err(|e| io(&incoming, e))?;
    if let Err(e) = copy_tree(source, &incoming) {
        let _ = fs::remove_dir_all(&incoming);
        return Err(e);
    }
    let had_dest = dest.exists();
    if had_dest {
        fs::rename(&dest, &outgoing).map_err(|e| io(&dest, e))?;
    }
    if let Err(e) = fs::rename(&incoming, &dest) {
        if had_dest {
            let _ = fs::rename(&outgoing, &dest);
        }
        let _ = fs::remove_dir_all(&incoming);
        return Err(io(&dest, e));
    }
    if had_dest {
        let _ = fs::remove_dir_all(&outgoing);
    }
    atomic::sync_dir(parent).map_err(|e| io(parent, e))
}

/// Copies regular files and folders; symbolic links are not followed (a
/// skill's links are not its content). Every copied file and folder is on
/// disk before this returns: a history version, or a folder a rollback puts
/// back, is only renamed into place afterwards, and must not turn out empty
/// after a crash while the write it stands for survived.
pub(crate) fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to).map_err(|e| io(to, e))?;
    for entry in fs::read_dir(from).map_err(|e| io(from, e))? {
        let entry = entry.map_err(|e| io(from, e))?;
        let path = entry.path();
        let kind = entry.file_type().map_err(|e| io(&path, e))?;
        let dest = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&path, &dest)?;
        } else if kind.is_file() {
            fs::copy(&path, &dest).map_err(|e| io(&path, e))?;
            fs::File::open(&dest)
                .and_then(|f| f.sync_all())
                .map_err(|e| io(&dest, e))?;
        }
    }
    atomic::sync_dir(to).map_err(|e| io(to, e))
}

fn io(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(home: &KnackHome, name: &str) -> SkillIdentity {
        SkillIdentity {
            name: name.into(),
            id: format!("ops/{name}"),
            qualified_id: format!("user:ops/{name}"),
            skill_dir: home.skills_dir().join("ops").join(name),
        }
    }

    fn write_version(home: &KnackHome, who: &SkillIdentity, text: &str, action: &str) -> usize {
        let pending = begin(home, who).unwrap();
        fs::create_dir_all(&who.skill_dir).unwrap();
        fs::write(who.skill_dir.join("SKILL.md"), text).unwrap();
        pending.commit(action, Actor::Agent, None).unwrap()
    }

    #[test]
    fn versions_records_diffs_and_rollback() {
        let tmp = tempfile::tempdir().unwrap();
        let home = KnackHome::at(tmp.path());
        let who = identity(&home, "deploy");
        assert_eq!(write_version(&home, &who, "one\n", "create"), 1);
        assert_eq!(write_version(&home, &who, "one\ntwo\n", "patch"), 2);
        let records = list(&home, "deploy").unwrap();
        assert_eq!(records.len(), 2);
        assert!(!records[0].existed_before && records[1].existed_before);
        assert_eq!(records[1].actor, Actor::Agent);
        assert!(records[1].hash.as_deref().is_some_and(|h| !h.is_empty()));
        assert_eq!(records[1].previous_hash, records[0].hash);
        let diffs = list_with_diffs(&home, "user:ops/deploy").unwrap();
        assert!(diffs[0].diff.contains("+one"), "{}", diffs[0].diff);
        assert!(diffs[1].diff.contains("+two"), "{}", diffs[1].diff);
        assert!(!diffs[1].diff.contains("-one"));

        let out = rollback(&home, "ops/deploy", None).unwrap();
        assert_eq!((out.restored, out.version), (2, 3));
        assert_eq!(
            fs::read_to_string(who.skill_dir.join("SKILL.md")).unwrap(),
            "one\n"
        );
        let last = list(&home, "deploy").unwrap().pop().unwrap();
        assert_eq!(
            (last.action.as_str(), last.actor),
            ("rollback", Actor::User)
        );
        // Undoing the rollback brings the patch back.
        rollback(&home, "deploy", None).unwrap();
        assert_eq!(
            fs::read_to_string(who.skill_dir.join("SKILL.md")).unwrap(),
            "one\ntwo\n"
        );
    }

    #[test]
    fn rollback_refusals_name_the_rule() {
        let tmp = tempfile::tempdir().unwrap();
        let home = KnackHome::at(tmp.path());
        let who = identity(&home, "a");
        write_version(&home, &who, "x\n", "create");
        let err = rollback(&home, "a", Some(1)).unwrap_err().to_string();
        assert!(err.contains("before 'a' was created"), "{err}");
        let err = rollback(&home, "a", Some(9)).unwrap_err().to_string();
        assert!(err.contains("no version 9"), "{err}");
        let err = list(&home, "nothing").unwrap_err().to_string();
        assert!(err.contains("no history for 'nothing'"), "{err}");
    }

    #[test]
    fn a_deleted_skill_comes_back_from_history() {
        let tmp = tempfile::tempdir().unwrap();
        let home = KnackHome::at(tmp.path());
        let who = identity(&home, "gone");
        write_version(&home, &who, "keep me\n", "create");
        fs::create_dir_all(who.skill_dir.join("references")).unwrap();
        fs::write(who.skill_dir.join("references/r.md"), "ref").unwrap();
        let pending = begin(&home, &who).unwrap();
        fs::remove_dir_all(&who.skill_dir).unwrap();
        pending.commit("delete", Actor::User, None).unwrap();
        assert_eq!(list(&home, "gone").unwrap()[1].hash, None);
        rollback(&home, "gone", None).unwrap();
        assert_eq!(
            fs::read_to_string(who.skill_dir.join("references/r.md")).unwrap(),
            "ref"
        );
    }

    #[test]
    fn a_discarded_version_leaves_no_trace() {
        let tmp = tempfile::tempdir().unwrap();
        let home = KnackHome::at(tmp.path());
        let who = identity(&home, "b");
        write_version(&home, &who, "x\n", "create");
        begin(&home, &who).unwrap().discard();
        let dir = skill_history_dir(&home, &who.qualified_id);
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
    }
}
