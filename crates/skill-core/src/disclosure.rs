//! Progressive disclosure: `skills_list` (level 1) and `skill_view` (the full
//! text, then one support file at a time). Both answer with CONTRACT.md's JSON.

use std::fs;
use std::io::Read;
use std::os::fd::AsFd;
use std::path::{Component, Path, PathBuf};

use rustix::fs::OFlags;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::beneath::{self, Base, DIR_FLAGS, Links};
use crate::preprocess::{PreprocessOptions, TemplateValues, preprocess};
use crate::skill::{QualifiedId, SUPPORT_DIRS, Scope, Skill};
use crate::skill_set::{Gate, Resolution, SkillSet};

/// Largest text file `skill_view` returns whole.
const MAX_VIEW_FILE_BYTES: u64 = 2 * 1024 * 1024;
const MAX_AVAILABLE_FILES: usize = 200;

/// What `skill_view` needs besides the skill set.
#[derive(Debug, Clone)]
pub struct ViewContext<'a> {
    pub preprocess: PreprocessOptions,
    pub session_id: Option<&'a str>,
    /// `$KNACK_HOME/.env`, consulted after the process environment.
    pub env: &'a knack_config::EnvFile,
}

pub fn failure(error: impl Into<String>) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("success".into(), Value::Bool(false));
    map.insert("error".into(), Value::String(error.into()));
    map
}

/// The `skills_list` answer, borrowed from the skill set. Serializes to
/// CONTRACT.md's JSON, keys in this order, with no per-skill copies, so a
/// caller can stream it straight to a writer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkillListing<'a> {
    pub success: bool,
    pub count: usize,
    /// Categories of the listed skills, sorted, each once.
    pub categories: Vec<&'a str>,
    pub skills: Vec<ListedSkill<'a>>,
    /// Only when nothing is listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Only when something is listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<&'static str>,
}

/// One row of `skills_list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ListedSkill<'a> {
    pub name: &'a str,
    /// Cut at `MAX_DESCRIPTION_CHARS`.
    pub description: &'a str,
    pub category: Option<&'a str>,
    pub id: &'a str,
    pub qualified_id: QualifiedId<'a>,
    pub scope: &'a Scope,
}

impl<'a> ListedSkill<'a> {
    pub fn new(skill: &'a Skill) -> Self {
        Self {
            name: &skill.name,
            description: skill.listed_description(),
            category: skill.category.as_deref(),
            id: &skill.id,
            qualified_id: skill.qualified(),
            scope: &skill.scope,
        }
    }
}

/// `skills_list(category?)` as a typed value; `skills_list` is its JSON.
pub fn skill_listing<'a>(set: &'a SkillSet, category: Option<&str>) -> SkillListing<'a> {
    let category = category.map(str::trim).filter(|c| !c.is_empty());
    let in_category = |skill: &Skill| match category {
        None => true,
        Some(c) => skill.category.as_deref().is_some_and(|sc| {
            sc.strip_prefix(c)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        }),
    };
    let skills: Vec<ListedSkill<'a>> = set
        .visible()
        .into_iter()
        .filter(|s| in_category(s))
        .map(ListedSkill::new)
        .collect();
    // `visible` orders by category first, so equal categories are adjacent
    // and already sorted.
    let mut categories: Vec<&'a str> = skills.iter().filter_map(|s| s.category).collect();
    categories.dedup();
    let (message, hint) = if skills.is_empty() {
        let message = match category {
            Some(c) => format!("No skills in category '{c}'."),
            None => "No skills found. Create one with skill_manage or install one with `knack skills install`.".to_owned(),
        };
        (Some(message), None)
    } else {
        (
            None,
            Some("Load a skill's full text with skill_view(name)."),
        )
    };
    SkillListing {
        success: true,
        count: skills.len(),
        categories,
        skills,
        message,
        hint,
    }
}

/// One page of `skills_list` as the model calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListPage<'q> {
    pub category: Option<&'q str>,
    pub offset: usize,
    pub limit: usize,
    /// The most characters the page's JSON may take (the tool-output cap):
    /// rows past it go to the next page.
    pub max_chars: usize,
}

