//! The bounded, sorted breadth-first walk of every root. Each level of the
//! walk is read on all cores; each folder's SKILL.md is read and parsed by the
//! thread that listed the folder, so listing, reading and parsing overlap.
//!
//! All decisions that depend on order (loop detection, one physical folder
//! counted once, the folder budget) are taken afterwards on one thread in
//! breadth-first order, so the result is the same on any number of cores.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::hash::{BuildHasherDefault, Hasher};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};

use rustix::fs::{Dir, FileType, Mode, OFlags};

use crate::beneath::{self, Base, DIR_FLAGS, Links};
use crate::discovery::{
    SkillPlace, SkillRead, build_skill, category_description, read_head, read_skill_from,
    unreadable,
};
use crate::roots::DiscoveryOptions;
use crate::skill::{SUPPORT_DIRS, Scope, Skill};
use crate::skill_set::{DoctorEntry, EntryStatus, RootReport, SkillSet};
use crate::stamp::{FileState, Fingerprint, Shape, Stamp, StampKind};

/// Folder names never walked, besides every name starting with a dot.
pub(crate) const SKIPPED_DIRS: [&str; 5] = [
    "node_modules",
    "venv",
    "__pycache__",
    "site-packages",
    "env",
];
/// Below this many folders in one level, threads cost more than they save.
const PARALLEL_LEVEL: usize = 48;
/// Folders a thread takes at a time from a level.
const CHUNK: usize = 32;

/// A SKILL.md found by the walk, already read and parsed.
pub(crate) struct Candidate {
    pub skill_md: PathBuf,
    /// The skill built by the thread that read it, or why it is none.
    pub outcome: Result<Skill, String>,
}

/// A DESCRIPTION.md found in a category folder, already read.
pub(crate) struct CategoryNote {
    pub root_index: usize,
    pub category: String,
    pub description: Option<String>,
}

pub(crate) struct WalkOutput {
    pub candidates: Vec<Candidate>,
    pub entries: Vec<DoctorEntry>,
    pub categories: Vec<CategoryNote>,
    pub roots: Vec<RootReport>,
    pub notices: Vec<String>,
    pub fingerprint: Fingerprint,
}

pub(crate) fn walk_roots(options: &DiscoveryOptions) -> WalkOutput {
    walk_roots_on(options, worker_threads())
}

/// Threads for file-system work: the cores there are, at most eight.
pub(crate) fn worker_threads() -> usize {
    // Asking reads cgroup files each time (a third of a millisecond here),
    // and a warm start asks several times.
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(8)
    })
}

/// `walk_roots` on up to `threads` threads; the result does not depend on it.
fn walk_roots_on(options: &DiscoveryOptions, threads: usize) -> WalkOutput {
    let mut out = WalkOutput {
        candidates: Vec::new(),
        entries: Vec::new(),
        categories: Vec::new(),
        roots: Vec::new(),
        notices: Vec::new(),
        fingerprint: Fingerprint::default(),
    };
    // One physical skill folder counts once, even when two roots reach it
    // (the value: the candidate that claimed it).
    let mut claimed: FolderKeys<usize> = FolderKeys::default();
    for (root_index, root) in options.roots.iter().enumerate() {
        let before = out.candidates.len();
        let truncated = walk_root(
            root_index,
            &root.path,
            options,
            threads,
            &mut out,
            &mut claimed,
        );
        out.roots.push(RootReport {
            path: root.path.clone(),
            scope: root.scope.clone(),
            skills: out.candidates.len() - before,
            truncated,
        });
    }
    out
}

/// A folder waiting to be read: its path, its path below the root
/// (`/`-separated, empty for the root) and its depth.
struct Queued {
    dir: PathBuf,
    rel: String,
    /// The folder's real path below the root (no links in it), by which it
    /// is opened: `rel` differs only below a link that stays inside the root.
    real: String,
    depth: usize,
}

