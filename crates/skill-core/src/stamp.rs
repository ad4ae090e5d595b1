//! What a discovery result depended on: one stamp per root, walked folder,
//! SKILL.md and DESCRIPTION.md, so a later process can tell cheaply whether it still holds.
//!
//! A folder's stamp also carries the digest of its *shape* (the entries the walk
//! acts on), so a folder whose mtime moved only because an unrelated file came
//! or went (an atomic write's temp file, an editor's backup) is still valid.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// What kind of path a stamp covers; decides how a change is handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StampKind {
    /// A root or a walked folder.
    Folder,
    /// A skill's SKILL.md.
    SkillFile,
    /// A category's DESCRIPTION.md.
    CategoryFile,
}

/// The parts of a file's metadata that move when it is replaced or edited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileState {
    pub mtime_secs: i64,
    pub mtime_nanos: u32,
    pub size: u64,
    pub dev: u64,
    pub ino: u64,
}

impl FileState {
    pub fn of(meta: &fs::Metadata) -> Self {
        Self {
            mtime_secs: meta.mtime(),
            mtime_nanos: u32::try_from(meta.mtime_nsec()).unwrap_or(0),
            size: meta.len(),
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }

    /// The state of `path` now (following links); `None` when it cannot be stat'ed.
    pub fn read(path: &Path) -> Option<Self> {
        Self::read_at(rustix::fs::CWD, path)
    }

    /// The state of `rel` below the open folder `dir` (following links; `""`
    /// is the folder itself). Checking a snapshot's stamps this way spares
    /// the kernel looking up the root's own path again for every stamp.
    pub fn read_at(dir: impl std::os::fd::AsFd, rel: impl AsRef<Path>) -> Option<Self> {
        // Checking a snapshot is one of these per stamp; asking only for the
        // fields a stamp holds is measurably cheaper than a full metadata call.
        use rustix::fs::{AtFlags, StatxFlags, makedev, statx};
        let rel = rel.as_ref();
        let wanted = StatxFlags::TYPE | StatxFlags::MTIME | StatxFlags::SIZE | StatxFlags::INO;
        let flags = if rel.as_os_str().is_empty() {
            AtFlags::EMPTY_PATH
        } else {
            AtFlags::empty()
        };
        match statx(&dir, rel, flags, wanted) {
            Ok(st) => Some(Self {
                mtime_secs: st.stx_mtime.tv_sec,
                mtime_nanos: st.stx_mtime.tv_nsec,
                size: st.stx_size,
                dev: makedev(st.stx_dev_major, st.stx_dev_minor),
                ino: st.stx_ino,
            }),
            Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => {
                fallback_metadata(dir, rel).map(|m| Self::of(&m))
            }
            Err(_) => None,
        }
    }

    pub fn modified(&self) -> SystemTime {
        let since_epoch = Duration::new(self.mtime_secs.unsigned_abs(), self.mtime_nanos);
        if self.mtime_secs >= 0 {
            SystemTime::UNIX_EPOCH + since_epoch
        } else {
            SystemTime::UNIX_EPOCH - since_epoch
        }
    }
}

/// Metadata through std where `statx` is refused (old kernels, some sandboxes).
fn fallback_metadata(dir: impl std::os::fd::AsFd, rel: &Path) -> Option<fs::Metadata> {
    use std::os::fd::AsRawFd;
    if rel.is_absolute() {
        return fs::metadata(rel).ok();
    }
    // The folder's own path, as the kernel names it, is where `rel` starts.
    let fd = dir.as_fd().as_raw_fd();
    let base = if fd == rustix::fs::CWD.as_raw_fd() {
        PathBuf::from(".")
    } else {
        fs::read_link(format!("/proc/self/fd/{fd}")).ok()?
    };
    fs::metadata(base.join(rel)).ok()
}

/// One path discovery depended on, as it was when it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    pub path: PathBuf,
    pub kind: StampKind,
    /// `None` when the path could not be stat'ed (a broken link, say): if it
    /// appears later, the stamp no longer matches.
    pub state: Option<FileState>,
    /// Folders: the digest of their shape (see `Shape`); files: zero.
    pub shape: u128,
    /// Files read within `RACY_WINDOW` of their last change: the digest of
    /// the bytes that were parsed (see `is_recent`).
    pub digest: Option<u128>,
}

