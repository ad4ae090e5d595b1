//! The processes between `fork` and `exec` of a namespaced command, all inside the
//! `pre_exec` hook of one `std::process::Command`, allocating nothing:
//!
//! - the **supervisor** (the child `std` forked; its pid is what the caller sees) starts a
//!   session of its own, dies with the spawning thread, clones the **init** into new user,
//!   mount and PID namespaces, writes the init's uid and gid maps, waits for it and exits
//!   with its status;
//! - the **init** (pid 1 of the new PID namespace) builds the mount view, mounts a fresh
//!   `/proc`, forks the **command**, reaps orphans, and exits with the command's status as
//!   soon as the command ends, which kills everything left in the namespace;
//! - the **command** takes on the process limit, drops capabilities, installs the seccomp
//!   filter and the Landlock ruleset, and returns to `std`, which `exec`s the program.

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, OwnedFd};

use rustix::process::{Resource, Rlimit, Signal};
use rustix::thread::CapabilitySet;

use super::mounts::MountPlan;

/// Capabilities a command never needs and could use to step around the sandbox (reboot,
/// modules, raw devices, mounts, clocks, tracing). `SETPCAP` last: dropping needs it.
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

/// The uid and gid maps the supervisor writes for the init, formatted before `fork`.
pub(crate) struct IdMaps {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl IdMaps {
    /// The caller's own ids inside, one to one; root (who may) maps every id, so that a
    /// root command still owns what root owns.
    pub(crate) fn of_caller() -> Self {
        let uid = rustix::process::geteuid().as_raw();
        let gid = rustix::process::getegid().as_raw();
        if uid == 0 {
            Self {
                uid_map: b"0 0 4294967295\n".to_vec(),
                gid_map: b"0 0 4294967295\n".to_vec(),
            }
        } else {
            Self {
                uid_map: format!("{uid} {uid} 1\n").into_bytes(),
                gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            }
        }
    }
}

/// What the command process takes on last.
pub(crate) struct Confines {
    pub(crate) max_processes: Option<u32>,
    pub(crate) filter: Option<seccompiler::BpfProgram>,
    pub(crate) ruleset: Option<landlock::RulesetCreated>,
}

impl Confines {
    /// Runs in the command process, the last thing before `exec`.
    pub(crate) fn apply(&mut self) -> std::io::Result<()> {
        if let Some(limit) = self.max_processes {
            let limit = u64::from(limit);
            rustix::process::setrlimit(
                Resource::Nproc,
                Rlimit {
                    current: Some(limit),
                    maximum: Some(limit),
                },
            )?;
        }
        for capability in DROPPED_CAPABILITIES {
            // Without the right to drop them (not root) there is nothing to drop.
            let _ = rustix::thread::remove_capability_from_bounding_set(capability);
        }
        if let Some(filter) = &self.filter {
            seccompiler::apply_filter(filter).map_err(|_| std::io::Error::last_os_error())?;
        }
        if let Some(ruleset) = self.ruleset.take() {
            // The errno of the failed call, without allocating after fork.
            ruleset
                .restrict_self()
                .map_err(|_| std::io::Error::last_os_error())?;
        }
        Ok(())
    }
}

/// Everything the three processes need, built before `fork`.
pub(crate) struct Tree {
    pub(crate) maps: IdMaps,
    pub(crate) mounts: MountPlan,
    pub(crate) confines: Confines,
    /// The pid of the process that spawns (for the supervisor's parent-death check).
    pub(crate) spawner: i32,
    /// The command's working directory, entered again once the mounts are in place (the
    /// directory `std` entered lies on the mount beneath them, read-only by then).
    pub(crate) cwd: Option<CString>,
    /// The command's pids cgroup (`cgroup.procs`), joined by the supervisor (root only).
    pub(crate) cgroup_procs: Option<CString>,
}

impl Tree {
    /// The `pre_exec` body. Returns only in the command process (or with an error, which
    /// `std` reports to the spawning parent through its own pipe).
    pub(crate) fn run(&mut self) -> std::io::Result<()> {
        // Supervisor.
        start_session();
        rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
        if rustix::process::getppid().map(|p| p.as_raw_nonzero().get()) != Some(self.spawner) {
            // The spawner is gone already: nothing to run for.
            exit_now(1);
        }
        if let Some(procs) = &self.cgroup_procs {
            super::cgroup::join(procs)?;
        }
        let (ready_read, ready_write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        let (status_read, status_write) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        let flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::SIGCHLD;
        let init = raw_fork(flags)?;
        if init == 0 {
            drop(ready_write);
            drop(status_read);
            return self.init(&ready_read, status_write);
        }
        drop(ready_read);
        drop(status_write);
        if let Err(e) = self.write_maps(init) {
            kill(init);
            return Err(e);
        }
        // One byte tells the init its ids are in place.
        rustix::io::write(&ready_write, b"1")?;
        drop(ready_write);
        close_all_except(status_read.as_raw_fd());
        // The init reports the command's status once nothing else is left in the
        // namespace; its own exit (which tears the namespaces down, a few milliseconds of
        // kernel work) is not waited for. Without a report it died: wait for it.
        let mut status = [0u8; 4];
        match rustix::io::read(&status_read, &mut status) {
            Ok(4) => exit_now(i32::from_ne_bytes(status)),
            _ => exit_now(wait_for(init, init)),
        }
    }

    fn write_maps(&self, init: i32) -> std::io::Result<()> {
        let mut path = PathBuf64::new();
        for (file, content) in [
            (&b"setgroups"[..], &b"deny"[..]),
            (&b"uid_map"[..], &self.maps.uid_map[..]),
            (&b"gid_map"[..], &self.maps.gid_map[..]),
        ] {
            let name = path.proc_file(init, file)?;
            let fd = rustix::fs::open(
                name,
                rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )?;
            rustix::io::write(&fd, content)?;
        }
        Ok(())
    }

    /// Pid 1 of the new namespace.
    fn init(&mut self, ready: &OwnedFd, status: OwnedFd) -> std::io::Result<()> {
        rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
        let mut byte = [0u8; 1];
        // End of file instead of the byte: the supervisor died before the maps were
        // written (and before our death signal was armed).
        if rustix::io::read(ready, &mut byte)? != 1 {
            exit_now(1);
        }
        // The init is a copy of knack that never runs another program: its memory (the
        // environment with knack's keys) must not be readable through /proc/1. Only now:
        // a process that is not dumpable has its /proc files owned by root, and the
        // supervisor (not root, often) had to write our id maps there first.
        rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)?;
        self.mounts.apply()?;
        rustix::mount::mount(
            c"proc",
            c"/proc",
            c"proc",
            rustix::mount::MountFlags::NOSUID
                | rustix::mount::MountFlags::NODEV
                | rustix::mount::MountFlags::NOEXEC,
            None::<&CStr>,
        )?;
        if let Some(cwd) = &self.cwd {
            rustix::process::chdir(cwd.as_c_str())?;
        }
        let command = raw_fork(libc::SIGCHLD)?;
        if command == 0 {
            drop(status);
            return self.confines.apply();
        }
        close_all_except(status.as_raw_fd());
        let code = wait_for(command, -1);
        // The command ended: so does everything it started. As pid 1, `kill(-1)` reaches
        // every other process of the namespace; each is then reaped (orphans are ours).
        // SAFETY: a plain system call with no pointers.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(-1, libc::SIGKILL);
        }
        while let Ok(Some(_)) | Err(rustix::io::Errno::INTR) =
            rustix::process::waitpid(None, rustix::process::WaitOptions::empty())
        {}
        let _ = rustix::io::write(&status, &code.to_ne_bytes());
        exit_now(code);
    }
}

