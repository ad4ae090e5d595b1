//! The command sandbox: a [`SandboxPolicy`] (which folders a command may write, which stay
//! read-only, which files it may not read, what sockets and how many processes it may use)
//! applied to a child process before it runs, and [`run`], the one way knack starts,
//! waits for, kills and collects the output of a command it runs for the model.
//!
//! On Linux every sandboxed command gets its own user, mount and PID namespace: the whole file
//! system is mounted read-only except the writable roots, protected paths inside them are
//! mounted read-only again (or masked when they are links or do not exist yet), knack's key
//! files read empty, `/proc` shows only the command's own processes, and the command's
//! processes all die with it. Landlock (file system, TCP, signals, abstract sockets) and a
//! seccomp filter (socket families, io_uring) are a second layer inside. Where the kernel
//! refuses user namespaces, the documented fallback narrows the Landlock roots instead (see
//! [`Method`]). No other crate knows how any of this works: callers hand over a `Command`
//! and a policy.

use std::path::{Path, PathBuf};

#[cfg(target_os = "linux")]
mod linux;
mod run;

pub use run::{CappedOutput, Ending, Finished, RunLimits, StopHandle, run, run_split};

/// The environment variable that forces the fallback method even where namespaces work.
/// A testing and diagnostic switch: only this crate reads it.
pub const FORCE_FALLBACK_ENV: &str = "KNACK_SANDBOX_FORCE_FALLBACK";

/// What a sandboxed command may do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// Folders the command may create, change and delete files beneath.
    /// Empty means the whole file system is read-only; `/` means all of it is writable.
    pub writable_roots: Vec<PathBuf>,
    /// Paths (folders or files) that stay read-only even where they lie beneath a writable
    /// root. One that is a symlink is pinned where it is, one that does not exist yet is
    /// masked so that it cannot be created (with namespaces; see [`Method`]). A `.git` file
    /// also protects the git folder its `gitdir:` line names.
    pub read_only: Vec<PathBuf>,
    /// Files whose contents the command must not read (secrets): they read empty.
    pub hidden_files: Vec<PathBuf>,
    /// Whether the command may use IP networking (TCP, UDP).
    pub network: bool,
    /// Paths of Unix sockets the command may connect to. Empty (the default) means no Unix
    /// socket can be opened at all (pairs from `socketpair` still work).
    pub unix_sockets: Vec<PathBuf>,
    /// No socket or io_uring restriction at all: for commands the user let out of the
    /// sandbox, which keep only the file-system carve-outs and the process lifetime.
    pub unrestricted_sockets: bool,
    /// Most processes (threads count) the command may have at once; `None` for no limit.
    pub max_processes: Option<u32>,
}

impl SandboxPolicy {
    /// The policy for a command the user let out of the sandbox: the whole file system is
    /// writable and the network open, but `protected` (knack's home, project skill roots)
    /// stays read-only, and the command's processes still end with it.
    pub fn outside(protected: Vec<PathBuf>) -> Self {
        Self {
            writable_roots: vec![PathBuf::from("/")],
            read_only: protected,
            hidden_files: Vec::new(),
            network: true,
            unix_sockets: Vec::new(),
            unrestricted_sockets: true,
            max_processes: None,
        }
    }
}

/// How the sandbox keeps protected paths beneath writable roots read-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// User, mount and PID namespaces (with Landlock and seccomp inside): the full sandbox.
    Namespaces,
    /// The kernel refuses user namespaces (or the fallback was forced): Landlock roots are
    /// narrowed around protected paths that exist, without following links; no read-only
    /// mounts, no masks, no private `/proc`, no process-lifetime guarantee.
    Narrowing,
}

impl Method {
    /// A name for logs and `knack doctor`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Namespaces => "namespaces",
            Self::Narrowing => "narrowing",
        }
    }
}

/// How the per-command process limit is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PidsLimit {
    /// `RLIMIT_NPROC`, counted inside the command's own user namespace.
    RlimitInUserNamespace,
    /// A `pids` cgroup per command (root, whom `RLIMIT_NPROC` exempts): in the cgroup-v1
    /// `pids` hierarchy, or beneath knack's own cgroup v2 ([`pids_limit_detail`] says which).
    Cgroup,
    /// No limit: root where no pids cgroup can be made ([`pids_limit_detail`] says why), or
    /// no user namespace to count in.
    Unavailable,
}

