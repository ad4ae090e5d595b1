//! A disk snapshot of the last discovery result under `$KNACK_HOME/cache/`, so a
//! fresh process skips walking and parsing when little or nothing changed.
//!
//! The snapshot is trusted only for the very same `DiscoveryOptions` and
//! build, and only as far as its stamps (`stamp.rs`) still hold. Stamps that
//! moved are handled one by one where that is exact: a folder whose shape is
//! unchanged (an atomic write's temp file came and went) just takes its new
//! stamp, and a SKILL.md edited in place is parsed again on its own as long
//! as its name and gate stay the same. Anything else (a new or removed
//! folder, a renamed skill, a changed DESCRIPTION.md) means a full discovery.
//! Stamps recorded within the racy window are checked by content or shape.
//! Writing is best effort: a snapshot that cannot be written costs speed only.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::discovery::{SkillPlace, build_skill, discover, gate_for, read_skill};
use crate::frontmatter::Frontmatter;
use crate::roots::{DiscoveryOptions, SkillRoot};
use crate::skill::Skill;
use crate::skill_set::{DoctorEntry, Gate, RootReport, SkillSet};
use crate::stamp::{FileState, Fingerprint, Stamp, StampKind};
use crate::walk::current_shape;

mod lookup;
mod stamps;
pub use lookup::skills_answering;
use stamps::{StampTable, StoredStamp};

/// File name of the snapshot inside the cache directory.
pub const SNAPSHOT_FILE: &str = "skills-snapshot.bin";
/// Older snapshots, removed when a new one is written.
const RETIRED_FILES: [&str; 1] = ["skills-snapshot.json"];
/// Up to this many changed stamps are applied on each load without
/// rewriting the snapshot.
const REWRITE_AFTER: usize = 64;
/// Bumped whenever the stored shape or the meaning of a field changes.
const SNAPSHOT_VERSION: u32 = 10;

/// Where the skill set handed out by `load_with_outcome` came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotOutcome {
    /// The snapshot was valid; no SKILL.md was parsed.
    Loaded,
    /// The snapshot was valid except for changes applied one by one (the
    /// SKILL.md files edited since were parsed again). `with_skill_set`
    /// rewrites it on another thread; the other loads only once more than
    /// `REWRITE_AFTER` stamps moved.
    Refreshed,
    /// Discovery ran and the snapshot was (re)written.
    Written,
    /// Discovery ran; the snapshot was not written (racy stamps or an I/O problem).
    Discovered,
}

/// Read first, so a snapshot of another version or for other options is
/// turned down before anything else is decoded.
#[derive(Serialize, Deserialize)]
struct Header {
    version: u32,
    /// Digest of the discovery options and the build that wrote the file.
    options_key: [u8; 32],
    /// When the file was written: stamps changed shortly before it are racy.
    written_secs: i64,
    written_nanos: u32,
    /// Length in bytes of the stamps section that follows, so the stamps can
    /// be read and checked without reading the skills (`still_valid`).
    stamps_len: u64,
    /// Length in bytes of the lookup section after the stamps (`StoredKey`s),
    /// so one skill can be found without decoding the others (`skills_answering`).
    lookup_len: u64,
}

/// What the lookup rule needs of one skill, and where its `StoredSkill`
/// lies: byte offsets from the start of the body.
#[derive(Serialize, Deserialize)]
struct StoredKey<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    id: Cow<'a, str>,
    root: u32,
    gate: Option<Gate>,
    start: u32,
    end: u32,
}

/// Everything of the `SkillSet` but what follows from the options or from
/// the skills themselves (scopes, `ok` doctor entries).
#[derive(Serialize, Deserialize)]
struct Body {
    /// The skills in discovery order.
    skills: Vec<StoredSkill>,
    gates: Vec<Option<Gate>>,
    category_descriptions: BTreeMap<String, (usize, String)>,
    roots: Vec<StoredRoot>,
    entries: Vec<DoctorEntry>,
    notices: Vec<String>,
    ambiguous_names: BTreeSet<String>,
}