/// A fixed buffer for `/proc/<pid>/<file>` (no allocation after fork).
struct PathBuf64 {
    buf: [u8; 64],
}

impl PathBuf64 {
    fn new() -> Self {
        Self { buf: [0; 64] }
    }

    fn proc_file(&mut self, pid: i32, file: &[u8]) -> std::io::Result<&CStr> {
        let mut digits = [0u8; 12];
        let mut n = pid.unsigned_abs();
        let mut len = 0;
        loop {
            digits[len] = b'0' + (n % 10) as u8;
            len += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        digits[..len].reverse();
        let parts: [&[u8]; 5] = [b"/proc/", &digits[..len], b"/", file, b"\0"];
        let total: usize = parts.iter().map(|p| p.len()).sum();
        if total > self.buf.len() {
            return Err(std::io::Error::from_raw_os_error(libc::ENAMETOOLONG));
        }
        let mut at = 0;
        for part in parts {
            self.buf[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
        CStr::from_bytes_with_nul(&self.buf[..at])
            .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
    }
}

/// Its own session and process group (no controlling terminal; the group is the pid).
/// Fails harmlessly when the process already leads one.
pub(crate) fn start_session() {
    let _ = rustix::process::setsid();
}

/// `fork` (with namespace `flags`) as the raw system call: the C library's `fork` would run
/// other libraries' fork handlers, which may wait for locks that a thread of the original
/// parent held when `std` forked.
fn raw_fork(flags: i32) -> std::io::Result<i32> {
    // SAFETY: `clone` without CLONE_VM and without a new stack behaves as `fork`: the child
    // gets a copy of this single-threaded process and returns here with 0. Neither side
    // touches the C library's thread state afterwards (both only make system calls until
    // `exec` or `_exit`).
    #[allow(unsafe_code)]
    let ret = unsafe {
        libc::syscall(
            libc::SYS_clone,
            libc::c_ulong::from(flags.unsigned_abs()),
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    if ret < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        i32::try_from(ret).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
    }
}

fn kill(pid: i32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process(pid, Signal::KILL);
    }
}

/// Reaps children until `main` ends (`-1`-style `any` reaps everything, orphans included);
/// the exit code to pass on: the command's, or 128 + the signal that killed it.
fn wait_for(main: i32, any: i32) -> i32 {
    let target = if any == -1 {
        None
    } else {
        rustix::process::Pid::from_raw(any)
    };
    loop {
        match rustix::process::waitpid(target, rustix::process::WaitOptions::empty()) {
            Ok(Some((pid, status))) if pid.as_raw_nonzero().get() == main => {
                if let Some(code) = status.exit_status() {
                    return code;
                }
                if let Some(signal) = status.terminating_signal() {
                    return 128 + signal;
                }
                return 1;
            }
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return 1,
        }
    }
}

/// Closes every descriptor but `keep`: the supervisor and the init keep no copy of the
/// command's output pipe (so the reader sees its end when the command's processes are
/// gone) nor of `std`'s error pipe.
fn close_all_except(keep: i32) {
    let keep = keep.unsigned_abs();
    if keep > 0 {
        close_range(0, keep - 1);
    }
    close_range(keep + 1, u32::MAX);
}

fn close_range(first: u32, last: u32) {
    // SAFETY: `close_range` only closes descriptors; nothing in this process uses them
    // afterwards (it only waits and exits).
    #[allow(unsafe_code)]
    let ret = unsafe { libc::syscall(libc::SYS_close_range, first, last, 0u32) };
    if ret != 0 {
        // Kernels before 5.9: close them one by one.
        for fd in first..=last.min(1023) {
            // SAFETY: as above; closing a number that is not open fails harmlessly.
            #[allow(unsafe_code)]
            unsafe {
                libc::close(fd as i32);
            }
        }
    }
}

/// Ends this process without running anything of the parent's (no atexit handlers, no
/// buffered output).
pub(crate) fn exit_now(code: i32) -> ! {
    // SAFETY: `_exit` ends the process at once; nothing runs afterwards.
    #[allow(unsafe_code)]
    unsafe {
        libc::_exit(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_paths_are_formatted_without_allocating() {
        let mut buf = PathBuf64::new();
        assert_eq!(
            buf.proc_file(12345, b"uid_map").unwrap().to_bytes(),
            b"/proc/12345/uid_map"
        );
        assert_eq!(
            buf.proc_file(7, b"setgroups").unwrap().to_bytes(),
            b"/proc/7/setgroups"
        );
    }
}
