//! Linux: what the kernel supports (probed once), and the plan for one command built in the
//! parent and carried out in the child between `fork` and `exec`.

mod cgroup;
mod mounts;
mod narrow;
mod rules;
mod tree;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr, Scope,
};

pub(crate) use cgroup::PidsCgroup;
pub(crate) use mounts::{Placeholder, is_mask};

use crate::{
    Confinement, Error, FORCE_FALLBACK_ENV, MaskGuard, Method, PidsLimit, ReadOnlyMethod, Result,
    SandboxPolicy, Support,
};

pub(crate) fn support() -> Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    *SUPPORT.get_or_init(|| {
        let forced_fallback = std::env::var_os(FORCE_FALLBACK_ENV).is_some_and(|v| !v.is_empty());
        let namespaces = !forced_fallback && probe_namespaces();
        let method = if namespaces {
            Method::Namespaces
        } else {
            Method::Narrowing
        };
        let support = Support {
            filesystem: hard_ruleset(|r| r.handle_access(AccessFs::from_all(ABI::V1))),
            landlock_abi: landlock_abi(),
            network: hard_ruleset(|r| r.handle_access(AccessNet::from_all(ABI::V4))),
            signals: hard_ruleset(|r| r.scope(Scope::Signal)),
            abstract_sockets: hard_ruleset(|r| r.scope(Scope::AbstractUnixSocket)),
            unix_socket_paths: hard_ruleset(|r| r.handle_access(AccessFs::ResolveUnix)),
            mount_namespace: namespaces,
            seccomp: Path::new("/proc/sys/kernel/seccomp/actions_avail").exists(),
            method,
            forced_fallback,
            pids_limit: if !namespaces {
                PidsLimit::Unavailable
            } else if !rustix::process::geteuid().is_root() {
                PidsLimit::RlimitInUserNamespace
            } else if cgroup::available() {
                PidsLimit::Cgroup
            } else {
                PidsLimit::Unavailable
            },
        };
        tracing::debug!(sandbox = %support.describe(), "sandbox support probed");
        support
    })
}

/// See [`crate::pids_limit_detail`].
pub(crate) fn pids_limit_detail(support: &Support) -> Option<String> {
    match support.pids_limit {
        PidsLimit::RlimitInUserNamespace => None,
        PidsLimit::Cgroup => cgroup::parent()
            .as_ref()
            .ok()
            .map(cgroup::PidsParent::describe),
        PidsLimit::Unavailable if support.method != Method::Namespaces => {
            Some("no user namespace to count processes in".to_owned())
        }
        PidsLimit::Unavailable => cgroup::parent().as_ref().err().cloned(),
    }
}

/// Whether the kernel accepts a ruleset that strictly requires `handled`.
fn hard_ruleset(
    handled: impl FnOnce(Ruleset) -> std::result::Result<Ruleset, landlock::RulesetError>,
) -> bool {
    handled(Ruleset::default().set_compatibility(CompatLevel::HardRequirement))
        .and_then(Ruleset::create)
        .is_ok()
}

/// The ABI version the kernel reports (0 without Landlock).
fn landlock_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag the call only
    // returns a number; it reads and writes no memory.
    #[allow(unsafe_code)]
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(version).unwrap_or(0).max(0)
}

/// Runs the whole namespace setup once in a child that exits instead of running anything:
/// the kernel's answer (user namespaces refused by a sysctl, AppArmor or a container's
/// seccomp profile, `/proc` not mountable) decides the method.
fn probe_namespaces() -> bool {
    let writable: Vec<PathBuf> = std::env::temp_dir().canonicalize().into_iter().collect();
    let Ok(mounts) = mounts::MountPlan::new(&writable, &SandboxPolicy::default()) else {
        return false;
    };
    let mut tree = tree::Tree {
        maps: tree::IdMaps::of_caller(),
        mounts,
        confines: tree::Confines {
            max_processes: None,
            filter: None,
            ruleset: None,
        },
        spawner: std::process::id().try_into().unwrap_or(0),
        cwd: None,
        cgroup_procs: None,
    };
    let mut probe = std::process::Command::new("/bin/true");
    probe
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    with_pre_exec(&mut probe, move || {
        tree.run()?;
        // The command process of the probe: everything worked; nothing to run.
        tree::exit_now(0)
    });
    match probe.status() {
        Ok(status) if status.success() => true,
        other => {
            tracing::debug!("user namespaces are not available: {other:?}");
            false
        }
    }
}

