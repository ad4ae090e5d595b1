//! The snapshot's stamps section: every stamp stored relative to its root,
//! in runs that the checking threads decode and check on their own.

use std::borrow::Cow;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rustix::fs::CWD;
use serde::{Deserialize, Serialize};

use crate::roots::SkillRoot;
use crate::stamp::{FileState, Stamp, StampKind, collect_beside, file_digest, is_recent};
use crate::walk::{current_shape, worker_threads};

/// A stamp as stored: its path relative to a root (whole when it lies
/// under none), borrowed from the file's bytes when read.
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct StoredStamp<'a> {
    pub(super) root: Option<u32>,
    #[serde(borrow)]
    pub(super) rel: Cow<'a, str>,
    pub(super) kind: StampKind,
    pub(super) state: Option<FileState>,
    pub(super) shape: u128,
    pub(super) digest: Option<u128>,
}

/// `path` below `root` as the text that `root.join(text)` turns back into
/// the very same bytes (`""` for the root itself); `None` when there is none.
/// Byte-level, so storing 20,000 stamps builds no paths.
pub(super) fn relative_to<'p>(path: &'p Path, root: &Path) -> Option<&'p str> {
    use std::os::unix::ffi::OsStrExt;
    let (p, r) = (path.as_os_str().as_bytes(), root.as_os_str().as_bytes());
    if p == r {
        return Some("");
    }
    let rest = p.strip_prefix(r)?;
    let rest = if r.ends_with(b"/") {
        rest
    } else {
        rest.strip_prefix(b"/")?
    };
    if rest.is_empty() || rest.starts_with(b"/") {
        return None;
    }
    std::str::from_utf8(rest).ok()
}

impl<'a> StoredStamp<'a> {
    /// `stamp` relative to the first root that gives back the very same path;
    /// `None` for a path that is not UTF-8 (such trees are not snapshotted).
    pub(super) fn of(stamp: &'a Stamp, roots: &[SkillRoot]) -> Option<Self> {
        let relative = roots.iter().enumerate().find_map(|(i, root)| {
            Some((
                u32::try_from(i).ok()?,
                relative_to(&stamp.path, &root.path)?,
            ))
        });
        let (root, rel) = match relative {
            Some((i, rel)) => (Some(i), rel),
            None => (None, stamp.path.to_str()?),
        };
        Some(Self {
            root,
            rel: Cow::Borrowed(rel),
            kind: stamp.kind,
            state: stamp.state,
            shape: stamp.shape,
            digest: stamp.digest,
        })
    }

    pub(super) fn path(&self, roots: &[SkillRoot]) -> Option<PathBuf> {
        match self.root {
            None => Some(PathBuf::from(self.rel.as_ref())),
            Some(i) => {
                let root = &roots.get(usize::try_from(i).ok()?)?.path;
                Some(if self.rel.is_empty() {
                    root.clone()
                } else {
                    root.join(self.rel.as_ref())
                })
            }
        }
    }

    pub(super) fn into_stamp(self, roots: &[SkillRoot]) -> Option<Stamp> {
        Some(Stamp {
            path: self.path(roots)?,
            kind: self.kind,
            state: self.state,
            shape: self.shape,
            digest: self.digest,
        })
    }
}

/// Stamps per run: each run is encoded on its own, so the threads that
/// check a snapshot also decode it, a run at a time, instead of waiting for
/// one thread to decode all 20,000 first.
const RUN: usize = 512;

/// The stamps section as written: the number of stamps, then runs of up to
/// `RUN` stamps, each a length-prefixed postcard `Vec<StoredStamp>`.
#[cfg(test)]
pub(super) fn encode_stamps(stored: &[StoredStamp<'_>]) -> Result<Vec<u8>, Unstorable> {
    encode_runs(stored.len(), |r| {
        Ok(stored[r * RUN..(r * RUN + RUN).min(stored.len())].to_vec())
    })
}

/// Why stamps are not stored (and the snapshot is not written).
#[derive(Debug)]
pub(super) enum Unstorable {
    /// A path is not UTF-8 (such trees are not snapshotted).
    NotUtf8,
    /// A file changed within the racy window and was read without a digest,
    /// so it could not be proven unchanged later; the next process writes
    /// the snapshot instead.
    Unprovable,
    Encoding,
}

impl std::error::Error for Unstorable {}

impl std::fmt::Display for Unstorable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Unstorable::NotUtf8 => "a stamped path is not UTF-8",
            Unstorable::Unprovable => "files changed within the last seconds",
            Unstorable::Encoding => "encoding the stamps failed",
        })
    }
}

