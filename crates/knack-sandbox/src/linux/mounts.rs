//! The file-system view of a namespaced command: planned in the parent (paths resolved, links
//! and missing protected paths found, placeholders made), applied in the child before `exec`.
//!
//! Order of the view: every mount read-only, writable roots read-write again, then, shallow
//! first, folders on the way to a protected path pinned (a mount point cannot be renamed or
//! removed, so no parent can be swapped away), protected paths bound read-only, links among
//! them covered by an empty device, missing ones masked by a read-only placeholder, and
//! hidden files covered by `/dev/null`.

use std::ffi::CString;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags};
use rustix::mount::{MountPropagationFlags, MoveMountFlags, OpenTreeFlags};

use crate::{Error, Result, SandboxPolicy, resolve_existing_prefix};

/// The mode that marks a placeholder: an empty regular file only its owner may read.
/// Nobody keeps an empty file of this mode at a protected path by accident.
const PLACEHOLDER_MODE: u32 = 0o400;

/// The mode that marks a folder placeholder: only its owner may list it, nobody may add to
/// it. It is removed only while empty, so a real folder is never taken away.
const PLACEHOLDER_DIR_MODE: u32 = 0o500;

/// What a missing protected entry is masked with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    File,
    Folder,
}

impl Shape {
    /// A missing `.git` is masked by an empty folder, everything else by an empty file. Git
    /// looks for a repository from the working folder upwards and passes over a `.git`
    /// folder that is not a repository, but stops with an error at a `.git` file it cannot
    /// read: with a folder, git keeps working in a subfolder of a repository (and outside
    /// any), while nothing can be created in the mask.
    fn for_entry(path: &Path) -> Self {
        if path.file_name().is_some_and(|name| name == ".git") {
            Self::Folder
        } else {
            Self::File
        }
    }

    fn open_flags(self) -> OFlags {
        let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
        match self {
            Self::File => flags,
            Self::Folder => flags | OFlags::DIRECTORY,
        }
    }

    /// Makes the placeholder and opens it; `EEXIST` when something is there already.
    fn create(self, path: &Path) -> rustix::io::Result<OwnedFd> {
        match self {
            Self::File => rustix::fs::open(
                path,
                OFlags::CREATE | OFlags::EXCL | self.open_flags(),
                Mode::from_raw_mode(PLACEHOLDER_MODE),
            ),
            Self::Folder => {
                rustix::fs::mkdir(path, Mode::from_raw_mode(PLACEHOLDER_DIR_MODE))?;
                // Another command may remove its (shared) placeholder in between; the
                // caller's next round sees that as NOENT and starts again.
                rustix::fs::open(path, self.open_flags(), Mode::empty())
            }
        }
    }
}

/// What happens at one path, in the order these are applied at equal depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// Read-write again (a writable root inside the read-only tree).
    Writable,
    /// A mount point of the same folder, so it cannot be renamed or removed.
    Pin,
    /// Read-only, the tree beneath included.
    ReadOnly,
    /// A link covered by an empty device: it cannot be re-pointed or replaced.
    CoverLink,
    /// A file covered by `/dev/null`: it reads empty.
    Hide,
}

#[derive(Debug)]
struct Op {
    kind: Kind,
    path: CString,
    depth: usize,
}

/// Everything the child does to its mount namespace, prepared before `fork` (nothing may
/// allocate between `fork` and `exec`).
#[derive(Debug)]
pub(crate) struct MountPlan {
    /// `/` is a writable root: nothing is made read-only wholesale.
    root_writable: bool,
    ops: Vec<Op>,
    /// Paths of protected entries that were missing and are masked.
    pub(crate) masked: Vec<PathBuf>,
    pub(crate) hidden: Vec<PathBuf>,
    pub(crate) placeholders: Vec<Placeholder>,
}

fn c_path(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error::Setup(format!("{} has a NUL byte", path.display())))
}

