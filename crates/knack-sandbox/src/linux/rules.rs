//! The two in-process layers every sandboxed command takes on just before `exec`: a Landlock
//! ruleset (write beneath the writable roots, TCP, signals, abstract sockets, socket paths)
//! and a seccomp filter (socket families, io_uring, the x32 system-call table).

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, Scope,
};
use rustix::fs::{Mode, OFlags};

use crate::{Error, Result, SandboxPolicy, Support};

/// The newest ABI whose rights we ask for; older kernels get what they have (best effort),
/// and [`Support`] says which parts are enforced.
const TARGET_ABI: ABI = ABI::V9;

/// Device files every shell expects to write. Not `/dev/tty`: commands run in a session of
/// their own, without the user's terminal.
const WRITABLE_DEVICES: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];

/// Read everywhere, write beneath `writable` and on a few device files, TCP only when the
/// policy allows network, signals and abstract sockets only inside the sandbox, Unix socket
/// paths only those listed (on kernels with that rule).
pub(crate) fn ruleset(
    writable: &[PathBuf],
    policy: &SandboxPolicy,
    support: Support,
) -> Result<RulesetCreated> {
    let setup = |e: landlock::RulesetError| Error::Setup(e.to_string());
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(TARGET_ABI))
        .map_err(setup)?;
    if !policy.network && support.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(TARGET_ABI))
            .map_err(setup)?;
    }
    if support.signals {
        ruleset = ruleset.scope(Scope::Signal).map_err(setup)?;
    }
    if support.abstract_sockets && !policy.unrestricted_sockets {
        ruleset = ruleset.scope(Scope::AbstractUnixSocket).map_err(setup)?;
    }
    let mut created = ruleset.create().map_err(setup)?;
    created = created
        .add_rule(PathBeneath::new(
            open_path(Path::new("/"))?,
            AccessFs::from_read(TARGET_ABI),
        ))
        .map_err(setup)?;
    for device in WRITABLE_DEVICES {
        // A machine without some device simply has no rule for it.
        if let Ok(fd) = PathFd::new(device) {
            created = created
                .add_rule(PathBeneath::new(fd, file_rights()))
                .map_err(setup)?;
        }
    }
    // Connecting to socket paths is granted for listed sockets only, never beneath the
    // writable roots wholesale (a temp folder holds other programs' sockets).
    let root_rights = if policy.unrestricted_sockets {
        AccessFs::from_all(TARGET_ABI)
    } else {
        AccessFs::from_all(TARGET_ABI) & !AccessFs::ResolveUnix
    };
    for root in writable {
        created = created
            .add_rule(PathBeneath::new(open_path(root)?, root_rights))
            .map_err(setup)?;
    }
    for socket in &policy.unix_sockets {
        if let Ok(fd) = PathFd::new(socket) {
            created = created
                .add_rule(PathBeneath::new(fd, AccessFs::ResolveUnix))
                .map_err(setup)?;
        }
    }
    Ok(created)
}

fn file_rights() -> BitFlags<AccessFs> {
    AccessFs::from_file(TARGET_ABI) & !AccessFs::ResolveUnix
}

/// Opens a root for a rule. A writable root that is a link is taken as the user configured
/// it (resolved); the narrowing fallback opens its entries with [`open_entry`] instead.
fn open_path(path: &Path) -> Result<PathFd> {
    PathFd::new(path).map_err(|e| Error::Setup(format!("cannot open {}: {e}", path.display())))
}

