//! Layer 7: the skills index, a budgeted list of the visible skills grouped by
//! category, cached in-process by everything that can change its bytes.
//!
//! Layout decisions: skills without a category come first, under
//! `(no category)`, matching the (category, name) order of `skills_list`.
//! Each description is shown up to a per-skill cap, its trigger sentence
//! ("Use when …") preferred over opening boilerplate. Over budget, every
//! description is first shortened by the same amount, so no category or root
//! pays for the others; below a floor, whole categories fall back to a
//! names-only line, largest first (ties by category name), its most used
//! skills named first (the usage records, read once when the session
//! starts, so the prompt stays frozen); if that is not enough, trailing
//! categories are left out. Either way a closing line points to `skills_list`.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

use lru::LruCache;
use sha2::{Digest, Sha256};
use skill_core::{Skill, SkillSet};

use crate::inputs::{Platform, PromptInputs};
use crate::screen::cut_with_ellipsis;

const HEADER: &str = "## Skills";
const INSTRUCTION_LOAD: &str = "\
The skills below are procedures that work here, for this user and this machine. \
Before you act on a task, scan the list: when a skill matches the task, even in \
part, load it with skill_view(name) and follow it rather than improvising.";
const INSTRUCTION_PATCH: &str = "\
When a skill you used turns out wrong or incomplete, fix it with \
skill_manage(action=\"patch\") before you finish.";
const AMBIGUOUS_NOTE: &str = "\
A name followed by an id in brackets is shared by several skills; load such a \
skill by its id.";
const UNCATEGORIZED: &str = "(no category)";
const NAMES_ONLY: &str = "[names only]";
/// Category descriptions are cut to this many characters.
const CATEGORY_DESCRIPTION_CHARS: usize = 100;
/// Descriptions are not shortened below this to fit the budget: shorter
/// than this they stop telling the model when to load the skill, and a
/// names-only category is the more honest shortening.
const MIN_DESCRIPTION_CHARS: usize = 40;
/// Phrases that open a description's trigger: the part that tells the model
/// when to load the skill. Matched at a word start, ignoring case.
const TRIGGER_PHRASES: &[&str] = &[
    "use when",
    "use this when",
    "use this skill when",
    "use it when",
    "use for",
    "use this for",
    "use this skill for",
    "use proactively",
    "this skill should be used when",
    "should be used when",
    "invoke when",
    "trigger when",
    "triggers when",
    "triggers on",
    "when the user",
    "when you need",
];
/// Rendered blocks kept in memory; one per distinct key.
const CACHE_SLOTS: usize = 32;
/// The folder under `$KNACK_HOME/cache` holding rendered blocks, and how
/// many it keeps (the least recently written go first).
const DISK_CACHE_DIR: &str = "skills-index";
const DISK_CACHE_FILES: usize = 16;
/// Bumped whenever rendering changes, so older blocks on disk are not reused.
const RENDER_VERSION: u32 = 3;

/// What the index depends on besides the skill set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexOptions {
    pub tools: Vec<String>,
    pub toolsets: Vec<String>,
    pub platform: Platform,
    pub disabled: Vec<String>,
    pub budget_chars: usize,
    /// Most characters of one description shown.
    pub description_chars: usize,
    /// A folder where rendered blocks are kept between processes, so a fresh
    /// `knack` process with an unchanged skill set does not render again.
    pub disk_cache: Option<PathBuf>,
    /// Uses by qualified id (the usage records): a names-only category names
    /// its most used skills first. Empty keeps the plain (name) order.
    pub uses: BTreeMap<String, u64>,
}

impl IndexOptions {
    pub fn from_inputs(inputs: &PromptInputs) -> Self {
        Self {
            tools: inputs.tools.clone(),
            toolsets: inputs.toolsets.clone(),
            platform: inputs.platform,
            disabled: inputs.config.skills.disabled.clone(),
            budget_chars: inputs.config.skills.index_budget_chars,
            description_chars: inputs.config.skills.index_description_chars,
            disk_cache: Some(inputs.home.cache_dir().join(DISK_CACHE_DIR)),
            uses: BTreeMap::new(),
        }
    }

