//! Files and folders beneath a skills root, opened relative to folder handles
//! (`openat2` with `RESOLVE_BENEATH`), so no link, even one swapped in mid-way, leads out.
//!
//! Two rules: writes never pass through any link beneath the root
//! (`RESOLVE_NO_SYMLINKS`); reads may follow a link that stays beneath the
//! root, and refuse one that leaves it. The root itself may be a link the user
//! configured: it is resolved once, when it is opened.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, RenameFlags, ResolveFlags};
use rustix::io::Errno;

/// Set once `openat2` turns out to be missing (a kernel before 5.6, or a
/// filter that hides it); from then on paths are walked one part at a time.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// Flags of a folder opened to be listed, read from or written into.
pub(crate) const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC);

/// How links beneath a base folder are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Links {
    /// No link at all, on the way or at the end (every write).
    Never,
    /// Links whose target stays beneath the base are followed (reads).
    Inside,
}

/// A folder opened once, with its real path; what lies beneath is opened
/// relative to its handle, never by a path looked up again.
#[derive(Debug)]
pub(crate) struct Base {
    /// The folder's real path (no links), for messages and containment checks.
    pub real: PathBuf,
    pub fd: OwnedFd,
}

impl Base {
    /// Opens `path`, following links: a configured root may itself be a link,
    /// and this is the one place it is resolved.
    pub fn open(path: &Path) -> io::Result<Self> {
        let fd = rustix::fs::open(path, DIR_FLAGS, Mode::empty())?;
        let real = std::fs::canonicalize(path)?;
        // The path could have been re-pointed between the two look-ups; the
        // handle is what is used, so its real path must be the one recorded.
        let st = rustix::fs::fstat(&fd)?;
        let at_real = rustix::fs::stat(&real)?;
        if (st.st_dev, st.st_ino) != (at_real.st_dev, at_real.st_ino) {
            return Err(io::Error::other(format!(
                "{} changed while it was being opened",
                path.display()
            )));
        }
        Ok(Self { real, fd })
    }

    /// Opens the folder `rel` beneath this one without following any link.
    pub fn open_dir(&self, rel: &str) -> io::Result<Base> {
        let fd = open(
            self.fd.as_fd(),
            &self.real,
            Path::new(rel),
            DIR_FLAGS,
            Links::Never,
        )?;
        Ok(Base {
            real: join_rel(&self.real, rel),
            fd,
        })
    }
}

/// `base` joined with a `/`-separated relative path (empty: `base` itself).
pub(crate) fn join_rel(base: &Path, rel: &str) -> PathBuf {
    if rel.is_empty() {
        base.to_path_buf()
    } else {
        base.join(rel)
    }
}

/// Whether an error means a link was met where none may be followed
/// (`ELOOP`), or a path led out of its base (`EXDEV`).
pub(crate) fn is_link_refusal(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(code) if code == Errno::LOOP.raw_os_error() || code == Errno::XDEV.raw_os_error()
    )
}

fn leaves_base() -> io::Error {
    Errno::XDEV.into()
}

/// Opens `rel` (plain parts only) beneath the folder `dir`, whose real path
/// is `dir_real`, with `flags`. An empty `rel` opens `dir` itself again.
pub(crate) fn open(
    dir: BorrowedFd<'_>,
    dir_real: &Path,
    rel: &Path,
    flags: OFlags,
    links: Links,
) -> io::Result<OwnedFd> {
    if rel
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("'{}' is not a plain relative path", rel.display()),
        ));
    }
    let rel_or_dot = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    let flags = flags | OFlags::CLOEXEC;
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        let resolve = match links {
            Links::Never => {
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS
            }
            Links::Inside => ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
        };
        match rustix::fs::openat2(dir, rel_or_dot, flags, Mode::empty(), resolve) {
            Ok(fd) => return Ok(fd),
            Err(Errno::NOSYS) => NO_OPENAT2.store(true, Ordering::Relaxed),
            // A link written with an absolute target is refused by
            // RESOLVE_BENEATH even when it stays inside; the slow path decides.
            Err(Errno::XDEV) if links == Links::Inside => {}
            // The kernel restarts a lookup a rename raced with; ask again, the slow way.
            Err(Errno::AGAIN) => {}
            Err(e) => return Err(e.into()),
        }
    }
    match links {
        Links::Never => open_part_by_part(dir, rel, flags),
        Links::Inside => {
            // Resolve by path, check the result stays inside, then open the
            // resolved path without following anything: a link swapped in
            // after the check makes the open fail, never leave.
            let real = std::fs::canonicalize(dir_real.join(rel))?;
            let inside = real.strip_prefix(dir_real).map_err(|_| leaves_base())?;
            open_part_by_part(dir, inside, flags)
        }
    }
}