impl MountPlan {
    /// `writable` are the policy's writable roots, resolved.
    pub(crate) fn new(writable: &[PathBuf], policy: &SandboxPolicy) -> Result<Self> {
        let root_writable = writable.iter().any(|root| root == Path::new("/"));
        let mut planner = Planner {
            writable,
            ops: Vec::new(),
            masked: Vec::new(),
            placeholders: Vec::new(),
        };
        for root in writable {
            if !root_writable {
                planner.push(Kind::Writable, root);
            }
        }
        for path in &policy.read_only {
            planner.protect(path, 0)?;
        }
        let mut hidden = Vec::new();
        for file in &policy.hidden_files {
            // Through links: the file the name leads to is the one that must read empty.
            if let Ok(real) = file.canonicalize()
                && real.is_file()
            {
                planner.push(Kind::Hide, &real);
                hidden.push(real);
            }
        }
        let Planner {
            ops,
            masked,
            placeholders,
            ..
        } = planner;
        let mut ops = ops
            .into_iter()
            .map(|(kind, path)| {
                Ok(Op {
                    kind,
                    depth: path.components().count(),
                    path: c_path(&path)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        // Shallow first, so a bind never hides one made before it; at one path the
        // strongest kind wins.
        ops.sort_by(|a, b| (a.depth, &a.path, a.kind).cmp(&(b.depth, &b.path, b.kind)));
        ops.dedup_by(|later, earlier| {
            if later.path == earlier.path {
                earlier.kind = earlier.kind.max(later.kind);
                true
            } else {
                false
            }
        });
        Ok(Self {
            root_writable,
            ops,
            masked,
            hidden,
            placeholders,
        })
    }

    /// Whether anything beneath a writable root is kept read-only or masked.
    pub(crate) fn protects_anything(&self) -> bool {
        self.ops
            .iter()
            .any(|op| matches!(op.kind, Kind::ReadOnly | Kind::CoverLink))
    }

    /// Runs in the child, inside its new user and mount namespaces.
    pub(crate) fn apply(&self) -> rustix::io::Result<()> {
        rustix::mount::mount_change(
            c"/",
            MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
        )?;
        if !self.root_writable {
            set_read_only(c"/", true, true)?;
        }
        for op in &self.ops {
            let path = op.path.as_c_str();
            match op.kind {
                Kind::Writable => {
                    rustix::mount::mount_bind_recursive(path, path)?;
                    // Mounts beneath that came in read-only from the host stay so (the
                    // kernel refuses to lift a lock it inherited).
                    if set_read_only(path, false, true).is_err() {
                        set_read_only(path, false, false)?;
                    }
                }
                Kind::Pin => rustix::mount::mount_bind_recursive(path, path)?,
                Kind::ReadOnly => {
                    rustix::mount::mount_bind_recursive(path, path)?;
                    set_read_only(path, true, true)?;
                }
                Kind::CoverLink => {
                    let tree = rustix::mount::open_tree(
                        rustix::fs::CWD,
                        c"/dev/null",
                        OpenTreeFlags::OPEN_TREE_CLONE | OpenTreeFlags::OPEN_TREE_CLOEXEC,
                    )?;
                    // Without MOVE_MOUNT_T_SYMLINKS the target link itself is the mount
                    // point, not what it points to.
                    rustix::mount::move_mount(
                        tree.as_fd(),
                        c"",
                        rustix::fs::CWD,
                        path,
                        MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH,
                    )?;
                }
                Kind::Hide => {
                    rustix::mount::mount_bind(c"/dev/null", path)?;
                    set_read_only(path, true, false)?;
                }
            }
        }
        Ok(())
    }
}

/// `mount_setattr(2)`: sets (or clears) the read-only flag of the mount at `path`, and of
/// every mount beneath it when `recursive`. Unlike a remount it keeps every other flag.
fn set_read_only(
    path: &std::ffi::CStr,
    read_only: bool,
    recursive: bool,
) -> rustix::io::Result<()> {
    let attr = libc::mount_attr {
        attr_set: if read_only {
            libc::MOUNT_ATTR_RDONLY
        } else {
            0
        },
        attr_clr: if read_only {
            0
        } else {
            libc::MOUNT_ATTR_RDONLY
        },
        propagation: 0,
        userns_fd: 0,
    };
    let flags = if recursive { libc::AT_RECURSIVE } else { 0 };
    // SAFETY: a plain system call; `path` is a valid C string and `attr` a valid
    // `mount_attr` whose size is passed with it; nothing is allocated.
    #[allow(unsafe_code)]
    let ret = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags,
            &raw const attr,
            size_of::<libc::mount_attr>(),
        )
    };
    if ret == 0 {
        Ok(())
    } else {
        Err(
            rustix::io::Errno::from_io_error(&std::io::Error::last_os_error())
                .unwrap_or(rustix::io::Errno::INVAL),
        )
    }
}

struct Planner<'a> {
    writable: &'a [PathBuf],
    ops: Vec<(Kind, PathBuf)>,
    masked: Vec<PathBuf>,
    placeholders: Vec<Placeholder>,
}

impl Planner<'_> {
    fn push(&mut self, kind: Kind, path: &Path) {
        self.ops.push((kind, path.to_path_buf()));
    }

