//! Checkpoints of the files a turn changes, so `/undo` and `knack undo` can put them back.
//!
//! Before a file tool changes a file, its old content is recorded (first change per turn
//! only). Before a turn's first command, the workspace's state is noted: in a git
//! repository, HEAD and the content of the files that differ from it (read with
//! `GIT_OPTIONAL_LOCKS=0`, so neither the index nor any branch is touched); elsewhere, the
//! content of every file (gitignore-aware, capped). After each command, every file that
//! differs from that state is recorded with its content from the turn's start.
//!
//! A turn's records live in `$KNACK_HOME/checkpoints/<session>/<turn>/` (`manifest.json`
//! plus one blob per file); the oldest turns go first when the folder passes its size cap.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::tools::beneath::Root;

/// Most bytes of one file a checkpoint keeps; a bigger file is noted as not restorable.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// Most bytes the workspace note (outside git) reads before it gives up on the rest.
const MAX_SNAPSHOT_BYTES: u64 = 64 * 1024 * 1024;
/// Most files the workspace note (outside git) looks at; past it the note is partial, and
/// only files it holds are ever recorded (a file it never saw is never taken for new).
const MAX_SNAPSHOT_ENTRIES: usize = 50_000;
/// Most bytes every checkpoint together keeps; the oldest turns are pruned past it.
pub const MAX_TOTAL_BYTES: u64 = 256 * 1024 * 1024;

const MANIFEST: &str = "manifest.json";

/// One file a turn changed, as it was when the turn started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    pub path: PathBuf,
    /// `None`: the file did not exist (undo removes it).
    pub blob: Option<String>,
    /// The old content was too big to keep: undo leaves this file alone and says so.
    #[serde(default)]
    pub too_big: bool,
}

/// What one turn changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnManifest {
    pub session_id: String,
    /// Orders turns: `<unix millis>-<n>`.
    pub turn: String,
    pub started_at: String,
    pub cwd: PathBuf,
    /// The user's message, its first line, to tell turns apart in `/rewind`.
    pub title: String,
    pub files: Vec<FileRecord>,
}

/// The workspace at the turn's first command.
#[derive(Debug)]
enum Baseline {
    Git {
        root: PathBuf,
        head: Option<String>,
        /// Files that differed from HEAD then, with their content (`None`: deleted).
        dirty: HashMap<PathBuf, Option<Vec<u8>>>,
        /// Files git tracked then: a clean one held HEAD's content.
        tracked: HashSet<PathBuf>,
    },
    Tree {
        root: PathBuf,
        files: HashMap<PathBuf, Vec<u8>>,
        /// Paths seen but not read (over the caps): changes to them are not undoable.
        skipped: HashSet<PathBuf>,
        /// The walk saw every file. When it did not, a file missing from `files` may
        /// have existed all along, so it is never recorded as created (undo would
        /// delete it).
        complete: bool,
    },
}

/// Records one turn. Owned by the session's tool context; `None` there means no
/// recording (a tool called by hand).
#[derive(Debug)]
pub struct TurnRecorder {
    dir: PathBuf,
    manifest: TurnManifest,
    recorded: HashSet<PathBuf>,
    baseline: Option<Baseline>,
}

impl TurnRecorder {
    pub fn new(
        home_checkpoints: &Path,
        session_id: &str,
        turn: String,
        cwd: &Path,
        title: &str,
    ) -> Self {
        let dir = home_checkpoints.join(session_id).join(&turn);
        Self {
            dir,
            manifest: TurnManifest {
                session_id: session_id.to_owned(),
                turn,
                started_at: chrono_like_now(),
                cwd: cwd.to_path_buf(),
                title: title
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .chars()
                    .take(80)
                    .collect(),
                files: Vec::new(),
            },
            recorded: HashSet::new(),
            baseline: None,
        }
    }

