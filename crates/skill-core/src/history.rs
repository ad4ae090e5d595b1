//! Every successful skill write keeps the folder as it was before, with a record
//! of who did what; history lists those versions with diffs and rolls back.

use std::fs;
use std::os::fd::AsFd;
use std::path::{Component, Path, PathBuf};

use knack_config::KnackHome;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use similar::TextDiff;

use crate::beneath::{self, Base};
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
    /// `create`, `edit`, `patch`, `delete`, `write_file`, `remove_file`,
    /// `archive`, `restore` or `rollback`.
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
    /// For an `archive`: the folder under `skills/.archive/` the skill went
    /// to. Rolling the archive back restores the skill and drops that copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_to: Option<String>,
}

/// A version with the unified diff its write made: of the file it touched
/// (`write_file`, `remove_file`), else of SKILL.md.
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
    /// The skill's history folder, opened beneath the user skills root.
    history: Base,
    /// The name of the version being prepared inside it.
    name: String,
    identity: SkillIdentity,
    existed_before: bool,
    previous_hash: Option<String>,
    archived_to: Option<String>,
}

/// Opens (creating it when missing) the history folder of `qualified_id`,
/// beneath the user skills root and never through a link.
fn open_history(home: &KnackHome, qualified_id: &str) -> Result<Base> {
    let dir = skill_history_dir(home, qualified_id);
    let root_path = home.skills_dir();
    fs::create_dir_all(&root_path).map_err(|e| io(&root_path, e))?;
    let root = Base::open(&root_path).map_err(|e| io(&root_path, e))?;
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (fd, _) = beneath::create_dirs_at(root.fd.as_fd(), &[".history", &name])
        .map_err(|e| link_or_io(&dir, e))?;
    // Old versions may hold what a skill once said about the user's setup:
    // only the user reads them (the home is private too; this holds if not).
    let _ = rustix::fs::fchmod(&fd, rustix::fs::Mode::from_raw_mode(0o700));
    Ok(Base {
        real: root.real.join(".history").join(name),
        fd,
    })
}

/// Versions a write made outside `skill_manage`, after the fact: the hub's
/// install (`before` is `None`) and update (`before` is the old folder, set
/// aside by the caller). `id` is the skill's path below the user skills
/// root, where the new folder already is. Returns the version number.
pub fn record_outside_write(
    home: &KnackHome,
    name: &str,
    id: &str,
    before: Option<&Path>,
    action: &str,
    actor: Actor,
) -> Result<usize> {
    let identity = SkillIdentity {
        name: name.to_owned(),
        id: id.to_owned(),
        qualified_id: format!("{}:{id}", crate::Scope::User.namespace()),
        skill_dir: home.skills_dir().join(id),
    };
    // The old folder is the caller's own copy (it no longer sits beneath a
    // skills root), so it is opened like a root.
    let current = match before {
        Some(path) => Some(Base::open(path).map_err(|e| io(path, e))?),
        None => None,
    };
    begin(home, &identity, current.as_ref())?.commit(action, actor, None)
}

/// Copies the skill folder aside before a write. `current` is the skill
/// folder as the caller opened it (beneath its root, through no link), or
/// `None` when there is none yet. The caller holds the lock.
pub(crate) fn begin(
    home: &KnackHome,
    identity: &SkillIdentity,
    current: Option<&Base>,
) -> Result<Pending> {
    let history = open_history(home, &identity.qualified_id)?;
    sweep_pending(&history);
    let name = format!("{PENDING_PREFIX}{}-{}", std::process::id(), unique_suffix());
    let pending_path = history.real.join(&name);
    let (snapshot, _) = beneath::create_dirs_at(history.fd.as_fd(), &[&name, SNAPSHOT_DIR])
        .map_err(|e| io(&pending_path, e))?;
    let mut pending = Pending {
        history,
        name,
        identity: identity.clone(),
        existed_before: current.is_some(),
        previous_hash: None,
        archived_to: None,
    };
    if let Some(current) = current {
        if let Err(e) = beneath::copy_tree_at(current.fd.as_fd(), snapshot.as_fd()) {
            pending.discard();
            return Err(io(&current.real, e));
        }
        pending.previous_hash = skill_guard::content_hash(&current.real).ok();
    }
    Ok(pending)
}

