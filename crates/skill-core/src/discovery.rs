//! The one discovery engine: the walk (`walk.rs`) finds and parses every
//! SKILL.md; this module reads one SKILL.md and builds the `SkillSet` from the walk.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::frontmatter::{self, FrontmatterProblem};
use crate::roots::{DiscoveryOptions, platform_matches};
use crate::skill::{MAX_NAME_CHARS, Scope, Skill, cut_chars};
use crate::skill_set::{DoctorEntry, EntryStatus, Gate, SkillSet};
use crate::stamp::{FileState, Fingerprint, content_digest, is_recent};
use crate::walk::{Candidate, walk_roots};

/// Bytes read first from each SKILL.md; enough for any sane frontmatter.
const HEAD_BYTES: usize = 64 * 1024;
/// Largest SKILL.md discovery will read whole when the frontmatter is longer than the head.
pub(crate) const MAX_READ_BYTES: u64 = 8 * 1024 * 1024;

/// Walks every root and parses what it finds. Never fails: every problem
/// becomes a doctor entry or a notice.
pub fn discover(options: &DiscoveryOptions) -> (SkillSet, Fingerprint) {
    let started = std::time::Instant::now();
    let walk = walk_roots(options);
    let walked = started.elapsed();
    let mut notices = options.notices.clone();
    notices.extend(walk.notices);
    let mut set = SkillSet {
        notices,
        roots: walk.roots,
        entries: walk.entries,
        ..SkillSet::default()
    };
    for note in walk.categories {
        if let Some(desc) = note.description {
            set.category_descriptions
                .entry(note.category)
                .or_insert((note.root_index, desc));
        }
    }
    // Qualified ids can only repeat across roots that share a namespace (one
    // root never yields the same relative path twice); only then are they tracked.
    let namespaces: HashSet<&str> = options.roots.iter().map(|r| r.scope.namespace()).collect();
    let mut seen_qualified: Option<HashMap<String, usize>> =
        (namespaces.len() < options.roots.len()).then(HashMap::new);
    set.skills.reserve(walk.candidates.len());
    set.gates.reserve(walk.candidates.len());
    for Candidate { skill_md, outcome } in walk.candidates {
        match outcome {
            Err(reason) => {
                set.entries
                    .push(DoctorEntry::new(&skill_md, EntryStatus::Skipped, reason))
            }
            Ok(skill) => {
                if let Some(seen) = seen_qualified.as_mut() {
                    let qid = skill.qualified_id();
                    if let Some(&other) = seen.get(&qid) {
                        let reason = format!(
                            "its id {qid} is already used by {}",
                            set.skills[other].path.display()
                        );
                        set.entries.push(DoctorEntry::for_skill(
                            &skill,
                            EntryStatus::Skipped,
                            reason,
                        ));
                        continue;
                    }
                    seen.insert(qid, set.skills.len());
                }
                set.gates.push(gate_for(&skill, options));
                set.skills.push(skill);
            }
        }
    }
    set.finish();
    tracing::debug!(
        walk_ms = walked.as_secs_f64() * 1000.0,
        total_ms = started.elapsed().as_secs_f64() * 1000.0,
        skills = set.skills.len(),
        "discovery walked and parsed"
    );
    (set, walk.fingerprint)
}

/// Where a SKILL.md sits: its root and its folder's path below the root.
pub(crate) struct SkillPlace {
    pub root_index: usize,
    pub skill_md: PathBuf,
    pub skill_dir: PathBuf,
    /// The folder's path below its root, `/`-separated: the skill's id.
    pub id: String,
}

/// Everything `skills doctor` reports for `set`, sorted by path: every
/// SKILL.md seen with its status, plus the decoys in support folders (read
/// now; discovery itself never opens support folders).
pub fn doctor_report(set: &SkillSet) -> Vec<DoctorEntry> {
    let mut entries = set.doctor_entries();
    entries.extend(crate::walk::decoy_entries(set));
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    entries
}

/// Why `skill` is hidden under `options`, if it is.
pub(crate) fn gate_for(skill: &Skill, options: &DiscoveryOptions) -> Option<Gate> {
    if !platform_matches(&skill.frontmatter.platforms, &options.platform) {
        Some(Gate::Platform)
    } else if is_disabled(skill, &options.disabled) {
        Some(Gate::Disabled)
    } else {
        None
    }
}

fn is_disabled(skill: &Skill, disabled: &[String]) -> bool {
    if disabled.is_empty() {
        return false;
    }
    let qid = skill.qualified_id();
    disabled
        .iter()
        .map(|d| d.trim())
        .any(|d| d == skill.name || d == skill.id || d == qid)
}

/// What parsing one SKILL.md yields.
pub(crate) struct ReadSkill {
    frontmatter: frontmatter::Frontmatter,
    description: String,
    warnings: Vec<String>,
}

/// A SKILL.md parsed, or why it is not a skill.
pub(crate) type ReadOutcome = Result<ReadSkill, String>;

/// The head of a SKILL.md or DESCRIPTION.md as read.
pub(crate) struct Head {
    pub text: String,
    /// Invalid UTF-8 was replaced.
    pub lossy: bool,
    pub meta: fs::Metadata,
    /// When the file changed within the racy window and was read whole: the
    /// digest of its bytes, so a snapshot can still prove it unchanged later.
    pub digest: Option<u128>,
}