impl PidsLimit {
    pub fn name(self) -> &'static str {
        match self {
            Self::RlimitInUserNamespace => "rlimit-nproc in the user namespace",
            Self::Cgroup => "pids cgroup",
            Self::Unavailable => "none",
        }
    }
}

/// What this machine's kernel lets the sandbox enforce. Probed once per process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// Landlock file-system rules (Linux 5.13+).
    pub filesystem: bool,
    /// The Landlock ABI version the kernel reports (0: none).
    pub landlock_abi: i32,
    /// Landlock TCP rules (Linux 6.7+): network can be switched off.
    pub network: bool,
    /// Landlock signal scoping (Linux 6.12+): no signals to processes outside.
    pub signals: bool,
    /// Landlock abstract Unix socket scoping (Linux 6.12+).
    pub abstract_sockets: bool,
    /// Landlock rules for connecting to Unix socket paths (ABI 9): the socket allowlist
    /// is enforced path by path.
    pub unix_socket_paths: bool,
    /// User, mount and PID namespaces can be made (the [`Method::Namespaces`] method).
    pub mount_namespace: bool,
    /// seccomp filters can be installed.
    pub seccomp: bool,
    /// The method in use.
    pub method: Method,
    /// The method was forced to the fallback by [`FORCE_FALLBACK_ENV`].
    pub forced_fallback: bool,
    /// How a policy's `max_processes` is enforced.
    pub pids_limit: PidsLimit,
}

impl Support {
    /// The sandbox confines commands at all.
    pub fn active(&self) -> bool {
        self.filesystem || self.method == Method::Namespaces
    }

    /// Why commands are less confined here than the full sandbox would confine them, when
    /// they are: a missing layer, for a notice and for asking before every command.
    pub fn degraded_reason(&self) -> Option<String> {
        let mut missing = Vec::new();
        if self.method != Method::Namespaces {
            missing.push(if self.forced_fallback {
                format!("namespaces are switched off by {FORCE_FALLBACK_ENV}")
            } else {
                "this kernel refuses user namespaces (see docs/security.md, \"Fallback\")"
                    .to_owned()
            });
        }
        if !self.filesystem {
            missing.push("this kernel has no Landlock (Linux 5.13 or newer is needed)".to_owned());
        }
        (!missing.is_empty()).then(|| missing.join("; "))
    }

    /// One line for `knack doctor` and the logs.
    pub fn describe(&self) -> String {
        if !self.active() {
            return "unavailable: this kernel has neither user namespaces nor Landlock \
                    (Linux 5.13 or newer is needed); commands cannot be confined"
                .to_owned();
        }
        let mut parts = Vec::new();
        if self.method == Method::Namespaces {
            parts.push("user, mount and PID namespaces".to_owned());
        } else {
            parts.push("fallback: narrowed Landlock roots".to_owned());
        }
        if self.filesystem {
            parts.push(format!("Landlock ABI {}", self.landlock_abi));
        }
        if self.network {
            parts.push("TCP rules".to_owned());
        }
        if self.signals {
            parts.push("signal scoping".to_owned());
        }
        if self.abstract_sockets {
            parts.push("abstract socket scoping".to_owned());
        }
        if self.seccomp {
            parts.push("seccomp socket filter".to_owned());
        }
        parts.join(", ")
    }
}

/// Where the process limit lives, or why there is none, for `knack doctor`: the cgroup
/// hierarchy in use (root), or the reason root gets no limit here. `None` where the limit
/// is counted in the user namespace (nothing to add).
pub fn pids_limit_detail() -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        linux::pids_limit_detail(&support())
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
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
            landlock_abi: 0,
            network: false,
            signals: false,
            abstract_sockets: false,
            unix_socket_paths: false,
            mount_namespace: false,
            seccomp: false,
            method: Method::Narrowing,
            forced_fallback: false,
            pids_limit: PidsLimit::Unavailable,
        }
    }
}