/// A `Skill` without what follows from its root and id: the scope, the
/// folder (`root/id`), SKILL.md in it, and the category (the id's parent).
#[derive(Serialize, Deserialize)]
struct StoredSkill {
    name: String,
    description: String,
    id: String,
    root_index: usize,
    frontmatter: Frontmatter,
    warnings: Vec<String>,
}

impl StoredSkill {
    /// The skill again, with what follows from its root and id.
    fn into_skill(self, options: &DiscoveryOptions) -> Option<Skill> {
        let root = options.roots.get(self.root_index)?;
        let skill_dir = root.path.join(&self.id);
        Some(Skill {
            name: self.name,
            description: self.description,
            category: self
                .id
                .rsplit_once('/')
                .map(|(parent, _)| parent.to_owned()),
            path: skill_dir.join("SKILL.md"),
            skill_dir,
            id: self.id,
            scope: root.scope.clone(),
            root_index: self.root_index,
            frontmatter: self.frontmatter,
            warnings: self.warnings,
        })
    }
}

#[derive(Serialize, Deserialize)]
struct StoredRoot {
    path: PathBuf,
    skills: usize,
    truncated: bool,
}

/// `Body` after its skills, as written: borrowed from the set, so writing
/// copies nothing but the bytes. The skills and this tail, encoded one after
/// the other, are field for field the encoding of `Body`.
#[derive(Serialize)]
struct BodyTail<'a> {
    gates: &'a [Option<Gate>],
    category_descriptions: &'a BTreeMap<String, (usize, String)>,
    roots: Vec<StoredRoot>,
    entries: &'a [DoctorEntry],
    notices: &'a [String],
    ambiguous_names: &'a BTreeSet<String>,
}

/// `StoredSkill` as written, borrowed from a `Skill`.
#[derive(Serialize)]
struct StoredSkillRef<'a> {
    name: &'a str,
    description: &'a str,
    id: &'a str,
    root_index: usize,
    frontmatter: &'a Frontmatter,
    warnings: &'a [String],
}

/// The skill set for `options`: from the snapshot in `cache_dir` when it is
/// still valid, else from a fresh discovery (which then refreshes the snapshot).
pub fn load_or_discover(options: &DiscoveryOptions, cache_dir: &Path) -> SkillSet {
    load_with_outcome(options, cache_dir).0
}

/// `load_or_discover`, also saying whether the snapshot was used.
pub fn load_with_outcome(
    options: &DiscoveryOptions,
    cache_dir: &Path,
) -> (SkillSet, SnapshotOutcome) {
    let (set, _, outcome) = load_with_fingerprint(options, cache_dir);
    (set, outcome)
}

/// `load_with_outcome`, also returning the stamps the set depends on, so an
/// in-process cache can keep validating it (`DiscoveryCache::with_snapshot`).
pub fn load_with_fingerprint(
    options: &DiscoveryOptions,
    cache_dir: &Path,
) -> (SkillSet, Fingerprint, SnapshotOutcome) {
    let (set, fingerprint, pending, _) = load_unwritten(options, cache_dir, true, false);
    let outcome = pending.write(&set, &fingerprint);
    (set, fingerprint, outcome)
}

/// Runs `use_set` on the skill set for `options`; a snapshot that needs
/// (re)writing is written on another thread meanwhile, so a short command
/// does not wait for it before doing its own work.
pub fn with_skill_set<R>(
    options: &DiscoveryOptions,
    cache_dir: &Path,
    use_set: impl FnOnce(&SkillSet) -> R,
) -> R {
    with_skill_set_identified(options, cache_dir, |set, _| use_set(set))
}

