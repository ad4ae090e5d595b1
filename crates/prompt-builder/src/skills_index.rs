//! Layer 7: the skills index, the visible skills grouped by category within a
//! budget sized to the model's context window, cached by everything that can change its bytes.
//!
//! Layout decisions: skills without a category come first, under
//! `(no category)`, matching the (category, name) order of `skills_list`.
//! The budget is a share of the context window (`skills.index_budget_share`;
//! `skills.index_budget_chars` when the window is unknown). Every skill keeps
//! its name; descriptions are shown up to a per-skill cap, the trigger clause
//! ("Use when …") preferred over opening boilerplate. Over budget, every
//! description is first shortened by the same amount, so no category or
//! root pays for the others; below a floor, the least used skills (usage
//! records read once when the session starts, so the prompt stays frozen)
//! lose their descriptions first, then their lines, each category's first
//! skills kept longest. The list is never empty, and closing lines say how
//! many skills are not shown and how to find them.

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
const INSTRUCTION_SEARCH: &str = "\
When no skill below fits, search every installed skill with skills_search(query) before improvising.";
/// The search tool, named when the session has it.
const SEARCH_TOOL: &str = "skills_search";
const UNCATEGORIZED: &str = "(no category)";
/// Category descriptions are cut to this many characters.
const CATEGORY_DESCRIPTION_CHARS: usize = 100;
/// Descriptions are not shortened below this to fit the budget: shorter
/// than this they stop telling the model when to load the skill, and a
/// name alone is the more honest shortening.
const MIN_DESCRIPTION_CHARS: usize = 40;
/// Characters per token when a share of the context window becomes a budget
/// in characters (the same rough rate the context estimate uses).
const CHARS_PER_TOKEN: f64 = 4.0;
/// Rendered blocks kept in memory; one per distinct key.
const CACHE_SLOTS: usize = 32;
/// The folder under `$KNACK_HOME/cache` holding rendered blocks, and how
/// many it keeps (the least recently written go first).
const DISK_CACHE_DIR: &str = "skills-index";
const DISK_CACHE_FILES: usize = 16;
/// Bumped whenever rendering changes, so older blocks on disk are not reused.
const RENDER_VERSION: u32 = 4;

/// What the index depends on besides the skill set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexOptions {
    pub tools: Vec<String>,
    pub toolsets: Vec<String>,
    pub platform: Platform,
    pub disabled: Vec<String>,
    /// The most characters the block may take: a share of the context
    /// window when it is known (`with_context_window`), else the fixed floor.
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

    /// These options sized to a context window of `window` tokens: the
    /// budget becomes `share` of it (in characters); `None` keeps the fixed
    /// budget for windows nobody knows.
    pub fn with_context_window(mut self, window: Option<u64>, share: f64) -> Self {
        if let Some(window) = window.filter(|w| *w > 0)
            && share.is_finite()
            && share > 0.0
        {
            self.budget_chars = (window as f64 * share.min(1.0) * CHARS_PER_TOKEN) as usize;
        }
        self
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
        field(if skill.frontmatter.model_invocable() {
            ""
        } else {
            "manual"
        });
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
/// start the description already (skill-core's one recogniser decides).
fn trigger_start(flat: &str) -> Option<usize> {
    // At the very start the description is a trigger already.
    skill_core::trigger::trigger_start(flat).filter(|&at| at > 0)
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

/// One skill as the index may show it.
struct Entry<'a> {
    skill: &'a Skill,
    /// The name as shown, decided once.
    name: String,
    /// Index into the groups.
    group: usize,
    /// Where the skill stands in the order of who keeps what longest
    /// (0 keeps its description and its line the longest).
    rank: usize,
    /// Characters of `- name`.
    line_chars: usize,
}

/// A category heading.
struct GroupHead {
    line: String,
    chars: usize,
}

/// How much of the index is shown: every description at most `cap`
/// characters; the `bare` lowest-ranked skills without one; the `hidden`
/// lowest-ranked not listed at all (`hidden <= bare`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Plan {
    cap: usize,
    bare: usize,
    hidden: usize,
}

/// What the rendered block shows, for the notes of `prompt show` and
/// `skills doctor`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexCoverage {
    /// Skills the model may be offered.
    pub total: usize,
    /// Skills listed by name.
    pub listed: usize,
    /// Listed skills shown without their description.
    pub without_description: usize,
}

impl IndexCoverage {
    /// Whether every skill is listed with a description.
    pub fn is_complete(&self) -> bool {
        self.listed == self.total && self.without_description == 0
    }