/// The fallback of `open` with `Links::Never`: one `openat` per part, each
/// with `O_NOFOLLOW`, each relative to the folder the previous one opened.
fn open_part_by_part(dir: BorrowedFd<'_>, rel: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    let parts: Vec<&OsStr> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(p) => Some(p),
            _ => None,
        })
        .collect();
    let Some((last, folders)) = parts.split_last() else {
        return Ok(rustix::fs::openat(dir, ".", flags, Mode::empty())?);
    };
    let mut cur: Option<OwnedFd> = None;
    for part in folders {
        let at = cur.as_ref().map_or(dir, |fd| fd.as_fd());
        let next = openat_nofollow(
            at,
            part,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        )?;
        cur = Some(next);
    }
    let at = cur.as_ref().map_or(dir, |fd| fd.as_fd());
    openat_nofollow(at, last, flags | OFlags::NOFOLLOW)
}

/// `openat` with `O_NOFOLLOW` in `flags`. With `O_DIRECTORY` too, the
/// kernel answers a link with `ENOTDIR`; that is reported as the link it is
/// (`ELOOP`), so every link refusal looks the same to callers.
fn openat_nofollow(
    dir: BorrowedFd<'_>,
    name: impl AsRef<OsStr>,
    flags: OFlags,
) -> io::Result<OwnedFd> {
    let name = name.as_ref();
    match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => Ok(fd),
        Err(Errno::NOTDIR)
            if rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink) =>
        {
            Err(Errno::LOOP.into())
        }
        Err(e) => Err(e.into()),
    }
}

/// What is at `name` in `dir`, without following a link there.
pub(crate) fn kind_at(dir: BorrowedFd<'_>, name: &str) -> io::Result<FileType> {
    let st = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
    Ok(FileType::from_raw_mode(st.st_mode))
}

