//! Linux: Landlock rules built in the parent, then taken on by the child after `fork` (with a
//! private mount namespace first when read-only folders or hidden files need one).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope,
};
use rustix::mount::{MountFlags, MountPropagationFlags};
use rustix::thread::{CapabilitySet, UnshareFlags};

use crate::{Confinement, Error, ReadOnlyMethod, Result, SandboxPolicy, Support};

/// The newest ABI whose rights we ask for; older kernels get what they have
/// (best effort), and [`support`] says which parts are enforced.
const TARGET_ABI: ABI = ABI::V6;

/// Device files every shell expects to write. Not `/dev/tty`: commands run in
/// a session of their own, without the user's terminal (see [`new_session`]).
const WRITABLE_DEVICES: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];

/// Capabilities a root command inside the sandbox never needs and could use to
/// step around it (reboot, modules, raw devices, mounts, clocks, tracing).
/// `SETPCAP` goes last: dropping the others needs it.
const DROPPED_CAPABILITIES: [CapabilitySet; 12] = [
    CapabilitySet::SYS_BOOT,
    CapabilitySet::SYS_MODULE,
    CapabilitySet::SYS_RAWIO,
    CapabilitySet::SYS_ADMIN,
    CapabilitySet::SYS_TIME,
    CapabilitySet::SYS_PTRACE,
    CapabilitySet::NET_ADMIN,
    CapabilitySet::MKNOD,
    CapabilitySet::LINUX_IMMUTABLE,
    CapabilitySet::SETFCAP,
    CapabilitySet::AUDIT_CONTROL,
    CapabilitySet::SETPCAP,
];

pub(crate) fn support() -> Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    *SUPPORT.get_or_init(|| {
        let support = Support {
            filesystem: hard_ruleset(|r| r.handle_access(AccessFs::from_all(ABI::V1))),
            network: hard_ruleset(|r| r.handle_access(AccessNet::from_all(ABI::V4))),
            signals: hard_ruleset(|r| r.scope(Scope::from_all(ABI::V6))),
            mount_namespace: probe_mount_namespace(),
        };
        tracing::debug!(sandbox = %support.describe(), "sandbox support probed");
        support
    })
}

/// Whether the kernel accepts a ruleset that strictly requires `handled`.
fn hard_ruleset(
    handled: impl FnOnce(Ruleset) -> std::result::Result<Ruleset, landlock::RulesetError>,
) -> bool {
    handled(Ruleset::default().set_compatibility(CompatLevel::HardRequirement))
        .and_then(Ruleset::create)
        .is_ok()
}

/// A child that only unshares its mount namespace and exits tells us whether
/// the real thing will work (root usually may; an unprivileged user may not).
fn probe_mount_namespace() -> bool {
    if !rustix::process::geteuid().is_root() {
        return false;
    }
    let mut probe = std::process::Command::new("true");
    probe
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    with_pre_exec(&mut probe, || {
        new_mount_namespace().map_err(std::io::Error::from)
    });
    probe.status().is_ok_and(|status| status.success())
}

pub(crate) fn confine(
    command: &mut std::process::Command,
    policy: &SandboxPolicy,
) -> Result<Confinement> {
    let support = support();
    if !support.filesystem {
        return Err(Error::Unavailable(support.describe()));
    }
    let writable: Vec<PathBuf> = policy
        .writable_roots
        .iter()
        .filter_map(|root| root.canonicalize().ok())
        .collect();
    let read_only: Vec<PathBuf> = policy
        .read_only
        .iter()
        .filter_map(|dir| dir.canonicalize().ok())
        .filter(|dir| writable.iter().any(|root| dir.starts_with(root)))
        .collect();
    let hidden: Vec<PathBuf> = if support.mount_namespace {
        policy
            .hidden_files
            .iter()
            .filter_map(|file| file.canonicalize().ok())
            .filter(|file| file.is_file())
            .collect()
    } else {
        Vec::new()
    };

    let (writable, read_only_method, mounts) = if read_only.is_empty() && hidden.is_empty() {
        (writable, ReadOnlyMethod::NotNeeded, None)
    } else if support.mount_namespace {
        let plan = MountPlan::new(&read_only, &hidden)?;
        let method = if read_only.is_empty() {
            ReadOnlyMethod::NotNeeded
        } else {
            ReadOnlyMethod::MountNamespace
        };
        (writable, method, Some(plan))
    } else {
        let (narrowed, closed) = narrow_roots(&writable, &read_only);
        (narrowed, ReadOnlyMethod::NarrowedRoots(closed), None)
    };

    let ruleset = build_ruleset(&writable, policy.network, support)?;
    let network_filter = if policy.network {
        None
    } else {
        Some(network_filter()?)
    };
    let mut ruleset = Some(ruleset);
    with_pre_exec(command, move || {
        if let Some(plan) = &mounts {
            plan.apply().map_err(std::io::Error::from)?;
        }
        drop_capabilities();
        if let Some(filter) = &network_filter {
            seccompiler::apply_filter(filter).map_err(|_| std::io::Error::last_os_error())?;
        }
        if let Some(ruleset) = ruleset.take() {
            // The errno of the failed call, without allocating after fork.
            ruleset
                .restrict_self()
                .map_err(|_| std::io::Error::last_os_error())?;
        }
        Ok(())
    });
    Ok(Confinement {
        network_blocked: !policy.network,
        signals_scoped: support.signals,
        read_only: read_only_method,
        hidden_files: hidden,
    })
}

