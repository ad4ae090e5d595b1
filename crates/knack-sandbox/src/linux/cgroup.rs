//! The process limit for root, whom the kernel exempts from `RLIMIT_NPROC`: a child of the
//! cgroup-v1 `pids` controller per command, which the supervisor joins before it forks.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where the v1 `pids` hierarchy is mounted on most systems.
const PIDS_ROOT: &str = "/sys/fs/cgroup/pids";

/// Whether this process can make pids cgroups (root, a v1 `pids` hierarchy).
pub(crate) fn available() -> bool {
    rustix::process::geteuid().is_root() && Path::new(PIDS_ROOT).join("cgroup.procs").is_file()
}

/// One command's cgroup: made before the spawn, removed after it.
#[derive(Debug)]
pub(crate) struct PidsCgroup {
    dir: PathBuf,
    /// `<dir>/cgroup.procs`, which the supervisor writes `0` to (itself).
    pub(crate) procs: CString,
}

impl PidsCgroup {
    pub(crate) fn new(max: u32) -> std::io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let me = std::process::id();
        remove_stale(me);
        let dir = Path::new(PIDS_ROOT).join(format!(
            "knack-{me}-{}",
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir)?;
        let group = Self {
            procs: CString::new(dir.join("cgroup.procs").as_os_str().as_bytes())
                .map_err(std::io::Error::other)?,
            dir,
        };
        std::fs::write(group.dir.join("pids.max"), max.to_string())?;
        Ok(group)
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        // Fails while the namespace's last process is still being torn down; such a
        // cgroup is removed with the next command's (or left empty when knack exits).
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Removes this process's cgroups that are empty by now, and those of knack processes
/// that are gone.
fn remove_stale(me: u32) {
    let Ok(entries) = std::fs::read_dir(PIDS_ROOT) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name
            .to_str()
            .and_then(|n| n.strip_prefix("knack-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if owner == me || !Path::new("/proc").join(owner.to_string()).exists() {
            // Refused (EBUSY) while processes are still in it: nothing lost.
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// Runs in the supervisor: moves it (and so everything it starts) into the cgroup.
pub(crate) fn join(procs: &CString) -> std::io::Result<()> {
    let fd = rustix::fs::open(
        procs.as_c_str(),
        rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?;
    rustix::io::write(&fd, b"0")?;
    Ok(())
}