/// Reads the head of an open file (the whole file only when its frontmatter
/// is longer), with the metadata of the open handle, so no separate stat is
/// needed for the stamp.
pub(crate) fn read_head(mut file: fs::File) -> std::io::Result<Head> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(NOT_A_FILE));
    }
    let want = (meta.len() as usize).min(HEAD_BYTES);
    let mut buf = Vec::with_capacity(want + 1);
    file.by_ref().take(want as u64).read_to_end(&mut buf)?;
    let complete = (buf.len() as u64) >= meta.len();
    let digest = (complete && is_recent(&FileState::of(&meta), SystemTime::now()))
        .then(|| content_digest(&buf));
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
        return Ok(Head {
            text,
            lossy,
            meta,
            digest,
        });
    }
    let mut rest = Vec::new();
    let mut all = text.into_bytes();
    file.take(MAX_READ_BYTES).read_to_end(&mut rest)?;
    all.extend(rest);
    let lossy = lossy || std::str::from_utf8(&all).is_err();
    Ok(Head {
        text: String::from_utf8_lossy(&all).into_owned(),
        lossy,
        meta,
        digest: None,
    })
}

pub(crate) const NOT_A_FILE: &str = "not a regular file";

/// Why a file of a skill was skipped: it is a FIFO, socket, device or folder,
/// which is never opened (opening or reading one can block forever).
pub(crate) fn not_regular_message(name: &str) -> String {
    format!("{name} is not a regular file (a FIFO, socket or device?); it was skipped, not opened")
}

/// One SKILL.md read: its stamp parts and what parsing it gave.
pub(crate) struct SkillRead {
    pub state: Option<FileState>,
    pub digest: Option<u128>,
    pub outcome: ReadOutcome,
}

/// Parses one SKILL.md at `path` (a snapshot re-reading one it recorded).
/// A SKILL.md that has become a link is not followed here: the read fails,
/// and the caller falls back to a full walk, which decides about links.
pub(crate) fn read_skill(path: &Path) -> SkillRead {
    use rustix::fs::{Mode, OFlags};
    let opened = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    );
    match opened.map(fs::File::from).map_err(std::io::Error::from) {
        Ok(file) => read_skill_from(file, path),
        Err(e) => SkillRead {
            state: FileState::read(path),
            digest: None,
            outcome: Err(unreadable(&e)),
        },
    }
}

/// Parses an open SKILL.md; the state (when the file could be stat'ed) feeds
/// the stamp whatever the parse gave.
pub(crate) fn read_skill_from(file: fs::File, path: &Path) -> SkillRead {
    match read_head(file) {
        Ok(head) => SkillRead {
            state: Some(FileState::of(&head.meta)),
            digest: head.digest,
            outcome: parse_read(&head.text, head.lossy),
        },
        Err(e) => SkillRead {
            state: FileState::read(path),
            digest: None,
            outcome: Err(if e.to_string() == NOT_A_FILE {
                not_regular_message("SKILL.md")
            } else {
                unreadable(&e)
            }),
        },
    }
}

pub(crate) fn unreadable(e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::NotFound {
        format!("SKILL.md cannot be read ({e}); is it a broken link?")
    } else {
        format!("cannot read SKILL.md: {e}")
    }
}

fn parse_read(text: &str, lossy: bool) -> Result<ReadSkill, String> {
    let parsed = frontmatter::parse_skill_md(text).map_err(|problem| match problem {
        FrontmatterProblem::Unclosed => {
            "the frontmatter has no closing '---' line; add one after the last key".to_owned()
        }
    })?;
    let mut warnings = parsed.warnings;
    warnings.extend(parsed.lints);
    if lossy {
        warnings.push("SKILL.md is not valid UTF-8; invalid bytes were replaced".into());
    }
    let body = &frontmatter::strip_bom(text)[parsed.body_offset..];
    let mut frontmatter = parsed.frontmatter;
    // The raw metadata was only needed to fill the typed fields.
    frontmatter.metadata = None;
    let description = match frontmatter.description.take() {
        Some(d) => d,
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
        frontmatter,
        description,
        warnings,
    })
}

pub(crate) fn build_skill(candidate: SkillPlace, scope: &Scope, read: ReadSkill) -> Skill {
    let dirname = candidate
        .id
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_owned();
    let mut warnings = read.warnings;
    let mut frontmatter = read.frontmatter;
    // Name and description live on the skill itself, not twice.
    let name = match &frontmatter.name.take() {
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
    // Doctor reports the shared description rule; reading never refuses it.
    match crate::validate::check_description(&read.description) {
        Ok(lint) => warnings.extend(lint),
        Err(v) => warnings.push(v.message),
    }
    let category = candidate
        .id
        .rsplit_once('/')
        .map(|(parent, _)| parent.to_owned());
    // Name and description go into the prompt and onto terminals as they
    // are; control characters in them are made visible here, once.
    let escaped = |text: String, what: &str, warnings: &mut Vec<String>| {
        match crate::visible_text::escape_controls(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(visible) => {
                warnings.push(format!(
                    "the {what} holds control characters (escape sequences?); they are shown escaped"
                ));
                visible
            }
        }
    };
    let name = escaped(name, "name", &mut warnings);
    let description = escaped(read.description, "description", &mut warnings);
    Skill {
        name,
        description,
        category,
        id: candidate.id,
        scope: scope.clone(),
        path: candidate.skill_md,
        skill_dir: candidate.skill_dir,
        root_index: candidate.root_index,
        frontmatter,
        warnings,
    }
}

pub(crate) fn category_description(text: &str) -> Option<String> {
    let parsed = frontmatter::parse_skill_md(text).ok()?;
    parsed
        .frontmatter
        .description
        .or_else(|| {
            frontmatter::first_body_line(&frontmatter::strip_bom(text)[parsed.body_offset..])
                .map(str::to_owned)
        })
        .map(|d| {
            crate::visible_text::escape_controls(d.trim().trim_matches(['"', '\''])).into_owned()
        })
        .filter(|d| !d.is_empty())
}
