//! Crash-safe file replacement: write a temp file beside the target, fsync,
//! rename over the target, fsync the folder. A reader sees old or new, never half.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::BorrowedFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Marks our temp files so a later writer holding the lock can sweep the ones
/// a killed writer left behind.
const TEMP_MARK: &str = ".knack-tmp-";
const DEFAULT_MODE: u32 = 0o644;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Places in a write where a test can make it fail.
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FaultPoint {
    /// After the temp file is written and synced, before it replaces the target.
    BeforeRename,
}

#[cfg(test)]
thread_local! {
    static FAULT: std::cell::Cell<Option<FaultPoint>> = const { std::cell::Cell::new(None) };
}

/// Makes the next write on this thread fail at `point`.
#[cfg(test)]
pub(crate) fn inject_fault(point: FaultPoint) {
    FAULT.with(|f| f.set(Some(point)));
}

#[cfg(test)]
fn fault_before_rename() -> io::Result<()> {
    if FAULT.with(|f| f.get()) == Some(FaultPoint::BeforeRename) {
        FAULT.with(|f| f.set(None));
        return Err(io::Error::other("injected fault before rename"));
    }
    Ok(())
}

#[cfg(not(test))]
fn fault_before_rename() -> io::Result<()> {
    Ok(())
}

/// Replaces `target` with `bytes` atomically. The target keeps its permission
/// bits; a new file gets 0644. The caller holds the skill's lock.
pub fn write(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = target
        .parent()
        .ok_or_else(|| io::Error::other("the target has no parent folder"))?;
    let file_name = target
        .file_name()
        .ok_or_else(|| io::Error::other("the target has no file name"))?
        .to_string_lossy()
        .into_owned();
    sweep_stale_temps(dir);
    let mode = match fs::metadata(target) {
        Ok(m) => m.permissions().mode() & 0o7777,
        Err(_) => DEFAULT_MODE,
    };
    let temp = dir.join(format!(
        ".{file_name}{TEMP_MARK}{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.set_permissions(fs::Permissions::from_mode(mode))?;
        file.sync_all()?;
        drop(file);
        fault_before_rename()?;
        fs::rename(&temp, target)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result?;
    sync_dir(dir)
}

/// Replaces the file `name` in the open folder `dir` with `bytes`, like
/// `write`, but entirely relative to the folder handle: the temp file is
/// created with `O_NOFOLLOW | O_EXCL` and renamed over `name` in the same
/// folder, so a link anywhere (or one swapped in meanwhile) is never written
/// through. A link at `name` itself is replaced, never followed; callers
/// refuse one before getting here. The caller holds the skill's lock.
pub fn write_at(dir: BorrowedFd<'_>, name: &str, bytes: &[u8]) -> io::Result<()> {
    use rustix::fs::{AtFlags, Mode, OFlags};
    sweep_stale_temps_at(dir);
    let mode = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if rustix::fs::FileType::from_raw_mode(st.st_mode).is_file() => st.st_mode & 0o7777,
        _ => DEFAULT_MODE,
    };
    let temp = format!(
        ".{name}{TEMP_MARK}{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let result = (|| -> io::Result<()> {
        let fd = rustix::fs::openat(
            dir,
            temp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(DEFAULT_MODE),
        )?;
        let mut file = File::from(fd);
        file.write_all(bytes)?;
        file.set_permissions(fs::Permissions::from_mode(mode))?;
        file.sync_all()?;
        drop(file);
        fault_before_rename()?;
        rustix::fs::renameat(dir, temp.as_str(), dir, name)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(dir, temp.as_str(), AtFlags::empty());
    }
    result?;
    Ok(rustix::fs::fsync(dir)?)
}

/// `sweep_stale_temps` for an open folder.
fn sweep_stale_temps_at(dir: BorrowedFd<'_>) {
    let Ok(names) = crate::beneath::entries(&dir) else {
        return;
    };
    for name in names {
        if name.starts_with('.') && name.contains(TEMP_MARK) {
            let _ = rustix::fs::unlinkat(dir, name.as_str(), rustix::fs::AtFlags::empty());
        }
    }
}

/// Flushes a folder's entries (renames, creations, removals) to disk.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Removes temp files of writers that died mid-write. Only called under the
/// skill's lock, so no live writer owns them.
fn sweep_stale_temps(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') && name.contains(TEMP_MARK) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Creates the missing folders of `dir`; returns the topmost one created,
/// so a failed write can remove exactly what it added.
pub fn create_dirs(dir: &Path) -> io::Result<Option<PathBuf>> {
    let mut missing = Vec::new();
    let mut cur = dir;
    while !cur.exists() {
        missing.push(cur.to_path_buf());
        match cur.parent() {
            Some(p) => cur = p,
            None => break,
        }
    }
    fs::create_dir_all(dir)?;
    if let Some(top) = missing.last()
        && let Some(parent) = top.parent()
    {
        sync_dir(parent)?;
    }
    Ok(missing.pop())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_keeps_mode() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("run.sh");
        fs::write(&target, "old").unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o755)).unwrap();
        write(&target, b"new").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
        assert_eq!(
            fs::metadata(&target).unwrap().permissions().mode() & 0o777,
            0o755
        );
        let fresh = dir.path().join("fresh.md");
        write(&fresh, b"x").unwrap();
        assert_eq!(
            fs::metadata(&fresh).unwrap().permissions().mode() & 0o777,
            0o644
        );
    }

    #[test]
    fn a_fault_before_rename_leaves_the_target_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("SKILL.md");
        fs::write(&target, "before").unwrap();
        inject_fault(FaultPoint::BeforeRename);
        assert!(write(&target, b"after").is_err());
        assert_eq!(fs::read_to_string(&target).unwrap(), "before");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn stale_temps_are_swept_by_the_next_write() {
        let dir = tempfile::tempdir().unwrap();
        let stale = dir.path().join(format!(".SKILL.md{TEMP_MARK}1-1"));
        fs::write(&stale, "half").unwrap();
        write(&dir.path().join("SKILL.md"), b"x").unwrap();
        assert!(!stale.exists());
    }

    #[test]
    fn create_dirs_reports_the_top_new_folder() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("a/b/c");
        assert_eq!(create_dirs(&deep).unwrap(), Some(dir.path().join("a")));
        assert_eq!(create_dirs(&deep).unwrap(), None);
    }
}