    /// Notes `path`'s content before its first change this turn (`None`: it does not
    /// exist yet). Later changes to the same file in the turn are not recorded again.
    pub fn record(&mut self, path: &Path, old: Option<&[u8]>) -> std::io::Result<()> {
        if !self.recorded.insert(path.to_path_buf()) {
            return Ok(());
        }
        let record = match old {
            Some(bytes) if bytes.len() as u64 > MAX_FILE_BYTES => FileRecord {
                path: path.to_path_buf(),
                blob: None,
                too_big: true,
            },
            Some(bytes) => FileRecord {
                path: path.to_path_buf(),
                blob: Some(self.store_blob(bytes)?),
                too_big: false,
            },
            None => FileRecord {
                path: path.to_path_buf(),
                blob: None,
                too_big: false,
            },
        };
        self.manifest.files.push(record);
        self.write_manifest()
    }

    /// Notes that `path` changed but its old content is too big to keep.
    pub fn record_too_big(&mut self, path: &Path) -> std::io::Result<()> {
        if !self.recorded.insert(path.to_path_buf()) {
            return Ok(());
        }
        self.manifest.files.push(FileRecord {
            path: path.to_path_buf(),
            blob: None,
            too_big: true,
        });
        self.write_manifest()
    }

    /// Reads `path` now and records it (tests; the file tools read through their
    /// folder handle and call [`Self::record`]).
    #[cfg(test)]
    fn record_current(&mut self, path: &Path) -> std::io::Result<()> {
        if self.recorded.contains(path) {
            return Ok(());
        }
        match std::fs::read(path) {
            Ok(bytes) => self.record(path, Some(&bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => self.record(path, None),
            Err(e) => Err(e),
        }
    }

    /// Notes the workspace before the turn's first command (later calls do nothing).
    pub fn before_command(&mut self, cwd: &Path) {
        if self.baseline.is_none() {
            self.baseline = Some(baseline(cwd));
        }
    }

    /// Records every file that differs from the turn's first-command state.
    pub fn after_command(&mut self) -> std::io::Result<()> {
        let Some(baseline) = self.baseline.take() else {
            return Ok(());
        };
        let result = self.record_changes(&baseline);
        self.baseline = Some(baseline);
        result
    }

    fn record_changes(&mut self, baseline: &Baseline) -> std::io::Result<()> {
        match baseline {
            Baseline::Git {
                root,
                head,
                dirty,
                tracked,
            } => {
                // When git cannot say what changed, nothing is recorded rather than
                // something wrong.
                let Some(now) = git_dirty(root) else {
                    return Ok(());
                };
                let mut paths: Vec<&PathBuf> = now.iter().chain(dirty.keys()).collect();
                paths.sort();
                paths.dedup();
                for path in paths {
                    if self.recorded.contains(path) {
                        continue;
                    }
                    let current = read_small(path);
                    let before: Option<Vec<u8>> = match dirty.get(path) {
                        Some(content) => content.clone(),
                        // Clean and tracked: it held HEAD's content.
                        None if tracked.contains(path) => {
                            match head.as_deref().and_then(|h| git_show(root, h, path)) {
                                Some(content) => Some(content),
                                None => {
                                    self.record_too_big(path)?;
                                    continue;
                                }
                            }
                        }
                        // Neither dirty nor tracked before: the command created it.
                        None => None,
                    };
                    if current.as_deref() != before.as_deref() {
                        self.record(path, before.as_deref())?;
                    }
                }
            }
            Baseline::Tree {
                root,
                files,
                skipped,
                complete,
            } => {
                let (now, _, _) = read_tree(root);
                let mut paths: Vec<&PathBuf> = now.keys().chain(files.keys()).collect();
                paths.sort();
                paths.dedup();
                for path in paths {
                    if self.recorded.contains(path) || skipped.contains(path) {
                        continue;
                    }
                    let before = files.get(path);
                    if before.is_none() && !complete {
                        continue;
                    }
                    if now.get(path) != before {
                        self.record(path, before.map(Vec::as_slice))?;
                    }
                }
            }
        }
        Ok(())
    }

    fn store_blob(&self, bytes: &[u8]) -> std::io::Result<String> {
        let hash = hex(&Sha256::digest(bytes));
        let blobs = self.dir.join("blobs");
        std::fs::create_dir_all(&blobs)?;
        let path = blobs.join(&hash);
        if !path.exists() {
            std::fs::write(path, bytes)?;
        }
        Ok(hash)
    }

    fn write_manifest(&self) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let json = serde_json::to_vec_pretty(&self.manifest).map_err(std::io::Error::other)?;
        let tmp = self.dir.join(".manifest.tmp");
        std::fs::write(&tmp, json)?;
        std::fs::rename(tmp, self.dir.join(MANIFEST))
    }

    /// Whether the turn recorded anything (else nothing was written).
    pub fn is_empty(&self) -> bool {
        self.manifest.files.is_empty()
    }
}

/// A stored turn: its manifest and folder.
#[derive(Debug, Clone)]
pub struct StoredTurn {
    pub dir: PathBuf,
    pub manifest: TurnManifest,
}

/// Every stored turn whose working directory is `cwd` (any session, or only
/// `session`), newest first.
pub fn turns(checkpoints: &Path, cwd: &Path, session: Option<&str>) -> Vec<StoredTurn> {
    let mut out = Vec::new();
    let Ok(sessions) = std::fs::read_dir(checkpoints) else {
        return out;
    };
    for session_dir in sessions.flatten() {
        let Ok(turn_dirs) = std::fs::read_dir(session_dir.path()) else {
            continue;
        };
        for turn in turn_dirs.flatten() {
            let dir = turn.path();
            let Ok(text) = std::fs::read(dir.join(MANIFEST)) else {
                continue;
            };
            let Ok(manifest) = serde_json::from_slice::<TurnManifest>(&text) else {
                continue;
            };
            if manifest.cwd == cwd && session.is_none_or(|s| s == manifest.session_id) {
                out.push(StoredTurn { dir, manifest });
            }
        }
    }
    out.sort_by(|a, b| b.manifest.turn.cmp(&a.manifest.turn));
    out
}

/// What an undo did to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restored {
    Rewritten(PathBuf),
    Removed(PathBuf),
    /// Its old content was too big to keep, or could not be written back.
    Left(PathBuf, String),
}

