//! The process limit for root, whom the kernel exempts from `RLIMIT_NPROC`: a `pids` cgroup
//! per command, which the supervisor joins before it forks. It is made in the cgroup-v1
//! `pids` hierarchy where one is mounted, else as a child of knack's own cgroup v2 where
//! that cgroup hands the `pids` controller to its children and can be written. Where
//! neither works, [`parent`] says why (for `knack doctor`).

use std::collections::HashSet;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// This process's cgroups whose command has not ended yet. A new one is empty until its
/// supervisor joins it, so "empty" alone must never mark one of these as stale: another
/// thread's command would then fail to start.
static LIVE: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

fn live() -> std::sync::MutexGuard<'static, Option<HashSet<PathBuf>>> {
    LIVE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Where the v1 `pids` hierarchy is mounted on most systems (when the mount table does not
/// name another place).
const V1_PIDS_ROOT: &str = "/sys/fs/cgroup/pids";

/// The folder per-command cgroups are made in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PidsParent {
    /// The root of a cgroup-v1 `pids` hierarchy.
    V1(PathBuf),
    /// knack's own cgroup in the v2 hierarchy, whose children get the `pids` controller.
    V2(PathBuf),
}

impl PidsParent {
    fn dir(&self) -> &Path {
        match self {
            Self::V1(dir) | Self::V2(dir) => dir,
        }
    }

    /// Where the limit lives, for `knack doctor`.
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::V1(dir) => format!("cgroup v1, under {}", dir.display()),
            Self::V2(dir) => format!("cgroup v2, under {}", dir.display()),
        }
    }
}

/// Where this process (root) makes its commands' pids cgroups, found once; or why it
/// cannot make any.
pub(crate) fn parent() -> &'static Result<PidsParent, String> {
    static PARENT: OnceLock<Result<PidsParent, String>> = OnceLock::new();
    PARENT.get_or_init(|| {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        find(&mountinfo, &own)
    })
}

/// Whether this process can make pids cgroups (root, and a place for them).
pub(crate) fn available() -> bool {
    rustix::process::geteuid().is_root() && parent().is_ok()
}

/// The v1 `pids` hierarchy if one is mounted, else knack's v2 cgroup if it can have
/// children with the `pids` controller. `mountinfo` and `own` are the contents of
/// `/proc/self/mountinfo` and `/proc/self/cgroup`.
fn find(mountinfo: &str, own: &str) -> Result<PidsParent, String> {
    let mounts = cgroup_mounts(mountinfo);
    let v1 = match mounts
        .iter()
        .find(|(fs, _, options)| fs == "cgroup" && options.split(',').any(|o| o == "pids"))
    {
        Some((_, point, _)) => Some(point.clone()),
        // No mount table to go by: the usual place.
        None if mounts.is_empty() => Some(PathBuf::from(V1_PIDS_ROOT)),
        None => None,
    };
    if let Some(v1) = v1.filter(|dir| dir.join("cgroup.procs").is_file()) {
        return Ok(PidsParent::V1(v1));
    }
    let Some(v2_mount) = mounts
        .iter()
        .find(|(fs, _, _)| fs == "cgroup2")
        .map(|(_, point, _)| point.clone())
    else {
        return Err("no cgroup v1 pids hierarchy and no cgroup v2 is mounted".to_owned());
    };
    let Some(own_path) = own.lines().find_map(|line| line.strip_prefix("0::")) else {
        return Err(format!(
            "cgroup v2 is mounted at {} but /proc/self/cgroup names no v2 cgroup for knack",
            v2_mount.display()
        ));
    };
    let dir = v2_mount.join(own_path.trim().trim_start_matches('/'));
    v2_parent(&dir).map(PidsParent::V2)
}

/// `dir` (knack's v2 cgroup) when its children can have the `pids` controller and it can
/// be written; why not otherwise.
fn v2_parent(dir: &Path) -> Result<PathBuf, String> {
    let listed = |file: &str| {
        std::fs::read_to_string(dir.join(file))
            .is_ok_and(|text| text.split_whitespace().any(|c| c == "pids"))
    };
    if !listed("cgroup.controllers") {
        return Err(format!(
            "knack's cgroup v2 {} has no pids controller (the host keeps it elsewhere, or \
             does not delegate it)",
            dir.display()
        ));
    }
    if !listed("cgroup.subtree_control")
        && let Err(e) = std::fs::write(dir.join("cgroup.subtree_control"), "+pids")
    {
        // The usual refusal: a cgroup that holds processes itself (knack's own) may not
        // hand controllers to children ("no internal processes"), unless it is the root.
        return Err(format!(
            "knack's cgroup v2 {} does not hand the pids controller to its children and \
             cannot be made to ({e}); run knack in a cgroup that delegates pids (for \
             example a systemd unit with Delegate=pids)",
            dir.display()
        ));
    }
    // Writable for new children? Tried once, with a folder that goes at once.
    let probe = dir.join(format!("knack-probe-{}", std::process::id()));
    match std::fs::create_dir(&probe) {
        Ok(()) => {
            let _ = std::fs::remove_dir(&probe);
            Ok(dir.to_path_buf())
        }
        Err(e) => Err(format!(
            "knack's cgroup v2 {} cannot have children made in it ({e}); /sys/fs/cgroup \
             is read-only or not ours",
            dir.display()
        )),
    }
}