/// Names one snapshot file as written. A set loaded unchanged from it is
/// always the same set, so what is derived from that set (the prompt's
/// skills index) can be kept under this name and reused while
/// `still_valid` holds, without decoding the set at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SnapshotId([u8; 16]);

impl SnapshotId {
    fn of(header: &Header, file_len: u64) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(header.version.to_le_bytes());
        hasher.update(header.options_key);
        hasher.update(header.written_secs.to_le_bytes());
        hasher.update(header.written_nanos.to_le_bytes());
        hasher.update(file_len.to_le_bytes());
        let digest = hasher.finalize();
        let mut id = [0u8; 16];
        id.copy_from_slice(&digest[..16]);
        Self(id)
    }

    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The size in bytes of the snapshot file in `cache_dir` (whatever it was
/// written for), or `u64::MAX` when there is none: a hint of how long a
/// load will take.
pub fn written_len(cache_dir: &Path) -> u64 {
    fs::metadata(cache_dir.join(SNAPSHOT_FILE)).map_or(u64::MAX, |m| m.len())
}

/// The id of the snapshot in `cache_dir` written for `options`, read from
/// its header alone: whether it still holds is `still_valid`'s question.
pub fn written_id(options: &DiscoveryOptions, cache_dir: &Path) -> Option<SnapshotId> {
    let (file, header, _) = open_for(options, cache_dir)?;
    Some(SnapshotId::of(&header, file.metadata().ok()?.len()))
}

/// True when the snapshot in `cache_dir` is still the one named `id` and
/// every stamp in it holds: loading it would give its set unchanged. Only
/// the header and the stamps are read; the skills are not decoded.
pub fn still_valid(options: &DiscoveryOptions, cache_dir: &Path, id: SnapshotId) -> bool {
    use std::os::unix::fs::FileExt;
    let Some((file, header, header_len)) = open_for(options, cache_dir) else {
        return false;
    };
    let Ok(len) = file.metadata().map(|m| m.len()) else {
        return false;
    };
    if SnapshotId::of(&header, len) != id || header_len as u64 + header.stamps_len > len {
        return false;
    }
    let mut bytes = vec![0u8; usize::try_from(header.stamps_len).unwrap_or(usize::MAX)];
    if file.read_exact_at(&mut bytes, header_len as u64).is_err() {
        return false;
    }
    let Some(stamps) = StampTable::parse(&bytes) else {
        return false;
    };
    let (changed, ()) = stamps.changed_beside(&options.roots, written_at(&header), || ());
    changed.is_some_and(|c| c.is_empty())
}

/// The snapshot file in `cache_dir` when its header says it was written by
/// this build for `options`, with that header and its length in bytes.
fn open_for(options: &DiscoveryOptions, cache_dir: &Path) -> Option<(fs::File, Header, usize)> {
    use std::io::Read as _;
    let mut file = fs::File::open(cache_dir.join(SNAPSHOT_FILE)).ok()?;
    // The header is a few dozen bytes; one short read holds it.
    let mut head = [0u8; 128];
    let n = file.read(&mut head).ok()?;
    let (header, rest) = postcard::take_from_bytes::<Header>(&head[..n]).ok()?;
    let header_len = n - rest.len();
    (header.version == SNAPSHOT_VERSION && header.options_key == options_key(options))
        .then_some((file, header, header_len))
}

/// `with_skill_set`, also passing the id of the snapshot the set was loaded
/// from unchanged (`None` when it was refreshed or discovered).
pub fn with_skill_set_identified<R>(
    options: &DiscoveryOptions,
    cache_dir: &Path,
    use_set: impl FnOnce(&SkillSet, Option<SnapshotId>) -> R,
) -> R {
    // Here a rewrite costs no waiting (it runs beside `use_set`), so even a
    // few applied changes are written back: the next process then loads the
    // file unchanged, and what is kept by its id becomes usable again.
    let (set, fingerprint, pending, id) = load_unwritten(options, cache_dir, false, true);
    if matches!(pending, Pending::Nothing(_)) {
        return use_set(&set, id);
    }
    std::thread::scope(|scope| {
        let writer =
            std::thread::Builder::new().spawn_scoped(scope, || pending.write(&set, &fingerprint));
        let result = use_set(&set, id);
        match writer {
            Ok(writer) => {
                if writer.join().is_err() {
                    tracing::debug!("the skills snapshot writer panicked");
                }
            }
            // No thread to spare (a process limit): write it here, after the work.
            Err(_) => {
                pending.write(&set, &fingerprint);
            }
        }
        result
    })
}

/// What is left to do after a load: nothing (the set came about this way),
/// or write the snapshot.
enum Pending {
    Nothing(SnapshotOutcome),
    Write {
        path: PathBuf,
        key: [u8; 32],
        roots: Vec<SkillRoot>,
        /// What the outcome is when the write succeeds.
        success: SnapshotOutcome,
    },
}

impl Pending {
    fn write(&self, set: &SkillSet, fingerprint: &Fingerprint) -> SnapshotOutcome {
        let started = std::time::Instant::now();
        match self {
            Pending::Nothing(outcome) => *outcome,
            Pending::Write {
                path,
                key,
                roots,
                success,
            } => match write(path, key, roots, set, fingerprint) {
                Ok(()) => {
                    tracing::debug!(
                        ms = started.elapsed().as_secs_f64() * 1000.0,
                        "skills snapshot written"
                    );
                    *success
                }
                Err(e) => {
                    tracing::debug!("skills snapshot not written to {}: {e}", path.display());
                    SnapshotOutcome::Discovered
                }
            },
        }
    }
}

/// The skill set from the snapshot (refreshed where exact) or from discovery,
/// and whether the snapshot must be written.
fn load_unwritten(
    options: &DiscoveryOptions,
    cache_dir: &Path,
    keep_stamps: bool,
    rewrite_refreshed: bool,
) -> (SkillSet, Fingerprint, Pending, Option<SnapshotId>) {
    let path = cache_dir.join(SNAPSHOT_FILE);
    let key = options_key(options);
    let stale = match read(&path, &key, options, keep_stamps) {
        Some(Read::Valid(set, fingerprint, id)) => {
            return (
                set,
                fingerprint,
                Pending::Nothing(SnapshotOutcome::Loaded),
                Some(id),
            );
        }
        Some(Read::Stale(set, fingerprint, changed)) => Some((set, fingerprint, changed)),
        None => None,
    };
    if let Some((mut set, mut fingerprint, changed)) = stale
        && refresh(&mut set, &mut fingerprint, &changed, options)
    {
        // Applying a few changes again on every load is cheaper than
        // rewriting the whole file after each edit (a `skill_manage` patch
        // would pay for that every time); many changes are written back.
        let pending = if rewrite_refreshed || changed.len() > REWRITE_AFTER {
            Pending::Write {
                path,
                key,
                roots: options.roots.clone(),
                success: SnapshotOutcome::Refreshed,
            }
        } else {
            Pending::Nothing(SnapshotOutcome::Refreshed)
        };
        return (set, fingerprint, pending, None);
    }
    let (set, fingerprint) = discover(options);
    let pending = Pending::Write {
        path,
        key,
        roots: options.roots.clone(),
        success: SnapshotOutcome::Written,
    };
    (set, fingerprint, pending, None)
}

/// Deletes the snapshot, so the next load walks everything again.
pub fn invalidate(cache_dir: &Path) {
    let _ = fs::remove_file(cache_dir.join(SNAPSHOT_FILE));
}

/// Digest of everything that changes discovery's answer besides the files:
/// the options (roots, scopes, limits, disabled names, platform, notices) and
/// the build, since a new parser may read the same file differently.
fn options_key(options: &DiscoveryOptions) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
    hasher.update([0]);
    hasher.update(SNAPSHOT_VERSION.to_le_bytes());
    hasher.update(format!("{options:?}").as_bytes());
    hasher.finalize().into()
}