impl Pending {
    /// Marks this version as an archive into `.archive/<entry>`.
    pub(crate) fn archived_to(mut self, entry: String) -> Self {
        self.archived_to = Some(entry);
        self
    }

    /// Turns the copy into the next version, with its record.
    pub(crate) fn commit(self, action: &str, actor: Actor, file: Option<&str>) -> Result<usize> {
        let version = next_version(&self.history.real)?;
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
            archived_to: self.archived_to.clone(),
        };
        let pending_path = self.history.real.join(&self.name);
        let text = serde_json::to_string_pretty(&record)
            .map_err(|e| Error::History(format!("cannot encode a history record: {e}")))?;
        let written = self
            .history
            .open_dir(&self.name)
            .and_then(|dir| atomic::write_at(dir.fd.as_fd(), RECORD_FILE, text.as_bytes()));
        written.map_err(|e| io(&pending_path.join(RECORD_FILE), e))?;
        let target = version.to_string();
        beneath::rename_noreplace(self.history.fd.as_fd(), &self.name, &target)
            .map_err(|e| io(&self.history.real.join(&target), e))?;
        rustix::fs::fsync(&self.history.fd).map_err(|e| io(&self.history.real, e.into()))?;
        Ok(version)
    }

    /// Drops the copy: the write did not happen.
    pub(crate) fn discard(self) {
        let _ = beneath::remove_tree_at(self.history.fd.as_fd(), &self.name);
    }
}