/// A seccomp filter for what Landlock's TCP rules leave open: no IPv4, IPv6 or
/// packet sockets at all (so no UDP, no DNS tunnel, no raw packets), and no
/// io_uring, which could open sockets without the `socket` call. Unix sockets
/// stay usable (many tools talk to local daemons through them).
fn network_filter() -> Result<seccompiler::BpfProgram> {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };
    let setup = |e: seccompiler::BackendError| Error::Setup(format!("network filter: {e}"));
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(setup)?;
    let domain_rule = |domain: i32| {
        SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            u64::from(domain.unsigned_abs()),
        )
        .and_then(|condition| SeccompRule::new(vec![condition]))
    };
    let socket_rules = [libc::AF_INET, libc::AF_INET6, libc::AF_PACKET]
        .into_iter()
        .map(domain_rule)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(setup)?;
    let rules = std::collections::BTreeMap::from([
        (libc::SYS_socket, socket_rules),
        // An empty rule list matches every call.
        (libc::SYS_io_uring_setup, Vec::new()),
    ]);
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES.unsigned_abs()),
        arch,
    )
    .map_err(setup)?;
    seccompiler::BpfProgram::try_from(filter)
        .map_err(|e| Error::Setup(format!("network filter: {e}")))
}

/// Read everywhere, write beneath `writable` and on a few device files, TCP
/// only when `network`, signals only inside the sandbox.
fn build_ruleset(writable: &[PathBuf], network: bool, support: Support) -> Result<RulesetCreated> {
    let setup = |e: landlock::RulesetError| Error::Setup(e.to_string());
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(TARGET_ABI))
        .map_err(setup)?;
    if !network && support.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(TARGET_ABI))
            .map_err(setup)?;
    }
    if support.signals {
        ruleset = ruleset.scope(Scope::Signal).map_err(setup)?;
    }
    let mut created = ruleset.create().map_err(setup)?;
    created = created
        .add_rule(PathBeneath::new(
            open_path(Path::new("/"))?,
            AccessFs::from_read(TARGET_ABI),
        ))
        .map_err(setup)?;
    for device in WRITABLE_DEVICES {
        // A machine without a controlling terminal has no usable /dev/tty.
        if let Ok(fd) = PathFd::new(device) {
            created = created
                .add_rule(PathBeneath::new(fd, AccessFs::from_file(TARGET_ABI)))
                .map_err(setup)?;
        }
    }
    for root in writable {
        created = created
            .add_rule(PathBeneath::new(
                open_path(root)?,
                AccessFs::from_all(TARGET_ABI),
            ))
            .map_err(setup)?;
    }
    Ok(created)
}

fn open_path(path: &Path) -> Result<PathFd> {
    PathFd::new(path).map_err(|e| Error::Setup(format!("cannot open {}: {e}", path.display())))
}

/// Without a mount namespace, a writable root that contains a read-only folder
/// is replaced by its entries along the way there, except the ones leading to
/// the protected folder. Returns the new roots and the folders that lost the
/// right to have entries created directly in them.
fn narrow_roots(writable: &[PathBuf], read_only: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut roots: Vec<PathBuf> = writable.to_vec();
    let mut closed = Vec::new();
    // The roots containing a protected folder, one at a time, until none does.
    let containing = |roots: &[PathBuf]| {
        roots.iter().enumerate().find_map(|(i, root)| {
            read_only
                .iter()
                .find(|dir| dir.starts_with(root))
                .map(|dir| (i, dir.clone()))
        })
    };
    while let Some((index, protected)) = containing(&roots) {
        let root = roots.swap_remove(index);
        if root == protected {
            continue;
        }
        // The entry of `root` on the way to `protected`.
        let next = protected
            .strip_prefix(&root)
            .ok()
            .and_then(|rest| rest.components().next())
            .map(|first| root.join(first));
        if let Ok(entries) = std::fs::read_dir(&root) {
            for entry in entries.flatten() {
                let path = entry.path();
                if Some(&path) == next.as_ref() {
                    if path != protected && path.is_dir() && !entry.path_is_symlink() {
                        roots.push(path);
                    }
                } else {
                    roots.push(path);
                }
            }
        }
        closed.push(root);
    }
    roots.sort();
    roots.dedup();
    closed.sort();
    (roots, closed)
}

trait PathIsSymlink {
    fn path_is_symlink(&self) -> bool;
}