enum Read {
    /// Every stamp holds.
    Valid(SkillSet, Fingerprint, SnapshotId),
    /// These stamps (indices into the fingerprint) no longer hold.
    Stale(SkillSet, Fingerprint, Vec<usize>),
}

/// Reads and checks the snapshot. The stamps are only turned into an owned
/// `Fingerprint` when the caller keeps it or when some moved.
fn read(
    path: &Path,
    key: &[u8; 32],
    options: &DiscoveryOptions,
    keep_stamps: bool,
) -> Option<Read> {
    let started = std::time::Instant::now();
    let bytes = fs::read(path).ok()?;
    let (header, rest) = postcard::take_from_bytes::<Header>(&bytes).ok()?;
    if header.version != SNAPSHOT_VERSION || header.options_key != *key {
        return None;
    }
    let id = SnapshotId::of(&header, bytes.len() as u64);
    let stamps_len = usize::try_from(header.stamps_len).ok()?;
    let lookup_len = usize::try_from(header.lookup_len).ok()?;
    let stamps = StampTable::parse(rest.get(..stamps_len)?)?;
    let rest = rest.get(stamps_len.checked_add(lookup_len)?..)?;
    let roots = &options.roots;
    // The stat calls dominate a warm start; check them while the body decodes.
    let (changed, body) = stamps.changed_beside(roots, written_at(&header), || {
        postcard::from_bytes::<Body>(rest).ok()
    });
    let (changed, body) = (changed?, body?);
    let set = into_set(body, options)?;
    tracing::debug!(
        ms = started.elapsed().as_secs_f64() * 1000.0,
        stamps = stamps.len(),
        changed = changed.len(),
        "skills snapshot read and checked"
    );
    let fingerprint = if keep_stamps || !changed.is_empty() {
        let stamps: Option<Vec<Stamp>> = stamps
            .all()?
            .into_iter()
            .map(|s| s.into_stamp(roots))
            .collect();
        Fingerprint { stamps: stamps? }
    } else {
        Fingerprint::default()
    };
    Some(if changed.is_empty() {
        Read::Valid(set, fingerprint, id)
    } else {
        Read::Stale(set, fingerprint, changed)
    })
}