/// The stamps section for `stamps`, stored relative to `roots` and
/// converted run by run as they are encoded; `written` is when the snapshot
/// is written (for the racy window).
pub(super) fn encode_stamps_of(
    stamps: &[Stamp],
    roots: &[SkillRoot],
    written: SystemTime,
) -> Result<Vec<u8>, Unstorable> {
    encode_runs(stamps.len(), |r| {
        let run = &stamps[r * RUN..(r * RUN + RUN).min(stamps.len())];
        run.iter()
            .map(|stamp| {
                let recent = stamp
                    .state
                    .as_ref()
                    .is_some_and(|st| is_recent(st, written));
                if stamp.kind != StampKind::Folder && stamp.digest.is_none() && recent {
                    return Err(Unstorable::Unprovable);
                }
                StoredStamp::of(stamp, roots).ok_or(Unstorable::NotUtf8)
            })
            .collect()
    })
}

/// The section for `total` stamps whose run `r` is `run(r)`.
fn encode_runs<'a>(
    total: usize,
    run: impl Fn(usize) -> Result<Vec<StoredStamp<'a>>, Unstorable>,
) -> Result<Vec<u8>, Unstorable> {
    let mut out = Vec::with_capacity(total * 64 + 16);
    push_varint(&mut out, total);
    let runs = total.div_ceil(RUN);
    push_varint(&mut out, runs);
    for r in 0..runs {
        let bytes = postcard::to_stdvec(&run(r)?).map_err(|_| Unstorable::Encoding)?;
        push_varint(&mut out, bytes.len());
        out.extend_from_slice(&bytes);
    }
    Ok(out)
}

pub(super) fn push_varint(out: &mut Vec<u8>, mut n: usize) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// The stamps section as read: its runs located, none decoded yet.
pub(super) struct StampTable<'a> {
    total: usize,
    runs: Vec<&'a [u8]>,
}

impl<'a> StampTable<'a> {
    pub(super) fn parse(bytes: &'a [u8]) -> Option<Self> {
        let (total, mut rest) = postcard::take_from_bytes::<usize>(bytes).ok()?;
        let (count, after) = postcard::take_from_bytes::<usize>(rest).ok()?;
        rest = after;
        if count != total.div_ceil(RUN) {
            return None;
        }
        let mut runs = Vec::with_capacity(count);
        for _ in 0..count {
            let (len, after) = postcard::take_from_bytes::<usize>(rest).ok()?;
            if after.len() < len {
                return None;
            }
            let (run, after) = after.split_at(len);
            runs.push(run);
            rest = after;
        }
        rest.is_empty().then_some(Self { total, runs })
    }

    pub(super) fn len(&self) -> usize {
        self.total
    }