    /// Reads the coverage back from a block this module rendered (a block
    /// kept on disk carries no other record); `None` for an empty block.
    pub fn of_block(block: &str) -> Option<Self> {
        let start = block.find(OPEN_TAG)? + OPEN_TAG.len();
        let end = block.find(CLOSE_TAG)?;
        let listed = block
            .get(start..end)?
            .lines()
            .filter(|l| l.starts_with("- "))
            .count();
        // "{hidden} of {total} skills are not listed here"
        let total = match block.find(HIDDEN_MARKER) {
            Some(at) => block[..at].split_whitespace().next_back()?.parse().ok()?,
            None => listed,
        };
        // "{bare} listed skill(s) ... by name only"
        let without_description = block
            .find(BARE_MARKER)
            .and_then(|at| block[..at].split_whitespace().last()?.parse().ok())
            .unwrap_or(0);
        Some(Self {
            total,
            listed,
            without_description,
        })
    }

    /// One sentence for people, or `None` when nothing was left out.
    pub fn notice(&self) -> Option<String> {
        if self.is_complete() {
            return None;
        }
        let mut parts = Vec::new();
        if self.listed < self.total {
            parts.push(format!(
                "{} of {} skills are not listed in the model's skills index",
                self.total - self.listed,
                self.total
            ));
        }
        if self.without_description > 0 {
            parts.push(format!(
                "{} are listed without a description",
                self.without_description
            ));
        }
        Some(format!(
            "{}; the model finds the rest with skills_search (raise skills.index_budget_share or the model's context_window to list more)",
            parts.join(" and ")
        ))
    }
}

const OPEN_TAG: &str = "<available_skills>";
const CLOSE_TAG: &str = "</available_skills>";
/// Words of the closing notes that `IndexCoverage::of_block` reads back.
const HIDDEN_MARKER: &str = " skills are not listed here";
const BARE_MARKER: &str = " listed skill";