/// Rows of one page unless the caller asks for another number.
pub const DEFAULT_PAGE_ROWS: usize = 100;

/// `skills_list {category?, offset?, limit?}` for the model: the skills it may
/// be offered (manual-only ones left out), one page at a time. `count` is
/// every matching skill; `next_offset` is there while more remain. The page
/// never outgrows `max_chars`, but always holds at least one row.
pub fn skills_list_page(set: &SkillSet, page: &ListPage<'_>) -> Value {
    let mut listing = skill_listing(set, page.category);
    let manual: std::collections::HashSet<QualifiedId<'_>> = set
        .skills
        .iter()
        .filter(|s| !s.frontmatter.model_invocable())
        .map(Skill::qualified)
        .collect();
    if !manual.is_empty() {
        listing
            .skills
            .retain(|row| !manual.contains(&row.qualified_id));
    }
    listing.count = listing.skills.len();
    let total = listing.count;
    let offset = page.offset.min(total);
    let limit = page.limit.max(1);
    // The frame's own characters: the fixed keys and the categories.
    let frame = serde_json::to_string(&SkillListing {
        skills: Vec::new(),
        ..listing.clone()
    })
    .map_or(0, |t| t.len())
        + 64;
    let mut used = frame;
    let mut rows = Vec::new();
    for row in listing.skills.iter().skip(offset).take(limit) {
        let chars = serde_json::to_string(row).map_or(0, |t| t.len()) + 1;
        if !rows.is_empty() && used + chars > page.max_chars {
            break;
        }
        used += chars;
        rows.push(row.clone());
    }
    let next = offset + rows.len();
    listing.skills = rows;
    let mut value = serde_json::to_value(&listing)
        .unwrap_or_else(|e| Value::Object(failure(format!("cannot render the skill list: {e}"))));
    if next < total {
        value["next_offset"] = json!(next);
        value["hint"] = json!(format!(
            "{} more skills: call skills_list again with offset {next}, or search with skills_search(query). Load a skill with skill_view(name).",
            total - next
        ));
    }
    value
}

/// `skills_list(category?)`.
pub fn skills_list(set: &SkillSet, category: Option<&str>) -> Value {
    serde_json::to_value(skill_listing(set, category))
        .unwrap_or_else(|e| Value::Object(failure(format!("cannot render the skill list: {e}"))))
}

/// `skill_view(name, file_path?)`.
pub fn skill_view(
    set: &SkillSet,
    name: &str,
    file_path: Option<&str>,
    ctx: &ViewContext<'_>,
) -> Value {
    Value::Object(match view_inner(set, name, file_path, ctx) {
        Ok(map) | Err(map) => map,
    })
}