/// The modification stamps discovery depended on; equal stamps mean an equal result.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub stamps: Vec<Stamp>,
}

impl Fingerprint {
    pub(crate) fn record(&mut self, path: &Path, kind: StampKind, state: Option<FileState>) {
        self.stamps.push(Stamp {
            path: path.to_path_buf(),
            kind,
            state,
            shape: 0,
            digest: None,
        });
    }

    /// True when every recorded path still has the same state (checked on
    /// every core: a long-running session asks this before each reuse).
    pub fn is_current(&self) -> bool {
        self.changed(crate::walk::worker_threads()).is_empty()
    }

    /// Indices of the stamps whose path changed, checked on up to `threads`
    /// threads (stat calls dominate a warm start on a large tree).
    pub fn changed(&self, threads: usize) -> Vec<usize> {
        changed_indices(&self.stamps, threads, |s| {
            FileState::read(&s.path) != s.state
        })
    }
}

/// Indices of the `items` for which `is_changed` holds, checked on up to
/// `threads` threads (stat calls dominate a warm start on a large tree).
pub(crate) fn changed_indices<T: Sync>(
    items: &[T],
    threads: usize,
    is_changed: impl Fn(&T) -> bool + Sync,
) -> Vec<usize> {
    const CHUNK: usize = 256;
    if threads <= 1 || items.len() < 2048 {
        return (0..items.len())
            .filter(|&i| is_changed(&items[i]))
            .collect();
    }
    let chunk = |c: usize| {
        let end = ((c + 1) * CHUNK).min(items.len());
        Some(
            (c * CHUNK..end)
                .filter(|&i| is_changed(&items[i]))
                .collect(),
        )
    };
    let (changed, ()) = collect_beside(items.len().div_ceil(CHUNK), threads, chunk, || ());
    changed.unwrap_or_default()
}

/// Runs `each` on every index below `count`, on up to `threads` threads,
/// and gathers what they found (ascending, each once). Helper threads start
/// at once; this thread runs `first` and then helps with whatever is left,
/// so both kinds of work share the cores evenly. `None` when any `each` is.
pub(crate) fn collect_beside<R>(
    count: usize,
    threads: usize,
    each: impl Fn(usize) -> Option<Vec<usize>> + Sync,
    first: impl FnOnce() -> R,
) -> (Option<Vec<usize>>, R) {
    let next = AtomicUsize::new(0);
    let work = || {
        let mut found = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= count {
                break Some(found);
            }
            found.extend(each(i)?);
        }
    };
    std::thread::scope(|scope| {
        // A helper the system will not start (a process limit) is no error:
        // this thread then does everything itself.
        let helpers: Vec<_> = (1..threads.max(2))
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, work).ok())
            .collect();
        let result = first();
        let mut found = work();
        for helper in helpers {
            let part = match helper.join() {
                Ok(part) => part,
                // A helper that died may have left work undone: do it all again.
                Err(_) => (0..count)
                    .map(&each)
                    .collect::<Option<Vec<_>>>()
                    .map(|v| v.concat()),
            };
            found = found.zip(part).map(|(mut all, part)| {
                all.extend(part);
                all
            });
        }
        let found = found.map(|mut all| {
            all.sort_unstable();
            all.dedup();
            all
        });
        (found, result)
    })
}

/// Builds the digest of a folder's shape: the entries discovery acts on.
/// Plain files other than SKILL.md and DESCRIPTION.md, and hidden or skipped
/// names, never change what the walk finds, so they are left out.
#[derive(Default)]
pub(crate) struct Shape {
    hasher: Sha256,
}

impl Shape {
    pub(crate) fn add(&mut self, name: &str, kind_tag: u8) {
        self.hasher.update(name.as_bytes());
        self.hasher.update([0, kind_tag]);
    }

