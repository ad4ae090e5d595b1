//! The file tools' disk access: every path is opened relative to a folder handle with `openat2`
//! and `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, so a link swapped in at any moment leads nowhere.
//!
//! The tools check a path's rules on its resolved form (`boundary::file_gate`); this module makes
//! sure the bytes land exactly there. A sandboxed command may swap a folder for a link (even with
//! `renameat2(RENAME_EXCHANGE)`) between the check and the write: then a component is a link
//! when it is opened, the open fails with `ELOOP`, and nothing is written. A replacement goes
//! through a temporary file made in the final folder's handle and renamed within that same
//! handle; every failure removes it, and the folders the write created.
//!
//! Without `openat2` (Linux before 5.6) writes are refused: the old check-then-write-by-path
//! way is exactly the race this module exists to close.
//!
//! Durability: the temporary file is renamed over the name **without an fsync** first. The
//! rename alone is atomic for every reader and survives knack being killed at any point:
//! the name holds the old file or the new one, never part of one. An fsync (or fdatasync;
//! for a new file both wait for the same device flush) would add protection only against
//! the machine losing power in the seconds after a write, and it cost 5–8 ms of a write's
//! 5–8 ms here, four times the 2 ms a file tool may take. ext4 (in its default
//! `auto_da_alloc` mode) and btrfs flush a file's data before a rename over an existing
//! file commits, so there even a power loss leaves the old or the new content; on other
//! file systems (XFS, say) a power loss right after a write may leave the file empty. We
//! accept that: these are an editor's saves of work the session's transcript also holds
//! and the model can write again, not a database's commits.

use std::ffi::OsStr;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// Every temporary file of a replacement starts with this (tests look for leftovers by it).
pub const TEMP_PREFIX: &str = ".knack-write-";

/// How often a lookup the kernel aborted because a rename raced with it
/// (`EAGAIN`) is tried again before the write gives up.
const RACE_RETRIES: usize = 16;

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC);

/// No link at all on the way (magic `/proc` links included), and never above the base.
const STRICT: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// Why a file operation beneath a root failed, in words for the model.
#[derive(Debug, thiserror::Error)]
pub enum BeneathError {
    #[error(
        "this kernel has no openat2 (Linux 5.6 or newer is needed), so file tools cannot \
         write without risking a redirected write; nothing was written"
    )]
    NoOpenat2,
    #[error(
        "{0} is or passes through a symbolic link that appeared after the path was checked; nothing was changed"
    )]
    LinkAppeared(PathBuf),
    #[error("{0} is a directory")]
    IsDirectory(PathBuf),
    #[error("{0} is not a regular file")]
    NotRegular(PathBuf),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

impl BeneathError {
    fn io(path: &Path, errno: Errno) -> Self {
        match errno {
            Errno::NOSYS => Self::NoOpenat2,
            // XDEV: a path tried to leave its base, which only a link can make it do.
            Errno::LOOP | Errno::XDEV => Self::LinkAppeared(path.to_path_buf()),
            Errno::ISDIR => Self::IsDirectory(path.to_path_buf()),
            other => Self::Io {
                path: path.to_path_buf(),
                source: other.into(),
            },
        }
    }
}

pub type Result<T> = std::result::Result<T, BeneathError>;

/// What [`Root::replace`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replaced {
    /// The file did not exist before.
    pub created: bool,
}

/// A folder opened once; everything beneath it is opened relative to its handle.
#[derive(Debug)]
pub struct Root {
    /// The folder's path, as opened (absolute, no links).
    path: PathBuf,
    fd: OwnedFd,
}

impl Root {
    /// Opens `path`, an absolute path without links (`resolve_existing_prefix`
    /// gives one), refusing any link on the way: a folder swapped for a link
    /// since the path was resolved is not followed.
    pub fn open(path: &Path) -> Result<Self> {
        let cwd = rustix::fs::CWD;
        let fd = openat2_retrying(
            cwd,
            path,
            DIR_FLAGS,
            Mode::empty(),
            ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        )
        .map_err(|e| BeneathError::io(path, e))?;
        Ok(Self {
            path: path.to_path_buf(),
            fd,
        })
    }

