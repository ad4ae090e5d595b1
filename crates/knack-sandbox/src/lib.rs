//! The command sandbox: a [`SandboxPolicy`] (which folders a command may write, which stay
//! read-only, whether it may use the network) applied to a child process before it runs.
//!
//! On Linux the child restricts itself with Landlock just before `exec`: it may read the whole
//! file system but write only beneath its writable roots, make no TCP connections unless the
//! policy allows them, and signal no process outside its own sandbox. Folders that must stay
//! read-only although they lie beneath a writable root (knack's home under `/tmp`, a project's
//! `.knack/`) are made read-only with a private mount namespace when the process may create one,
//! or else carved out of the writable root (see [`ReadOnlyMethod`]). No other crate knows how
//! any of this works: callers hand over a `Command` and a policy.

use std::path::{Path, PathBuf};

#[cfg(target_os = "linux")]
mod linux;

/// What a sandboxed command may do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// Folders the command may create, change and delete files beneath.
    /// Empty means the whole file system is read-only.
    pub writable_roots: Vec<PathBuf>,
    /// Folders that stay read-only even where they lie beneath a writable root.
    pub read_only: Vec<PathBuf>,
    /// Files whose contents the command must not read (secrets). They are
    /// replaced by an empty file inside the sandbox where a mount namespace is
    /// available; elsewhere they stay readable and callers redact their values.
    pub hidden_files: Vec<PathBuf>,
    /// Whether the command may open network connections.
    pub network: bool,
}

/// What this machine's kernel lets the sandbox enforce. Probed once per process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// Landlock file-system rules (Linux 5.13+): the sandbox exists at all.
    pub filesystem: bool,
    /// Landlock TCP rules (Linux 6.7+): network can be switched off.
    pub network: bool,
    /// Landlock signal scoping (Linux 6.12+): no signals to processes outside.
    pub signals: bool,
    /// A private mount namespace can be made (root, or a kernel that allows
    /// it): read-only folders beneath writable roots and hidden files.
    pub mount_namespace: bool,
}

impl Support {
    /// One line for `knack doctor` and the logs.
    pub fn describe(&self) -> String {
        if !self.filesystem {
            return "unavailable: this kernel has no Landlock (Linux 5.13 or newer with \
                    Landlock enabled is needed); commands cannot be confined"
                .to_owned();
        }
        let mut parts = vec!["Landlock file-system rules"];
        if self.network {
            parts.push("TCP network rules");
        }
        if self.signals {
            parts.push("signal scoping");
        }
        if self.mount_namespace {
            parts.push("mount namespaces");
        }
        parts.join(", ")
    }
}

/// The kernel's sandbox features, probed on first use and then cached.
pub fn support() -> Support {
    #[cfg(target_os = "linux")]
    {
        linux::support()
    }
    #[cfg(not(target_os = "linux"))]
    {
        Support {
            filesystem: false,
            network: false,
            signals: false,
            mount_namespace: false,
        }
    }
}

/// How the read-only folders beneath writable roots were protected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOnlyMethod {
    /// No read-only folder lies beneath a writable root: nothing to do.
    NotNeeded,
    /// A private mount namespace in which those folders are mounted read-only.
    MountNamespace,
    /// Without a mount namespace, the writable roots that contain a read-only
    /// folder were narrowed to their other entries: new files cannot be made
    /// directly inside the listed folders.
    NarrowedRoots(Vec<PathBuf>),
}

/// What [`confine`] put in place for one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    pub network_blocked: bool,
    pub signals_scoped: bool,
    pub read_only: ReadOnlyMethod,
    /// Files replaced by an empty file for this command.
    pub hidden_files: Vec<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no sandbox is available here: {0}")]
    Unavailable(String),
    #[error("the sandbox could not be set up: {0}")]
    Setup(String),
}

pub type Result<T> = std::result::Result<T, Error>;

/// Prepares `command` so that the child it spawns runs under `policy`.
/// Nothing happens to the current process; the restrictions are taken on in
/// the child between `fork` and `exec`.
pub fn confine(command: &mut std::process::Command, policy: &SandboxPolicy) -> Result<Confinement> {
    #[cfg(target_os = "linux")]
    {
        linux::confine(command, policy)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (command, policy);
        Err(Error::Unavailable(support().describe()))
    }
}

/// Makes the child of `command` the leader of a new session and process group,
/// detached from the user's terminal. Use it instead of `process_group(0)`
/// (the two cannot be combined); the group id is the child's pid.
pub fn new_session(command: &mut std::process::Command) {
    #[cfg(target_os = "linux")]
    linux::new_session(command);
    #[cfg(not(target_os = "linux"))]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
}

/// `path` with symlinks resolved, as far as it exists: each component is
/// resolved on disk while it exists; past the first missing one the rest is
/// taken as written, and a `..` there undoes the missing component before it
/// (a folder that does not exist cannot be a link). Rules must be checked on
/// this form, never on the path as written: `a/link/../b` is not `a/b`, and
/// `new/../../x` must not pass as a path beneath `a`.
pub fn resolve_existing_prefix(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    let mut missing = false;
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
                // Back on resolved ground once the missing part is undone.
                if missing && let Ok(real) = out.canonicalize() {
                    out = real;
                    missing = false;
                }
            }
            Component::Normal(name) => {
                out.push(name);
                if !missing {
                    match out.canonicalize() {
                        Ok(real) => out = real,
                        Err(_) => missing = true,
                    }
                }
            }
        }
    }
    out
}

/// Whether `path` is `root` or lies beneath it (both already resolved).
pub fn is_beneath(path: &Path, root: &Path) -> bool {
    path.starts_with(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tail_is_kept_after_resolving_links() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        let resolved = resolve_existing_prefix(&dir.path().join("link/new/file.txt"));
        assert_eq!(
            resolved,
            real.canonicalize().unwrap().join("new").join("file.txt")
        );
    }

    #[test]
    fn dot_dot_after_a_missing_folder_is_resolved_not_left_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(real.join("work")).unwrap();
        std::fs::create_dir_all(real.join("home")).unwrap();
        let resolved = resolve_existing_prefix(&real.join("work/new/../../home/config.yaml"));
        assert_eq!(resolved, real.join("home/config.yaml"));
        assert!(!is_beneath(&resolved, &real.join("work")));
        // A link reached after a missing folder is undone is followed too.
        std::os::unix::fs::symlink(real.join("home"), real.join("work/link")).unwrap();
        let resolved = resolve_existing_prefix(&real.join("work/new/../link/x"));
        assert_eq!(resolved, real.join("home/x"));
        // A path that is missing throughout its tail keeps that tail.
        let resolved = resolve_existing_prefix(&real.join("work/a/b/../c.txt"));
        assert_eq!(resolved, real.join("work/a/c.txt"));
    }

    #[test]
    fn dot_dot_after_a_link_follows_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a/deep");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir(dir.path().join("b")).unwrap();
        std::os::unix::fs::symlink(&a, dir.path().join("b/link")).unwrap();
        // Lexically b/link/../x is b/x; on disk it is a/x.
        let resolved = resolve_existing_prefix(&dir.path().join("b/link/../x"));
        assert_eq!(
            resolved,
            dir.path().canonicalize().unwrap().join("a").join("x")
        );
    }
}