fn walk_root(
    root_index: usize,
    root: &Path,
    options: &DiscoveryOptions,
    threads: usize,
    out: &mut WalkOutput,
    claimed: &mut FolderKeys<usize>,
) -> bool {
    // The root is resolved once (it may be a link the user configured);
    // every folder and file below is opened relative to this handle.
    let base = match Base::open(root) {
        Ok(base) => base,
        Err(e) => {
            if fs::metadata(root).is_ok_and(|m| m.is_dir()) {
                out.notices
                    .push(format!("cannot read directory {}: {e}", root.display()));
            }
            out.fingerprint
                .record(root, StampKind::Folder, FileState::read(root));
            return false;
        }
    };
    let mut visited: FolderKeys<()> = FolderKeys::default();
    let mut level = vec![Queued {
        dir: root.to_path_buf(),
        rel: String::new(),
        real: String::new(),
        depth: 0,
    }];
    let mut dirs_read = 0usize;
    let mut truncated = false;

    while !level.is_empty() {
        let budget = options.max_dirs.saturating_sub(dirs_read);
        if level.len() > budget {
            truncated = true;
            out.notices.push(format!(
                "stopped reading {} after {} folders (skills.scan_max_dirs): {} more folders and what is below them were not read, so their skills are not loaded (`knack skills doctor` lists them); raise skills.scan_max_dirs to load them",
                root.display(),
                options.max_dirs,
                level.len() - budget
            ));
            for rest in level.drain(budget..) {
                report_unwalked(&rest.dir, out, "the walk stopped at skills.scan_max_dirs");
            }
        }
        if level.is_empty() {
            break;
        }
        dirs_read += level.len();
        // Most folders of a deep level hold a skill; room up front saves
        // moving every candidate again as the vector doubles.
        out.candidates.reserve(level.len());
        out.fingerprint.stamps.reserve(level.len() * 2);
        let mut next = Vec::new();
        let root_ref = RootRef {
            index: root_index,
            scope: &options.roots[root_index].scope,
        };
        read_level_in_order(&level, &root_ref, &base, threads, |queued, read| {
            accept_folder(
                queued,
                read,
                root_index,
                options,
                out,
                claimed,
                &mut visited,
                &mut truncated,
                &mut next,
            );
        });
        level = next;
    }
    truncated
}

/// Applies one folder's read, in walk order: the loop guard, the stamp, the
/// skill or category it holds, and the subfolders for the next level. The
/// reading thread prepared every path and stamp; this only decides.
#[allow(clippy::too_many_arguments)]
fn accept_folder(
    queued: &Queued,
    read: FolderRead,
    root_index: usize,
    options: &DiscoveryOptions,
    out: &mut WalkOutput,
    claimed: &mut FolderKeys<usize>,
    visited: &mut FolderKeys<()>,
    truncated: &mut bool,
    next: &mut Vec<Queued>,
) {
    let FolderRead {
        state,
        mut stamp,
        listing,
        skill,
        description,
        children,
    } = read;
    let key = state.map(|s| (s.dev, s.ino));
    if let Some(key) = key
        && visited.insert(key, ()).is_some()
    {
        // Stamped too, so a link that is pointed elsewhere later is noticed.
        stamp.shape = 0;
        out.fingerprint.stamps.push(stamp);
        out.notices.push(format!(
            "{} was skipped: it leads back to a folder already walked (a link loop)",
            queued.dir.display()
        ));
        return;
    }
    out.fingerprint.stamps.push(stamp);
    let has_skill_md = match listing {
        Ok(has_skill_md) => has_skill_md,
        Err(e) => {
            out.notices.push(format!(
                "cannot read directory {}: {e}",
                queued.dir.display()
            ));
            return;
        }
    };
    if has_skill_md {
        let skill_md = || queued.dir.join("SKILL.md");
        if queued.depth == 0 {
            out.entries.push(DoctorEntry::new(
                &skill_md(),
                EntryStatus::Skipped,
                "SKILL.md sits directly in a skills root; move it into a folder named after the skill".into(),
            ));
        } else if let Some(&first) = key.and_then(|k| claimed.get(&k)) {
            let reason = format!(
                "the same folder was already found as {}",
                out.candidates[first].skill_md.display()
            );
            out.entries
                .push(DoctorEntry::new(&skill_md(), EntryStatus::Skipped, reason));
        } else if let Some(found) = skill {
            if let Some(key) = key {
                claimed.insert(key, out.candidates.len());
            }
            out.fingerprint.stamps.push(found.stamp);
            out.candidates.push(found.candidate);
        }
    } else if let Some((stamp, description)) = description {
        out.fingerprint.stamps.push(stamp);
        out.categories.push(CategoryNote {
            root_index,
            category: queued.rel.clone(),
            description,
        });
    }

    for child in children {
        let mut real = child.real;
        if let Some(link) = child.link {
            // Symlinks (and unknown types) were resolved by the reading thread.
            match link.state {
                Some(state) if link.is_dir => match link.inside {
                    // Stamped when the folder itself is read, through the link.
                    Ok(inside) => real = inside,
                    Err(target) => {
                        // Never walked: a link may not carry discovery out of
                        // its root. Stamped, so pointing it elsewhere is noticed.
                        out.fingerprint
                            .record(&child.path, StampKind::Folder, Some(state));
                        out.notices.push(format!(
                            "link {} leads outside its root, to {}; it is not followed (add that folder to skills.external_dirs to use its skills)",
                            child.path.display(),
                            target.display()
                        ));
                        continue;
                    }
                },
                state => {
                    // Stamped, so a link that is fixed or pointed elsewhere later is noticed.
                    out.fingerprint
                        .record(&child.path, StampKind::Folder, state);
                    if state.is_none() && child.symlink {
                        out.notices.push(format!(
                            "broken link {} was skipped (its target does not exist)",
                            child.path.display()
                        ));
                    }
                    continue;
                }
            }
        }
        if child.support {
            continue;
        }
        if queued.depth + 1 > options.max_depth {
            *truncated = true;
            report_unwalked(&child.path, out, "it is deeper than skills.scan_max_depth");
            continue;
        }
        let rel = if queued.rel.is_empty() {
            child.name
        } else {
            format!("{}/{}", queued.rel, child.name)
        };
        next.push(Queued {
            dir: child.path,
            rel,
            real,
            depth: queued.depth + 1,
        });
    }
}