pub(crate) fn confine(
    command: &mut std::process::Command,
    policy: &SandboxPolicy,
) -> Result<(Confinement, MaskGuard)> {
    let support = support();
    if !support.active() {
        return Err(Error::Unavailable(support.describe()));
    }
    let writable: Vec<PathBuf> = policy
        .writable_roots
        .iter()
        .filter_map(|root| root.canonicalize().ok())
        .collect();
    let filter = if support.seccomp {
        rules::socket_filter(policy)?
    } else {
        None
    };
    match support.method {
        Method::Namespaces => {
            let mut mounts = mounts::MountPlan::new(&writable, policy)?;
            let ruleset = if support.filesystem {
                Some(rules::ruleset(&writable, policy, support)?)
            } else {
                None
            };
            let rlimit = policy
                .max_processes
                .filter(|_| support.pids_limit == PidsLimit::RlimitInUserNamespace);
            let cgroup = match policy.max_processes {
                Some(max) if support.pids_limit == PidsLimit::Cgroup => {
                    match cgroup::PidsCgroup::new(max) {
                        Ok(group) => Some(group),
                        Err(e) => {
                            tracing::debug!("no pids cgroup for this command: {e}");
                            None
                        }
                    }
                }
                _ => None,
            };
            let max_processes = rlimit.or(cgroup.as_ref().and(policy.max_processes));
            let confinement = Confinement {
                method: Method::Namespaces,
                network_blocked: !policy.network,
                signals_scoped: true,
                read_only: if mounts.protects_anything() {
                    ReadOnlyMethod::MountNamespace
                } else {
                    ReadOnlyMethod::NotNeeded
                },
                hidden_files: mounts.hidden.clone(),
                masked: mounts.masked.clone(),
                max_processes,
            };
            let cgroup_procs = cgroup.as_ref().map(|group| group.procs.clone());
            let guard = MaskGuard {
                placeholders: std::mem::take(&mut mounts.placeholders),
                cgroup,
            };
            let mut tree = tree::Tree {
                maps: tree::IdMaps::of_caller(),
                mounts,
                confines: tree::Confines {
                    max_processes: rlimit,
                    filter,
                    ruleset,
                },
                spawner: std::process::id().try_into().unwrap_or(0),
                cwd: working_dir(command)?,
                cgroup_procs,
            };
            with_pre_exec(command, move || tree.run());
            Ok((confinement, guard))
        }
        Method::Narrowing => {
            let protected = narrow::protected_locations(&policy.read_only);
            let (ruleset, read_only) = if narrow::needed(&writable, &protected) {
                let (roots, closed) = narrow::narrow(&writable, &protected);
                (
                    rules::narrowed_ruleset(roots, policy, support)?,
                    ReadOnlyMethod::NarrowedRoots(closed),
                )
            } else {
                (
                    rules::ruleset(&writable, policy, support)?,
                    ReadOnlyMethod::NotNeeded,
                )
            };
            let mut confines = tree::Confines {
                max_processes: None,
                filter,
                ruleset: Some(ruleset),
            };
            with_pre_exec(command, move || {
                tree::start_session();
                confines.apply()
            });
            Ok((
                Confinement {
                    method: Method::Narrowing,
                    network_blocked: !policy.network,
                    signals_scoped: support.signals,
                    read_only,
                    hidden_files: Vec::new(),
                    masked: Vec::new(),
                    max_processes: None,
                },
                MaskGuard::default(),
            ))
        }
    }
}

/// The directory the command starts in, absolute, for the child to enter again once its
/// mounts are in place.
fn working_dir(command: &std::process::Command) -> Result<Option<CString>> {
    let base = std::env::current_dir().ok();
    let dir = match (command.get_current_dir(), base) {
        (Some(dir), _) if dir.is_absolute() => Some(dir.to_path_buf()),
        (Some(dir), Some(base)) => Some(base.join(dir)),
        (None, base) => base,
        (Some(_), None) => None,
    };
    dir.map(|dir| {
        CString::new(dir.as_os_str().as_bytes())
            .map_err(|_| Error::Setup(format!("{} has a NUL byte", dir.display())))
    })
    .transpose()
}

/// Starts the child in a new session: its own process group (whose id is the child's pid,
/// so the whole group can be killed) and no controlling terminal, so it can neither read
/// the user's keystrokes from `/dev/tty` nor push input into the terminal.
pub(crate) fn new_session(command: &mut std::process::Command) {
    with_pre_exec(command, || {
        tree::start_session();
        Ok(())
    });
}

fn with_pre_exec(
    command: &mut std::process::Command,
    hook: impl FnMut() -> std::io::Result<()> + Send + Sync + 'static,
) {
    // SAFETY: the hook runs between fork and exec. Everything it touches was allocated
    // before the fork (paths as C strings, maps as bytes, the seccomp program, the Landlock
    // ruleset's descriptor); it makes system calls only and allocates nothing on success.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(hook);
    }
}
