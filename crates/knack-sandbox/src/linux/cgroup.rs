//! The process limit for root, whom the kernel exempts from `RLIMIT_NPROC`: a child of the
//! cgroup-v1 `pids` controller per command, which the supervisor joins before it forks.

use std::collections::HashSet;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// This process's cgroups whose command has not ended yet. A new one is empty until its
/// supervisor joins it, so "empty" alone must never mark one of these as stale: another
/// thread's command would then fail to start.
static LIVE: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

fn live() -> std::sync::MutexGuard<'static, Option<HashSet<PathBuf>>> {
    LIVE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

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
        // Marked live before it exists, so no other thread's clean-up can see it unmarked.
        live().get_or_insert_with(HashSet::new).insert(dir.clone());
        if let Err(e) = std::fs::create_dir(&dir) {
            if let Some(set) = live().as_mut() {
                set.remove(&dir);
            }
            return Err(e);
        }
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
        if let Some(set) = live().as_mut() {
            set.remove(&self.dir);
        }
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
        let ours_and_done = owner == me
            && !live()
                .as_ref()
                .is_some_and(|set| set.contains(&entry.path()));
        if ours_and_done || !Path::new("/proc").join(owner.to_string()).exists() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_command_never_removes_another_commands_empty_cgroup() {
        if !available() {
            // Without root and a v1 pids hierarchy no cgroup is ever made (the rlimit
            // path is used); the sandbox suite covers that path.
            assert!(PidsCgroup::new(10).is_err() || !rustix::process::geteuid().is_root());
            return;
        }
        let first = PidsCgroup::new(10).unwrap();
        // Not joined yet, so empty: the second command's clean-up must leave it alone.
        let second = PidsCgroup::new(10).unwrap();
        assert!(first.dir.is_dir(), "{} was removed", first.dir.display());
        let (a, b) = (first.dir.clone(), second.dir.clone());
        drop(first);
        drop(second);
        assert!(!a.exists() && !b.exists());
    }
}