/// When the snapshot was written: stamps changed shortly before are racy.
fn written_at(header: &Header) -> SystemTime {
    FileState {
        mtime_secs: header.written_secs,
        mtime_nanos: header.written_nanos,
        size: 0,
        dev: 0,
        ino: 0,
    }
    .modified()
}

fn into_set(body: Body, options: &DiscoveryOptions) -> Option<SkillSet> {
    if body.roots.len() != options.roots.len() || body.gates.len() != body.skills.len() {
        return None;
    }
    let mut skills = Vec::with_capacity(body.skills.len());
    for s in body.skills {
        skills.push(s.into_skill(options)?);
    }
    let roots = body
        .roots
        .into_iter()
        .zip(&options.roots)
        .map(|(r, root)| RootReport {
            path: r.path,
            scope: root.scope.clone(),
            skills: r.skills,
            truncated: r.truncated,
        })
        .collect();
    // Stored sorted, and without per-skill entries (`doctor_entries` derives those).
    Some(SkillSet {
        skills,
        gates: body.gates,
        category_descriptions: body.category_descriptions,
        roots,
        entries: body.entries,
        notices: body.notices,
        ambiguous_names: body.ambiguous_names,
    })
}

/// Applies the changed stamps to `set` one by one where that is exact (see
/// the module comment). False when any change needs a full discovery; `set`
/// and `fingerprint` must then be thrown away.
fn refresh(
    set: &mut SkillSet,
    fingerprint: &mut Fingerprint,
    changed: &[usize],
    options: &DiscoveryOptions,
) -> bool {
    for &i in changed {
        let Some(stamp) = fingerprint.stamps.get_mut(i) else {
            return false;
        };
        let applied = match stamp.kind {
            StampKind::Folder => refresh_folder(stamp),
            StampKind::SkillFile => refresh_skill(set, stamp, options),
            StampKind::CategoryFile => false,
        };
        if !applied {
            return false;
        }
    }
    true
}