    /// These options with the skills' use counts (qualified id to uses).
    pub fn with_uses(mut self, uses: BTreeMap<String, u64>) -> Self {
        self.uses = uses;
        self
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CacheKey {
    roots: Vec<(String, PathBuf)>,
    tools: Vec<String>,
    toolsets: Vec<String>,
    platform: Platform,
    disabled: Vec<String>,
    budget: usize,
    description_chars: usize,
    uses: BTreeMap<String, u64>,
    /// Digest of every skill field the index reads, so an edited description
    /// or a new DESCRIPTION.md is a different key even with the same roots.
    content: [u8; 32],
}

static CACHE: LazyLock<Mutex<LruCache<CacheKey, Arc<str>>>> = LazyLock::new(|| {
    Mutex::new(LruCache::new(
        NonZeroUsize::new(CACHE_SLOTS).unwrap_or(NonZeroUsize::MIN),
    ))
});

/// Forgets every cached index block (tests, and writers that want a rebuild).
pub fn clear_index_cache() {
    cache().clear();
}

fn cache() -> std::sync::MutexGuard<'static, LruCache<CacheKey, Arc<str>>> {
    match CACHE.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

pub(crate) fn layer(inputs: &PromptInputs, skills: &SkillSet) -> String {
    render_skills_index(skills, &IndexOptions::from_inputs(inputs))
}

/// The index block for `skills`; empty without `skill_view` or without any
/// skill to show. Same inputs, same bytes.
pub fn render_skills_index(skills: &SkillSet, options: &IndexOptions) -> String {
    if !options.tools.iter().any(|t| t == "skill_view") {
        return String::new();
    }
    let key = cache_key(skills, options);
    if let Some(hit) = cache().get(&key) {
        return hit.to_string();
    }
    let on_disk = options
        .disk_cache
        .as_deref()
        .map(|dir| dir.join(disk_name(&key)));
    if let Some(text) = on_disk
        .as_deref()
        .and_then(|file| std::fs::read_to_string(file).ok())
    {
        cache().put(key, Arc::from(text.as_str()));
        return text;
    }
    let rendered = render(skills, options);
    if let Some(file) = &on_disk {
        // Best effort: a block that cannot be kept is rendered again next time.
        if let Err(e) = keep_on_disk(file, &rendered) {
            tracing::debug!("skills index not kept in {}: {e}", file.display());
        }
    }
    cache().put(key, Arc::from(rendered.as_str()));
    rendered
}

/// The block kept for the skill set named `set_id` (a discovery snapshot's
/// id, `skill_core::snapshot::SnapshotId::hex`) under `options`, if an
/// earlier process kept one. The caller must know the snapshot still holds
/// (`skill_core::snapshot::still_valid`); then the skill set need not be
/// loaded at all.
pub fn kept_index(set_id: &str, options: &IndexOptions) -> Option<String> {
    let dir = options.disk_cache.as_deref()?;
    std::fs::read_to_string(dir.join(set_name(set_id, options))).ok()
}

/// Keeps `block`, rendered from the skill set named `set_id`, for `kept_index`.
pub fn keep_index(set_id: &str, options: &IndexOptions, block: &str) {
    let Some(dir) = options.disk_cache.as_deref() else {
        return;
    };
    let file = dir.join(set_name(set_id, options));
    if let Err(e) = keep_on_disk(&file, block) {
        tracing::debug!("skills index not kept in {}: {e}", file.display());
    }
}

/// The file name of a block kept by set id: everything else that decides
/// its bytes is in the name too.
fn set_name(set_id: &str, options: &IndexOptions) -> String {
    let described = format!(
        "{} {RENDER_VERSION} {set_id} {:?} {:?} {:?} {:?} {} {} {:?}",
        env!("CARGO_PKG_VERSION"),
        sorted(&options.tools),
        sorted(&options.toolsets),
        options.platform,
        sorted(&options.disabled),
        options.budget_chars,
        options.description_chars,
        options.uses,
    );
    let digest = Sha256::digest(described.as_bytes());
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("set-{hex}.txt")
}

/// The file name of a block: a digest of everything that decides its bytes.
fn disk_name(key: &CacheKey) -> String {
    let digest = Sha256::digest(
        format!("{} {RENDER_VERSION} {key:?}", env!("CARGO_PKG_VERSION")).as_bytes(),
    );
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("{hex}.txt")
}

/// Writes `text` atomically (temp file, rename), then drops the oldest
/// blocks beyond `DISK_CACHE_FILES`.
fn keep_on_disk(file: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.persist(file).map_err(|e| e.error)?;
    let mut blocks: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "txt"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if blocks.len() > DISK_CACHE_FILES {
        blocks.sort();
        for (_, old) in &blocks[..blocks.len() - DISK_CACHE_FILES] {
            let _ = std::fs::remove_file(old);
        }
    }
    Ok(())
}

fn sorted(items: &[String]) -> Vec<String> {
    let mut v: Vec<String> = items.iter().map(|s| s.trim().to_owned()).collect();
    v.sort();
    v.dedup();
    v
}

fn cache_key(skills: &SkillSet, options: &IndexOptions) -> CacheKey {
    // Fields are gathered into one buffer and hashed in one call: hundreds
    // of thousands of tiny updates cost more than the hashing itself.
    let mut bytes: Vec<u8> = Vec::with_capacity(skills.skills.len() * 320);
    let mut field = |text: &str| {
        bytes.extend_from_slice(&(text.len() as u64).to_le_bytes());
        bytes.extend_from_slice(text.as_bytes());
    };
    for (skill, gate) in skills.skills.iter().zip(&skills.gates) {
        // Plain fields, no formatting: the key is computed on every prompt build.
        field(skill.scope.namespace());
        field(&skill.id);
        field(&skill.name);
        field(&skill.description);
        field(skill.category.as_deref().unwrap_or("\u{0}"));
        field(match gate {
            None => "",
            Some(skill_core::Gate::Platform) => "platform",
            Some(skill_core::Gate::Disabled) => "disabled",
        });
        let c = &skill.frontmatter.conditions;
        for list in [
            &c.requires_toolsets,
            &c.fallback_for_toolsets,
            &c.requires_tools,
            &c.fallback_for_tools,
        ] {
            field("\u{1}");
            for item in list {
                field(item);
            }
        }
    }
    field("--categories");
    for (category, (_, text)) in &skills.category_descriptions {
        field(category);
        field(text);
    }
    field("--ambiguous");
    for name in &skills.ambiguous_names {
        field(name);
    }
    CacheKey {
        roots: skills
            .roots
            .iter()
            .map(|r| (r.scope.namespace().to_owned(), r.path.clone()))
            .collect(),
        tools: sorted(&options.tools),
        toolsets: sorted(&options.toolsets),
        platform: options.platform,
        disabled: sorted(&options.disabled),
        budget: options.budget_chars,
        description_chars: options.description_chars,
        uses: options.uses.clone(),
        content: Sha256::digest(&bytes).into(),
    }
}

/// Hidden by conditions: a fallback whose primary is available, or a skill
/// that needs a tool or toolset the session lacks.
fn passes_conditions(skill: &Skill, options: &IndexOptions) -> bool {
    let c = &skill.frontmatter.conditions;
    let has_tool = |t: &String| options.tools.iter().any(|x| x == t.trim());
    let has_set = |t: &String| options.toolsets.iter().any(|x| x == t.trim());
    let fallback_needed =
        !c.fallback_for_toolsets.iter().any(has_set) && !c.fallback_for_tools.iter().any(has_tool);
    let requirements_met =
        c.requires_toolsets.iter().all(has_set) && c.requires_tools.iter().all(has_tool);
    fallback_needed && requirements_met
}

/// One category as it can be rendered in full or names-only.
struct Group<'a> {
    label: String,
    /// The category's own description line, if any.
    description: Option<String>,
    members: Vec<&'a Skill>,
    /// Each member's name as shown, decided once for both renderings.
    names: Vec<String>,
    /// The characters of the heading line, counted once.
    head_chars: usize,
    names_only: String,
}

impl Group<'_> {
    /// The category with every member's description shown up to `cap`.
    fn full(&self, cap: usize) -> String {
        let mut full = match &self.description {
            Some(d) => format!("{}: {d}", self.label),
            None => format!("{}:", self.label),
        };
        for (skill, name) in self.members.iter().zip(&self.names) {
            let description = index_description(&skill.description, cap);
            full.push_str("\n- ");
            full.push_str(name);
            if !description.is_empty() {
                full.push_str(": ");
                full.push_str(&description);
            }
        }
        full
    }