    /// The stamps of run `r`; `None` when it does not decode to a full run.
    fn run(&self, r: usize) -> Option<Vec<StoredStamp<'a>>> {
        let stamps: Vec<StoredStamp<'a>> = postcard::from_bytes(self.runs.get(r)?).ok()?;
        let expected = RUN.min(self.total.checked_sub(r * RUN)?);
        (stamps.len() == expected).then_some(stamps)
    }

    /// Stamp `i`, decoded on its own.
    pub(super) fn get(&self, i: usize) -> Option<StoredStamp<'a>> {
        self.run(i / RUN)?.into_iter().nth(i % RUN)
    }

    /// Every stamp, in order.
    pub(super) fn all(&self) -> Option<Vec<StoredStamp<'a>>> {
        let mut out = Vec::with_capacity(self.total);
        for r in 0..self.runs.len() {
            out.extend(self.run(r)?);
        }
        Some(out)
    }

    /// Indices (ascending) of the stamps that no longer hold: moved, or
    /// recorded within the racy window of `written` and not proven unchanged.
    /// Runs are decoded and checked on every core while this thread runs
    /// `first`; `None` when a run does not decode.
    pub(super) fn changed_beside<R>(
        &self,
        roots: &[SkillRoot],
        written: SystemTime,
        first: impl FnOnce() -> R,
    ) -> (Option<Vec<usize>>, R) {
        let open = OpenRoots::open(roots);
        let check_run = |r: usize| {
            let stamps = self.run(r)?;
            let mut checker = open.checker(roots);
            let changed = stamps
                .iter()
                .enumerate()
                .filter(|(_, s)| checker.moved(s) || racy_and_unproven(s, roots, written));
            Some(changed.map(|(i, _)| r * RUN + i).collect::<Vec<_>>())
        };
        collect_beside(self.runs.len(), worker_threads(), check_run, first)
    }
}

/// The roots opened once (as `O_PATH` handles), so each stamp below one is
/// stat'ed relative to it: with 20,000 stamps, looking the root's own path
/// up again each time was a fair share of a warm start.
pub(super) struct OpenRoots {
    folders: Vec<Option<OwnedFd>>,
}

impl OpenRoots {
    pub(super) fn open(roots: &[SkillRoot]) -> Self {
        Self {
            folders: roots
                .iter()
                .map(|root| open_path_only(CWD, root.path.as_path()))
                .collect(),
        }
    }

    /// A checker for one run of neighbouring stamps (see `StampChecker`).
    fn checker<'a>(&'a self, roots: &'a [SkillRoot]) -> StampChecker<'a> {
        StampChecker {
            open: self,
            roots,
            parent: None,
        }
    }
}

/// A folder opened only to name paths relative to it (no reading).
fn open_path_only(dir: impl AsFd, path: impl AsRef<Path>) -> Option<OwnedFd> {
    use rustix::fs::{Mode, OFlags, openat};
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    openat(dir, path.as_ref(), flags, Mode::empty()).ok()
}

/// Tells whether stamps moved, for a run of neighbours in walk order. Such
/// stamps mostly share a parent folder (a category's skills and their
/// SKILL.md files), so that folder is opened once for the run and each
/// stamp is stat'ed by its last one or two names below it: the kernel then
/// looks up two or three path components per stamp instead of five or six.
struct StampChecker<'a> {
    open: &'a OpenRoots,
    roots: &'a [SkillRoot],
    /// The shared folder of the current run: its root, its path below the
    /// root, and the handle (`None` when it could not be opened).
    parent: Option<(u32, String, Option<OwnedFd>)>,
}

impl StampChecker<'_> {
    /// True when the path of `stamp` no longer has the recorded state.
    fn moved(&mut self, stamp: &StoredStamp<'_>) -> bool {
        let root_folder = stamp
            .root
            .and_then(|i| self.open.folders.get(usize::try_from(i).ok()?)?.as_ref());
        let (Some(root), Some(root_folder)) = (stamp.root, root_folder) else {
            // A root that is missing now, or a stamp under no root.
            return match stamp.path(self.roots) {
                Some(path) => FileState::read(&path) != stamp.state,
                None => true,
            };
        };
        let rel: &str = stamp.rel.as_ref();
        let (parent, tail) = split_parent(rel, stamp.kind);
        if parent.is_empty() {
            return FileState::read_at(root_folder, rel) != stamp.state;
        }
        let same = matches!(&self.parent, Some((r, p, _)) if *r == root && *p == parent);
        if !same {
            let folder = open_path_only(root_folder, parent);
            self.parent = Some((root, parent.to_owned(), folder));
        }
        let state = match &self.parent {
            Some((_, _, Some(folder))) => FileState::read_at(folder, tail),
            // The folder cannot be opened (gone, say): ask by the whole path.
            _ => FileState::read_at(root_folder, rel),
        };
        state != stamp.state
    }
}