/// Reads the regular file `name` in `dir` whole; a link there is refused.
pub(crate) fn read_file_at(dir: BorrowedFd<'_>, name: &str) -> io::Result<Vec<u8>> {
    let fd = rustix::fs::openat(
        dir,
        name,
        // Non-blocking, so a FIFO put there is refused below, not waited on.
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )?;
    let mut file = File::from(fd);
    if !file.metadata()?.is_file() {
        return Err(io::Error::other(format!("{name} is not a regular file")));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Opens (creating when missing) each folder of `parts` below `dir`, never
/// through a link. Returns the last folder and, when some were created, the
/// topmost new one as (its parent, its name), so a failure can remove exactly
/// what was added.
pub(crate) fn create_dirs_at(
    dir: BorrowedFd<'_>,
    parts: &[&str],
) -> io::Result<(OwnedFd, Option<(OwnedFd, String)>)> {
    let mut cur = rustix::fs::openat(dir, ".", DIR_FLAGS, Mode::empty())?;
    let mut top: Option<(OwnedFd, String)> = None;
    for part in parts {
        let open_part =
            |at: &OwnedFd| openat_nofollow(at.as_fd(), part, DIR_FLAGS | OFlags::NOFOLLOW);
        let next = match open_part(&cur) {
            Ok(fd) => fd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                match rustix::fs::mkdirat(&cur, *part, Mode::from_raw_mode(0o755)) {
                    Ok(()) => {
                        rustix::fs::fsync(&cur)?;
                        if top.is_none() {
                            top = Some((cur.try_clone()?, (*part).to_owned()));
                        }
                    }
                    // Another writer made it first; it is opened like any other.
                    Err(Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                open_part(&cur)?
            }
            Err(e) => return Err(e),
        };
        cur = next;
    }
    Ok((cur, top))
}

/// Removes `name` in `dir`: a folder with everything in it, anything else
/// (a link included, which is removed, never followed) on its own.
pub(crate) fn remove_tree_at(dir: BorrowedFd<'_>, name: &str) -> io::Result<()> {
    match kind_at(dir, name)? {
        FileType::Directory => {
            let fd = rustix::fs::openat(dir, name, DIR_FLAGS | OFlags::NOFOLLOW, Mode::empty())?;
            for child in entries(&fd)? {
                remove_tree_at(fd.as_fd(), &child)?;
            }
            rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?;
        }
        _ => rustix::fs::unlinkat(dir, name, AtFlags::empty())?,
    }
    Ok(())
}

/// The names in the folder `dir` (not `.` and `..`), unsorted.
pub(crate) fn entries(dir: &impl AsFd) -> io::Result<Vec<String>> {
    let mut out = Vec::new();
    for entry in Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            out.push(String::from_utf8_lossy(name).into_owned());
        }
    }
    Ok(out)
}

/// The names in `dir` with their types (as listed, links not followed).
fn typed_entries(dir: &impl AsFd) -> io::Result<Vec<(Vec<u8>, FileType)>> {
    let mut out = Vec::new();
    for entry in Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            out.push((name.to_vec(), entry.file_type()));
        }
    }
    Ok(out)
}