/// Folder identities (device, inode) as keys, hashed cheaply: they are
/// already well spread, and the walk looks one up per folder.
type FolderKeys<V> = HashMap<(u64, u64), V, BuildHasherDefault<FolderKeyHasher>>;

#[derive(Default)]
struct FolderKeyHasher(u64);

impl Hasher for FolderKeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// What one thread learned about one folder, with every path and stamp the
/// ordered bookkeeping will need already built.
struct FolderRead {
    /// The folder's own state, from the open handle (or a stat if it cannot be opened).
    state: Option<FileState>,
    /// The folder's stamp (with the digest of its shape when it could be listed).
    stamp: Stamp,
    /// Whether the listing holds a SKILL.md, or why there is no listing.
    listing: Result<bool, String>,
    /// SKILL.md, read, parsed and built, when the folder has one (and is not a root).
    skill: Option<FoundSkill>,
    /// DESCRIPTION.md of a category folder (not a root, no SKILL.md).
    description: Option<(Stamp, Option<String>)>,
    /// The entries the walk may descend into, in listing order.
    children: Vec<Child>,
}

/// A SKILL.md found by a reading thread: its stamp and its candidate.
struct FoundSkill {
    stamp: Stamp,
    candidate: Candidate,
}

/// A walkable entry of a folder (not a plain file, not hidden or skipped).
struct Child {
    name: String,
    path: PathBuf,
    /// Its real path below the root, when it is a real folder (a link's is
    /// found by resolving it).
    real: String,
    symlink: bool,
    /// A support folder of a skill (never walked).
    support: bool,
    /// For a symlink or an entry of unknown type: where it leads.
    link: Option<LinkTarget>,
}

/// Where a symlink (or an entry of unknown type) leads.
struct LinkTarget {
    state: Option<FileState>,
    is_dir: bool,
    /// For a folder: its real path below the root, or the target when it
    /// leaves the root.
    inside: Result<String, PathBuf>,
}