fn unique_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// Removes copies of writers that died; called under the skill's lock.
fn sweep_pending(history: &Base) {
    let Ok(names) = beneath::entries(&history.fd) else {
        return;
    };
    for name in names {
        if name.starts_with(PENDING_PREFIX) {
            let _ = beneath::remove_tree_at(history.fd.as_fd(), &name);
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

/// The records of `skill` with the diff each write made.
pub fn list_with_diffs(home: &KnackHome, skill: &str) -> Result<Vec<VersionDiff>> {
    diffs_in(&find(home, skill)?)
}

/// Every write to every skill in the library (deleted skills too), newest
/// first: the history folders read the same way `list_with_diffs` reads one.
pub fn log(home: &KnackHome) -> Result<Vec<VersionDiff>> {
    let mut dirs: Vec<PathBuf> = match fs::read_dir(history_root(home)) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir() && !versions(p).is_empty())
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(io(&history_root(home), e)),
    };
    dirs.sort();
    let mut all = Vec::new();
    for dir in dirs {
        for diff in diffs_in(&dir)? {
            // Record times have whole seconds; the record file's own mtime
            // orders writes made within the same second.
            let written = fs::metadata(dir.join(diff.record.version.to_string()).join(RECORD_FILE))
                .and_then(|m| m.modified())
                .ok();
            all.push((written, diff));
        }
    }
    all.sort_by(|(wa, a), (wb, b)| {
        (&b.record.time, wb, b.record.version).cmp(&(&a.record.time, wa, a.record.version))
    });
    Ok(all.into_iter().map(|(_, d)| d).collect())
}

/// Lines added and removed by a unified diff, headers not counted.
pub fn diff_stat(diff: &str) -> (usize, usize) {
    let mut added = 0;
    let mut removed = 0;
    for line in diff.lines() {
        if line.starts_with("+++") || line.starts_with("---") {
            continue;
        }
        if line.starts_with('+') {
            added += 1;
        } else if line.starts_with('-') {
            removed += 1;
        }
    }
    (added, removed)
}

fn diffs_in(dir: &Path) -> Result<Vec<VersionDiff>> {
    let numbers = versions(dir);
    let mut out = Vec::with_capacity(numbers.len());
    for (i, &v) in numbers.iter().enumerate() {
        let record = read_record(dir, v)?;
        let file = diffed_file(&record);
        let before = snapshot_file(dir, v, file);
        let after = match numbers.get(i + 1) {
            Some(&next) => snapshot_file(dir, next, file),
            None => current_file(&record, file).unwrap_or_default(),
        };
        out.push(VersionDiff {
            diff: unified_diff_of(file, &before, &after),
            record,
        });
    }
    Ok(out)
}

/// The file a version's diff shows: the one its write touched (`write_file`,
/// `remove_file`), else SKILL.md. A recorded name that is not a plain path
/// inside the folder falls back to SKILL.md rather than being followed.
fn diffed_file(record: &HistoryRecord) -> &str {
    record
        .file
        .as_deref()
        .filter(|f| {
            !f.is_empty()
                && Path::new(f)
                    .components()
                    .all(|c| matches!(c, Component::Normal(_)))
        })
        .unwrap_or("SKILL.md")
}

/// Reads `rel` (a plain relative path) inside `folder`, never through a link.
fn read_inside(folder: &Base, rel: &str) -> Option<String> {
    let (parent, name) = match rel.rsplit_once('/') {
        Some((parent, name)) => (Some(folder.open_dir(parent).ok()?), name),
        None => (None, rel),
    };
    let dir = parent.as_ref().unwrap_or(folder);
    let bytes = beneath::read_file_at(dir.fd.as_fd(), name).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The recorded skill's `rel` as it is now, read beneath its root and never
/// through a link (a folder swapped for a link shows nothing).
fn current_file(record: &HistoryRecord, rel: &str) -> Option<String> {
    let root = Base::open(&root_of(record).ok()?).ok()?;
    let folder = root.open_dir(&record.id).ok()?;
    read_inside(&folder, rel)
}

fn snapshot_file(history_dir: &Path, version: usize, rel: &str) -> String {
    let folder = history_dir.join(version.to_string()).join(SNAPSHOT_DIR);
    Base::open(&folder)
        .ok()
        .and_then(|folder| read_inside(&folder, rel))
        .unwrap_or_default()
}

/// A unified diff of two SKILL.md texts; empty when they are equal.
pub fn unified_diff(before: &str, after: &str) -> String {
    unified_diff_of("SKILL.md", before, after)
}

/// A unified diff of two versions of the skill file `name`; empty when equal.
fn unified_diff_of(name: &str, before: &str, after: &str) -> String {
    if before == after {
        return String::new();
    }
    TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{name}"), &format!("b/{name}"))
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
    let root_path = root_of(&record)?;
    let identity = SkillIdentity {
        name: record.name.clone(),
        id: record.id.clone(),
        qualified_id: record.qualified_id.clone(),
        skill_dir: record.skill_dir.clone(),
    };
    let _lock = lock::lock_skill(&home.skills_dir(), &identity.skill_dir)
        .map_err(|e| io(&identity.skill_dir, e))?;
    let root = Base::open(&root_path).map_err(|e| io(&root_path, e))?;
    let current = match root.open_dir(&identity.id) {
        Ok(folder) => Some(folder),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) if beneath::is_link_refusal(&e) => {
            return Err(Error::History(format!(
                "{} is a symbolic link or is reached through one, not the skill folder history recorded; skills are only restored into real folders beneath their root, so the rollback was refused and nothing changed",
                identity.skill_dir.display()
            )));
        }
        Err(e) => return Err(io(&identity.skill_dir, e)),
    };
    if let Some(folder) = &current {
        let latest_hash = read_record(&dir, latest).ok().and_then(|r| r.hash);
        check_same_skill(folder, &record, latest_hash.as_deref())?;
    }
    let pending = begin(home, &identity, current.as_ref())?;
    let history = open_history(home, &identity.qualified_id)?;
    let restored = history
        .open_dir(&format!("{target}/{SNAPSHOT_DIR}"))
        .map_err(|e| io(&dir.join(target.to_string()).join(SNAPSHOT_DIR), e))
        .and_then(|source| replace_folder(&root, &identity, &source, current.is_some()));
    if let Err(e) = restored {
        pending.discard();
        return Err(e);
    }
    let version = pending.commit("rollback", actor, None)?;
    // Rolling back from an archive brought the skill back from history; the
    // archived copy would otherwise be listed as a second, archived, skill.
    if current.is_none()
        && let Some(entry) = read_record(&dir, latest).ok().and_then(|r| r.archived_to)
    {
        crate::manage::archive::forget_entry(home, &entry);
    }
    Ok(RollbackOutcome {
        restored: target,
        version,
        skill_dir: identity.skill_dir,
    })
}

/// The skills root a record's skill lives beneath: its folder with the id
/// (the folder's path below its root) taken off the end. A record whose id
/// is not a plain relative path, or does not end its folder, is refused.
fn root_of(record: &HistoryRecord) -> Result<PathBuf> {
    let bad = || {
        Error::History(format!(
            "the history record of '{}' names the folder {} and the id '{}', which do not fit together; it is not used",
            record.name,
            record.skill_dir.display(),
            record.id
        ))
    };
    let id = Path::new(&record.id);
    if record.id.is_empty() || id.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(bad());
    }
    if !record.skill_dir.is_absolute() || !record.skill_dir.ends_with(id) {
        return Err(bad());
    }
    let mut root = record.skill_dir.clone();
    for _ in id.components() {
        root.pop();
    }
    Ok(root)
}