/// The entries to show, their groups, and whether any shown name is ambiguous.
fn entries<'a>(
    skills: &'a SkillSet,
    options: &IndexOptions,
) -> (Vec<Entry<'a>>, Vec<GroupHead>, bool) {
    let mut by_category: BTreeMap<Option<&str>, Vec<&Skill>> = BTreeMap::new();
    for skill in skills.visible() {
        if passes_conditions(skill, options) && skill.frontmatter.model_invocable() {
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
    let mut heads = Vec::with_capacity(by_category.len());
    let mut entries = Vec::new();
    // (uses, place in its category, category): who keeps what longest.
    let mut order: Vec<(u64, usize, usize)> = Vec::new();
    for (g, (category, members)) in by_category.into_iter().enumerate() {
        let label = category.unwrap_or(UNCATEGORIZED);
        let description = category
            .and_then(|c| skills.category_description(c))
            .map(|d| index_line(d, CATEGORY_DESCRIPTION_CHARS))
            .filter(|d| !d.is_empty());
        let line = match description {
            Some(d) => format!("{label}: {d}"),
            None => format!("{label}:"),
        };
        heads.push(GroupHead {
            chars: line.chars().count(),
            line,
        });
        for (place, skill) in members.into_iter().enumerate() {
            let shared = ambiguous.contains(skill.name.as_str());
            any_ambiguous |= shared;
            let name = shown_name(skill, shared);
            let uses = if options.uses.is_empty() {
                0
            } else {
                options
                    .uses
                    .get(&skill.qualified_id())
                    .copied()
                    .unwrap_or(0)
            };
            order.push((uses, place, g));
            entries.push(Entry {
                skill,
                line_chars: 2 + name.chars().count(),
                name,
                group: g,
                rank: 0,
            });
        }
    }
    // Most used first; then each category's first skills before any
    // category's later ones, so no category loses everything first.
    let mut by_rank: Vec<usize> = (0..entries.len()).collect();
    by_rank.sort_by(|&a, &b| {
        order[b]
            .0
            .cmp(&order[a].0)
            .then(order[a].1.cmp(&order[b].1))
            .then(order[a].2.cmp(&order[b].2))
    });
    for (rank, &e) in by_rank.iter().enumerate() {
        entries[e].rank = rank;
    }
    (entries, heads, any_ambiguous)
}

fn render(skills: &SkillSet, options: &IndexOptions) -> String {
    let (entries, heads, any_ambiguous) = entries(skills, options);
    if entries.is_empty() {
        return String::new();
    }
    let has_search = options.tools.iter().any(|t| t == SEARCH_TOOL);
    let mut intro = format!("{HEADER}\n{INSTRUCTION_LOAD}");
    if options.tools.iter().any(|t| t == "skill_manage") {
        intro.push(' ');
        intro.push_str(INSTRUCTION_PATCH);
    }
    if has_search {
        intro.push(' ');
        intro.push_str(INSTRUCTION_SEARCH);
    }
    if any_ambiguous {
        intro.push('\n');
        intro.push_str(AMBIGUOUS_NOTE);
    }
    let n = entries.len();
    let tail = |plan: &Plan| -> String {
        let mut out = String::new();
        if plan.hidden > 0 {
            let find = if has_search {
                "find them with skills_search(query), or browse with skills_list(category)"
            } else {
                "browse them with skills_list(category)"
            };
            out.push_str(&format!(
                "\n\n{} of {n}{HIDDEN_MARKER} to keep this prompt short; {find}.",
                plan.hidden
            ));
        }
        let bare = plan.bare - plan.hidden;
        if bare > 0 {
            let (noun, verb) = if bare == 1 { ("", "is") } else { ("s", "are") };
            out.push_str(&format!(
                "\n\n{bare}{BARE_MARKER}{noun} {verb} shown by name only to fit; skills_list(category) shows every description."
            ));
        }
        out
    };
    let frame = intro.chars().count() + 2 + OPEN_TAG.len() + 1 + 1 + CLOSE_TAG.len();
    // The size of the block under `plan`, counted without building it.
    let size = |plan: &Plan| -> usize {
        let mut groups_shown = vec![false; heads.len()];
        let mut body = 0usize;
        let mut lines = 0usize;
        for e in &entries {
            if e.rank >= n - plan.hidden {
                continue;
            }
            groups_shown[e.group] = true;
            body += e.line_chars;
            lines += 1;
            if e.rank < n - plan.bare {
                let d = index_description_chars(&e.skill.description, plan.cap);
                if d > 0 {
                    body += 2 + d;
                }
            }
        }
        for (head, shown) in heads.iter().zip(&groups_shown) {
            if *shown {
                body += head.chars;
                lines += 1;
            }
        }
        frame + body + lines.saturating_sub(1) + tail(plan).chars().count()
    };
    let budget = options.budget_chars;
    let fits = |plan: &Plan| size(plan) <= budget;
    // The largest value in `lo..=hi` for which `ok` holds, given it holds at `lo`.
    let largest = |lo: usize, hi: usize, ok: &dyn Fn(usize) -> bool| -> usize {
        let (mut lo, mut hi) = (lo, hi);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if ok(mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    };
    // The smallest value in `lo..=hi` for which `ok` holds, given it holds at `hi`.
    let smallest = |lo: usize, hi: usize, ok: &dyn Fn(usize) -> bool| -> usize {
        let (mut lo, mut hi) = (lo, hi);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if ok(mid) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        hi
    };
    let top = options.description_chars;
    let floor = MIN_DESCRIPTION_CHARS.min(top);
    let plan = |cap, bare, hidden| Plan { cap, bare, hidden };
    let chosen = if fits(&plan(top, 0, 0)) {
        plan(top, 0, 0)
    } else if fits(&plan(floor, 0, 0)) {
        // Every skill keeps a description; all are shortened alike.
        let cap = largest(floor, top, &|c| fits(&plan(c, 0, 0)));
        plan(cap, 0, 0)
    } else if fits(&plan(floor, n, 0)) {
        // The least used give up their descriptions first; what that frees
        // goes to the rest, evenly.
        let bare = smallest(0, n, &|b| fits(&plan(floor, b, 0)));
        let cap = largest(floor, top, &|c| fits(&plan(c, bare, 0)));
        plan(cap, bare, 0)
    } else {
        // Names only, and still too long: the least used are left out, but
        // the list is never empty.
        let hidden = smallest(0, n - 1, &|h| h == n - 1 || fits(&plan(floor, n, h)));
        plan(floor, n, hidden)
    };
    assemble(&intro, &entries, &heads, &chosen, &tail(&chosen))
}

fn assemble(
    intro: &str,
    entries: &[Entry<'_>],
    heads: &[GroupHead],
    plan: &Plan,
    tail: &str,
) -> String {
    let n = entries.len();
    let mut body = String::new();
    let mut current: Option<usize> = None;
    for e in entries {
        if e.rank >= n - plan.hidden {
            continue;
        }
        if current != Some(e.group) {
            if !body.is_empty() {
                body.push('\n');
            }
            body.push_str(&heads[e.group].line);
            current = Some(e.group);
        }
        body.push_str("\n- ");
        body.push_str(&e.name);
        if e.rank < n - plan.bare {
            let description = index_description(&e.skill.description, plan.cap);
            if !description.is_empty() {
                body.push_str(": ");
                body.push_str(&description);
            }
        }
    }
    format!("{intro}\n\n{OPEN_TAG}\n{body}\n{CLOSE_TAG}{tail}")
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