/// A folder whose entries of interest are the same as before only moved its stamp.
fn refresh_folder(stamp: &mut Stamp) -> bool {
    match unchanged_shape(&stamp.path, stamp.state, stamp.shape) {
        Some(state) => {
            stamp.state = Some(state);
            true
        }
        None => false,
    }
}

/// The new state of a folder whose stamp moved, when the entries the walk
/// acts on are still the ones recorded (`shape`); `None` otherwise.
fn unchanged_shape(path: &Path, recorded: Option<FileState>, shape: u128) -> Option<FileState> {
    recorded?;
    // The state first: a change after the listing then shows up next time.
    let state = FileState::read(path)?;
    (current_shape(path) == Some(shape)).then_some(state)
}

/// A SKILL.md edited in place: parsed again, kept only when its name, id and
/// gate are unchanged (so no other skill's standing can change).
fn refresh_skill(set: &mut SkillSet, stamp: &mut Stamp, options: &DiscoveryOptions) -> bool {
    let Some(index) = set.skills.iter().position(|s| s.path == stamp.path) else {
        return false;
    };
    let old = &set.skills[index];
    let place = SkillPlace {
        root_index: old.root_index,
        skill_md: old.path.clone(),
        skill_dir: old.skill_dir.clone(),
        id: old.id.clone(),
    };
    let Some(fresh) = reparse_unchanged(place, &old.scope, &old.name, set.gates[index], options)
    else {
        return false;
    };
    set.skills[index] = fresh.skill;
    stamp.state = fresh.state;
    stamp.digest = fresh.digest;
    true
}

/// A SKILL.md parsed again, with the state and digest its stamp now takes.
struct Reparsed {
    skill: Skill,
    state: Option<FileState>,
    digest: Option<u128>,
}

/// The SKILL.md at `place` parsed again; `None` unless its name, id and gate
/// are still `name`, `place.id` and `gate`.
fn reparse_unchanged(
    place: SkillPlace,
    scope: &crate::skill::Scope,
    name: &str,
    gate: Option<Gate>,
    options: &DiscoveryOptions,
) -> Option<Reparsed> {
    let read = read_skill(&place.skill_md);
    let parsed = read.outcome.ok()?;
    let id = place.id.clone();
    let fresh = build_skill(place, scope, parsed);
    if fresh.name != name || fresh.id != id || gate_for(&fresh, options) != gate {
        return None;
    }
    Some(Reparsed {
        skill: fresh,
        state: read.state,
        digest: read.digest,
    })
}