/// Splits a stamp's path below its root into the folder shared with its
/// neighbours and the rest: a folder's parent, or a file's grandparent
/// (so `cat/skill` and `cat/skill/SKILL.md` share `cat`).
pub(super) fn split_parent(rel: &str, kind: StampKind) -> (&str, &str) {
    let mut cut = rel.rfind('/');
    if kind != StampKind::Folder {
        cut = cut.and_then(|i| rel[..i].rfind('/'));
    }
    match cut {
        Some(i) => (&rel[..i], &rel[i + 1..]),
        None => ("", rel),
    }
}

/// True when `stamp` still matches but was recorded so close to the write
/// (`written`) that a same-tick change could hide behind it, and its content
/// (files) or shape (folders) no longer proves it unchanged.
fn racy_and_unproven(stamp: &StoredStamp<'_>, roots: &[SkillRoot], written: SystemTime) -> bool {
    let Some(state) = &stamp.state else {
        return false;
    };
    if !is_recent(state, written) {
        return false;
    }
    let Some(path) = stamp.path(roots) else {
        return true;
    };
    let still_same = match stamp.kind {
        StampKind::Folder => current_shape(&path) == Some(stamp.shape),
        StampKind::SkillFile | StampKind::CategoryFile => {
            stamp.digest.is_some() && file_digest(&path) == stamp.digest
        }
    };
    !still_same
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(i: usize) -> StoredStamp<'static> {
        StoredStamp {
            root: (!i.is_multiple_of(3)).then_some(0),
            rel: Cow::Owned(format!("c{}/s{i}", i % 7)),
            kind: if i.is_multiple_of(2) {
                StampKind::Folder
            } else {
                StampKind::SkillFile
            },
            state: (!i.is_multiple_of(5)).then_some(FileState {
                mtime_secs: i as i64,
                mtime_nanos: 7,
                size: 1,
                dev: 2,
                ino: i as u64,
            }),
            shape: i as u128 * 31,
            digest: i.is_multiple_of(4).then_some(i as u128),
        }
    }

    fn same(a: &StoredStamp<'_>, b: &StoredStamp<'_>) -> bool {
        (a.root, a.rel.as_ref(), a.kind, a.state, a.shape, a.digest)
            == (b.root, b.rel.as_ref(), b.kind, b.state, b.shape, b.digest)
    }

    #[test]
    fn runs_give_back_every_stamp_in_order() {
        for total in [0, 1, RUN - 1, RUN, RUN + 1, 2 * RUN + 77] {
            let stamps: Vec<_> = (0..total).map(stamp).collect();
            let bytes = encode_stamps(&stamps).unwrap();
            let mut count = Vec::new();
            push_varint(&mut count, total);
            assert_eq!(count, postcard::to_stdvec(&total).unwrap());
            let table = StampTable::parse(&bytes).unwrap();
            assert_eq!(table.len(), total);
            let all = table.all().unwrap();
            assert_eq!(all.len(), total);
            assert!(all.iter().zip(&stamps).all(|(a, b)| same(a, b)), "{total}");
            for i in [0, RUN - 1, RUN, total.saturating_sub(1)] {
                if i < total {
                    assert!(same(&table.get(i).unwrap(), &stamps[i]), "{total}: {i}");
                }
            }
            assert!(table.get(total).is_none());
        }
    }

    #[test]
    fn a_damaged_section_is_refused() {
        let stamps: Vec<_> = (0..RUN + 5).map(stamp).collect();
        let bytes = encode_stamps(&stamps).unwrap();
        assert!(StampTable::parse(&bytes[..bytes.len() - 1]).is_none());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(StampTable::parse(&longer).is_none());
        // A count that disagrees with the number of runs.
        let mut wrong = bytes;
        wrong[0] = wrong[0].wrapping_add(1);
        assert!(StampTable::parse(&wrong).is_none_or(|t| t.all().is_none()));
        assert!(StampTable::parse(&[]).is_none());
    }
}