/// Copies the regular files and folders of `from` into `to` (both open
/// folders); links are not followed (a skill's links are not its content).
/// Every copied file and folder is on disk before this returns.
pub(crate) fn copy_tree_at(from: BorrowedFd<'_>, to: BorrowedFd<'_>) -> io::Result<()> {
    for (name, listed) in typed_entries(&from)? {
        let name = OsStr::from_bytes(&name);
        let kind = match listed {
            FileType::Unknown => {
                let st = rustix::fs::statat(from, name, AtFlags::SYMLINK_NOFOLLOW)?;
                FileType::from_raw_mode(st.st_mode)
            }
            kind => kind,
        };
        match kind {
            FileType::Directory => {
                let src =
                    rustix::fs::openat(from, name, DIR_FLAGS | OFlags::NOFOLLOW, Mode::empty())?;
                match rustix::fs::mkdirat(to, name, Mode::from_raw_mode(0o755)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                let dst =
                    rustix::fs::openat(to, name, DIR_FLAGS | OFlags::NOFOLLOW, Mode::empty())?;
                copy_tree_at(src.as_fd(), dst.as_fd())?;
            }
            FileType::RegularFile => {
                let src = rustix::fs::openat(
                    from,
                    name,
                    OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )?;
                let mut src = File::from(src);
                let mode = src.metadata().map(|m| {
                    use std::os::unix::fs::PermissionsExt;
                    m.permissions().mode() & 0o7777
                })?;
                let dst = rustix::fs::openat(
                    to,
                    name,
                    OFlags::WRONLY
                        | OFlags::CREATE
                        | OFlags::TRUNC
                        | OFlags::NOFOLLOW
                        | OFlags::CLOEXEC,
                    Mode::from_raw_mode(mode),
                )?;
                let mut dst = File::from(dst);
                io::copy(&mut src, &mut dst)?;
                dst.flush()?;
                dst.sync_all()?;
            }
            _ => {}
        }
    }
    rustix::fs::fsync(to)?;
    Ok(())
}

/// Renames `from` to `to`, both in `dir`, refusing to replace anything
/// already at `to`.
pub(crate) fn rename_noreplace(dir: BorrowedFd<'_>, from: &str, to: &str) -> io::Result<()> {
    match rustix::fs::renameat_with(dir, from, dir, to, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(()),
        // File systems without the flag: check, then rename (the caller holds the lock).
        Err(Errno::INVAL) => match kind_at(dir, to) {
            Ok(_) => Err(Errno::EXIST.into()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Ok(rustix::fs::renameat(dir, from, dir, to)?)
            }
            Err(e) => Err(e),
        },
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::symlink;

    use super::*;

    fn tree() -> (tempfile::TempDir, Base) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/b/f.md"), "inside").unwrap();
        fs::create_dir_all(tmp.path().join("out")).unwrap();
        fs::write(tmp.path().join("out/secret"), "secret").unwrap();
        symlink(tmp.path().join("out"), root.join("a/leave")).unwrap();
        symlink(root.join("a/b"), root.join("a/stay-abs")).unwrap();
        symlink("b", root.join("a/stay-rel")).unwrap();
        let base = Base::open(&root).unwrap();
        (tmp, base)
    }

    fn read(base: &Base, rel: &str, links: Links) -> io::Result<String> {
        let fd = open(
            base.fd.as_fd(),
            &base.real,
            Path::new(rel),
            OFlags::RDONLY,
            links,
        )?;
        let mut text = String::new();
        File::from(fd).read_to_string(&mut text)?;
        Ok(text)
    }

    fn both_ways(check: impl Fn()) {
        check();
        NO_OPENAT2.store(true, Ordering::Relaxed);
        check();
        NO_OPENAT2.store(false, Ordering::Relaxed);
    }

    #[test]
    fn reads_follow_links_that_stay_and_refuse_links_that_leave() {
        let (_tmp, base) = tree();
        both_ways(|| {
            assert_eq!(read(&base, "a/b/f.md", Links::Never).unwrap(), "inside");
            assert_eq!(
                read(&base, "a/stay-rel/f.md", Links::Inside).unwrap(),
                "inside"
            );
            assert_eq!(
                read(&base, "a/stay-abs/f.md", Links::Inside).unwrap(),
                "inside"
            );
            let e = read(&base, "a/leave/secret", Links::Inside).unwrap_err();
            assert!(is_link_refusal(&e), "{e}");
            for rel in ["a/stay-rel/f.md", "a/stay-abs/f.md", "a/leave/secret"] {
                let e = read(&base, rel, Links::Never).unwrap_err();
                assert!(is_link_refusal(&e), "{rel}: {e}");
            }
            assert!(read(&base, "../root/a/b/f.md", Links::Inside).is_err());
        });
    }

    #[test]
    fn folders_are_created_beneath_and_never_through_links() {
        let (tmp, base) = tree();
        let (_, top) = create_dirs_at(base.fd.as_fd(), &["a", "new", "deeper"]).unwrap();
        assert_eq!(top.unwrap().1, "new");
        assert!(base.real.join("a/new/deeper").is_dir());
        let e = create_dirs_at(base.fd.as_fd(), &["a", "leave", "x"]).unwrap_err();
        assert!(is_link_refusal(&e), "{e}");
        assert!(!tmp.path().join("out/x").exists());
    }

    #[test]
    fn removing_a_tree_removes_links_not_their_targets() {
        let (tmp, base) = tree();
        remove_tree_at(base.fd.as_fd(), "a").unwrap();
        assert!(!base.real.join("a").exists());
        assert_eq!(
            fs::read_to_string(tmp.path().join("out/secret")).unwrap(),
            "secret"
        );
    }

    #[test]
    fn copies_skip_links() {
        let (tmp, base) = tree();
        let dest = tmp.path().join("copy");
        fs::create_dir_all(&dest).unwrap();
        let dest_fd = Base::open(&dest).unwrap();
        let a = base.open_dir("a").unwrap();
        copy_tree_at(a.fd.as_fd(), dest_fd.fd.as_fd()).unwrap();
        assert_eq!(fs::read_to_string(dest.join("b/f.md")).unwrap(), "inside");
        assert!(!dest.join("leave").exists() && !dest.join("stay-rel").exists());
    }
}