    /// Reads the regular file `rel` beneath the root whole, refusing links
    /// on the way and at the end; files longer than `max_bytes` are an error
    /// the caller words (`Err(len)` inside `Ok`).
    pub fn read(&self, rel: &Path, max_bytes: u64) -> Result<std::result::Result<Vec<u8>, u64>> {
        let shown = self.path.join(rel);
        let rel = plain(rel, &shown)?;
        let fd = openat2_retrying(
            self.fd.as_fd(),
            &rel_or_dot(&rel),
            OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK,
            Mode::empty(),
            STRICT,
        )
        .map_err(|e| BeneathError::io(&shown, e))?;
        let st = rustix::fs::fstat(&fd).map_err(|e| BeneathError::io(&shown, e))?;
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => {}
            FileType::Directory => return Err(BeneathError::IsDirectory(shown)),
            _ => return Err(BeneathError::NotRegular(shown)),
        }
        let len = u64::try_from(st.st_size).unwrap_or(0);
        if len > max_bytes {
            return Ok(Err(len));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        std::fs::File::from(fd)
            .take(max_bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(|source| BeneathError::Io {
                path: shown.clone(),
                source,
            })?;
        Ok(Ok(bytes))
    }

    /// Opens the file `rel` beneath the root for reading as it is listed
    /// (a folder search), refusing links.
    pub fn open_file(&self, rel: &Path) -> Result<std::fs::File> {
        let shown = self.path.join(rel);
        let rel = plain(rel, &shown)?;
        let fd = openat2_retrying(
            self.fd.as_fd(),
            &rel_or_dot(&rel),
            OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK,
            Mode::empty(),
            STRICT,
        )
        .map_err(|e| BeneathError::io(&shown, e))?;
        Ok(std::fs::File::from(fd))
    }

    /// Opens the folder `name` directly inside the root, made 0700 when
    /// missing and narrowed to 0700 when it is ours and wider; a link there
    /// is refused. For knack's own private folders (saved command output).
    pub fn private_dir(&self, name: &str) -> Result<Root> {
        let shown = self.path.join(name);
        match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o700)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(BeneathError::io(&shown, e)),
        }
        let fd = openat2_retrying(
            self.fd.as_fd(),
            Path::new(name),
            DIR_FLAGS,
            Mode::empty(),
            STRICT,
        )
        .map_err(|e| BeneathError::io(&shown, e))?;
        let st = rustix::fs::fstat(&fd).map_err(|e| BeneathError::io(&shown, e))?;
        if st.st_mode & 0o077 != 0 && st.st_uid == rustix::process::geteuid().as_raw() {
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o700))
                .map_err(|e| BeneathError::io(&shown, e))?;
        }
        Ok(Root { path: shown, fd })
    }

    /// Creates the new file `name` directly inside the root, mode 0600,
    /// never through a link and never over an existing file.
    pub fn create_private_file(&self, name: &str) -> Result<std::fs::File> {
        let shown = self.path.join(name);
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
        .map_err(|e| BeneathError::io(&shown, e))?;
        Ok(std::fs::File::from(fd))
    }

    /// The regular files directly inside the root: name, size in bytes and
    /// modification time (seconds since the epoch). Links are not followed.
    pub fn files(&self) -> Result<Vec<(String, u64, i64)>> {
        let mut out = Vec::new();
        let dir =
            rustix::fs::Dir::read_from(&self.fd).map_err(|e| BeneathError::io(&self.path, e))?;
        for entry in dir {
            let entry = entry.map_err(|e| BeneathError::io(&self.path, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == "." || name == ".." {
                continue;
            }
            let Ok(st) = rustix::fs::statat(&self.fd, name.as_str(), AtFlags::SYMLINK_NOFOLLOW)
            else {
                continue;
            };
            if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile {
                out.push((name, u64::try_from(st.st_size).unwrap_or(0), st.st_mtime));
            }
        }
        Ok(out)
    }

    /// Removes the file (or link, never followed) `name` directly inside the root.
    pub fn remove(&self, name: &str) -> Result<()> {
        rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())
            .map_err(|e| BeneathError::io(&self.path.join(name), e))
    }

    /// Removes the file (or link, never followed) `rel` beneath the root, its
    /// folders opened without following a link; one already gone is no error.
    pub fn remove_beneath(&self, rel: &Path) -> Result<()> {
        let shown = self.path.join(rel);
        let parts = plain(rel, &shown)?;
        let Some((name, folders)) = parts.split_last() else {
            return Err(BeneathError::IsDirectory(shown));
        };
        let dir = match openat2_retrying(
            self.fd.as_fd(),
            &rel_or_dot(folders),
            DIR_FLAGS,
            Mode::empty(),
            STRICT,
        ) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(()),
            Err(e) => return Err(BeneathError::io(&shown, e)),
        };
        match rustix::fs::unlinkat(&dir, *name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(BeneathError::io(&shown, e)),
        }
    }

    /// Replaces (or creates) the file `rel` beneath the root with `bytes`:
    /// missing folders are made, each opened beneath the one before without
    /// following a link; the bytes go to a temporary file in the final folder,
    /// which is then renamed over the name within that same folder. Readers
    /// see the old or the new file, never half of one. On any failure the
    /// temporary file and the folders made for it are removed again.
    pub fn replace(&self, rel: &Path, bytes: &[u8]) -> Result<Replaced> {
        let shown = self.path.join(rel);
        let rel = plain(rel, &shown)?;
        let Some((name, folders)) = rel.split_last() else {
            return Err(BeneathError::IsDirectory(shown));
        };
        let made = MadeFolders::open_or_create(self, folders, &shown)?;
        match replace_in(made.dir(), name, bytes, &shown) {
            Ok(done) => {
                made.keep();
                Ok(done)
            }
            Err(e) => Err(made.fail(e)),
        }
    }
}