fn view_inner(
    set: &SkillSet,
    name: &str,
    file_path: Option<&str>,
    ctx: &ViewContext<'_>,
) -> Result<Map<String, Value>, Map<String, Value>> {
    let name = name.trim();
    if name.is_empty() {
        return Err(failure("the skill name is empty"));
    }
    if name.starts_with('/')
        || name.starts_with('~')
        || name.as_bytes().get(1) == Some(&b':') && name.as_bytes().get(2) == Some(&b'\\')
    {
        let mut f = failure("a skill name must be a name or id, not an absolute path");
        f.insert(
            "hint".into(),
            json!("Use the name from skills_list, or its id such as 'category/name'."),
        );
        return Err(f);
    }
    if name.split(['/', '\\']).any(|part| part == "..") {
        let mut f = failure("a skill name cannot contain '..'");
        f.insert(
            "hint".into(),
            json!("Use the name from skills_list, or its id such as 'category/name'."),
        );
        return Err(f);
    }
    let skill = match set.resolve(name) {
        Resolution::Found(skill) => skill,
        Resolution::Ambiguous(candidates) => {
            let mut f = failure(format!(
                "'{name}' is ambiguous: {} skills have that name; refusing to guess",
                candidates.len()
            ));
            f.insert(
                "matches".into(),
                json!(
                    candidates
                        .iter()
                        .map(|s| s.qualified_id())
                        .collect::<Vec<_>>()
                ),
            );
            f.insert("hint".into(), json!("Load one by its qualified id from 'matches', e.g. skill_view('user:category/name')."));
            return Err(f);
        }
        Resolution::Gated(skill, Gate::Platform) => {
            let mut f = failure(format!(
                "skill '{}' does not support this platform (it lists {:?})",
                skill.name, skill.frontmatter.platforms
            ));
            f.insert("readiness_status".into(), json!("unsupported"));
            return Err(f);
        }
        Resolution::Gated(skill, Gate::Disabled) => {
            let mut f = failure(format!("skill '{}' is disabled", skill.name));
            f.insert(
                "hint".into(),
                json!("Remove it from skills.disabled in config.yaml (see `knack config get skills.disabled`) to use it."),
            );
            return Err(f);
        }
        Resolution::NotFound => {
            let mut f = failure(format!("no skill named '{}'", clip(name)));
            let names: Vec<&str> = set
                .visible()
                .iter()
                .take(20)
                .map(|s| s.name.as_str())
                .collect();
            f.insert("available_skills".into(), json!(names));
            f.insert("hint".into(), json!("Call skills_list to see every skill."));
            return Err(f);
        }
    };
    match file_path.map(str::trim).filter(|p| !p.is_empty()) {
        Some(rel) => view_file(skill, rel),
        None => view_main(set, skill, ctx),
    }
}

fn view_main(
    set: &SkillSet,
    skill: &Skill,
    ctx: &ViewContext<'_>,
) -> Result<Map<String, Value>, Map<String, Value>> {
    let raw = read_skill_md(skill).map_err(|e| {
        failure(if beneath::is_link_refusal(&e) {
            format!(
                "SKILL.md of '{}' is a symbolic link that leads outside its skills root; it is never read",
                skill.name
            )
        } else {
            format!("cannot read {}: {e}", skill.path.display())
        })
    })?;
    let raw = crate::frontmatter::strip_bom(&raw);
    let plugin_root = crate::preprocess::plugin_root(skill);
    let values = TemplateValues {
        skill_dir: Some(&skill.skill_dir),
        session_id: ctx.session_id,
        arguments: None,
        plugin_root: plugin_root.as_deref(),
    };
    let mut content = preprocess(raw, &values, &ctx.preprocess);
    crate::injection::warn_if_suspicious(&skill.qualified_id(), &content);
    cap_for_model(&mut content);
    let missing =
        crate::setup::missing_env(&skill.frontmatter.required_environment_variables, ctx.env);
    let missing_names: Vec<&str> = missing.iter().map(|r| r.name.as_str()).collect();
    let mut map = Map::new();
    map.insert("success".into(), json!(true));
    map.insert("name".into(), json!(skill.name));
    map.insert("description".into(), json!(skill.list_description()));
    map.insert("category".into(), json!(skill.category));
    map.insert("id".into(), json!(skill.id));
    map.insert("qualified_id".into(), json!(skill.qualified_id()));
    map.insert("scope".into(), json!(skill.scope));
    map.insert("path".into(), json!(skill.path));
    map.insert("skill_dir".into(), json!(skill.skill_dir));
    map.insert("content".into(), json!(content));
    map.insert("tags".into(), json!(skill.frontmatter.tags));
    map.insert(
        "related_skills".into(),
        json!(skill.frontmatter.related_skills),
    );
    let linked = list_linked_files(&skill.skill_dir);
    map.insert("linked_files".into(), Value::Object(linked.groups));
    if linked.omitted > 0 {
        map.insert("linked_files_omitted".into(), json!(linked.omitted));
    }
    let fm = &skill.frontmatter;
    let missing_commands = crate::setup::missing_commands(&fm.required_commands);
    // Fields other runtimes define, shown so the model and people see them;
    // each only when the skill sets it.
    if let Some(short) = &fm.short_description {
        map.insert("short_description".into(), json!(short));
    }
    for (key, list) in [
        ("allowed_tools", &fm.allowed_tools),
        ("requires_mcp", &fm.requires_mcp),
        ("dependencies", &fm.dependencies),
        ("required_commands", &fm.required_commands),
    ] {
        if !list.is_empty() {
            map.insert(key.into(), json!(list));
        }
    }
    if !missing_commands.is_empty() {
        map.insert("missing_commands".into(), json!(missing_commands));
    }
    map.insert(
        "readiness_status".into(),
        json!(if missing.is_empty() && missing_commands.is_empty() {
            "available"
        } else {
            "setup_needed"
        }),
    );
    map.insert(
        "missing_required_environment_variables".into(),
        json!(missing_names),
    );
    if !missing.is_empty() {
        map.insert(
            "setup_note".into(),
            json!(crate::setup::setup_note(&missing)),
        );
    }
    if set.is_ambiguous(skill) {
        map.insert(
            "note".into(),
            json!(format!(
                "other skills share the name '{}'; this is {}",
                skill.name,
                skill.qualified_id()
            )),
        );
    }
    Ok(map)
}