/// How the read-only paths beneath writable roots were protected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOnlyMethod {
    /// No read-only path lies beneath a writable root: nothing to do.
    NotNeeded,
    /// A private mount namespace in which those paths are mounted read-only (and missing or
    /// linked ones masked).
    MountNamespace,
    /// Without namespaces, the writable roots that contain a protected path were narrowed
    /// to their other entries: new entries cannot be made directly inside the listed
    /// folders, and links among the entries are never made roots.
    NarrowedRoots(Vec<PathBuf>),
}

/// What [`confine`] put in place for one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    pub method: Method,
    pub network_blocked: bool,
    pub signals_scoped: bool,
    pub read_only: ReadOnlyMethod,
    /// Files that read empty for this command.
    pub hidden_files: Vec<PathBuf>,
    /// Protected paths that did not exist and were masked for this command.
    pub masked: Vec<PathBuf>,
    /// The process limit in force, if any.
    pub max_processes: Option<u32>,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no sandbox is available here: {0}")]
    Unavailable(String),
    #[error("the sandbox could not be set up: {0}")]
    Setup(String),
    #[error("the command could not be started: {0}")]
    Spawn(std::io::Error),
}

pub type Result<T> = std::result::Result<T, Error>;

/// Prepares `command` so that the child it spawns runs under `policy`. Nothing happens to
/// the current process; the restrictions are taken on in the child between `fork` and
/// `exec`. The child also starts a session of its own (no controlling terminal; its pid is
/// the process group to kill).
///
/// With namespaces, the child is a small supervisor that dies with the thread that spawned
/// it (`PR_SET_PDEATHSIG`): spawn from a thread that outlives the command, as [`run`] does.
/// Placeholders made to mask missing protected paths are removed when the returned guard
/// is dropped, which must happen after the command ended.
pub fn confine(command: &mut std::process::Command, policy: &SandboxPolicy) -> Result<Confinement> {
    confine_guarded(command, policy).map(|(confinement, guard)| {
        // Callers of the plain API keep no guard: the placeholders stay until the process
        // that made them ends its last command using them, or are reused by the next one.
        guard.keep();
        confinement
    })
}

/// [`confine`], returning the guard that removes this command's mask placeholders when
/// dropped (after the command ended).
pub fn confine_guarded(
    command: &mut std::process::Command,
    policy: &SandboxPolicy,
) -> Result<(Confinement, MaskGuard)> {
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

/// Removes the placeholders a command's masks needed, once no other command uses them.
#[derive(Debug, Default)]
pub struct MaskGuard {
    #[cfg(target_os = "linux")]
    placeholders: Vec<linux::Placeholder>,
    /// The command's pids cgroup (root), removed with the guard.
    #[cfg(target_os = "linux")]
    cgroup: Option<linux::PidsCgroup>,
}

impl MaskGuard {
    /// Leaves the placeholders in place (their locks are released with this process).
    fn keep(mut self) {
        #[cfg(target_os = "linux")]
        {
            for placeholder in self.placeholders.drain(..) {
                placeholder.forget();
            }
            // The command has not even started: its cgroup stays until a later command
            // of this process finds it empty.
            std::mem::forget(self.cgroup.take());
        }
    }
}

impl Drop for MaskGuard {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        for placeholder in self.placeholders.drain(..) {
            placeholder.release();
        }
    }
}

/// Makes the child of `command` the leader of a new session and process group,
/// detached from the user's terminal. [`confine`] already does this; kept for callers
/// that start a command without a sandbox.
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

/// `path` with its parent resolved through links but its last component kept as it is:
/// the place a protected entry occupies, whether it is a link, a file or missing.
pub fn resolve_parent(path: &Path) -> PathBuf {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => resolve_existing_prefix(parent).join(name),
        _ => resolve_existing_prefix(path),
    }
}

/// Whether the entry at `path` is a placeholder the sandbox put there for a running
/// command, to mask a protected path that did not exist (an empty `.git` folder, say): it
/// is not the user's, and is gone when the command ends. Code that asks "is there a
/// repository here" must not take it for one.
pub fn is_mask(path: &Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        linux::is_mask(path)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        false
    }
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

    #[test]
    fn resolve_parent_keeps_a_link_as_the_last_component() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        std::os::unix::fs::symlink("/", real.join("link")).unwrap();
        assert_eq!(resolve_parent(&real.join("link")), real.join("link"));
    }
}