/// A rollback replaces only the skill it recorded: the folder in place must
/// hold a SKILL.md named as recorded (or after its folder), or be byte for
/// byte what the latest write left.
fn check_same_skill(
    folder: &Base,
    record: &HistoryRecord,
    latest_hash: Option<&str>,
) -> Result<()> {
    let dir_name = record.id.rsplit('/').next().unwrap_or_default();
    let named = beneath::read_file_at(folder.fd.as_fd(), "SKILL.md")
        .ok()
        .and_then(|bytes: Vec<u8>| {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let parsed =
                crate::frontmatter::parse_skill_md(crate::frontmatter::strip_bom(&text)).ok()?;
            Some(
                parsed
                    .frontmatter
                    .name
                    .unwrap_or_else(|| dir_name.to_owned()),
            )
        });
    if let Some(name) = &named
        && (name.trim() == record.name || name.trim() == dir_name)
    {
        return Ok(());
    }
    if latest_hash.is_some()
        && skill_guard::content_hash(&folder.real).ok().as_deref() == latest_hash
    {
        return Ok(());
    }
    let what = match named {
        Some(name) => format!("holds a different skill ('{}')", name.trim()),
        None => "holds no readable SKILL.md".to_owned(),
    };
    Err(Error::History(format!(
        "{} {what}, not the skill '{}' history recorded; the rollback was refused and nothing changed (move that folder away first if the recorded skill should come back)",
        record.skill_dir.display(),
        record.name
    )))
}

/// Swaps the skill folder for a copy of `source`: build the copy beside it,
/// move the old folder aside, move the copy in, remove the old one. All of
/// it relative to the parent folder's handle, opened beneath `root` through
/// no link; a link swapped in meanwhile is moved aside and removed itself,
/// never followed.
fn replace_folder(
    root: &Base,
    identity: &SkillIdentity,
    source: &Base,
    had_dest: bool,
) -> Result<()> {
    let dest = &identity.skill_dir;
    let parts: Vec<&str> = identity.id.split('/').collect();
    let Some((base, parents)) = parts.split_last() else {
        return Err(Error::History(format!(
            "{} has no parent folder",
            dest.display()
        )));
    };
    let (parent, created) =
        beneath::create_dirs_at(root.fd.as_fd(), parents).map_err(|e| link_or_io(dest, e))?;
    let drop_created = || {
        if let Some((top_parent, top)) = &created {
            let _ = beneath::remove_tree_at(top_parent.as_fd(), top);
        }
    };
    let tag = format!("{}-{}", std::process::id(), unique_suffix());
    let incoming = format!(".{base}.knack-restore-{tag}");
    let outgoing = format!(".{base}.knack-old-{tag}");
    let copied = beneath::create_dirs_at(parent.as_fd(), &[&incoming])
        .and_then(|(into, _)| beneath::copy_tree_at(source.fd.as_fd(), into.as_fd()));
    if let Err(e) = copied {
        let _ = beneath::remove_tree_at(parent.as_fd(), &incoming);
        drop_created();
        return Err(io(dest, e));
    }
    if had_dest && let Err(e) = beneath::rename_noreplace(parent.as_fd(), base, &outgoing) {
        let _ = beneath::remove_tree_at(parent.as_fd(), &incoming);
        return Err(io(dest, e));
    }
    if let Err(e) = beneath::rename_noreplace(parent.as_fd(), &incoming, base) {
        if had_dest {
            let _ = beneath::rename_noreplace(parent.as_fd(), &outgoing, base);
        }
        let _ = beneath::remove_tree_at(parent.as_fd(), &incoming);
        drop_created();
        return Err(io(dest, e));
    }
    if had_dest {
        let _ = beneath::remove_tree_at(parent.as_fd(), &outgoing);
    }
    rustix::fs::fsync(&parent).map_err(|e| io(dest, e.into()))
}