/// Reading is lenient, but a SKILL.md far over the write limit would flood
/// the model's context: it gets the head and a note instead.
pub fn cap_for_model(text: &mut String) {
    if let Some((cut, _)) = text.char_indices().nth(crate::validate::MAX_SKILL_MD_CHARS) {
        let total = text.chars().count();
        text.truncate(cut);
        text.push_str(&format!(
            "\n\n[truncated: this SKILL.md has {total} characters; only the first {} are shown. Split it into references/ files.]",
            crate::validate::MAX_SKILL_MD_CHARS
        ));
    }
}

/// `linked_files` lists at most this many files; the rest are counted.
pub const MAX_LINKED_FILES: usize = 200;
/// The walk behind `linked_files` stops after this many files, so a skill
/// folder holding a data set costs a bounded listing.
const MAX_WALKED_FILES: usize = 10_000;
/// The `linked_files` group of the files beside SKILL.md: no folder can be
/// named `.`, so it never collides with a real one.
pub const TOP_LEVEL_GROUP: &str = ".";

/// The files of a skill folder the model may read, grouped for `skill_view`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinkedFiles {
    /// Group (top folder, or [`TOP_LEVEL_GROUP`]) to sorted relative paths;
    /// files beside SKILL.md first, then the support folders, then the
    /// other folders by name; empty groups left out.
    pub groups: Map<String, Value>,
    /// Files beyond [`MAX_LINKED_FILES`] that are not listed.
    pub omitted: usize,
}

/// Every file of the skill folder except SKILL.md, knack's own files and
/// other dot-files, and sub-skills (folders outside the support folders that
/// hold their own SKILL.md), grouped by top folder.
pub fn linked_files(skill_dir: &Path) -> Map<String, Value> {
    list_linked_files(skill_dir).groups
}

/// `linked_files` with the count of files left out past the cap.
pub fn list_linked_files(skill_dir: &Path) -> LinkedFiles {
    let real = skill_dir.canonicalize().ok();
    let mut files = Vec::new();
    collect_files(
        skill_dir,
        skill_dir,
        real.as_deref(),
        &mut files,
        Walk::SkillTop,
        0,
    );
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for file in files {
        let group = match file.split_once('/') {
            Some((top, _)) => top.to_owned(),
            None => TOP_LEVEL_GROUP.to_owned(),
        };
        match groups.iter_mut().find(|(g, _)| *g == group) {
            Some((_, list)) => list.push(file),
            None => groups.push((group, vec![file])),
        }
    }
    // Beside SKILL.md first (a skill's own docs), then the support folders
    // in their usual order, then the rest: what survives the cap is what
    // the model most likely needs.
    let rank = |g: &str| {
        if g == TOP_LEVEL_GROUP {
            (0, 0)
        } else if let Some(i) = SUPPORT_DIRS.iter().position(|d| *d == g) {
            (1, i)
        } else {
            (2, 0)
        }
    };
    groups.sort_by(|(a, _), (b, _)| rank(a).cmp(&rank(b)).then_with(|| a.cmp(b)));
    let mut out = LinkedFiles::default();
    let mut room = MAX_LINKED_FILES;
    for (group, mut list) in groups {
        list.sort();
        let keep = list.len().min(room);
        out.omitted += list.len() - keep;
        room -= keep;
        list.truncate(keep);
        if !list.is_empty() {
            out.groups.insert(group, json!(list));
        }
    }
    out
}