/// What an undo did, one file per line, for people (the CLI and the TUI say the same).
pub fn describe_undo(title: &str, restored: &[Restored]) -> String {
    let mut out = format!("undid the turn \"{title}\":");
    for item in restored {
        let line = match item {
            Restored::Rewritten(path) => format!("\n  restored {}", path.display()),
            Restored::Removed(path) => {
                format!("\n  removed {} (the turn created it)", path.display())
            }
            Restored::Left(path, why) => format!("\n  left {} as it is: {why}", path.display()),
        };
        out.push_str(&line);
    }
    out
}

/// Puts the files of `turn` back as they were before it, then forgets the turn.
///
/// Every write and removal goes through a folder handle beneath the turn's working
/// directory (or the file's own folder, for an approved edit outside it) without
/// following a link: a command of the model may have swapped a folder or the file for a
/// link since the checkpoint, and undo must not carry the old bytes (or a deletion)
/// wherever that link points.
pub fn undo(turn: &StoredTurn) -> Vec<Restored> {
    let mut out = Vec::new();
    for file in &turn.manifest.files {
        let path = file.path.clone();
        if file.too_big {
            out.push(Restored::Left(
                path,
                "its old content was too big to keep".into(),
            ));
            continue;
        }
        let result = restore_one(turn, file);
        out.push(match (result, &file.blob) {
            (Ok(()), Some(_)) => Restored::Rewritten(path),
            (Ok(()), None) => Restored::Removed(path),
            (Err(why), _) => Restored::Left(path, why),
        });
    }
    if let Err(e) = std::fs::remove_dir_all(&turn.dir) {
        tracing::warn!(error = %e, dir = %turn.dir.display(), "could not remove an undone checkpoint");
    }
    out
}