    pub(crate) fn finish(self) -> u128 {
        digest_prefix(&self.hasher.finalize())
    }
}

/// A change this close to "now" may be followed by another within the same
/// timestamp tick that leaves the state as it was; such stamps are "racy"
/// and are backed by a digest of the content (files) or the shape (folders).
pub const RACY_WINDOW: Duration = Duration::from_secs(2);

/// True when `state`'s mtime is within `RACY_WINDOW` of `now` (or after it).
pub fn is_recent(state: &FileState, now: SystemTime) -> bool {
    let threshold = now.checked_sub(RACY_WINDOW).unwrap_or(now);
    state.modified() >= threshold
}

/// The first 128 bits of the SHA-256 of `bytes`.
pub(crate) fn content_digest(bytes: &[u8]) -> u128 {
    digest_prefix(&Sha256::digest(bytes))
}

/// The digest of the file at `path` now, for checking a racy stamp.
pub(crate) fn file_digest(path: &Path) -> Option<u128> {
    fs::read(path).ok().map(|bytes| content_digest(&bytes))
}

fn digest_prefix(bytes: &[u8]) -> u128 {
    let mut first = [0u8; 16];
    first.copy_from_slice(&bytes[..16]);
    u128::from_le_bytes(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_its_mtime() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        fs::write(&file, "x").unwrap();
        let meta = fs::metadata(&file).unwrap();
        let state = FileState::of(&meta);
        assert_eq!(state.modified(), meta.modified().unwrap());
        assert_eq!(state.size, 1);
        assert_eq!(FileState::read(&file), Some(state));
        assert_eq!(FileState::read(&dir.path().join("missing")), None);
    }

    #[test]
    fn changed_finds_edits_on_every_thread_count() {
        let dir = tempfile::tempdir().unwrap();
        let mut fp = Fingerprint::default();
        for i in 0..3000 {
            let p = dir.path().join(format!("f{i}"));
            fs::write(&p, "a").unwrap();
            fp.record(&p, StampKind::SkillFile, FileState::read(&p));
        }
        assert!(fp.changed(2).is_empty());
        assert!(fp.is_current());
        fs::write(dir.path().join("f7"), "bb").unwrap();
        fs::remove_file(dir.path().join("f2999")).unwrap();
        assert_eq!(fp.changed(1), vec![7, 2999]);
        assert_eq!(fp.changed(2), vec![7, 2999]);
        assert!(!fp.is_current());
    }

    #[test]
    fn checking_beside_other_work_finds_every_change_once() {
        let items: Vec<u32> = (0..5000).collect();
        for threads in [1, 2, 4] {
            // Each index reports itself and, from even ones, its neighbour:
            // the result is sorted and holds every index once.
            let each = |i: usize| {
                Some(if i.is_multiple_of(2) {
                    vec![i + 1, i]
                } else {
                    vec![i]
                })
            };
            let (found, other) = collect_beside(items.len(), threads, each, || "decoded");
            assert_eq!(other, "decoded");
            let expected: Vec<usize> = (0..5000).collect();
            assert_eq!(found, Some(expected), "{threads} threads");
            let failing = |i: usize| (i != 4321).then(Vec::new);
            assert_eq!(collect_beside(5000, threads, failing, || ()).0, None);
            let changed = changed_indices(&items, threads, |n| n % 7 == 3);
            let expected: Vec<usize> = (0..5000).filter(|i| i % 7 == 3).collect();
            assert_eq!(changed, expected, "{threads} threads");
        }
    }

    #[test]
    fn shape_depends_on_names_and_kinds_only() {
        let shape = |entries: &[(&str, u8)]| {
            let mut s = Shape::default();
            for (n, k) in entries {
                s.add(n, *k);
            }
            s.finish()
        };
        assert_eq!(shape(&[("a", 1), ("b", 2)]), shape(&[("a", 1), ("b", 2)]));
        assert_ne!(shape(&[("a", 1), ("b", 2)]), shape(&[("a", 1), ("b", 1)]));
        assert_ne!(shape(&[("ab", 1)]), shape(&[("a", 1), ("b", 1)]));
    }
}