/// The cgroup mounts in `mountinfo`: file-system type, mount point, super options.
fn cgroup_mounts(mountinfo: &str) -> Vec<(String, PathBuf, String)> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let (before, after) = line.split_once(" - ")?;
            let point = before.split(' ').nth(4)?;
            let mut rest = after.split(' ');
            let fs = rest.next()?;
            let options = rest.nth(1).unwrap_or_default();
            fs.starts_with("cgroup").then(|| {
                (
                    fs.to_owned(),
                    PathBuf::from(unescape(point)),
                    options.to_owned(),
                )
            })
        })
        .collect()
}

/// Mount points in mountinfo write space, tab, newline and backslash as octal escapes.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && let Some(code) = field
                .get(i + 1..i + 4)
                .and_then(|digits| u8::from_str_radix(digits, 8).ok())
        {
            out.push(code);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
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
        let parent = parent()
            .as_ref()
            .map_err(|why| std::io::Error::other(why.clone()))?
            .dir();
        let me = std::process::id();
        remove_stale(parent, me);
        let dir = parent.join(format!(
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
fn remove_stale(parent: &Path, me: u32) {
    let Ok(entries) = std::fs::read_dir(parent) else {
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
/// Writing `0` means "the writer" in both cgroup versions.
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
            // Without root and a pids cgroup parent no cgroup is ever made (the rlimit
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

    const HYBRID: &str = "\
35 25 0:30 / /sys/fs/cgroup/unified rw,relatime shared:10 - cgroup2 cgroup2 rw
36 25 0:31 / /sys/fs/my\\040pids rw,relatime shared:15 - cgroup cgroup rw,pids
37 25 0:32 / /sys/fs/cgroup/cpu rw,relatime shared:16 - cgroup cgroup rw,cpu
";

    #[test]
    fn the_mount_table_names_each_cgroup_hierarchy() {
        let mounts = cgroup_mounts(HYBRID);
        assert_eq!(
            mounts,
            vec![
                (
                    "cgroup2".to_owned(),
                    PathBuf::from("/sys/fs/cgroup/unified"),
                    "rw".to_owned()
                ),
                (
                    "cgroup".to_owned(),
                    PathBuf::from("/sys/fs/my pids"),
                    "rw,pids".to_owned()
                ),
                (
                    "cgroup".to_owned(),
                    PathBuf::from("/sys/fs/cgroup/cpu"),
                    "rw,cpu".to_owned()
                ),
            ]
        );
    }

    /// A cgroup-v2 folder as the kernel shows it, in a temp folder.
    fn fake_v2(controllers: &str, subtree: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cgroup.controllers"), controllers).unwrap();
        std::fs::write(dir.path().join("cgroup.subtree_control"), subtree).unwrap();
        dir
    }

    #[test]
    fn a_v2_only_host_uses_knacks_own_cgroup_when_it_hands_pids_down() {
        let root = fake_v2("cpu io memory pids\n", "cpu pids\n");
        std::fs::create_dir_all(root.path().join("user.slice/knack.scope")).unwrap();
        let own = root.path().join("user.slice/knack.scope");
        std::fs::write(own.join("cgroup.controllers"), "memory pids\n").unwrap();
        std::fs::write(own.join("cgroup.subtree_control"), "pids\n").unwrap();
        let mountinfo = format!(
            "30 1 0:26 / {} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
            root.path().display()
        );
        let found = find(&mountinfo, "0::/user.slice/knack.scope\n").unwrap();
        assert_eq!(found, PidsParent::V2(own.clone()));
        assert!(found.describe().contains("cgroup v2"));
        // The probe child went again.
        let left: Vec<_> = std::fs::read_dir(&own)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 2, "{left:?}");
    }

    #[test]
    fn a_v2_cgroup_without_pids_is_refused_with_the_reason() {
        let own = fake_v2("cpu memory\n", "");
        let err = v2_parent(own.path()).unwrap_err();
        assert!(err.contains("no pids controller"), "{err}");
        let mountinfo = "37 25 0:32 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n";
        let err = find(mountinfo, "0::/\n").unwrap_err();
        assert!(err.contains("no cgroup v2 is mounted"), "{err}");
    }

    #[test]
    fn a_v2_cgroup_that_does_not_yet_hand_pids_down_is_switched_on() {
        // The kernel would refuse this for a cgroup holding processes; a plain file takes
        // it, which is what this checks: that knack asks for the controller at all.
        let own = fake_v2("pids\n", "");
        assert_eq!(v2_parent(own.path()).unwrap(), own.path());
        assert_eq!(
            std::fs::read_to_string(own.path().join("cgroup.subtree_control")).unwrap(),
            "+pids"
        );
    }
}