/// The last step of [`Root::replace`], in the final folder's handle.
fn replace_in(dir: BorrowedFd<'_>, name: &OsStr, bytes: &[u8], shown: &Path) -> Result<Replaced> {
    // What is at the name now: never a link (one that appeared since the
    // check is refused, not replaced), never a folder.
    let existing = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => match FileType::from_raw_mode(st.st_mode) {
            FileType::Symlink => return Err(BeneathError::LinkAppeared(shown.to_path_buf())),
            FileType::Directory => return Err(BeneathError::IsDirectory(shown.to_path_buf())),
            // An executable script stays executable; set-id bits are not carried over.
            _ => Some(Mode::from_raw_mode(st.st_mode & 0o1777)),
        },
        Err(Errno::NOENT) => None,
        Err(e) => return Err(BeneathError::io(shown, e)),
    };
    let temp = TempFile::create(dir, existing).map_err(|e| BeneathError::io(shown, e))?;
    temp.fill(bytes)
        .and_then(|()| rustix::fs::renameat(dir, temp.name(), dir, name).map_err(Into::into))
        .map_err(|source| BeneathError::Io {
            path: shown.to_path_buf(),
            source,
        })?;
    temp.renamed();
    Ok(Replaced {
        created: existing.is_none(),
    })
}

/// The folders on the way to a file, opened (and made where missing) one by
/// one beneath the root; remembers what it made so a failed write can undo it.
struct MadeFolders<'r> {
    root: &'r Root,
    /// The innermost folder's handle (`None`: the root itself).
    dir: Option<OwnedFd>,
    /// Folders this write made, outermost first: their parents' handles and names.
    made: Vec<(Option<OwnedFd>, Vec<u8>)>,
}

impl<'r> MadeFolders<'r> {
    fn open_or_create(root: &'r Root, folders: &[&OsStr], shown: &Path) -> Result<Self> {
        let mut this = Self {
            root,
            dir: None,
            made: Vec::new(),
        };
        if folders.is_empty() {
            return Ok(this);
        }
        // The common case, every folder already there: one call.
        let joined: PathBuf = folders.iter().collect();
        match openat2_retrying(root.fd.as_fd(), &joined, DIR_FLAGS, Mode::empty(), STRICT) {
            Ok(fd) => {
                this.dir = Some(fd);
                return Ok(this);
            }
            Err(Errno::NOENT) => {}
            Err(e) => return Err(BeneathError::io(shown, e)),
        }
        for part in folders {
            let next = match this.open_child(part) {
                Ok(fd) => fd,
                Err(Errno::NOENT) => {
                    match rustix::fs::mkdirat(this.dir(), *part, Mode::from_raw_mode(0o777)) {
                        Ok(()) => {
                            let parent = this.dir.as_ref().and_then(|fd| fd.try_clone().ok());
                            this.made.push((parent, part.as_bytes().to_vec()));
                        }
                        // Made by someone else meanwhile: opened like any other.
                        Err(Errno::EXIST) => {}
                        Err(e) => return Err(this.fail(BeneathError::io(shown, e))),
                    }
                    match this.open_child(part) {
                        Ok(fd) => fd,
                        Err(e) => return Err(this.fail(BeneathError::io(shown, e))),
                    }
                }
                Err(e) => return Err(this.fail(BeneathError::io(shown, e))),
            };
            this.dir = Some(next);
        }
        Ok(this)
    }