/// An I/O error, or the rule when it was a link that stopped it.
fn link_or_io(path: &Path, e: std::io::Error) -> Error {
    if beneath::is_link_refusal(&e) {
        Error::History(format!(
            "{} is reached through a symbolic link; history and rollback never write through links",
            path.display()
        ))
    } else {
        io(path, e)
    }
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

    /// The skill folder as a write opens it, when it exists.
    fn current(who: &SkillIdentity) -> Option<Base> {
        Base::open(&who.skill_dir).ok()
    }

    fn write_version(home: &KnackHome, who: &SkillIdentity, text: &str, action: &str) -> usize {
        let pending = begin(home, who, current(who).as_ref()).unwrap();
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
    fn log_reads_every_skill_newest_first_with_a_diff_stat() {
        let tmp = tempfile::tempdir().unwrap();
        let home = KnackHome::at(tmp.path());
        assert!(log(&home).unwrap().is_empty(), "no history folder yet");
        let deploy = identity(&home, "deploy");
        let backup = identity(&home, "backup");
        write_version(&home, &deploy, "one\n", "create");
        write_version(&home, &backup, "a\nb\n", "create");
        write_version(&home, &deploy, "uno\ntwo\n", "patch");
        let entries = log(&home).unwrap();
        let order: Vec<(&str, &str)> = entries
            .iter()
            .map(|e| (e.record.name.as_str(), e.record.action.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                ("deploy", "patch"),
                ("backup", "create"),
                ("deploy", "create")
            ]
        );
        assert_eq!(diff_stat(&entries[0].diff), (2, 1));
        assert_eq!(diff_stat(&entries[1].diff), (2, 0));
        assert_eq!(diff_stat(""), (0, 0));
    }

    #[test]
    fn a_write_to_another_file_shows_that_file_s_diff() {
        let tmp = tempfile::tempdir().unwrap();
        let home = KnackHome::at(tmp.path());
        let who = identity(&home, "deploy");
        write_version(&home, &who, "one\n", "create");
        let pending = begin(&home, &who, current(&who).as_ref()).unwrap();
        fs::create_dir_all(who.skill_dir.join("references")).unwrap();
        fs::write(who.skill_dir.join("references/api.md"), "get\nput\n").unwrap();
        pending
            .commit("write_file", Actor::Agent, Some("references/api.md"))
            .unwrap();
        let entry = log(&home).unwrap().remove(0);
        assert_eq!(entry.record.action, "write_file");
        assert!(
            entry.diff.contains("+++ b/references/api.md") && entry.diff.contains("+put"),
            "{}",
            entry.diff
        );
        assert_eq!(diff_stat(&entry.diff), (2, 0));
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
        let pending = begin(&home, &who, current(&who).as_ref()).unwrap();
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
        begin(&home, &who, current(&who).as_ref())
            .unwrap()
            .discard();
        let dir = skill_history_dir(&home, &who.qualified_id);
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
    }
}