    /// The length in characters of `full(cap)`, counted without building
    /// it: most groups of a large tree end up names-only or left out.
    fn full_chars(&self, cap: usize) -> usize {
        self.head_chars
            + self
                .members
                .iter()
                .zip(&self.names)
                .map(|(skill, name)| {
                    let d = index_description_chars(&skill.description, cap);
                    3 + name.chars().count() + if d > 0 { 2 + d } else { 0 }
                })
                .sum::<usize>()
    }
}

/// The name as shown: ambiguous names carry their qualified id.
fn shown_name(skill: &Skill, ambiguous: bool) -> String {
    if ambiguous {
        format!("{} [{}]", skill.name, skill.qualified_id())
    } else {
        skill.name.clone()
    }
}

/// Descriptions may span lines in YAML; the index wants one short line of
/// at most `max` characters (`max - 3` and "..." when cut). Words are joined
/// by single spaces and the scan stops as soon as the line is known too long.
/// The length in characters of `index_line(text, max)`, without building it.
fn index_line_chars(text: &str, max: usize) -> usize {
    let mut chars = 0usize;
    for word in text.split_whitespace() {
        if chars > 0 {
            chars += 1;
        }
        chars += word.chars().count();
        if chars > max {
            // `cut_with_ellipsis` keeps `max - 3` characters and adds "...".
            return max.saturating_sub(3) + 3;
        }
    }
    chars
}

