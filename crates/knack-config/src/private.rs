//! Files and folders only the user may read: `$KNACK_HOME` itself (0700) and everything in it
//! that can hold a secret or a conversation (0600). One place for the modes, so every writer agrees.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::KnackHome;

/// Mode of `$KNACK_HOME`, `logs/` and `memories/`.
pub const DIR_MODE: u32 = 0o700;
/// Mode of `state.db`, `.env`, `config.yaml`, logs, the input history and memory files.
pub const FILE_MODE: u32 = 0o600;

/// Creates `path` and any missing parents with mode 0700. An existing folder
/// keeps its mode: only the home root is tightened (see [`KnackHome::ensure_private`]).
pub fn create_dir_private(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Ok(());
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(path)
}

/// Replaces `path` atomically (temporary sibling, fsync, rename) with a file
/// of mode 0600, whatever mode the old file had; parents are created 0700.
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    create_dir_private(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".knack-private-")
        .permissions(fs::Permissions::from_mode(FILE_MODE))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Opens `path` for appending, creating it 0600 (parents 0700). A file that
/// already existed with wider bits is narrowed to 0600.
pub fn open_append_private(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_dir_private(dir)?;
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(FILE_MODE)
        .open(path)?;
    narrow_open_file(&file)?;
    Ok(file)
}

/// Creates `path` empty with mode 0600 if it does not exist (never truncates),
/// and narrows an existing file to 0600. SQLite then gives its `-wal` and
/// `-shm` files the same mode as the database file.
pub fn touch_private(path: &Path) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_dir_private(dir)?;
    }
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(FILE_MODE)
        .open(path)?;
    narrow_open_file(&file)
}

/// Narrows an existing file to 0600; a missing file is no error.
pub fn set_private(path: &Path) -> io::Result<()> {
    match fs::metadata(path) {
        Ok(meta) if meta.is_file() && meta.mode() & 0o077 != 0 => {
            fs::set_permissions(path, fs::Permissions::from_mode(FILE_MODE))
        }
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn narrow_open_file(file: &File) -> io::Result<()> {
    let meta = file.metadata()?;
    if meta.mode() & 0o077 != 0 {
        file.set_permissions(fs::Permissions::from_mode(FILE_MODE))?;
    }
    Ok(())
}

/// Whether the current user owns the file: knack never changes the mode of a
/// path someone else set up (a shared or admin-managed home).
fn owned_by_me(meta: &fs::Metadata) -> bool {
    meta.uid() == rustix::process::getuid().as_raw()
}

impl KnackHome {
    /// Creates the home root 0700, and narrows an existing root or `.env`
    /// that other users can read, the way ssh insists on a private `~/.ssh`.
    /// Only paths the current user owns are changed. Returns the paths whose
    /// mode changed, for the caller to log.
    pub fn ensure_private(&self) -> crate::Result<Vec<PathBuf>> {
        let root = self.root();
        create_dir_private(root).map_err(|e| crate::Error::io(root, e))?;
        let mut tightened = Vec::new();
        for (path, mode) in [(root.to_path_buf(), DIR_MODE), (self.env_path(), FILE_MODE)] {
            let meta = match fs::metadata(&path) {
                Ok(meta) => meta,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(crate::Error::io(&path, e)),
            };
            if meta.mode() & 0o077 != 0 && owned_by_me(&meta) {
                // Keep the owner's own bits (e.g. 0750 -> 0700, 0644 -> 0600).
                let narrowed = meta.mode() & mode & 0o777;
                fs::set_permissions(&path, fs::Permissions::from_mode(narrowed))
                    .map_err(|e| crate::Error::io(&path, e))?;
                tightened.push(path);
            }
        }
        Ok(tightened)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().mode() & 0o777
    }

    #[test]
    fn new_dirs_and_files_are_private_and_old_ones_are_narrowed() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b");
        create_dir_private(&nested).unwrap();
        assert_eq!(mode(&dir.path().join("a")), 0o700);
        assert_eq!(mode(&nested), 0o700);

        let file = nested.join("f.txt");
        fs::write(&file, "old").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
        write_private(&file, b"new").unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), "new");
        assert_eq!(mode(&file), 0o600);

        let log = dir.path().join("logs/x.log");
        drop(open_append_private(&log).unwrap());
        assert_eq!(mode(&log), 0o600);
        assert_eq!(mode(&dir.path().join("logs")), 0o700);
        fs::set_permissions(&log, fs::Permissions::from_mode(0o644)).unwrap();
        let mut f = open_append_private(&log).unwrap();
        f.write_all(b"line\n").unwrap();
        assert_eq!(mode(&log), 0o600);

        let db = dir.path().join("state.db");
        touch_private(&db).unwrap();
        assert_eq!(mode(&db), 0o600);
        fs::write(&db, "keep").unwrap();
        touch_private(&db).unwrap();
        assert_eq!(fs::read_to_string(&db).unwrap(), "keep", "never truncates");

        set_private(&dir.path().join("missing")).unwrap();
    }

    #[test]
    fn ensure_private_creates_and_narrows_the_root_and_env() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = KnackHome::at(dir.path().join("fresh"));
        assert!(fresh.ensure_private().unwrap().is_empty());
        assert_eq!(mode(fresh.root()), 0o700);

        let home = KnackHome::at(dir.path().join("old"));
        fs::create_dir(home.root()).unwrap();
        fs::set_permissions(home.root(), fs::Permissions::from_mode(0o755)).unwrap();
        fs::write(home.env_path(), "K=v\n").unwrap();
        fs::set_permissions(home.env_path(), fs::Permissions::from_mode(0o644)).unwrap();
        let changed = home.ensure_private().unwrap();
        assert_eq!(changed, vec![home.root().to_path_buf(), home.env_path()]);
        assert_eq!(mode(home.root()), 0o700);
        assert_eq!(mode(&home.env_path()), 0o600);
        assert!(home.ensure_private().unwrap().is_empty(), "idempotent");
    }
}