    fn open_child(&self, part: &OsStr) -> std::result::Result<OwnedFd, Errno> {
        openat2_retrying(
            self.dir(),
            Path::new(part),
            DIR_FLAGS,
            Mode::empty(),
            STRICT,
        )
    }

    fn dir(&self) -> BorrowedFd<'_> {
        self.dir
            .as_ref()
            .map_or(self.root.fd.as_fd(), |fd| fd.as_fd())
    }

    /// The write succeeded: the folders it made stay.
    fn keep(mut self) {
        self.made.clear();
    }

    /// Removes the (empty) folders this write made, innermost first, and
    /// passes `error` on.
    fn fail(mut self, error: BeneathError) -> BeneathError {
        self.dir = None;
        while let Some((parent, name)) = self.made.pop() {
            let at = parent
                .as_ref()
                .map_or(self.root.fd.as_fd(), |fd| fd.as_fd());
            let _ = rustix::fs::unlinkat(at, OsStr::from_bytes(&name), AtFlags::REMOVEDIR);
        }
        error
    }
}

/// A temporary file in a folder handle; removed when dropped unless renamed.
struct TempFile<'d> {
    dir: BorrowedFd<'d>,
    name: String,
    file: Option<std::fs::File>,
    renamed: bool,
}

impl<'d> TempFile<'d> {
    fn create(dir: BorrowedFd<'d>, mode: Option<Mode>) -> std::result::Result<Self, Errno> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let flags = OFlags::WRONLY
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::CLOEXEC
            | OFlags::NOCTTY;
        // A new file gets the usual mode (the umask applies); a replaced
        // one its predecessor's, set below once the file is ours.
        let create_mode = Mode::from_raw_mode(0o666);
        let mut last = Errno::EXIST;
        for _ in 0..RACE_RETRIES {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let name = format!("{TEMP_PREFIX}{}-{n}-{nanos:08x}", std::process::id());
            match rustix::fs::openat(dir, name.as_str(), flags, create_mode) {
                Ok(fd) => {
                    let this = Self {
                        dir,
                        name,
                        file: Some(std::fs::File::from(fd)),
                        renamed: false,
                    };
                    if let (Some(mode), Some(file)) = (mode, &this.file) {
                        rustix::fs::fchmod(file, mode)?;
                    }
                    return Ok(this);
                }
                Err(Errno::EXIST) => last = Errno::EXIST,
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn fill(&self, bytes: &[u8]) -> io::Result<()> {
        let mut file = self
            .file
            .as_ref()
            .ok_or_else(|| io::Error::other("closed"))?;
        // No fsync: see the module's note on durability.
        file.write_all(bytes)
    }

    fn renamed(mut self) {
        self.renamed = true;
    }
}

impl Drop for TempFile<'_> {
    fn drop(&mut self) {
        self.file = None;
        if !self.renamed {
            let _ = rustix::fs::unlinkat(self.dir, self.name.as_str(), AtFlags::empty());
        }
    }
}

/// `rel` as plain names (no root, no `..`); `.` parts are dropped.
fn plain<'a>(rel: &'a Path, shown: &Path) -> Result<Vec<&'a OsStr>> {
    let mut parts = Vec::new();
    for component in rel.components() {
        match component {
            Component::Normal(name) => parts.push(name),
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) | Component::ParentDir => {
                return Err(BeneathError::Io {
                    path: shown.to_path_buf(),
                    source: io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "not a plain path beneath its root",
                    ),
                });
            }
        }
    }
    Ok(parts)
}

fn rel_or_dot(parts: &[&OsStr]) -> PathBuf {
    if parts.is_empty() {
        PathBuf::from(".")
    } else {
        parts.iter().collect()
    }
}