fn index_line(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut chars = 0usize;
    for word in text.split_whitespace() {
        if chars > 0 {
            out.push(' ');
            chars += 1;
        }
        out.push_str(word);
        chars += word.chars().count();
        if chars > max {
            return cut_with_ellipsis(&out, max);
        }
    }
    out
}

/// A skill's description as the index shows it: on one line, at most `cap`
/// characters. Real descriptions open with a summary and end with the
/// trigger ("… Use when the user asks about X."); when the whole does not
/// fit, the trigger is kept (with the opening sentence if both fit) and
/// the rest is cut at a word.
fn index_description(text: &str, cap: usize) -> String {
    if index_line_chars(text, cap.saturating_add(1)) <= cap {
        return index_line(text, cap);
    }
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(start) = trigger_start(&flat) else {
        return cut_at_word(&flat, cap);
    };
    let trigger = &flat[start..];
    let opening = opening_sentence(&flat[..start]);
    match opening {
        Some(opening) if opening.chars().count() + 1 + trigger.chars().count() <= cap => {
            format!("{opening} {trigger}")
        }
        _ => cut_at_word(trigger, cap),
    }
}

/// The length in characters of `index_description(text, cap)`; the common
/// case (the whole description fits) is counted without building anything.
fn index_description_chars(text: &str, cap: usize) -> usize {
    let whole = index_line_chars(text, cap.saturating_add(1));
    if whole <= cap {
        return whole;
    }
    index_description(text, cap).chars().count()
}