/// Where `collect_files` is in a skill folder: what it lists there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// The skill folder itself: SKILL.md is the skill, not a linked file.
    SkillTop,
    /// Below it, outside the support folders: a folder with its own
    /// SKILL.md is a sub-skill with files of its own.
    Inside,
    /// Inside a support folder: everything is material of this skill.
    Support,
    /// Every file, SKILL.md included (the `available_files` of an error).
    All,
}

/// Files below `dir`, relative to `base`. A link is listed (or walked) only
/// when it stays inside `real_base`, the skill folder's real path: what
/// `skill_view` would refuse to serve is not offered either.
fn collect_files(
    dir: &Path,
    base: &Path,
    real_base: Option<&Path>,
    out: &mut Vec<String>,
    walk: Walk,
    depth: usize,
) {
    if depth > 8 || out.len() >= MAX_WALKED_FILES {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_symlink())
            && !real_base.is_some_and(|real| {
                path.canonicalize()
                    .is_ok_and(|target| target.starts_with(real))
            })
        {
            continue;
        }
        match fs::metadata(&path) {
            Ok(m) if m.is_dir() => {
                let inner = match walk {
                    Walk::SkillTop if SUPPORT_DIRS.contains(&name.as_ref()) => Walk::Support,
                    Walk::SkillTop | Walk::Inside => Walk::Inside,
                    other => other,
                };
                if inner == Walk::Inside && path.join("SKILL.md").exists() {
                    continue;
                }
                collect_files(&path, base, real_base, out, inner, depth + 1);
            }
            Ok(_) => {
                if walk == Walk::SkillTop && name == "SKILL.md" {
                    continue;
                }
                if let Ok(rel) = path.strip_prefix(base) {
                    out.push(rel.to_string_lossy().replace('\\', "/"));
                }
            }
            Err(_) => {}
        }
    }
}