fn write(
    path: &Path,
    key: &[u8; 32],
    options_roots: &[SkillRoot],
    set: &SkillSet,
    fingerprint: &Fingerprint,
) -> std::io::Result<()> {
    let now = SystemTime::now();
    let since_epoch = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_err(std::io::Error::other)?;
    let tail = BodyTail {
        gates: &set.gates,
        category_descriptions: &set.category_descriptions,
        roots: set
            .roots
            .iter()
            .map(|r| StoredRoot {
                path: r.path.clone(),
                skills: r.skills,
                truncated: r.truncated,
            })
            .collect(),
        entries: &set.entries,
        notices: &set.notices,
        ambiguous_names: &set.ambiguous_names,
    };
    // Everything is borrowed from the set. The whole write already runs on a
    // thread of its own beside the command's work, so the encoding is not
    // split further: for 10,000 skills it takes a few milliseconds.
    let stamps = stamps::encode_stamps_of(&fingerprint.stamps, options_roots, now)
        .map_err(std::io::Error::other)?;
    let skills = encode_skills(set).map_err(std::io::Error::other)?;
    let tail = encode(&tail, 4096).map_err(std::io::Error::other)?;
    let mut key_count = Vec::new();
    stamps::push_varint(&mut key_count, set.skills.len());
    let header = Header {
        version: SNAPSHOT_VERSION,
        options_key: *key,
        written_secs: i64::try_from(since_epoch.as_secs()).map_err(std::io::Error::other)?,
        written_nanos: since_epoch.subsec_nanos(),
        stamps_len: stamps.len() as u64,
        lookup_len: (key_count.len() + skills.keys.len()) as u64,
    };
    let header = postcard::to_stdvec(&header).map_err(std::io::Error::other)?;
    // The lookup section is the key count, then the keys.
    let sections = [
        &header,
        &stamps,
        &key_count,
        &skills.keys,
        &skills.records,
        &tail,
    ];
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    // Write then rename, so a concurrent reader sees the old file or the new one.
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    for section in sections {
        tmp.write_all(section)?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    for retired in RETIRED_FILES {
        let _ = fs::remove_file(dir.join(retired));
    }
    Ok(())
}

/// The body's skills as written, with their lookup keys.
struct EncodedSkills {
    /// The skills as postcard encodes a sequence of `StoredSkill`.
    records: Vec<u8>,
    /// Each skill's `StoredKey`, one after the other (no length prefix).
    keys: Vec<u8>,
}

/// The skills of `set` encoded as the body's sequence, each with its key
/// (offsets counted from the start of the body).
fn encode_skills(set: &SkillSet) -> postcard::Result<EncodedSkills> {
    let skills = &set.skills;
    // A sequence is its length (a varint, as a `usize` is) then its items.
    let mut records = encode(&skills.len(), skills.len() * 512 + 16)?;
    let mut keys = Vec::with_capacity(skills.len() * 64);
    for (skill, gate) in skills.iter().zip(&set.gates) {
        let start = records.len();
        let stored = StoredSkillRef {
            name: &skill.name,
            description: &skill.description,
            id: &skill.id,
            root_index: skill.root_index,
            frontmatter: &skill.frontmatter,
            warnings: &skill.warnings,
        };
        records = postcard::serialize_with_flavor(&stored, Presized(records))?;
        let offset = |n: usize| u32::try_from(n).map_err(|_| postcard::Error::SerializeBufferFull);
        let key = StoredKey {
            name: Cow::Borrowed(&skill.name),
            id: Cow::Borrowed(&skill.id),
            root: u32::try_from(skill.root_index)
                .map_err(|_| postcard::Error::SerializeBufferFull)?,
            gate: *gate,
            start: offset(start)?,
            end: offset(records.len())?,
        };
        keys = postcard::serialize_with_flavor(&key, Presized(keys))?;
    }
    Ok(EncodedSkills { records, keys })
}

/// `value` encoded into a buffer of roughly the right size from the start
/// (growing a multi-megabyte buffer by doubling copies it several times).
fn encode<T: Serialize + ?Sized>(value: &T, estimate: usize) -> postcard::Result<Vec<u8>> {
    postcard::serialize_with_flavor(value, Presized(Vec::with_capacity(estimate)))
}

/// A postcard output flavor: a vector with a capacity chosen by the caller.
struct Presized(Vec<u8>);

impl postcard::ser_flavors::Flavor for Presized {
    type Output = Vec<u8>;

    fn try_push(&mut self, byte: u8) -> postcard::Result<()> {
        self.0.push(byte);
        Ok(())
    }

    fn try_extend(&mut self, bytes: &[u8]) -> postcard::Result<()> {
        self.0.extend_from_slice(bytes);
        Ok(())
    }

    fn finalize(self) -> postcard::Result<Vec<u8>> {
        Ok(self.0)
    }
}

#[cfg(test)]
mod tests;