/// Where the trigger of a one-line description starts, when it does not
/// start the description already: the first trigger phrase at a word start.
fn trigger_start(flat: &str) -> Option<usize> {
    let lower = flat.to_ascii_lowercase();
    let mut best: Option<usize> = None;
    for phrase in TRIGGER_PHRASES {
        let mut from = 0;
        while let Some(found) = lower[from..].find(phrase) {
            let at = from + found;
            let word_start = at == 0 || !lower.as_bytes()[at - 1].is_ascii_alphanumeric();
            let end = at + phrase.len();
            let word_end = end == lower.len() || !lower.as_bytes()[end].is_ascii_alphanumeric();
            if word_start && word_end {
                best = Some(best.map_or(at, |b: usize| b.min(at)));
                break;
            }
            from = at + phrase.len();
        }
    }
    // At the very start the description is a trigger already.
    best.filter(|&at| at > 0)
}

/// The first sentence of `before` (the text ahead of the trigger), if it
/// ends with '.', '!' or '?'; a summary cut mid-sentence reads worse than none.
fn opening_sentence(before: &str) -> Option<&str> {
    let before = before.trim_end();
    before
        .char_indices()
        .find(|&(i, c)| {
            let after = i + c.len_utf8();
            matches!(c, '.' | '!' | '?')
                && (after == before.len() || before[after..].starts_with(' '))
        })
        .map(|(i, c)| &before[..i + c.len_utf8()])
}

/// `text` (already on one line) cut to at most `cap` characters at a word
/// boundary, with "..." when cut; a single word longer than that is cut
/// inside.
fn cut_at_word(text: &str, cap: usize) -> String {
    if text.chars().count() <= cap {
        return text.to_owned();
    }
    let room = cap.saturating_sub(3);
    let mut end = 0usize;
    let mut chars = 0usize;
    for (i, word) in text.split(' ').scan(0usize, |at, w| {
        let start = *at;
        *at += w.len() + 1;
        Some((start, w))
    }) {
        let next = chars + usize::from(chars > 0) + word.chars().count();
        if next > room {
            break;
        }
        chars = next;
        end = i + word.len();
    }
    if end == 0 {
        return cut_with_ellipsis(text, cap);
    }
    let kept = text[..end].trim_end_matches([',', ';', ':', '-', ' ']);
    format!("{kept}...")
}

/// The groups to show, and whether any shown name is ambiguous.
fn groups<'a>(skills: &'a SkillSet, options: &IndexOptions) -> (Vec<Group<'a>>, bool) {
    let mut by_category: BTreeMap<Option<&str>, Vec<&Skill>> = BTreeMap::new();
    for skill in skills.visible() {
        if passes_conditions(skill, options) {
            by_category
                .entry(skill.category.as_deref())
                .or_default()
                .push(skill);
        }
    }
    let mut any_ambiguous = false;
    // One hash lookup per skill instead of a walk down the ordered set.
    let ambiguous: std::collections::HashSet<&str> =
        skills.ambiguous_names.iter().map(String::as_str).collect();
    let groups = by_category
        .into_iter()
        .map(|(category, members)| {
            let label = category.unwrap_or(UNCATEGORIZED).to_owned();
            let description = category
                .and_then(|c| skills.category_description(c))
                .map(|d| index_line(d, CATEGORY_DESCRIPTION_CHARS))
                .filter(|d| !d.is_empty());
            // Each name is decided once and used in both renderings.
            let names: Vec<String> = members
                .iter()
                .map(|s| {
                    let shared = ambiguous.contains(s.name.as_str());
                    any_ambiguous |= shared;
                    shown_name(s, shared)
                })
                .collect();
            let head_chars =
                label.chars().count() + description.as_ref().map_or(1, |d| 2 + d.chars().count());
            let names_only = format!(
                "{label} {NAMES_ONLY}: {}",
                most_used_first(&members, &names, &options.uses).join(", ")
            );
            Group {
                label,
                description,
                members,
                names,
                head_chars,
                names_only,
            }
        })
        .collect();
    (groups, any_ambiguous)
}

/// The shown names of a category, the most used skills first; equal counts
/// keep their (name) order.
fn most_used_first<'a>(
    members: &[&Skill],
    names: &'a [String],
    uses: &BTreeMap<String, u64>,
) -> Vec<&'a str> {
    let mut order: Vec<(u64, usize)> = members
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let n = if uses.is_empty() {
                0
            } else {
                uses.get(&s.qualified_id()).copied().unwrap_or(0)
            };
            (n, i)
        })
        .collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    order.into_iter().map(|(_, i)| names[i].as_str()).collect()
}