/// Reads every folder of one level and hands each read to `accept` in
/// level order. Helper threads and this thread take chunks of the level in
/// turn; this thread accepts finished chunks in order as soon as they are
/// ready, so the ordered bookkeeping overlaps with the reading.
fn read_level_in_order(
    level: &[Queued],
    root: &RootRef<'_>,
    base: &Base,
    threads: usize,
    mut accept: impl FnMut(&Queued, FolderRead),
) {
    let read = |q: &Queued| read_folder(q, root, base);
    if threads <= 1 || level.len() < PARALLEL_LEVEL {
        for queued in level {
            accept(queued, read(queued));
        }
        return;
    }
    let chunks = level.len().div_ceil(CHUNK);
    let part = |c: usize| &level[c * CHUNK..((c + 1) * CHUNK).min(level.len())];
    let next_chunk = AtomicUsize::new(0);
    let done: Vec<Mutex<Option<Vec<FolderRead>>>> = (0..chunks).map(|_| Mutex::new(None)).collect();
    let store = |c: usize, reads: Vec<FolderRead>| match done[c].lock() {
        Ok(mut slot) => *slot = Some(reads),
        Err(poisoned) => *poisoned.into_inner() = Some(reads),
    };
    let take = |c: usize| match done[c].lock() {
        Ok(mut slot) => slot.take(),
        Err(poisoned) => poisoned.into_inner().take(),
    };
    let (finished, finishes) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        for _ in 1..threads {
            let finished = finished.clone();
            let (next_chunk, store) = (&next_chunk, &store);
            // A helper the system will not start (a process limit) is no
            // error: this thread then reads every chunk itself.
            let _ = std::thread::Builder::new().spawn_scoped(scope, move || {
                loop {
                    let c = next_chunk.fetch_add(1, Ordering::Relaxed);
                    if c >= chunks {
                        break;
                    }
                    store(c, part(c).iter().map(read).collect());
                    let _ = finished.send(());
                }
            });
        }
        drop(finished);
        let mut helpers_gone = false;
        for c in 0..chunks {
            let reads = loop {
                if let Some(reads) = take(c) {
                    break reads;
                }
                let mine = next_chunk.fetch_add(1, Ordering::Relaxed);
                if mine < chunks {
                    store(mine, part(mine).iter().map(read).collect());
                } else if helpers_gone || finishes.recv().is_err() {
                    // A helper that died with this chunk in hand: read it here.
                    helpers_gone = true;
                    if let Some(reads) = take(c) {
                        break reads;
                    }
                    break part(c).iter().map(read).collect();
                }
            };
            for (queued, folder) in part(c).iter().zip(reads) {
                accept(queued, folder);
            }
        }
    });
}

fn read_folder(queued: &Queued, root: &RootRef<'_>, base: &Base) -> FolderRead {
    let (dir, is_root) = (queued.dir.as_path(), queued.depth == 0);
    let mut read = FolderRead {
        state: None,
        stamp: Stamp {
            path: dir.to_path_buf(),
            kind: StampKind::Folder,
            state: None,
            shape: 0,
            digest: None,
        },
        listing: Err(String::new()),
        skill: None,
        description: None,
        children: Vec::new(),
    };
    // By its real path below the root's handle, through no link: a folder
    // swapped for a link after it was listed is not read, not followed.
    let opened = beneath::open(
        base.fd.as_fd(),
        &base.real,
        Path::new(&queued.real),
        DIR_FLAGS,
        Links::Never,
    );
    let fd = match opened {
        Ok(fd) => fd,
        Err(e) => {
            read.state = FileState::read(dir);
            read.stamp.state = read.state;
            read.listing = Err(if beneath::is_link_refusal(&e) {
                "it turned into a symbolic link while the walk read it; it was not followed"
                    .to_owned()
            } else {
                e.to_string()
            });
            return read;
        }
    };
    read.state = rustix::fs::fstat(&fd).ok().map(|st| state_from_stat(&st));
    read.stamp.state = read.state;
    let entries = match list_folder(fd) {
        Ok((entries, listed)) => {
            let kind_of = |name: &str| entries.iter().find(|e| e.name == name).map(|e| e.kind);
            if let Ok(dir_fd) = listed.fd() {
                let at = Listed {
                    dir: dir_fd,
                    base,
                    real: &queued.real,
                };
                match (kind_of("SKILL.md"), kind_of("DESCRIPTION.md")) {
                    _ if is_root => {}
                    (Some(kind), _) => read.skill = Some(read_and_build(&at, kind, queued, root)),
                    (None, Some(kind)) => {
                        read.description = Some(read_description_at(&at, kind, dir));
                    }
                    (None, None) => {}
                }
            }
            entries
        }
        Err(e) => {
            read.listing = Err(e.to_string());
            return read;
        }
    };
    let has_skill_md = entries.iter().any(|e| e.name == "SKILL.md");
    read.stamp.shape = shape_of(&entries);
    read.listing = Ok(has_skill_md);
    read.children = entries
        .into_iter()
        .filter(DirEntryInfo::walkable)
        .map(|entry| {
            let path = dir.join(&entry.name);
            let link = (entry.kind != EntryKind::Dir).then(|| resolve_link(&path, &base.real));
            Child {
                support: has_skill_md && SUPPORT_DIRS.contains(&entry.name.as_str()),
                symlink: entry.kind == EntryKind::Symlink,
                real: child_rel(&queued.real, &entry.name),
                name: entry.name,
                path,
                link,
            }
        })
        .collect();
    read
}

/// `parent/name` below the root (`name` alone at the root).
fn child_rel(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}/{name}")
    }
}

