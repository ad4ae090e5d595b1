//! The one discovery engine: a bounded, sorted breadth-first walk of every
//! root, parallel parsing of the SKILL.md files found, and the `SkillSet` built from them.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fs;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::frontmatter::{self, FrontmatterProblem};
use crate::roots::{DiscoveryOptions, platform_matches};
use crate::skill::{MAX_NAME_CHARS, SUPPORT_DIRS, Scope, Skill, cut_chars};
use crate::skill_set::{DoctorEntry, EntryStatus, Gate, RootReport, SkillSet};

/// Folder names never walked, besides every name starting with a dot.
const SKIPPED_DIRS: [&str; 5] = [
    "node_modules",
    "venv",
    "__pycache__",
    "site-packages",
    "env",
];
/// Bytes read first from each SKILL.md; enough for any sane frontmatter.
const HEAD_BYTES: usize = 64 * 1024;
/// Largest SKILL.md discovery will read whole when the frontmatter is longer than the head.
const MAX_READ_BYTES: u64 = 8 * 1024 * 1024;

/// The modification times discovery depended on; equal stamps mean an equal result.
/// Serializable so the disk snapshot (`snapshot.rs`) can validate itself with it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Fingerprint {
    pub stamps: Vec<(PathBuf, Option<SystemTime>, u64)>,
}

impl Fingerprint {
    fn record(&mut self, path: &Path, meta: Option<&fs::Metadata>) {
        self.stamps.push((
            path.to_path_buf(),
            meta.and_then(|m| m.modified().ok()),
            meta.map(fs::Metadata::len).unwrap_or(0),
        ));
    }

    /// True when every recorded path still has the same modification time and size.
    pub fn is_current(&self) -> bool {
        self.stamps.iter().all(|(path, mtime, len)| {
            let meta = fs::metadata(path).ok();
            meta.as_ref().and_then(|m| m.modified().ok()) == *mtime
                && meta.map(|m| m.len()).unwrap_or(0) == *len
        })
    }
}

/// A SKILL.md found by the walk, before parsing.
struct Candidate {
    root_index: usize,
    skill_md: PathBuf,
    skill_dir: PathBuf,
    rel: Vec<String>,
}

struct WalkOutput {
    candidates: Vec<Candidate>,
    entries: Vec<DoctorEntry>,
    categories: Vec<(usize, String, PathBuf)>,
    roots: Vec<RootReport>,
    notices: Vec<String>,
    fingerprint: Fingerprint,
}

/// Walks every root and parses what it finds. Never fails: every problem
/// becomes a doctor entry or a notice.
pub fn discover(options: &DiscoveryOptions) -> (SkillSet, Fingerprint) {
    let walk = walk_roots(options);
    let parsed = parse_all(&walk.candidates);
    let mut notices = options.notices.clone();
    notices.extend(walk.notices);
    let mut set = SkillSet {
        notices,
        roots: walk.roots,
        entries: walk.entries,
        ..SkillSet::default()
    };
    let mut fingerprint = walk.fingerprint;
    for (root_index, category, path) in walk.categories {
        let Ok((text, _, meta)) = read_head_with_meta(&path) else {
            continue;
        };
        fingerprint.record(&path, Some(&meta));
        if let Some(desc) = category_description(&text) {
            set.category_descriptions
                .entry(category)
                .or_insert((root_index, desc));
        }
    }

    let mut seen_qualified: HashMap<String, usize> = HashMap::new();
    for (candidate, (meta, outcome)) in walk.candidates.iter().zip(parsed) {
        if meta.is_some() {
            fingerprint.record(&candidate.skill_md, meta.as_ref());
        }
        let root = &options.roots[candidate.root_index];
        match outcome {
            Err(reason) => set.entries.push(DoctorEntry::new(
                &candidate.skill_md,
                EntryStatus::Skipped,
                reason,
            )),
            Ok(read) => {
                let skill = build_skill(candidate, &root.scope, read);
                let qid = skill.qualified_id();
                if let Some(&other) = seen_qualified.get(&qid) {
                    let reason = format!(
                        "its id {qid} is already used by {}",
                        set.skills[other].path.display()
                    );
                    set.entries
                        .push(DoctorEntry::for_skill(&skill, EntryStatus::Skipped, reason));
                    continue;
                }
                let gate = if !platform_matches(&skill.frontmatter.platforms, &options.platform) {
                    Some(Gate::Platform)
                } else if is_disabled(&skill, &options.disabled) {
                    Some(Gate::Disabled)
                } else {
                    None
                };
                seen_qualified.insert(qid, set.skills.len());
                set.gates.push(gate);
                set.skills.push(skill);
            }
        }
    }
    set.finish();
    (set, fingerprint)
}