fn render(skills: &SkillSet, options: &IndexOptions) -> String {
    let (groups, any_ambiguous) = groups(skills, options);
    if groups.is_empty() {
        return String::new();
    }
    let mut intro = format!("{HEADER}\n{INSTRUCTION_LOAD}");
    if options.tools.iter().any(|t| t == "skill_manage") {
        intro.push(' ');
        intro.push_str(INSTRUCTION_PATCH);
    }
    if any_ambiguous {
        intro.push('\n');
        intro.push_str(AMBIGUOUS_NOTE);
    }

    let n = groups.len();
    let mut compact = vec![false; n];
    let mut shown = n;
    let hidden_note = |left_out: usize| {
        format!(
            "\n\n{left_out} more categories are not listed here to keep this prompt short; call skills_list to see every skill."
        )
    };
    const NAMES_ONLY_NOTE: &str = "\n\nCategories marked [names only] are shortened to fit; call skills_list (optionally with a category) to read their descriptions.";
    let assemble = |compact: &[bool], shown: usize, cap: usize| -> String {
        let body: Vec<std::borrow::Cow<'_, str>> = groups[..shown]
            .iter()
            .zip(compact)
            .map(|(g, &c)| {
                if c {
                    std::borrow::Cow::Borrowed(g.names_only.as_str())
                } else {
                    std::borrow::Cow::Owned(g.full(cap))
                }
            })
            .collect();
        let mut out = format!(
            "{intro}\n\n<available_skills>\n{}\n</available_skills>",
            body.join("\n")
        );
        if shown < n {
            out.push_str(&hidden_note(n - shown));
        } else if compact.iter().any(|&c| c) {
            out.push_str(NAMES_ONLY_NOTE);
        }
        out
    };

    // Sizes are counted, not re-rendered, while choosing what to shorten:
    // the block is assembled once, at the end.
    let names_len: Vec<usize> = groups
        .iter()
        .map(|g| g.names_only.chars().count())
        .collect();
    let frame =
        intro.chars().count() + "\n\n<available_skills>\n".len() + "\n</available_skills>".len();
    let size = |body: usize, shown: usize, any_compact: bool| -> usize {
        let tail = if shown < n {
            hidden_note(n - shown).chars().count()
        } else if any_compact {
            NAMES_ONLY_NOTE.chars().count()
        } else {
            0
        };
        frame + body + shown.saturating_sub(1) + tail
    };
    let fits = |body: usize, shown: usize, any_compact: bool| {
        size(body, shown, any_compact) <= options.budget_chars
    };
    // The body with every group not in `compact` shown at `cap`.
    let body_at = |cap: usize, compact: &[bool]| -> usize {
        groups
            .iter()
            .zip(compact)
            .enumerate()
            .map(|(i, (g, &c))| if c { names_len[i] } else { g.full_chars(cap) })
            .sum()
    };
    // The largest cap in `floor..=top` at which the groups not in `compact`
    // fit, given that they fit at `floor`: every description is shortened
    // alike, so the budget is spent evenly across categories and roots.
    let widest_cap = |floor: usize, top: usize, compact: &[bool]| -> usize {
        let any_compact = compact.iter().any(|&c| c);
        let (mut lo, mut hi) = (floor, top);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if fits(body_at(mid, compact), n, any_compact) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    };
    let top = options.description_chars;
    if fits(body_at(top, &compact), n, false) {
        return assemble(&compact, shown, top);
    }
    let floor = MIN_DESCRIPTION_CHARS.min(top);
    if fits(body_at(floor, &compact), n, false) {
        let cap = widest_cap(floor, top, &compact);
        return assemble(&compact, shown, cap);
    }
    // Even at the floor it is too long: largest categories give up their
    // descriptions first; ties by name.
    let full_len: Vec<usize> = groups.iter().map(|g| g.full_chars(floor)).collect();
    let mut body: usize = full_len.iter().sum();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        full_len[b]
            .cmp(&full_len[a])
            .then_with(|| groups[a].label.cmp(&groups[b].label))
    });
    for i in order {
        compact[i] = true;
        body = body - full_len[i] + names_len[i];
        if fits(body, n, true) {
            // What the names-only groups freed goes to the rest, evenly.
            let cap = widest_cap(floor, top, &compact);
            return assemble(&compact, shown, cap);
        }
    }
    while shown > 0 {
        shown -= 1;
        body -= if compact[shown] {
            names_len[shown]
        } else {
            full_len[shown]
        };
        if fits(body, shown, true) {
            break;
        }
    }
    assemble(&compact, shown, floor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counted_index_lines_match_the_built_ones() {
        let texts = [
            "",
            "   ",
            "short",
            "Use when you need to benchmark noisy queries behind slow sensors and sync the ledger",
            "exactly sixty characters long text that fills the budget.ab",
            "naïve café résumé — ünïcödé wörds that keep going and going and going",
            "word\twith\ttabs\nand\nnewlines   and   runs of spaces everywhere here",
            "a-single-very-long-word-without-any-spaces-that-goes-far-past-the-budget-of-sixty",
        ];
        for text in texts {
            for max in [0, 1, 2, 3, 4, 10, 59, 60, 61, 100, 1000] {
                assert_eq!(
                    index_line_chars(text, max),
                    index_line(text, max).chars().count(),
                    "{text:?} at {max}"
                );
            }
        }
    }

    const REAL: &str = "Comprehensive toolkit for PDF work: extracting text and tables, merging and splitting documents, filling forms and adding watermarks across large batches. Use when the user asks to read, fill or change a PDF file.";

    #[test]
    fn a_description_that_fits_is_shown_whole_on_one_line() {
        assert_eq!(
            index_description("Use when  a\n test\tfails", 160),
            "Use when a test fails"
        );
        assert_eq!(
            index_description_chars("Use when  a\n test\tfails", 160),
            21
        );
        assert_eq!(index_description("", 160), "");
    }

    #[test]
    fn a_long_description_keeps_its_trailing_trigger() {
        let shown = index_description(REAL, 160);
        assert_eq!(
            shown,
            "Use when the user asks to read, fill or change a PDF file."
        );
        // With room for both, the opening sentence comes along.
        let two = "Toolkit for spreadsheets. It also does many other things at length, far too many to list in one line here. Use when an .xlsx file is involved.";
        assert_eq!(
            index_description(two, 80),
            "Toolkit for spreadsheets. Use when an .xlsx file is involved."
        );
        // A trigger inside a sentence counts too, whatever its case.
        let inner = "Handles every kind of diagram under the sun in several formats at once; use this skill when drawing a diagram.";
        assert_eq!(
            index_description(inner, 60),
            "use this skill when drawing a diagram."
        );
        // Words such as 'refuse' or 'reuse' are not the phrase.
        assert_eq!(trigger_start("Refuse when asked. Reuse when"), None);
    }

    #[test]
    fn cuts_fall_between_words_and_respect_the_cap() {
        let no_trigger = "A long summary of a skill that never says when to use it, going on and on about its many features and options";
        for cap in [10, 20, 37, 60, 100] {
            let shown = index_description(no_trigger, cap);
            assert!(shown.chars().count() <= cap, "{shown:?} at {cap}");
            assert_eq!(
                shown.chars().count(),
                index_description_chars(no_trigger, cap)
            );
            assert!(shown.ends_with("..."), "{shown:?}");
            let kept = shown.trim_end_matches("...");
            assert!(no_trigger.starts_with(kept), "{shown:?}");
            assert!(
                no_trigger[kept.len()..].starts_with([' ', ',']),
                "cut inside a word: {shown:?}"
            );
        }
        let trigger_too_long = index_description(REAL, 40);
        assert_eq!(trigger_too_long, "Use when the user asks to read, fill...");
        assert_eq!(index_description(&"x".repeat(50), 10), "xxxxxxx...");
    }
}