/// `openat2`, asked again when the kernel aborted the lookup because a
/// rename raced with it (`EAGAIN`, which `RESOLVE_BENEATH` reports so that
/// a `..` can never be fooled); a bounded number of times.
fn openat2_retrying(
    dir: BorrowedFd<'_>,
    path: &Path,
    flags: OFlags,
    mode: Mode,
    resolve: ResolveFlags,
) -> std::result::Result<OwnedFd, Errno> {
    let mut result = Err(Errno::AGAIN);
    for _ in 0..RACE_RETRIES {
        result = rustix::fs::openat2(dir, path, flags, mode, resolve);
        if !matches!(result, Err(Errno::AGAIN)) {
            break;
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::{PermissionsExt, symlink};

    use super::*;

    /// Temporary files of a replacement anywhere below `dir`.
    pub(crate) fn leftovers(dir: &Path) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
                    found.push(path.clone());
                }
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(path);
                }
            }
        }
        found
    }

    #[test]
    fn a_file_is_created_with_its_folders_and_replaced_keeping_its_mode() {
        let tmp = tempfile::tempdir().unwrap();
        let root_path = tmp.path().canonicalize().unwrap();
        let root = Root::open(&root_path).unwrap();
        let done = root.replace(Path::new("a/b/c.txt"), b"one").unwrap();
        assert!(done.created);
        assert_eq!(fs::read(root_path.join("a/b/c.txt")).unwrap(), b"one");
        fs::set_permissions(
            root_path.join("a/b/c.txt"),
            fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let done = root.replace(Path::new("./a/b/c.txt"), b"two").unwrap();
        assert!(!done.created);
        let meta = fs::metadata(root_path.join("a/b/c.txt")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o755);
        assert_eq!(
            root.read(Path::new("a/b/c.txt"), 100).unwrap().unwrap(),
            b"two"
        );
        assert_eq!(root.read(Path::new("a/b/c.txt"), 2).unwrap(), Err(3));
        assert!(leftovers(&root_path).is_empty());
    }

    #[test]
    fn links_anywhere_on_the_way_are_refused_and_nothing_is_left() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let work = base.join("work");
        let victim = base.join("victim");
        fs::create_dir_all(&work).unwrap();
        fs::create_dir_all(&victim).unwrap();
        fs::write(victim.join(".bashrc"), "safe").unwrap();
        symlink(&victim, work.join("dir")).unwrap();
        symlink(victim.join(".bashrc"), work.join("rc")).unwrap();
        let root = Root::open(&work).unwrap();
        for rel in ["dir/.bashrc", "dir/new/x.txt", "rc"] {
            let e = root.replace(Path::new(rel), b"evil").unwrap_err();
            assert!(matches!(e, BeneathError::LinkAppeared(_)), "{rel}: {e}");
        }
        let e = root.read(Path::new("dir/.bashrc"), 100).unwrap_err();
        assert!(matches!(e, BeneathError::LinkAppeared(_)), "{e}");
        assert!(root.replace(Path::new("../victim/.bashrc"), b"x").is_err());
        assert_eq!(fs::read_to_string(victim.join(".bashrc")).unwrap(), "safe");
        assert!(leftovers(&base).is_empty());
        // The root itself must not be a link either.
        symlink(&victim, base.join("root-link")).unwrap();
        assert!(matches!(
            Root::open(&base.join("root-link")),
            Err(BeneathError::LinkAppeared(_))
        ));
    }

    #[test]
    fn a_failed_write_removes_the_folders_it_made() {
        let tmp = tempfile::tempdir().unwrap();
        let root_path = tmp.path().canonicalize().unwrap();
        fs::create_dir_all(root_path.join("a/target")).unwrap();
        let root = Root::open(&root_path).unwrap();
        // The name is a folder: refused after the parents were opened.
        let e = root.replace(Path::new("a/target"), b"x").unwrap_err();
        assert!(matches!(e, BeneathError::IsDirectory(_)), "{e}");
        // The folders are made, then the name is refused (too long): the
        // folders made for it go again.
        let long = "x".repeat(300);
        let e = root
            .replace(&Path::new("new1/new2").join(&long), b"x")
            .unwrap_err();
        assert!(matches!(e, BeneathError::Io { .. }), "{e}");
        assert!(!root_path.join("new1").exists());
        // A `..` is never taken.
        assert!(root.replace(Path::new("b/../x"), b"x").is_err());
        assert!(leftovers(&root_path).is_empty());
    }
}