/// Where a symlink (or an entry of unknown type) leads: its target's state,
/// and for a folder its real path below the root, or the target outside it.
fn resolve_link(child: &Path, canonical_root: &Path) -> LinkTarget {
    let Ok(meta) = fs::metadata(child) else {
        return LinkTarget {
            state: None,
            is_dir: false,
            inside: Err(PathBuf::new()),
        };
    };
    let inside = if meta.is_dir() {
        match child.canonicalize() {
            Ok(target) => match target.strip_prefix(canonical_root) {
                Ok(rel) => Ok(rel.to_string_lossy().into_owned()),
                Err(_) => Err(target),
            },
            Err(_) => Err(child.to_path_buf()),
        }
    } else {
        Err(PathBuf::new())
    };
    LinkTarget {
        state: Some(FileState::of(&meta)),
        is_dir: meta.is_dir(),
        inside,
    }
}

fn open_folder(dir: &Path) -> rustix::io::Result<OwnedFd> {
    rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

fn state_from_stat(st: &rustix::fs::Stat) -> FileState {
    FileState {
        mtime_secs: st.st_mtime,
        mtime_nanos: u32::try_from(st.st_mtime_nsec).unwrap_or(0),
        size: u64::try_from(st.st_size).unwrap_or(0),
        dev: st.st_dev,
        ino: st.st_ino,
    }
}

/// The root a folder belongs to, as the reading threads need it.
struct RootRef<'a> {
    index: usize,
    scope: &'a Scope,
}

/// A listed folder, with what is needed to open its files beneath the root.
struct Listed<'a> {
    dir: std::os::fd::BorrowedFd<'a>,
    base: &'a Base,
    /// The folder's real path below the root.
    real: &'a str,
}

/// Reads and parses a folder's SKILL.md and builds the skill, on the
/// reading thread, with the stamp the walk records for it.
fn read_and_build(
    at: &Listed<'_>,
    kind: EntryKind,
    queued: &Queued,
    root: &RootRef<'_>,
) -> FoundSkill {
    let skill_md = queued.dir.join("SKILL.md");
    let read = read_skill_at(at, kind, &skill_md);
    let stamp = Stamp {
        path: skill_md.clone(),
        kind: StampKind::SkillFile,
        state: read.state,
        shape: 0,
        digest: read.digest,
    };
    let outcome = read.outcome.map(|parsed| {
        let place = SkillPlace {
            root_index: root.index,
            skill_md: skill_md.clone(),
            skill_dir: queued.dir.clone(),
            id: queued.rel.clone(),
        };
        build_skill(place, root.scope, parsed)
    });
    FoundSkill {
        stamp,
        candidate: Candidate { skill_md, outcome },
    }
}

/// SKILL.md opened relative to its folder (no second path lookup); its
/// state comes from the open handle. A link is read only when it stays
/// beneath the root; one that leaves it is reported and never opened.
fn read_skill_at(at: &Listed<'_>, kind: EntryKind, path: &Path) -> SkillRead {
    if kind == EntryKind::Special {
        return SkillRead {
            state: FileState::read(path),
            digest: None,
            outcome: Err(crate::discovery::not_regular_message("SKILL.md")),
        };
    }
    match open_listed(at, "SKILL.md", kind) {
        Ok(file) => read_skill_from(file, path),
        Err(e) if beneath::is_link_refusal(&e) => SkillRead {
            state: FileState::read(path),
            digest: None,
            outcome: Err(format!(
                "SKILL.md is a symbolic link that leads outside its skills root{}; it is never read",
                fs::read_link(path)
                    .map(|t| format!(" (to {})", t.display()))
                    .unwrap_or_default()
            )),
        },
        Err(e) => SkillRead {
            state: FileState::read(path),
            digest: None,
            outcome: Err(unreadable(&e)),
        },
    }
}

/// A category's DESCRIPTION.md, with the stamp the walk records for it.
fn read_description_at(at: &Listed<'_>, kind: EntryKind, dir: &Path) -> (Stamp, Option<String>) {
    let mut stamp = Stamp {
        path: dir.join("DESCRIPTION.md"),
        kind: StampKind::CategoryFile,
        state: None,
        shape: 0,
        digest: None,
    };
    let description = open_listed(at, "DESCRIPTION.md", kind)
        .and_then(read_head)
        .ok()
        .and_then(|head| {
            stamp.state = Some(FileState::of(&head.meta));
            stamp.digest = head.digest;
            category_description(&head.text)
        });
    (stamp, description)
}