fn restore_one(turn: &StoredTurn, file: &FileRecord) -> Result<(), String> {
    let (root, rel) = restore_root(&turn.manifest.cwd, &file.path)?;
    match &file.blob {
        Some(hash) => {
            let bytes =
                std::fs::read(turn.dir.join("blobs").join(hash)).map_err(|e| e.to_string())?;
            root.replace(&rel, &bytes)
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
        None => root.remove_beneath(&rel).map_err(|e| e.to_string()),
    }
}

/// The folder handle a file is restored beneath, and the file's path below it: the
/// working directory (its own path resolved: the sandbox cannot change what lies above
/// it) for files inside it, else the file's folder as it resolves now.
fn restore_root(cwd: &Path, path: &Path) -> Result<(Root, PathBuf), String> {
    let real_cwd = cwd
        .canonicalize()
        .map_err(|e| format!("{}: {e}", cwd.display()))?;
    let inside = path
        .strip_prefix(cwd)
        .or_else(|_| path.strip_prefix(&real_cwd))
        .ok();
    let (base, rel) = match inside {
        Some(rel) => (real_cwd, rel.to_path_buf()),
        None => {
            let parent = path.parent().ok_or("no folder")?;
            let name = path.file_name().ok_or("no file name")?;
            let real = parent
                .canonicalize()
                .map_err(|e| format!("{}: {e}", parent.display()))?;
            (real, PathBuf::from(name))
        }
    };
    let root = Root::open(&base).map_err(|e| e.to_string())?;
    Ok((root, rel))
}

/// Deletes the oldest turns until every checkpoint together fits `max_bytes`.
pub fn prune(checkpoints: &Path, max_bytes: u64) {
    let mut all: Vec<(String, PathBuf, u64)> = Vec::new();
    for entry in walkdir_dirs(checkpoints) {
        let size = dir_size(&entry);
        let turn = entry
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        all.push((turn, entry, size));
    }
    let mut total: u64 = all.iter().map(|(_, _, s)| s).sum();
    all.sort();
    for (_, dir, size) in all {
        if total <= max_bytes {
            break;
        }
        if std::fs::remove_dir_all(&dir).is_ok() {
            total = total.saturating_sub(size);
        }
    }
}

/// The turn folders (two levels down).
fn walkdir_dirs(checkpoints: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for session in std::fs::read_dir(checkpoints)
        .into_iter()
        .flatten()
        .flatten()
    {
        for turn in std::fs::read_dir(session.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if turn.path().is_dir() {
                out.push(turn.path());
            }
        }
    }
    out
}

fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match entry.metadata() {
                Ok(m) if m.is_dir() => stack.push(entry.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}

/// The workspace state at the turn's first command.
fn baseline(cwd: &Path) -> Baseline {
    let in_git = git_root(cwd).and_then(|root| {
        let dirty = git_dirty(&root)?;
        let tracked = git_tracked(&root)?;
        Some((root, dirty, tracked))
    });
    match in_git {
        Some((root, dirty, tracked)) => {
            let head = git(&root, &["rev-parse", "--verify", "-q", "HEAD"])
                .map(|out| String::from_utf8_lossy(&out).trim().to_owned())
                .filter(|h| !h.is_empty());
            let dirty = dirty
                .into_iter()
                .map(|path| {
                    let content = read_small(&path);
                    (path, content)
                })
                .collect();
            Baseline::Git {
                root,
                head,
                dirty,
                tracked,
            }
        }
        None => {
            let (files, skipped, complete) = read_tree(cwd);
            Baseline::Tree {
                root: cwd.to_path_buf(),
                files,
                skipped,
                complete,
            }
        }
    }
}

/// The repository `cwd` is in, if git can tell.
fn git_root(cwd: &Path) -> Option<PathBuf> {
    let out = git(cwd, &["rev-parse", "--show-toplevel"])?;
    let root = String::from_utf8_lossy(&out).trim().to_owned();
    (!root.is_empty()).then(|| PathBuf::from(root))
}

/// Runs a read-only git command; `GIT_OPTIONAL_LOCKS=0` keeps `status` from refreshing
/// (writing) the user's index.
fn git(dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

/// Absolute paths of the files that differ from HEAD (changed, added, deleted,
/// untracked); `None` when git could not say.
fn git_dirty(root: &Path) -> Option<Vec<PathBuf>> {
    let args = [
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--no-renames",
    ];
    let out = git(root, &args)?;
    Some(
        out.split(|b| *b == 0)
            .filter(|entry| entry.len() > 3)
            .map(|entry| root.join(String::from_utf8_lossy(&entry[3..]).as_ref()))
            .collect(),
    )
}

/// Absolute paths of the files git tracks; `None` when git could not say.
fn git_tracked(root: &Path) -> Option<HashSet<PathBuf>> {
    let out = git(root, &["ls-files", "-z"])?;
    Some(
        out.split(|b| *b == 0)
            .filter(|entry| !entry.is_empty())
            .map(|entry| root.join(String::from_utf8_lossy(entry).as_ref()))
            .collect(),
    )
}

/// `path`'s content at commit `head` (`None`: not in that commit).
fn git_show(root: &Path, head: &str, path: &Path) -> Option<Vec<u8>> {
    let rel = path.strip_prefix(root).ok()?;
    git(
        root,
        &["show", &format!("{head}:{}", rel.to_string_lossy())],
    )
}

fn read_small(path: &Path) -> Option<Vec<u8>> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        return None;
    }
    std::fs::read(path).ok()
}

/// Every file under `root` (ignore files apply, `.git` skipped) with its content, within
/// the caps; the paths left unread; and whether the walk saw every entry.
fn read_tree(root: &Path) -> (HashMap<PathBuf, Vec<u8>>, HashSet<PathBuf>, bool) {
    let mut files = HashMap::new();
    let mut skipped = HashSet::new();
    let mut total = 0u64;
    let walker = ignore::WalkBuilder::new(root).hidden(false).build();
    for (seen, entry) in walker.flatten().enumerate() {
        if seen >= MAX_SNAPSHOT_ENTRIES {
            return (files, skipped, false);
        }
        let path = entry.path();
        if path.components().any(|c| c.as_os_str() == ".git") {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        if meta.len() > MAX_FILE_BYTES || total + meta.len() > MAX_SNAPSHOT_BYTES {
            skipped.insert(path.to_path_buf());
            continue;
        }
        if let Ok(bytes) = std::fs::read(path) {
            total += bytes.len() as u64;
            files.insert(path.to_path_buf(), bytes);
        }
    }
    (files, skipped, true)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Seconds since the epoch, as text (RFC 3339 needs a date crate this crate does not have).
fn chrono_like_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    secs.to_string()
}

/// A turn id that sorts by time: `<unix millis>-<n>`.
pub fn turn_id(n: u64) -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    format!("{millis:015}-{n:04}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorder(home: &Path, cwd: &Path) -> TurnRecorder {
        TurnRecorder::new(&home.join("checkpoints"), "s1", turn_id(1), cwd, "do it")
    }

    #[test]
    fn a_file_tool_change_and_a_new_file_are_undone() {
        let home = tempfile::tempdir().unwrap();
        let cwd = tempfile::tempdir().unwrap();
        let cwd = cwd.path().canonicalize().unwrap();
        let edited = cwd.join("a.txt");
        std::fs::write(&edited, "old").unwrap();
        let created = cwd.join("new/b.txt");
        let mut rec = recorder(home.path(), &cwd);
        rec.record_current(&edited).unwrap();
        rec.record_current(&created).unwrap();
        std::fs::write(&edited, "new").unwrap();
        // A second change in the same turn keeps the turn-start content.
        rec.record_current(&edited).unwrap();
        std::fs::write(&edited, "newer").unwrap();
        std::fs::create_dir_all(created.parent().unwrap()).unwrap();
        std::fs::write(&created, "made").unwrap();

        let stored = turns(&home.path().join("checkpoints"), &cwd, None);
        assert_eq!(stored.len(), 1);
        let restored = undo(&stored[0]);
        assert_eq!(
            restored,
            vec![
                Restored::Rewritten(edited.clone()),
                Restored::Removed(created.clone())
            ]
        );
        assert_eq!(std::fs::read_to_string(&edited).unwrap(), "old");
        assert!(!created.exists());
        assert!(turns(&home.path().join("checkpoints"), &cwd, None).is_empty());
    }

    #[test]
    fn undo_never_writes_or_deletes_through_a_link_planted_after_the_checkpoint() {
        use std::os::unix::fs::symlink;
        let home = tempfile::tempdir().unwrap();
        let victim = tempfile::tempdir().unwrap();
        let victim = victim.path().canonicalize().unwrap();
        std::fs::write(victim.join("a.txt"), "the user's own file").unwrap();
        std::fs::write(victim.join("b.txt"), "another file of the user's").unwrap();
        let cwd = tempfile::tempdir().unwrap();
        let cwd = cwd.path().canonicalize().unwrap();
        std::fs::create_dir(cwd.join("dir")).unwrap();
        let edited = cwd.join("dir/a.txt");
        std::fs::write(&edited, "PAYLOAD").unwrap();
        let created = cwd.join("dir/b.txt");
        let mut rec = recorder(home.path(), &cwd);
        rec.record_current(&edited).unwrap();
        rec.record_current(&created).unwrap();
        std::fs::write(&edited, "edited").unwrap();
        std::fs::write(&created, "made").unwrap();
        // Later in the turn a command swaps the folder for a link out of the workspace.
        std::fs::rename(cwd.join("dir"), cwd.join("moved")).unwrap();
        symlink(&victim, cwd.join("dir")).unwrap();

        let stored = turns(&home.path().join("checkpoints"), &cwd, None);
        let restored = undo(&stored[0]);
        assert!(
            restored.iter().all(|r| matches!(r, Restored::Left(..))),
            "{restored:?}"
        );
        assert_eq!(
            std::fs::read_to_string(victim.join("a.txt")).unwrap(),
            "the user's own file"
        );
        assert_eq!(
            std::fs::read_to_string(victim.join("b.txt")).unwrap(),
            "another file of the user's"
        );
        let leftovers: Vec<_> = std::fs::read_dir(&victim).unwrap().collect();
        assert_eq!(leftovers.len(), 2, "nothing new beside the user's files");
    }

    #[test]
    fn commands_outside_git_are_caught_by_the_workspace_note() {
        let home = tempfile::tempdir().unwrap();
        let cwd = tempfile::tempdir().unwrap();
        let cwd = cwd.path().canonicalize().unwrap();
        std::fs::write(cwd.join("keep.txt"), "k").unwrap();
        std::fs::write(cwd.join("gone.txt"), "g").unwrap();
        let mut rec = recorder(home.path(), &cwd);
        rec.before_command(&cwd);
        std::fs::write(cwd.join("keep.txt"), "changed").unwrap();
        std::fs::remove_file(cwd.join("gone.txt")).unwrap();
        std::fs::write(cwd.join("made.txt"), "m").unwrap();
        rec.after_command().unwrap();
        let stored = turns(&home.path().join("checkpoints"), &cwd, Some("s1"));
        let restored = undo(&stored[0]);
        assert_eq!(restored.len(), 3, "{restored:?}");
        assert_eq!(std::fs::read_to_string(cwd.join("keep.txt")).unwrap(), "k");
        assert_eq!(std::fs::read_to_string(cwd.join("gone.txt")).unwrap(), "g");
        assert!(!cwd.join("made.txt").exists());
    }

    #[test]
    fn commands_in_git_are_undone_without_touching_the_index() {
        let home = tempfile::tempdir().unwrap();
        let repo = test_support::git_repo(&[("src/lib.rs", "fn a() {}\n"), ("README", "r\n")]);
        let root = repo.path().canonicalize().unwrap();
        std::fs::write(root.join("README"), "edited before the turn\n").unwrap();
        let index_before = std::fs::read(root.join(".git/index")).unwrap();
        let mut rec = recorder(home.path(), &root);
        rec.before_command(&root);
        std::fs::write(root.join("src/lib.rs"), "fn b() {}\n").unwrap();
        std::fs::write(root.join("README"), "edited by the command\n").unwrap();
        std::fs::write(root.join("new.rs"), "x").unwrap();
        rec.after_command().unwrap();
        assert_eq!(
            std::fs::read(root.join(".git/index")).unwrap(),
            index_before
        );
        let stored = turns(&home.path().join("checkpoints"), &root, None);
        undo(&stored[0]);
        assert_eq!(
            std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
            "fn a() {}\n"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("README")).unwrap(),
            "edited before the turn\n"
        );
        assert!(!root.join("new.rs").exists());
        assert_eq!(
            std::fs::read(root.join(".git/index")).unwrap(),
            index_before
        );
    }

    #[test]
    fn pruning_drops_the_oldest_turns_first() {
        let home = tempfile::tempdir().unwrap();
        let cwd = tempfile::tempdir().unwrap();
        let checkpoints = home.path().join("checkpoints");
        for n in 0..3 {
            let mut rec =
                TurnRecorder::new(&checkpoints, "s", format!("{n:015}-0001"), cwd.path(), "t");
            rec.record(&cwd.path().join(format!("f{n}")), Some(&vec![b'x'; 10_000]))
                .unwrap();
        }
        // Three turns of about 10 kB each: the oldest goes.
        prune(&checkpoints, 25_000);
        let left: Vec<String> = turns(&checkpoints, cwd.path(), None)
            .into_iter()
            .map(|t| t.manifest.turn)
            .collect();
        assert_eq!(left, vec!["000000000000002-0001", "000000000000001-0001"]);
    }

    /// `cargo xtask bench checkpoint`, or
    /// `cargo test --release -p agent-loop --lib -- --ignored checkpoint_of_a_1000_file_workspace --nocapture`
    #[test]
    #[ignore = "measurement: run in release and read the printed medians"]
    fn checkpoint_of_a_1000_file_workspace() {
        use std::time::Instant;

        let write_tree = |root: &Path| {
            for i in 0..1000 {
                let dir = root.join(format!("src/mod{}", i / 50));
                std::fs::create_dir_all(&dir).unwrap();
                let body = format!("// file {i}\n{}", "fn f() { let x = 1; }\n".repeat(40));
                std::fs::write(dir.join(format!("f{i}.rs")), body).unwrap();
            }
        };
        let plain = tempfile::tempdir().unwrap();
        write_tree(plain.path());
        let files: Vec<(String, String)> = (0..1000)
            .map(|i| {
                (
                    format!("src/mod{}/f{i}.rs", i / 50),
                    format!("// file {i}\n{}", "fn f() { let x = 1; }\n".repeat(40)),
                )
            })
            .collect();
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, b)| (p.as_str(), b.as_str()))
            .collect();
        let repo = test_support::git_repo(&refs);
        // A few files already edited when the turn starts.
        for (path, _) in files.iter().take(10) {
            std::fs::write(repo.path().join(path), "edited").unwrap();
        }
        let home = tempfile::tempdir().unwrap();
        let median = |root: &Path| {
            let mut times = Vec::new();
            for n in 0..15 {
                let mut rec = TurnRecorder::new(&home.path().join("c"), "s", turn_id(n), root, "t");
                let start = Instant::now();
                rec.before_command(root);
                times.push(start.elapsed().as_secs_f64() * 1000.0);
            }
            times.sort_by(f64::total_cmp);
            (times[times.len() / 2], times[0], times[times.len() - 1])
        };
        let (plain_median, plain_min, plain_max) = median(plain.path());
        let (git_median, git_min, git_max) = median(repo.path());
        println!(
            "checkpoint of a 1,000-file workspace: outside git median {plain_median:.3} ms (min {plain_min:.3}, max {plain_max:.3}); \
             git median {git_median:.3} ms (min {git_min:.3}, max {git_max:.3})"
        );
    }
}