fn view_file(skill: &Skill, rel: &str) -> Result<Map<String, Value>, Map<String, Value>> {
    let refuse = |why: &str| {
        let mut f = failure(format!("file path '{}' is refused: {why}", clip(rel)));
        f.insert(
            "hint".into(),
            json!("Use a path relative to the skill folder, as listed in linked_files."),
        );
        f
    };
    let path = Path::new(rel);
    if path.is_absolute() || rel.starts_with('~') {
        return Err(refuse("it must be relative to the skill folder"));
    }
    if rel.contains('\0') {
        return Err(refuse("it contains a NUL byte"));
    }
    if path.components().any(|c| {
        matches!(
            c,
            Component::ParentDir | Component::RootDir | Component::Prefix(_)
        )
    }) {
        return Err(refuse("it must not contain '..'"));
    }
    let no_file = || {
        let mut f = failure(format!(
            "skill '{}' has no file '{}'",
            skill.name,
            clip(rel)
        ));
        f.insert(
            "available_files".into(),
            json!(available_files(&skill.skill_dir)),
        );
        f
    };
    // Opened beneath the skill folder's handle: a link inside the skill is
    // followed, one that leaves it (even one swapped in meanwhile) is not.
    let folder = skill_folder(skill)
        .map_err(|e| failure(format!("cannot open {}: {e}", skill.skill_dir.display())))?;
    // O_NONBLOCK: a FIFO or device there is refused below, not waited on.
    let opened = beneath::open(
        folder.fd.as_fd(),
        &folder.real,
        path,
        OFlags::RDONLY | OFlags::NONBLOCK,
        Links::Inside,
    );
    let file = match opened {
        Ok(fd) => fs::File::from(fd),
        Err(e) if beneath::is_link_refusal(&e) => {
            return Err(refuse("it leads outside the skill folder through a link"));
        }
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound
                    | std::io::ErrorKind::InvalidFilename
                    | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Err(no_file());
        }
        Err(e) => return Err(failure(format!("cannot read '{}': {e}", clip(rel)))),
    };
    let meta = file
        .metadata()
        .map_err(|e| failure(format!("cannot read '{}': {e}", clip(rel))))?;
    if meta.is_dir() {
        let mut f = failure(format!("'{rel}' is a folder, not a file"));
        f.insert(
            "available_files".into(),
            json!(available_files(&skill.skill_dir)),
        );
        return Err(f);
    }
    if !meta.is_file() {
        return Err(failure(format!(
            "'{}' is not a regular file (a FIFO, socket or device); it is not read",
            clip(rel)
        )));
    }
    let mut map = Map::new();
    map.insert("success".into(), json!(true));
    map.insert("name".into(), json!(skill.name));
    map.insert("file".into(), json!(rel));
    let mut head = Vec::new();
    file.take(MAX_VIEW_FILE_BYTES)
        .read_to_end(&mut head)
        .map_err(|e| failure(format!("cannot read '{rel}': {e}")))?;
    let binary = head.iter().take(8192).any(|&b| b == 0)
        || std::str::from_utf8(&head).is_err() && meta.len() <= MAX_VIEW_FILE_BYTES;
    if binary {
        map.insert(
            "content".into(),
            json!(format!(
                "binary file ({}, {} bytes); not shown as text",
                describe_binary(&head, rel),
                meta.len()
            )),
        );
        map.insert("is_binary".into(), json!(true));
        return Ok(map);
    }
    let mut text = String::from_utf8_lossy(&head).into_owned();
    if meta.len() > MAX_VIEW_FILE_BYTES {
        text.push_str(&format!(
            "\n...[truncated: the file has {} bytes]",
            meta.len()
        ));
    }
    map.insert("content".into(), json!(text));
    Ok(map)
}

fn describe_binary(head: &[u8], rel: &str) -> String {
    let kind = if head.starts_with(b"\x7fELF") {
        "ELF executable"
    } else if head.starts_with(b"\x89PNG") {
        "PNG image"
    } else if head.starts_with(b"\xff\xd8\xff") {
        "JPEG image"
    } else if head.starts_with(b"%PDF") {
        "PDF document"
    } else if head.starts_with(b"PK\x03\x04") {
        "zip archive"
    } else if head.starts_with(b"\x1f\x8b") {
        "gzip data"
    } else {
        return match Path::new(rel).extension() {
            Some(ext) => format!(".{} data", ext.to_string_lossy()),
            None => "binary data".into(),
        };
    };
    kind.into()
}

fn available_files(skill_dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let real = skill_dir.canonicalize().ok();
    collect_files(
        skill_dir,
        skill_dir,
        real.as_deref(),
        &mut files,
        Walk::All,
        0,
    );
    files.sort();
    files.truncate(MAX_AVAILABLE_FILES);
    files
}

/// Model-supplied text quoted in an error, cut short: a model that sends a
/// megabyte as a name must not get the megabyte back in its context.
fn clip(text: &str) -> std::borrow::Cow<'_, str> {
    const MAX: usize = 200;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}… ({} characters)", &text[..cut], text.chars().count()).into(),
        None => text.into(),
    }
}

/// The skills root `skill` was found beneath: its folder with its id (the
/// folder's path below the root) taken off the end.
fn root_of(skill: &Skill) -> std::io::Result<PathBuf> {
    let id = Path::new(&skill.id);
    if skill.id.is_empty()
        || id.components().any(|c| !matches!(c, Component::Normal(_)))
        || !skill.skill_dir.ends_with(id)
    {
        return Err(std::io::Error::other(format!(
            "{} is not the folder '{}' below a skills root",
            skill.skill_dir.display(),
            skill.id
        )));
    }
    let mut root = skill.skill_dir.clone();
    for _ in id.components() {
        root.pop();
    }
    Ok(root)
}