fn is_disabled(skill: &Skill, disabled: &[String]) -> bool {
    let qid = skill.qualified_id();
    disabled
        .iter()
        .map(|d| d.trim())
        .any(|d| d == skill.name || d == skill.id || d == qid)
}

fn walk_roots(options: &DiscoveryOptions) -> WalkOutput {
    let mut out = WalkOutput {
        candidates: Vec::new(),
        entries: Vec::new(),
        categories: Vec::new(),
        roots: Vec::new(),
        notices: Vec::new(),
        fingerprint: Fingerprint::default(),
    };
    // One physical skill folder counts once, even when two roots reach it.
    let mut claimed_skill_dirs: HashMap<(u64, u64), PathBuf> = HashMap::new();
    for (root_index, root) in options.roots.iter().enumerate() {
        let before = out.candidates.len();
        let truncated = walk_root(
            root_index,
            &root.path,
            options,
            &mut out,
            &mut claimed_skill_dirs,
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

fn walk_root(
    root_index: usize,
    root: &Path,
    options: &DiscoveryOptions,
    out: &mut WalkOutput,
    claimed: &mut HashMap<(u64, u64), PathBuf>,
) -> bool {
    let root_meta = fs::metadata(root).ok();
    out.fingerprint.record(root, root_meta.as_ref());
    let Some(root_meta) = root_meta.filter(fs::Metadata::is_dir) else {
        return false;
    };
    let canonical_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut visited: HashSet<(u64, u64)> = HashSet::new();
    let root_key = (root_meta.dev(), root_meta.ino());
    visited.insert(root_key);
    // Each queued folder carries its (device, inode), taken from the one stat
    // made when its parent listed it.
    let mut queue: VecDeque<(PathBuf, Vec<String>, (u64, u64))> = VecDeque::new();
    queue.push_back((root.to_path_buf(), Vec::new(), root_key));
    let mut dirs_read = 0usize;
    let mut truncated = false;

    while let Some((dir, rel, dir_key)) = queue.pop_front() {
        if dirs_read >= options.max_dirs {
            truncated = true;
            report_unwalked(&dir, out, "the walk stopped at skills.scan_max_dirs");
            for (rest, _, _) in queue.drain(..) {
                report_unwalked(&rest, out, "the walk stopped at skills.scan_max_dirs");
            }
            break;
        }
        dirs_read += 1;
        let entries = match read_dir_sorted(&dir) {
            Ok(entries) => entries,
            Err(e) => {
                out.notices
                    .push(format!("cannot read directory {}: {e}", dir.display()));
                continue;
            }
        };
        let skill_md = dir.join("SKILL.md");
        let has_skill_md = entries.iter().any(|e| e.name == "SKILL.md");
        if has_skill_md {
            if rel.is_empty() {
                out.entries.push(DoctorEntry::new(
                    &skill_md,
                    EntryStatus::Skipped,
                    "SKILL.md sits directly in a skills root; move it into a folder named after the skill".into(),
                ));
            } else if let Some(first) = claimed.get(&dir_key) {
                out.entries.push(DoctorEntry::new(
                    &skill_md,
                    EntryStatus::Skipped,
                    format!("the same folder was already found as {}", first.display()),
                ));
            } else {
                // SKILL.md itself is opened and checked when it is parsed.
                claimed.insert(dir_key, skill_md.clone());
                out.candidates.push(Candidate {
                    root_index,
                    skill_md: skill_md.clone(),
                    skill_dir: dir.clone(),
                    rel: rel.clone(),
                });
            }
        } else if !rel.is_empty() && entries.iter().any(|e| e.name == "DESCRIPTION.md") {
            out.categories
                .push((root_index, rel.join("/"), dir.join("DESCRIPTION.md")));
        }

        for entry in &entries {
            let name = &entry.name;
            if entry.kind == EntryKind::File
                || name.starts_with('.')
                || SKIPPED_DIRS.contains(&name.as_str())
            {
                continue;
            }
            let child = dir.join(name);
            let meta = match fs::metadata(&child) {
                Ok(m) => m,
                Err(_) if entry.kind == EntryKind::Symlink => {
                    out.notices.push(format!(
                        "broken link {} was skipped (its target does not exist)",
                        child.display()
                    ));
                    continue;
                }
                Err(_) => continue,
            };
            if !meta.is_dir() {
                continue;
            }
            if has_skill_md && SUPPORT_DIRS.contains(&name.as_str()) {
                report_decoys(&child, &skill_md, out);
                continue;
            }
            if entry.kind == EntryKind::Symlink {
                match child.canonicalize() {
                    Ok(target) if !target.starts_with(&canonical_root) => {
                        out.notices.push(format!(
                            "link {} leads outside its root, to {}",
                            child.display(),
                            target.display()
                        ));
                    }
                    _ => {}
                }
            }
            let key = (meta.dev(), meta.ino());
            if !visited.insert(key) {
                out.notices.push(format!(
                    "{} was skipped: it leads back to a folder already walked (a link loop)",
                    child.display()
                ));
                continue;
            }
            if rel.len() + 1 > options.max_depth {
                truncated = true;
                report_unwalked(&child, out, "it is deeper than skills.scan_max_depth");
                continue;
            }
            out.fingerprint.record(&child, Some(&meta));
            let mut child_rel = rel.clone();
            child_rel.push(name.clone());
            queue.push_back((child, child_rel, key));
        }
    }
    truncated
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
        let Ok(entries) = read_dir_sorted(&dir) else {
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

/// An old package kept under `references/` is material, not a skill; say so.
fn report_decoys(support_dir: &Path, owner: &Path, out: &mut WalkOutput) {
    let mut stack = vec![(support_dir.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = read_dir_sorted(&dir) else {
            continue;
        };
        for DirEntryInfo { name, kind } in entries {
            let path = dir.join(&name);
            if name == "SKILL.md" {
                out.entries.push(DoctorEntry::new(
                    &path,
                    EntryStatus::Skipped,
                    format!(
                        "inside a support folder of {}; it is a file of that skill, not a skill",
                        owner.display()
                    ),
                ));
            } else if depth < 4
                && (kind == EntryKind::Dir || kind == EntryKind::Symlink && path.is_dir())
                && !name.starts_with('.')
            {
                stack.push((path, depth + 1));
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntryKind {
    File,
    Dir,
    Symlink,
    Other,
}

struct DirEntryInfo {
    name: String,
    kind: EntryKind,
}

/// Directory entries sorted by name, with their type as the listing reports
/// it (no extra stat per entry).
fn read_dir_sorted(dir: &Path) -> std::io::Result<Vec<DirEntryInfo>> {
    let mut entries = Vec::new();
    for entry in fs::read_dir(dir)? {
        let Ok(entry) = entry else { continue };
        let kind = match entry.file_type() {
            Ok(t) if t.is_symlink() => EntryKind::Symlink,
            Ok(t) if t.is_dir() => EntryKind::Dir,
            Ok(t) if t.is_file() => EntryKind::File,
            _ => EntryKind::Other,
        };
        entries.push(DirEntryInfo {
            name: entry.file_name().to_string_lossy().into_owned(),
            kind,
        });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

/// What parsing one SKILL.md yields.
struct ReadSkill {
    frontmatter: frontmatter::Frontmatter,
    description: String,
    warnings: Vec<String>,
}

type ReadOutcome = (Option<fs::Metadata>, Result<ReadSkill, String>);

fn parse_all(candidates: &[Candidate]) -> Vec<ReadOutcome> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8);
    if threads <= 1 || candidates.len() < 64 {
        return candidates.iter().map(|c| read_skill(&c.skill_md)).collect();
    }
    let chunk = candidates.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = candidates
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|c| read_skill(&c.skill_md))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|_| vec![(None, Err("parsing panicked".to_owned()))])
            })
            .collect()
    })
}

/// Reads the head of a SKILL.md (the whole file only when its frontmatter is
/// longer), with the file's metadata from the open handle, so discovery needs
/// no separate stat for its fingerprint.
fn read_head_with_meta(path: &Path) -> std::io::Result<(String, bool, fs::Metadata)> {
    let mut file = fs::File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let want = (meta.len() as usize).min(HEAD_BYTES);
    let mut buf = Vec::with_capacity(want + 1);
    file.by_ref().take(want as u64).read_to_end(&mut buf)?;
    let complete = (buf.len() as u64) >= meta.len();
    let mut lossy = false;
    let text = match String::from_utf8(buf) {
        Ok(t) => t,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            // A cut in the middle of a character at the head's end is not an error.
            if !complete && bytes.len() - valid < 4 {
                String::from_utf8_lossy(&bytes[..valid]).into_owned()
            } else {
                lossy = true;
                String::from_utf8_lossy(&bytes).into_owned()
            }
        }
    };
    if complete || frontmatter::split_frontmatter(frontmatter::strip_bom(&text)).is_ok() {
        return Ok((text, lossy, meta));
    }
    let mut rest = Vec::new();
    let mut all = text.into_bytes();
    file.take(MAX_READ_BYTES).read_to_end(&mut rest)?;
    all.extend(rest);
    let lossy = lossy || std::str::from_utf8(&all).is_err();
    Ok((String::from_utf8_lossy(&all).into_owned(), lossy, meta))
}

/// Parses one SKILL.md; the metadata (when the file could be opened) feeds
/// the fingerprint whatever the parse gave.
fn read_skill(path: &Path) -> (Option<fs::Metadata>, Result<ReadSkill, String>) {
    match read_head_with_meta(path) {
        Ok((text, lossy, meta)) => (Some(meta), parse_read(&text, lossy)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (
            None,
            Err(format!(
                "SKILL.md cannot be read ({e}); is it a broken link?"
            )),
        ),
        Err(e) if e.to_string() == "not a regular file" => {
            (None, Err("SKILL.md is not a regular file".to_owned()))
        }
        Err(e) => (None, Err(format!("cannot read SKILL.md: {e}"))),
    }
}

fn parse_read(text: &str, lossy: bool) -> Result<ReadSkill, String> {
    let text = text.to_owned();
    let parsed = frontmatter::parse_skill_md(&text).map_err(|problem| match problem {
        FrontmatterProblem::Unclosed => {
            "the frontmatter has no closing '---' line; add one after the last key".to_owned()
        }
    })?;
    let mut warnings = parsed.warnings;
    if lossy {
        warnings.push("SKILL.md is not valid UTF-8; invalid bytes were replaced".into());
    }
    let body = &frontmatter::strip_bom(&text)[parsed.body_offset..];
    let description = match &parsed.frontmatter.description {
        Some(d) => d.clone(),
        None => match frontmatter::first_body_line(body) {
            Some(line) => {
                warnings
                    .push("no description in the frontmatter; the first body line is used".into());
                line.to_owned()
            }
            None => {
                return Err(
                    "no description: add 'description: Use when …' to the frontmatter".to_owned(),
                );
            }
        },
    };
    Ok(ReadSkill {
        frontmatter: parsed.frontmatter,
        description,
        warnings,
    })
}

fn build_skill(candidate: &Candidate, scope: &Scope, read: ReadSkill) -> Skill {
    let dirname = candidate.rel.last().cloned().unwrap_or_default();
    let mut warnings = read.warnings;
    let name = match &read.frontmatter.name {
        Some(n) => {
            let name = cut_chars(n.trim(), MAX_NAME_CHARS);
            if name.chars().count() < n.trim().chars().count() {
                warnings.push(format!(
                    "the name is longer than {MAX_NAME_CHARS} characters and was cut"
                ));
            }
            if name != dirname {
                warnings.push(format!(
                    "the name '{name}' differs from its folder '{dirname}'"
                ));
            }
            name
        }
        None => {
            warnings.push("no name in the frontmatter; the folder name is used".into());
            cut_chars(&dirname, MAX_NAME_CHARS)
        }
    };
    let desc_chars = read.description.chars().count();
    if desc_chars > crate::validate::INDEX_DESCRIPTION_BUDGET {
        warnings.push(format!(
            "the description has {desc_chars} characters; the index shows the first {}",
            crate::validate::INDEX_DESCRIPTION_BUDGET
        ));
    }
    let category =
        (candidate.rel.len() > 1).then(|| candidate.rel[..candidate.rel.len() - 1].join("/"));
    Skill {
        name,
        description: read.description,
        category,
        id: candidate.rel.join("/"),
        scope: scope.clone(),
        path: candidate.skill_md.clone(),
        skill_dir: candidate.skill_dir.clone(),
        root_index: candidate.root_index,
        frontmatter: read.frontmatter,
        warnings,
    }
}

fn category_description(text: &str) -> Option<String> {
    let parsed = frontmatter::parse_skill_md(text).ok()?;
    parsed
        .frontmatter
        .description
        .or_else(|| {
            frontmatter::first_body_line(&frontmatter::strip_bom(text)[parsed.body_offset..])
                .map(str::to_owned)
        })
        .map(|d| d.trim().trim_matches(['"', '\'']).to_owned())
        .filter(|d| !d.is_empty())
}