/// Opens the file `name` of a listed folder. Listed as a regular file, it is
/// opened with `O_NOFOLLOW` in the same call as before (a link swapped in
/// since the listing fails the open); listed as a link, it is resolved
/// beneath the root, and refused when it leaves it.
fn open_listed(at: &Listed<'_>, name: &str, kind: EntryKind) -> std::io::Result<fs::File> {
    // O_NONBLOCK: something that turned into a FIFO since the listing (or a
    // link to one) must not block the open; `read_head` refuses it after.
    let fd = if kind == EntryKind::File {
        rustix::fs::openat(
            at.dir,
            name,
            OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NONBLOCK,
            Mode::empty(),
        )?
    } else if kind == EntryKind::Special {
        return Err(std::io::Error::other(crate::discovery::NOT_A_FILE));
    } else {
        beneath::open(
            at.base.fd.as_fd(),
            &at.base.real,
            Path::new(&child_rel(at.real, name)),
            OFlags::RDONLY | OFlags::NONBLOCK,
            Links::Inside,
        )?
    };
    Ok(fs::File::from(fd))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum EntryKind {
    File = 1,
    Dir = 2,
    Symlink = 3,
    Other = 4,
    /// A FIFO, socket or device: never opened (an open or read of one can
    /// block forever), never descended into.
    Special = 5,
}

pub(crate) struct DirEntryInfo {
    pub name: String,
    pub kind: EntryKind,
}

impl DirEntryInfo {
    /// A name the walk may descend into (its type is checked separately).
    fn walkable(&self) -> bool {
        !matches!(self.kind, EntryKind::File | EntryKind::Special)
            && !self.name.starts_with('.')
            && !SKIPPED_DIRS.contains(&self.name.as_str())
    }
}

/// Reads a folder's entries (sorted by name, with their type as the listing
/// reports it) and hands the open folder back for reads relative to it.
fn list_folder(fd: OwnedFd) -> std::io::Result<(Vec<DirEntryInfo>, Dir)> {
    let mut dir = Dir::new(fd)?;
    let mut entries = Vec::new();
    for entry in dir.by_ref() {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let kind = match entry.file_type() {
            FileType::Directory => EntryKind::Dir,
            FileType::RegularFile => EntryKind::File,
            FileType::Symlink => EntryKind::Symlink,
            // Some file systems do not fill in the type; ask.
            FileType::Unknown => EntryKind::Other,
            _ => EntryKind::Special,
        };
        entries.push(DirEntryInfo {
            name: String::from_utf8_lossy(name).into_owned(),
            kind,
        });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok((entries, dir))
}

/// The entries of the folder at `dir`, as the walk lists them (for the
/// side walks: decoys, unwalked folders, a folder's current shape).
fn list_path(dir: &Path) -> std::io::Result<Vec<DirEntryInfo>> {
    let fd = open_folder(dir)?;
    Ok(list_folder(fd)?.0)
}

/// The shape digest of `dir` as it is now, computed exactly as the walk does;
/// `None` when it cannot be listed.
pub(crate) fn current_shape(dir: &Path) -> Option<u128> {
    Some(shape_of(&list_path(dir).ok()?))
}

/// The digest of the entries the walk acts on (see `stamp::Shape`).
fn shape_of(entries: &[DirEntryInfo]) -> u128 {
    let mut shape = Shape::default();
    for entry in entries {
        let counts = if entry.kind == EntryKind::File {
            entry.name == "SKILL.md" || entry.name == "DESCRIPTION.md"
        } else {
            entry.walkable()
        };
        if counts {
            shape.add(&entry.name, entry.kind as u8);
        }
    }
    shape.finish()
}

/// SKILL.md files in a folder the walk did not read are reported, not silently
/// lost. The look is bounded so a huge unwalked tree stays cheap.
fn report_unwalked(dir: &Path, out: &mut WalkOutput, why: &str) {
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    let mut reported = 0usize;
    while let Some((dir, depth)) = stack.pop() {
        let skill_md = dir.join("SKILL.md");
        if skill_md.is_file() {
            out.entries.push(DoctorEntry::new(
                &skill_md,
                EntryStatus::Truncated,
                format!("not loaded: {why}"),
            ));
            reported += 1;
        }
        if depth >= 4 || reported >= 200 {
            continue;
        }
        let Ok(entries) = list_path(&dir) else {
            continue;
        };
        for DirEntryInfo { name, .. } in entries.into_iter().rev() {
            let path = dir.join(&name);
            if !name.starts_with('.') && !SKIPPED_DIRS.contains(&name.as_str()) && path.is_dir() {
                stack.push((path, depth + 1));
            }
        }
    }
}

/// Dot-folders of knack's own and of tools, never worth a doctor notice.
const QUIET_DOT_FOLDERS: [&str; 8] = [
    ".history", ".archive", ".locks", ".hub", ".git", ".github", ".cache", ".venv",
];

/// Doctor's notices about dot-folders the walk skipped although they hold
/// SKILL.md files (collections kept in `skills/.curated`, `.system`), with
/// how to load them. Doctor only: discovery never opens such folders. The
/// look is bounded like `report_unwalked`.
pub fn dot_folder_notices(set: &SkillSet) -> Vec<String> {
    let mut notices = Vec::new();
    for root in &set.roots {
        let mut stack = vec![(root.path.clone(), 0usize)];
        let mut looked = 0usize;
        while let Some((dir, depth)) = stack.pop() {
            looked += 1;
            if looked > 2_000 || notices.len() >= 20 {
                break;
            }
            let Ok(entries) = list_path(&dir) else {
                continue;
            };
            for DirEntryInfo { name, kind } in entries.into_iter().rev() {
                if matches!(kind, EntryKind::File | EntryKind::Special)
                    || SKIPPED_DIRS.contains(&name.as_str())
                {
                    continue;
                }
                let path = dir.join(&name);
                if !path.is_dir() || path.is_symlink() {
                    continue;
                }
                if !name.starts_with('.') {
                    if depth < 3 && !path.join("SKILL.md").is_file() {
                        stack.push((path, depth + 1));
                    }
                    continue;
                }
                if QUIET_DOT_FOLDERS.contains(&name.as_str()) || name.starts_with(".knack") {
                    continue;
                }
                let held = count_skill_mds(&path, 3, 200);
                if held > 0 {
                    let plural = if held == 1 { "" } else { "s" };
                    notices.push(format!(
                        "skipped the dot-folder {}, which holds {held} SKILL.md file{plural}; dot-folders are not walked, so add it to skills.external_dirs to load them",
                        path.display()
                    ));
                }
            }
        }
    }
    notices
}

/// SKILL.md files at most `depth` levels below `dir`, counting up to `cap`.
fn count_skill_mds(dir: &Path, depth: usize, cap: usize) -> usize {
    let mut found = 0;
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    while let Some((dir, d)) = stack.pop() {
        if found >= cap {
            break;
        }
        if dir.join("SKILL.md").is_file() {
            found += 1;
            continue;
        }
        if d >= depth {
            continue;
        }
        let Ok(entries) = list_path(&dir) else {
            continue;
        };
        for DirEntryInfo { name, kind } in entries {
            let path = dir.join(&name);
            if !matches!(kind, EntryKind::File | EntryKind::Special)
                && !path.is_symlink()
                && path.is_dir()
            {
                stack.push((path, d + 1));
            }
        }
    }
    found
}

/// Doctor entries for SKILL.md files kept inside the support folders of the
/// skills in `set` (an old package under `references/` is material, not a
/// skill). Only `skills doctor` needs them, so the walk itself never reads
/// support folders.
pub fn decoy_entries(set: &SkillSet) -> Vec<DoctorEntry> {
    let skill_mds = set.skills.iter().map(|s| s.path.as_path()).chain(
        set.entries
            .iter()
            .filter(|e| e.status == EntryStatus::Skipped && e.path.ends_with("SKILL.md"))
            .map(|e| e.path.as_path()),
    );
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for skill_md in skill_mds {
        let Some(dir) = skill_md.parent() else {
            continue;
        };
        if !seen.insert(dir) {
            continue;
        }
        for support in SUPPORT_DIRS {
            let child = dir.join(support);
            // A support folder that is a link is looked into only when it
            // stays inside the skill folder.
            let linked_out = child.is_symlink()
                && !dir.canonicalize().is_ok_and(|real| {
                    child
                        .canonicalize()
                        .is_ok_and(|target| target.starts_with(real))
                });
            if child.is_dir() && !linked_out {
                report_decoys(&child, skill_md, &mut out);
            }
        }
    }
    out
}

/// An old package kept under `references/` is material, not a skill; say so.
fn report_decoys(support_dir: &Path, owner: &Path, out: &mut Vec<DoctorEntry>) {
    // Links are looked through only while they stay inside the skill folder.
    let real_skill = owner.parent().and_then(|dir| dir.canonicalize().ok());
    let stays_inside = |path: &Path| {
        real_skill
            .as_ref()
            .is_some_and(|real| path.canonicalize().is_ok_and(|t| t.starts_with(real)))
    };
    let mut stack = vec![(support_dir.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = list_path(&dir) else {
            continue;
        };
        for DirEntryInfo { name, kind } in entries {
            let path = dir.join(&name);
            if name == "SKILL.md" {
                out.push(DoctorEntry::new(
                    &path,
                    EntryStatus::Skipped,
                    format!(
                        "inside a support folder of {}; it is a file of that skill, not a skill",
                        owner.display()
                    ),
                ));
            } else if depth < 4
                && (kind == EntryKind::Dir
                    || kind == EntryKind::Symlink && path.is_dir() && stays_inside(&path))
                && !name.starts_with('.')
            {
                stack.push((path, depth + 1));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::roots::SkillRoot;

    /// What a walk produced, in a comparable form.
    fn summary(out: &WalkOutput) -> Vec<String> {
        let mut lines = Vec::new();
        for c in &out.candidates {
            let what = match &c.outcome {
                Ok(skill) => format!("{} {} {:?}", skill.id, skill.name, skill.warnings),
                Err(reason) => reason.clone(),
            };
            lines.push(format!("skill {} {what}", c.skill_md.display()));
        }
        for e in &out.entries {
            lines.push(format!(
                "entry {} {:?} {}",
                e.path.display(),
                e.status,
                e.reason
            ));
        }
        for c in &out.categories {
            lines.push(format!("category {} {:?}", c.category, c.description));
        }
        lines.extend(out.notices.iter().map(|n| format!("notice {n}")));
        for s in &out.fingerprint.stamps {
            lines.push(format!(
                "stamp {} {:?} {:?} {}",
                s.path.display(),
                s.kind,
                s.state,
                s.shape
            ));
        }
        for r in &out.roots {
            lines.push(format!(
                "root {} {} {}",
                r.path.display(),
                r.skills,
                r.truncated
            ));
        }
        lines
    }

    #[test]
    fn the_walk_gives_the_same_result_on_any_number_of_threads() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("skills");
        // Wide levels, so the parallel path is taken, with every kind of entry.
        for c in 0..6 {
            let cat = root.join(format!("cat{c}"));
            fs::create_dir_all(&cat).unwrap();
            fs::write(
                cat.join("DESCRIPTION.md"),
                format!("---\ndescription: Category {c}\n---\n"),
            )
            .unwrap();
            for n in 0..70 {
                let skill = cat.join(format!("s{n:02}"));
                fs::create_dir_all(skill.join("references/old")).unwrap();
                let name = if n % 9 == 0 {
                    "shared".to_owned()
                } else {
                    format!("s{c}-{n}")
                };
                let text = if n % 23 == 0 {
                    "---\nname: broken\n".to_owned()
                } else {
                    format!("---\nname: {name}\ndescription: Use when number {n}\n---\nbody\n")
                };
                fs::write(skill.join("SKILL.md"), text).unwrap();
                fs::write(
                    skill.join("references/old/SKILL.md"),
                    "---\ndescription: decoy\n---\n",
                )
                .unwrap();
                if n % 10 == 0 {
                    fs::create_dir_all(skill.join("nested")).unwrap();
                    fs::write(
                        skill.join("nested/SKILL.md"),
                        "---\ndescription: Nested one\n---\n",
                    )
                    .unwrap();
                }
            }
        }
        std::os::unix::fs::symlink(root.join("cat1"), root.join("cat1-again")).unwrap();
        std::os::unix::fs::symlink(root.join("cat2/s05"), root.join("cat3/linked")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("nowhere"), root.join("cat4/broken")).unwrap();
        std::os::unix::fs::symlink(&root, root.join("cat5/loop")).unwrap();
        let options = DiscoveryOptions::with_roots(vec![SkillRoot {
            path: root,
            scope: crate::skill::Scope::User,
        }]);
        let one = summary(&walk_roots_on(&options, 1));
        assert!(one.len() > 900, "{}", one.len());
        for threads in [2, 3, 8] {
            assert_eq!(
                summary(&walk_roots_on(&options, threads)),
                one,
                "{threads} threads"
            );
        }
        let mut limited = options;
        limited.max_dirs = 200;
        let one = summary(&walk_roots_on(&limited, 1));
        assert_eq!(summary(&walk_roots_on(&limited, 2)), one);
    }
}