/// The skill folder, opened beneath its root (through links that stay inside it).
fn skill_folder(skill: &Skill) -> std::io::Result<Base> {
    let root = Base::open(&root_of(skill)?)?;
    let fd = beneath::open(
        root.fd.as_fd(),
        &root.real,
        Path::new(&skill.id),
        DIR_FLAGS,
        Links::Inside,
    )?;
    // Used only to resolve links inside the skill when the kernel cannot;
    // the handle, not this path, is what files are opened from.
    let real = skill.skill_dir.canonicalize()?;
    Ok(Base { real, fd })
}

/// SKILL.md of `skill`, read beneath its root: a link that stays inside the
/// root is followed, one that leaves it is refused (`EXDEV`).
fn read_skill_md(skill: &Skill) -> std::io::Result<String> {
    let root = Base::open(&root_of(skill)?)?;
    let fd = beneath::open(
        root.fd.as_fd(),
        &root.real,
        &Path::new(&skill.id).join("SKILL.md"),
        OFlags::RDONLY | OFlags::NONBLOCK,
        Links::Inside,
    )?;
    let file = fs::File::from(fd);
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other(
            crate::discovery::not_regular_message("SKILL.md"),
        ));
    }
    let mut bytes = Vec::new();
    file.take(crate::discovery::MAX_READ_BYTES)
        .read_to_end(&mut bytes)?;
    Ok(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DiscoveryOptions, Scope, SkillRoot};

    #[test]
    fn typed_listing_writes_the_contract_json() {
        let set = crate::skill_set::tests::sample_set();
        let empty = SkillSet::default();
        let listed = |name: &str, category: Option<&str>, id: &str, scope: &str| {
            json!({
                "name": name,
                "description": format!("Use when {name} \"quoted\"\tand\\escaped"),
                "category": category,
                "id": id,
                "qualified_id": format!("{scope}:{id}"),
                "scope": scope,
            })
        };
        let hint = "Load a skill's full text with skill_view(name).";
        let k8s = json!({
            "success": true,
            "count": 1,
            "categories": ["devops/k8s"],
            "skills": [listed("deploy", Some("devops/k8s"), "devops/k8s/deploy", "user")],
            "hint": hint,
        });
        let data = json!({
            "success": true,
            "count": 1,
            "categories": ["data"],
            "skills": [listed("csv", Some("data"), "data/csv", "user")],
            "hint": hint,
        });
        let no_match = |c: &str| {
            json!({
                "success": true,
                "count": 0,
                "categories": [],
                "skills": [],
                "message": format!("No skills in category '{c}'."),
            })
        };
        let nothing = json!({
            "success": true,
            "count": 0,
            "categories": [],
            "skills": [],
            "message": "No skills found. Create one with skill_manage or install one with `knack skills install`.",
        });
        for (set, category, expected) in [
            (&set, Some("devops/k8s"), &k8s),
            (&set, Some(" devops/k8s "), &k8s),
            (&set, Some("data"), &data),
            (&set, Some("nope"), &no_match("nope")),
            (&set, Some("dev"), &no_match("dev")),
            (&empty, None, &nothing),
            (&empty, Some("  "), &nothing),
            (&empty, Some("devops"), &no_match("devops")),
        ] {
            let typed = skill_listing(set, category);
            // Same bytes, key order included, pretty and compact.
            assert_eq!(
                serde_json::to_string_pretty(&typed).unwrap(),
                serde_json::to_string_pretty(expected).unwrap(),
                "category {category:?}"
            );
            assert_eq!(
                serde_json::to_string(&typed).unwrap(),
                serde_json::to_string(expected).unwrap()
            );
            assert_eq!(&skills_list(set, category), expected);
        }
        let order: Vec<String> = skill_listing(&set, None)
            .skills
            .iter()
            .map(|s| format!("{}:{}", s.scope.namespace(), s.id))
            .collect();
        assert_eq!(order, crate::skill_set::tests::SAMPLE_ORDER);
        let all = skill_listing(&set, None);
        assert_eq!(all.count, 9);
        assert_eq!(
            all.categories,
            vec!["data", "devops", "devops-tools", "devops/k8s"]
        );
        let long = all.skills.iter().find(|s| s.name == "long").unwrap();
        assert_eq!(
            long.description.chars().count(),
            crate::skill::MAX_DESCRIPTION_CHARS
        );
        let devops = skill_listing(&set, Some("devops"));
        assert_eq!(devops.categories, vec!["devops", "devops/k8s"]);
        assert_eq!(skill_listing(&set, Some("dev")).count, 0);
        assert_eq!(
            skill_listing(&empty, None).message.as_deref(),
            Some(
                "No skills found. Create one with skill_manage or install one with `knack skills install`."
            )
        );
    }

    // Found by the fault-injection test with 1 MB of tool arguments: the
    // refusal quoted the whole name back, a megabyte into the model's context.
    #[test]
    fn huge_names_and_paths_are_not_echoed_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let skill = dir.path().join("demo");
        fs::create_dir_all(&skill).unwrap();
        fs::write(
            skill.join("SKILL.md"),
            "---\nname: demo\ndescription: Use when testing\n---\nbody\n",
        )
        .unwrap();
        let (set, _) = crate::discover(&DiscoveryOptions::with_roots(vec![SkillRoot {
            path: dir.path().to_path_buf(),
            scope: Scope::User,
        }]));
        let env = knack_config::EnvFile::default();
        let ctx = ViewContext {
            preprocess: PreprocessOptions::from_config(
                &knack_config::KnackHome::at("/nonexistent-knack-home"),
                &knack_config::Config::default(),
            ),
            session_id: None,
            env: &env,
        };
        let huge = "x".repeat(1024 * 1024);
        let by_name = skill_view(&set, &huge, None, &ctx);
        let missing_file = skill_view(&set, "demo", Some(&format!("references/{huge}")), &ctx);
        let refused_file = skill_view(&set, "demo", Some(&format!("../{huge}")), &ctx);
        for reply in [by_name, missing_file, refused_file] {
            assert_eq!(reply["success"], json!(false));
            let error = reply["error"].as_str().unwrap();
            assert!(error.len() < 1000, "{} bytes", error.len());
            assert!(error.contains("characters)"), "{error}");
        }
    }

    fn touch(path: &Path) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "x").unwrap();
    }

    #[test]
    fn linked_files_offer_every_file_of_the_skill_grouped_by_top_folder() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("pdf");
        for rel in [
            "SKILL.md",
            "LICENSE.txt",
            "forms.md",
            "reference.md",
            "references/api.md",
            "scripts/fill.py",
            "examples/a/input.json",
            "evaluations/cases.md",
            ".knack-provenance.json",
            ".git/config",
            // A sub-skill keeps its own files; one kept in a support folder is material.
            "nested/SKILL.md",
            "nested/notes.md",
            "references/old/SKILL.md",
        ] {
            touch(&dir.join(rel));
        }
        let listed = list_linked_files(&dir);
        assert_eq!(listed.omitted, 0);
        assert_eq!(
            Value::Object(listed.groups.clone()),
            json!({
                ".": ["LICENSE.txt", "forms.md", "reference.md"],
                "references": ["references/api.md", "references/old/SKILL.md"],
                "scripts": ["scripts/fill.py"],
                "evaluations": ["evaluations/cases.md"],
                "examples": ["examples/a/input.json"],
            })
        );
        let order: Vec<&String> = listed.groups.keys().collect();
        assert_eq!(
            order,
            [".", "references", "scripts", "evaluations", "examples"]
        );
    }

    #[test]
    fn linked_files_are_capped_with_a_count_of_the_rest() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("data");
        touch(&dir.join("SKILL.md"));
        touch(&dir.join("guide.md"));
        for i in 0..(MAX_LINKED_FILES + 25) {
            touch(&dir.join(format!("assets/img-{i:04}.png")));
        }
        let listed = list_linked_files(&dir);
        assert_eq!(listed.omitted, 26);
        assert_eq!(listed.groups["."], json!(["guide.md"]));
        assert_eq!(
            listed.groups["assets"].as_array().unwrap().len(),
            MAX_LINKED_FILES - 1
        );
    }
}