    /// Strictly beneath a writable root (a root is a mount point already).
    fn inside_writable(&self, path: &Path) -> bool {
        self.writable
            .iter()
            .any(|root| path.starts_with(root) && path != root)
    }

    fn writable_or_inside(&self, path: &Path) -> bool {
        self.writable.iter().any(|root| path.starts_with(root))
    }

    /// Walks `path` from `/` as the host will walk it: links on the way are covered and
    /// followed, folders pinned, the entry itself made read-only or masked.
    fn protect(&mut self, path: &Path, depth: usize) -> Result<()> {
        // A chain of links longer than this is a loop the kernel would refuse anyway.
        if depth > 8 || !path.is_absolute() {
            return Ok(());
        }
        let parts: Vec<_> = path
            .components()
            .filter(|c| matches!(c, std::path::Component::Normal(_)))
            .collect();
        let mut current = PathBuf::from("/");
        for (index, part) in parts.iter().enumerate() {
            let last = index + 1 == parts.len();
            let next = current.join(part);
            match std::fs::symlink_metadata(&next) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    if self.writable_or_inside(&next) {
                        self.push(Kind::CoverLink, &next);
                    }
                    // The rest of the path goes where the link leads.
                    let mut target = resolve_existing_prefix(&next);
                    for rest in &parts[index + 1..] {
                        target.push(rest);
                    }
                    return self.protect(&target, depth + 1);
                }
                Ok(meta) => {
                    if last {
                        if self.writable_or_inside(&next) {
                            self.push(Kind::ReadOnly, &next);
                        }
                        if meta.is_file() && next.file_name().is_some_and(|n| n == ".git") {
                            self.protect_git_file(&next, depth)?;
                        }
                    } else if self.inside_writable(&next) {
                        self.push(Kind::Pin, &next);
                    }
                    current = next;
                }
                Err(_) => {
                    // Where this user may not create the entry, the command (the same
                    // user, with no more rights over the host's files) cannot either:
                    // nothing to mask.
                    if self.inside_writable(&next)
                        && let Some(placeholder) = Placeholder::take(&next)?
                    {
                        self.placeholders.push(placeholder);
                        self.push(Kind::ReadOnly, &next);
                        self.masked.push(path.to_path_buf());
                    }
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    fn protect_git_file(&mut self, file: &Path, depth: usize) -> Result<()> {
        for dir in git_dirs(file) {
            self.protect(&dir, depth + 1)?;
        }
        Ok(())
    }
}

/// A `.git` file names the real git folder (a worktree's or a submodule's), which holds the
/// hooks and config; a worktree's folder names the shared one in `commondir`.
pub(crate) fn git_dirs(file: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Some(base) = file.parent() else {
        return out;
    };
    let Ok(text) = std::fs::read_to_string(file) else {
        return out;
    };
    let Some(target) = text
        .lines()
        .find_map(|line| line.strip_prefix("gitdir:"))
        .map(str::trim)
    else {
        return out;
    };
    let gitdir = resolve_existing_prefix(&base.join(target));
    if let Ok(common) = std::fs::read_to_string(gitdir.join("commondir")) {
        out.push(resolve_existing_prefix(&gitdir.join(common.trim())));
    }
    out.insert(0, gitdir);
    out
}

/// An empty read-only file made on the host where a protected path does not exist yet, so
/// the command's namespace can mount over it. It is shared (a shared `flock`) by every
/// command that masks the same path, in this process or another, and removed by the last
/// one to finish.
#[derive(Debug)]
pub(crate) struct Placeholder {
    path: PathBuf,
    lock: Option<OwnedFd>,
    ino: u64,
    dev: u64,
    shape: Shape,
    /// Made by (or shared with) this user; another user's is never removed by us.
    ours: bool,
}

impl Placeholder {
    /// `None` when this user may not create an entry there at all.
    fn take(path: &Path) -> Result<Option<Self>> {
        let shape = Shape::for_entry(path);
        let setup = |e: std::io::Error| {
            Error::Setup(format!(
                "cannot mask the protected path {}: {e}",
                path.display()
            ))
        };
        // A few rounds: another process may remove its placeholder between our look and
        // our lock.
        for _ in 0..8 {
            let fd = match shape.create(path) {
                Ok(fd) => fd,
                Err(rustix::io::Errno::NOENT) if shape == Shape::Folder => continue,
                Err(rustix::io::Errno::EXIST) => {
                    match rustix::fs::open(path, shape.open_flags(), Mode::empty()) {
                        Ok(fd) => fd,
                        Err(rustix::io::Errno::NOENT) => continue,
                        // Another user's placeholder (in a shared folder such as /tmp):
                        // mount over it all the same, but it is theirs to remove.
                        Err(rustix::io::Errno::ACCESS) => match rustix::fs::lstat(path) {
                            Ok(stat) if is_placeholder(&stat, shape) => {
                                return Ok(Some(Self {
                                    path: path.to_path_buf(),
                                    lock: None,
                                    ino: stat.st_ino,
                                    dev: stat.st_dev,
                                    shape,
                                    ours: false,
                                }));
                            }
                            _ => {
                                return Err(setup(std::io::Error::from_raw_os_error(libc::EACCES)));
                            }
                        },
                        Err(e) => return Err(setup(e.into())),
                    }
                }
                Err(
                    rustix::io::Errno::ACCESS | rustix::io::Errno::PERM | rustix::io::Errno::ROFS,
                ) => {
                    return Ok(None);
                }
                Err(e) => return Err(setup(e.into())),
            };
            rustix::fs::flock(&fd, FlockOperation::LockShared).map_err(|e| setup(e.into()))?;
            let stat = rustix::fs::fstat(&fd).map_err(|e| setup(e.into()))?;
            if !is_placeholder(&stat, shape) {
                return Err(setup(std::io::Error::other(
                    "something else appeared there while the sandbox was being set up",
                )));
            }
            // Still the file at that path (not one removed between our open and our lock)?
            match std::fs::symlink_metadata(path) {
                Ok(meta) if meta.ino() == stat.st_ino && meta.dev() == stat.st_dev => {
                    return Ok(Some(Self {
                        path: path.to_path_buf(),
                        lock: Some(fd),
                        ino: stat.st_ino,
                        dev: stat.st_dev,
                        shape,
                        ours: true,
                    }));
                }
                _ => continue,
            }
        }
        Err(setup(std::io::Error::other("it kept changing")))
    }

    /// Gives up this command's share; removes the file when no other command holds one.
    pub(crate) fn release(mut self) {
        drop(self.lock.take());
        if !self.ours {
            return;
        }
        let Ok(fd) = rustix::fs::open(&self.path, self.shape.open_flags(), Mode::empty()) else {
            return;
        };
        if rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive).is_err() {
            return; // another command still masks this path; it removes the file
        }
        let same = rustix::fs::fstat(&fd).is_ok_and(|s| {
            s.st_ino == self.ino && s.st_dev == self.dev && is_placeholder(&s, self.shape)
        });
        // A folder goes only while empty (`rmdir` refuses anything else).
        let flags = match self.shape {
            Shape::File => AtFlags::empty(),
            Shape::Folder => AtFlags::REMOVEDIR,
        };
        if same && let Err(e) = rustix::fs::unlinkat(rustix::fs::CWD, &self.path, flags) {
            tracing::debug!("removing the placeholder {}: {e}", self.path.display());
        }
    }

    /// Keeps the file but gives up the share: for callers that cannot say when their
    /// command ends. A later command that masks the same path reuses and removes it.
    pub(crate) fn forget(mut self) {
        drop(self.lock.take());
    }
}

/// Whether `path` is a placeholder of the shape its name gets (see [`crate::is_mask`]).
pub(crate) fn is_mask(path: &Path) -> bool {
    rustix::fs::lstat(path).is_ok_and(|stat| is_placeholder(&stat, Shape::for_entry(path)))
}

fn is_placeholder(stat: &rustix::fs::Stat, shape: Shape) -> bool {
    let mode = stat.st_mode;
    match shape {
        Shape::File => {
            (mode & libc::S_IFMT) == libc::S_IFREG
                && (mode & 0o7777) == PLACEHOLDER_MODE
                && stat.st_size == 0
        }
        Shape::Folder => {
            (mode & libc::S_IFMT) == libc::S_IFDIR && (mode & 0o7777) == PLACEHOLDER_DIR_MODE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(read_only: Vec<PathBuf>) -> SandboxPolicy {
        SandboxPolicy {
            read_only,
            ..SandboxPolicy::default()
        }
    }

    fn kinds(plan: &MountPlan) -> Vec<(Kind, String)> {
        plan.ops
            .iter()
            .map(|op| (op.kind, op.path.to_string_lossy().into_owned()))
            .collect()
    }

    #[test]
    fn folders_on_the_way_are_pinned_and_the_entry_made_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b/home")).unwrap();
        let plan = MountPlan::new(
            std::slice::from_ref(&root),
            &policy(vec![root.join("a/b/home")]),
        )
        .unwrap();
        let s = |p: &str| root.join(p).display().to_string();
        assert_eq!(
            kinds(&plan),
            vec![
                (Kind::Writable, root.display().to_string()),
                (Kind::Pin, s("a")),
                (Kind::Pin, s("a/b")),
                (Kind::ReadOnly, s("a/b/home")),
            ]
        );
    }

    #[test]
    fn a_link_is_covered_and_its_target_protected_and_a_missing_entry_masked() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("real")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join(".knack")).unwrap();
        let plan = MountPlan::new(
            std::slice::from_ref(&root),
            &policy(vec![root.join(".knack"), root.join(".agents")]),
        )
        .unwrap();
        let s = |p: &str| root.join(p).display().to_string();
        let got = kinds(&plan);
        assert!(got.contains(&(Kind::CoverLink, s(".knack"))), "{got:?}");
        assert!(got.contains(&(Kind::ReadOnly, s("real"))), "{got:?}");
        assert!(got.contains(&(Kind::ReadOnly, s(".agents"))), "{got:?}");
        assert_eq!(plan.masked, vec![root.join(".agents")]);
        // The placeholder exists while the plan holds it, and goes when released.
        let meta = std::fs::symlink_metadata(root.join(".agents")).unwrap();
        assert_eq!(meta.mode() & 0o7777, PLACEHOLDER_MODE);
        for placeholder in plan.placeholders {
            placeholder.release();
        }
        assert!(!root.join(".agents").exists());
    }