/// An entry of a narrowed root, never through a link: `None` when it is one (a link's
/// target is governed by wherever it lies, so it never becomes a root itself).
pub(crate) fn open_entry(path: &Path) -> Option<OwnedFd> {
    let fd = rustix::fs::open(
        path,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let stat = rustix::fs::fstat(&fd).ok()?;
    ((stat.st_mode & libc::S_IFMT) != libc::S_IFLNK).then_some(fd)
}

/// The fallback's ruleset: like [`ruleset`], with roots that are already open descriptors
/// (opened without following links).
pub(crate) fn narrowed_ruleset(
    roots: Vec<(PathBuf, OwnedFd)>,
    policy: &SandboxPolicy,
    support: Support,
) -> Result<RulesetCreated> {
    let setup = |e: landlock::RulesetError| Error::Setup(e.to_string());
    let mut created = ruleset(&[], policy, support)?;
    for (path, fd) in roots {
        let is_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        let rights = if is_dir {
            AccessFs::from_all(TARGET_ABI) & !AccessFs::ResolveUnix
        } else {
            file_rights()
        };
        created = created
            .add_rule(PathBeneath::new(fd, rights))
            .map_err(setup)?;
    }
    Ok(created)
}

/// The seccomp filter: which socket families may be opened (IP only with network, Unix only
/// with a socket allowlist, nothing else ever: no netlink, vsock, packet, ...), no io_uring
/// (it can open sockets without the `socket` call), and nothing through the x32 table.
/// `None` when the policy restricts no socket at all.
pub(crate) fn socket_filter(policy: &SandboxPolicy) -> Result<Option<seccompiler::BpfProgram>> {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };
    if policy.unrestricted_sockets {
        return Ok(None);
    }
    let setup = |e: seccompiler::BackendError| Error::Setup(format!("socket filter: {e}"));
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(setup)?;
    let not_domain = |domain: i32| {
        SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            u64::from(domain.unsigned_abs()),
        )
    };
    let mut allowed = Vec::new();
    if policy.network {
        allowed.extend([libc::AF_INET, libc::AF_INET6]);
    }
    if !policy.unix_sockets.is_empty() {
        allowed.push(libc::AF_UNIX);
    }
    // A rule matches when every condition holds: a domain outside the allowed list. An
    // empty rule list matches every call.
    let socket_rules = if allowed.is_empty() {
        Vec::new()
    } else {
        let conditions = allowed
            .into_iter()
            .map(not_domain)
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(setup)?;
        vec![SeccompRule::new(conditions).map_err(setup)?]
    };
    let pair_rules =
        vec![SeccompRule::new(vec![not_domain(libc::AF_UNIX).map_err(setup)?]).map_err(setup)?];
    let rules = std::collections::BTreeMap::from([
        (libc::SYS_socket, socket_rules),
        (libc::SYS_socketpair, pair_rules),
        (libc::SYS_io_uring_setup, Vec::new()),
        (libc::SYS_io_uring_enter, Vec::new()),
        (libc::SYS_io_uring_register, Vec::new()),
    ]);
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES.unsigned_abs()),
        arch,
    )
    .map_err(setup)?;
    let program = seccompiler::BpfProgram::try_from(filter)
        .map_err(|e| Error::Setup(format!("socket filter: {e}")))?;
    Ok(Some(with_x32_refused(program)))
}

/// On x86-64 the same system calls exist a second time under the x32 numbers (bit 30 set),
/// which the rules above do not name: refuse every one of them.
#[cfg(target_arch = "x86_64")]
fn with_x32_refused(program: seccompiler::BpfProgram) -> seccompiler::BpfProgram {
    use seccompiler::sock_filter;
    const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
    // Offsets in `struct seccomp_data`: nr at 0, arch at 4.
    let load = |offset: u32| sock_filter {
        code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
        jt: 0,
        jf: 0,
        k: offset,
    };
    let mut prefix = vec![
        load(4),
        // Another architecture: leave it to the main program (which refuses it).
        sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt: 0,
            jf: 3,
            k: AUDIT_ARCH_X86_64,
        },
        load(0),
        sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: SECCOMP_RET_ERRNO | libc::EACCES.unsigned_abs(),
        },
    ];
    prefix.extend(program);
    prefix
}

#[cfg(not(target_arch = "x86_64"))]
fn with_x32_refused(program: seccompiler::BpfProgram) -> seccompiler::BpfProgram {
    program
}