impl PathIsSymlink for std::fs::DirEntry {
    fn path_is_symlink(&self) -> bool {
        self.file_type().is_ok_and(|t| t.is_symlink())
    }
}

/// The mounts a child makes in its own namespace, as C strings prepared before
/// `fork` (nothing may allocate between `fork` and `exec`).
struct MountPlan {
    read_only: Vec<(CString, MountFlags)>,
    hidden: Vec<CString>,
}

impl MountPlan {
    fn new(read_only: &[PathBuf], hidden: &[PathBuf]) -> Result<Self> {
        let c_path = |path: &Path| {
            CString::new(path.as_os_str().as_bytes())
                .map_err(|_| Error::Setup(format!("{} has a NUL byte", path.display())))
        };
        let mut plan = Self {
            read_only: Vec::new(),
            hidden: Vec::new(),
        };
        for dir in read_only {
            plan.read_only.push((c_path(dir)?, kept_mount_flags(dir)));
        }
        for file in hidden {
            plan.hidden.push(c_path(file)?);
        }
        Ok(plan)
    }

    /// Runs in the child: a private copy of the mount table, read-only binds
    /// over the protected folders, `/dev/null` over the hidden files.
    fn apply(&self) -> rustix::io::Result<()> {
        new_mount_namespace()?;
        for (dir, kept) in &self.read_only {
            rustix::mount::mount_bind_recursive(dir.as_c_str(), dir.as_c_str())?;
            rustix::mount::mount_remount(
                dir.as_c_str(),
                MountFlags::BIND | MountFlags::RDONLY | *kept,
                c"",
            )?;
        }
        for file in &self.hidden {
            rustix::mount::mount_bind(c"/dev/null", file.as_c_str())?;
        }
        Ok(())
    }
}

/// A new mount namespace whose changes never propagate back to the host's.
fn new_mount_namespace() -> rustix::io::Result<()> {
    // SAFETY: NEWNS unshares only the mount table, not the file descriptor
    // table that `unshare_unsafe` warns about; this runs in a freshly forked
    // single-threaded child.
    #[allow(unsafe_code)]
    unsafe {
        rustix::thread::unshare_unsafe(UnshareFlags::NEWNS)?;
    }
    rustix::mount::mount_change(
        c"/",
        MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
    )
}

/// A read-only remount must keep the flags the original mount has (nosuid,
/// nodev, noexec), or the kernel refuses it in some namespaces.
fn kept_mount_flags(dir: &Path) -> MountFlags {
    let Ok(stat) = rustix::fs::statvfs(dir) else {
        return MountFlags::empty();
    };
    let mut kept = MountFlags::empty();
    let flags = stat.f_flag;
    if flags.contains(rustix::fs::StatVfsMountFlags::NOSUID) {
        kept |= MountFlags::NOSUID;
    }
    if flags.contains(rustix::fs::StatVfsMountFlags::NODEV) {
        kept |= MountFlags::NODEV;
    }
    if flags.contains(rustix::fs::StatVfsMountFlags::NOEXEC) {
        kept |= MountFlags::NOEXEC;
    }
    kept
}

/// Best effort: without the capability to drop capabilities (not root) there
/// is nothing to drop.
fn drop_capabilities() {
    for capability in DROPPED_CAPABILITIES {
        let _ = rustix::thread::remove_capability_from_bounding_set(capability);
    }
}

/// Starts the child in a new session: its own process group (whose id is the
/// child's pid, so the whole group can be killed) and no controlling terminal,
/// so it can neither read the user's keystrokes from `/dev/tty` nor push
/// input into the terminal.
pub(crate) fn new_session(command: &mut std::process::Command) {
    with_pre_exec(command, || {
        rustix::process::setsid()
            .map(|_| ())
            .map_err(std::io::Error::from)
    });
}

fn with_pre_exec(
    command: &mut std::process::Command,
    hook: impl FnMut() -> std::io::Result<()> + Send + Sync + 'static,
) {
    // SAFETY: the hook runs between fork and exec. Everything it touches was
    // allocated before the fork (paths as C strings, the Landlock ruleset's
    // descriptor); it makes system calls only (unshare, mount, prctl,
    // landlock_restrict_self) and allocates nothing on success.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(hook);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrowing_opens_every_sibling_on_the_way_but_not_the_protected_folder() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for sub in ["project/src", "project/.knack/skills", "other"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        std::fs::write(root.join("project/README.md"), "x").unwrap();
        let protected = root.join("project/.knack");
        let (roots, closed) = narrow_roots(
            std::slice::from_ref(&root),
            std::slice::from_ref(&protected),
        );
        assert_eq!(
            roots,
            vec![
                root.join("other"),
                root.join("project/README.md"),
                root.join("project/src")
            ]
        );
        assert_eq!(closed, vec![root.clone(), root.join("project")]);
        assert!(roots.iter().all(|r| !r.starts_with(&protected)));
    }
}