    #[test]
    fn a_shared_placeholder_stays_until_its_last_user_releases_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".knack");
        let first = Placeholder::take(&path).unwrap().unwrap();
        let second = Placeholder::take(&path).unwrap().unwrap();
        first.release();
        assert!(path.exists(), "removed while another command used it");
        second.release();
        assert!(!path.exists());
    }

    #[test]
    fn a_missing_git_is_masked_by_an_empty_folder_removed_only_while_empty() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let plan = MountPlan::new(
            std::slice::from_ref(&root),
            &policy(vec![root.join(".git")]),
        )
        .unwrap();
        assert_eq!(plan.masked, vec![root.join(".git")]);
        assert!(kinds(&plan).contains(&(Kind::ReadOnly, root.join(".git").display().to_string())));
        let meta = std::fs::symlink_metadata(root.join(".git")).unwrap();
        assert!(meta.is_dir(), "git passes over an empty folder, not a file");
        assert!(is_mask(&root.join(".git")));
        assert_eq!(meta.mode() & 0o7777, PLACEHOLDER_DIR_MODE);
        // Shared like a file placeholder: the last user removes it.
        let second = Placeholder::take(&root.join(".git")).unwrap().unwrap();
        for placeholder in plan.placeholders {
            placeholder.release();
        }
        assert!(
            root.join(".git").is_dir(),
            "removed while another command used it"
        );
        second.release();
        assert!(!root.join(".git").exists());

        // Something put into the folder (by the host, never by the command) keeps it.
        let kept = Placeholder::take(&root.join(".git")).unwrap().unwrap();
        std::fs::set_permissions(
            root.join(".git"),
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        kept.release();
        assert!(root.join(".git/HEAD").is_file());
    }

    #[test]
    fn a_users_own_file_is_never_taken_for_a_placeholder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".bashrc");
        // Missing at planning time is the only way a placeholder is made; an existing
        // file of another mode is refused, not reused or removed.
        std::fs::write(&path, "").unwrap();
        assert!(Placeholder::take(&path).is_err());
        assert!(path.exists());
    }

    #[test]
    fn nothing_is_masked_where_this_user_may_not_create_the_entry() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let locked = dir.path().join("locked");
        std::fs::create_dir(&locked).unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
        let path = locked.join(".knack");
        let taken = Placeholder::take(&path).unwrap();
        // Root may create it anyway (and then must mask it); anyone else gets no mask,
        // because their commands cannot create it either.
        if rustix::process::geteuid().is_root() {
            taken.unwrap().release();
        } else {
            assert!(taken.is_none());
        }
        assert!(!path.exists());
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn a_git_file_protects_the_folder_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("main/.git/worktrees/wt")).unwrap();
        std::fs::write(root.join("main/.git/worktrees/wt/commondir"), "../..\n").unwrap();
        std::fs::create_dir_all(root.join("wt")).unwrap();
        std::fs::write(
            root.join("wt/.git"),
            format!(
                "gitdir: {}\n",
                root.join("main/.git/worktrees/wt").display()
            ),
        )
        .unwrap();
        let plan = MountPlan::new(
            std::slice::from_ref(&root),
            &policy(vec![root.join("wt/.git")]),
        )
        .unwrap();
        let s = |p: &str| root.join(p).display().to_string();
        let got = kinds(&plan);
        for expected in ["wt/.git", "main/.git/worktrees/wt", "main/.git"] {
            assert!(
                got.contains(&(Kind::ReadOnly, s(expected))),
                "{expected}: {got:?}"
            );
        }
    }
}
