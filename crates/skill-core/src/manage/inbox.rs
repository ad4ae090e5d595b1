//! The skills inbox (`skills.agent_writes: inbox`): what the agent and the
//! review write is held in `skills/.inbox/` until the user accepts it.
//!
//! Each entry is a folder named after its skill: `entry.json` (what it is,
//! where it came from) and `stage/`, a private home whose skills folder holds
//! the proposed skill. Writes to an entry go through the same `skill_manage`
//! code against that private home, so every rule (validation, guard, links,
//! history) holds there too; discovery skips dot-folders, so nothing in the
//! inbox reaches an index. Accepting replays the result onto the library as
//! the user's own writes.

use std::fs;
use std::path::{Path, PathBuf};

use knack_config::{AgentWrites, KnackHome};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{
    Actor, Done, LibraryIndex, ManageAction, ManageContext, Refusal, Refused, SkillManageArgs,
    Step, WriteOrigin, find_skill, review, run,
};
use crate::roots::{DiscoveryOptions, SkillRoot};
use crate::skill::Scope;
use crate::skill_set::Resolution;
use crate::validate::validate_name;

/// The inbox folder inside the user skills folder.
pub const INBOX_DIR: &str = ".inbox";
const ENTRY_FILE: &str = "entry.json";
const STAGE_DIR: &str = "stage";
/// Deepest folder level copied from a skill into the inbox.
const COPY_MAX_DEPTH: usize = 8;

/// Whether the entry proposes a new skill or a change to a live one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    New,
    Change,
}

/// One skill waiting in the inbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InboxEntry {
    pub name: String,
    pub kind: EntryKind,
    /// The category a new skill is created in when accepted.
    #[serde(default)]
    pub category: Option<String>,
    /// The live skill a change is for (its qualified id).
    #[serde(default)]
    pub target: Option<String>,
    /// The session that wrote it, when known.
    #[serde(default)]
    pub session_id: Option<String>,
    /// `agent` (a turn) or `review` (the self-improvement review).
    pub actor: String,
    pub created_at: String,
    pub updated_at: String,
    /// Each write, in order (`create`, `patch SKILL.md`, `write_file references/x.md`).
    pub writes: Vec<String>,
}

/// Whether this write is held in the inbox instead of reaching the library.
pub(crate) fn holds(ctx: &ManageContext, args: &SkillManageArgs, origin: &WriteOrigin<'_>) -> bool {
    ctx.agent_writes == AgentWrites::Inbox
        && matches!(origin.actor, Actor::Agent | Actor::Review)
        // Deleting archives, which the user can undo; it needs no inbox.
        && args.action != ManageAction::Delete
}

pub fn inbox_dir(home: &KnackHome) -> PathBuf {
    home.skills_dir().join(INBOX_DIR)
}

fn entry_dir(home: &KnackHome, name: &str) -> PathBuf {
    inbox_dir(home).join(name)
}

fn stage_home(home: &KnackHome, name: &str) -> KnackHome {
    KnackHome::at(entry_dir(home, name).join(STAGE_DIR))
}

/// The folder of the skill an entry proposes.
pub fn staged_skill_dir(home: &KnackHome, name: &str) -> PathBuf {
    stage_home(home, name).skills_dir().join(name)
}

/// Every entry, by name. An inbox that was never used costs one failed
/// directory read.
pub fn list(home: &KnackHome) -> Vec<InboxEntry> {
    let Ok(dir) = fs::read_dir(inbox_dir(home)) else {
        return Vec::new();
    };
    let mut entries: Vec<InboxEntry> = dir
        .filter_map(|e| e.ok())
        .filter_map(|e| read_entry(&e.path()))
        .collect();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    entries
}

/// How many entries wait, without reading them.
pub fn count(home: &KnackHome) -> usize {
    fs::read_dir(inbox_dir(home)).map_or(0, |dir| {
        dir.filter_map(|e| e.ok())
            .filter(|e| e.path().join(ENTRY_FILE).is_file())
            .count()
    })
}

fn read_entry(dir: &Path) -> Option<InboxEntry> {
    let text = fs::read_to_string(dir.join(ENTRY_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

/// The entry called `name`, or a refusal that lists what is there.
pub fn entry(home: &KnackHome, name: &str) -> Result<InboxEntry, Refused> {
    let found = validate_name(name)
        .ok()
        .and_then(|()| read_entry(&entry_dir(home, name)));
    found.ok_or_else(|| {
        let names: Vec<String> = list(home).into_iter().map(|e| e.name).collect();
        let hint = if names.is_empty() {
            "The inbox is empty.".to_owned()
        } else {
            format!("The inbox holds: {}.", names.join(", "))
        };
        Refused {
            message: format!("no skill named '{name}' is in the inbox"),
            hint: Some(hint),
        }
    })
}

fn save_entry(home: &KnackHome, entry: &InboxEntry) -> Step<()> {
    let text = serde_json::to_string_pretty(entry)
        .map_err(|e| super::internal("cannot record the inbox entry", e))?;
    super::atomic::write(
        &entry_dir(home, &entry.name).join(ENTRY_FILE),
        text.as_bytes(),
    )
    .map_err(|e| super::internal("cannot record the inbox entry", e))
}

/// A context whose home is the entry's private one; the duplicate check
/// still compares with the real library.
fn stage_context(ctx: &ManageContext, name: &str) -> ManageContext {
    let home = stage_home(&ctx.home, name);
    let root = SkillRoot {
        path: home.skills_dir(),
        scope: Scope::User,
    };
    let library = ctx.library.clone().unwrap_or_else(|| {
        let set = crate::snapshot::load_or_discover(&ctx.options, &ctx.home.cache_dir());
        let search = crate::search::SkillSearch::from_skill_set(&set);
        LibraryIndex {
            set: std::sync::Arc::new(set),
            search: std::sync::Arc::new(search),
        }
    });
    ManageContext {
        home,
        options: DiscoveryOptions::with_roots(vec![root]),
        guard_writes: ctx.guard_writes,
        library: Some(library),
        agent_writes: AgentWrites::Direct,
        session_id: ctx.session_id.clone(),
    }
}

fn write_label(args: &SkillManageArgs) -> String {
    match args.file_path.as_deref().filter(|p| !p.is_empty()) {
        Some(path) if args.action != ManageAction::Create => {
            format!("{} {path}", args.action.as_str())
        }
        _ if matches!(args.action, ManageAction::Patch | ManageAction::Edit) => {
            format!("{} SKILL.md", args.action.as_str())
        }
        _ => args.action.as_str().to_owned(),
    }
}

fn held(mut done: Done, name: &str) -> Done {
    done.message = format!(
        "{} It is held in the skills inbox: it joins the library when the user accepts it (`knack skills inbox accept {name}`).",
        done.message
    );
    done
}

/// Runs an agent's or the review's write against the inbox.
pub(crate) fn stage(
    ctx: &ManageContext,
    args: &SkillManageArgs,
    origin: &WriteOrigin<'_>,
) -> Step<Done> {
    let now = crate::clock::now_rfc3339();
    if args.action == ManageAction::Create {
        let name = args.name.trim();
        validate_name(name)?;
        if entry_dir(&ctx.home, name).join(ENTRY_FILE).is_file() {
            return Err(Refusal::new(format!(
                "'{name}' is already in the skills inbox; change it with patch, edit or write_file instead of creating it again"
            )));
        }
        if !matches!(
            ctx.skills_answering(name).resolve(name),
            Resolution::NotFound
        ) {
            return Err(Refusal::new(format!(
                "a skill named '{name}' already exists; choose another name or patch the existing skill"
            )));
        }
        let stage = stage_context(ctx, name);
        let mut staged = args.clone();
        staged.category = None;
        let done = run(&stage, &staged, &WriteOrigin::new(Actor::Agent));
        let done = match done {
            Ok(done) => done,
            Err(refusal) => {
                let _ = fs::remove_dir_all(entry_dir(&ctx.home, name));
                return Err(refusal);
            }
        };
        let entry = InboxEntry {
            name: name.to_owned(),
            kind: EntryKind::New,
            category: args
                .category
                .as_deref()
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_owned),
            target: None,
            session_id: ctx.session_id.clone(),
            actor: origin.actor.as_str().to_owned(),
            created_at: now.clone(),
            updated_at: now,
            writes: vec![write_label(args)],
        };
        if let Err(refusal) = save_entry(&ctx.home, &entry) {
            let _ = fs::remove_dir_all(entry_dir(&ctx.home, name));
            return Err(refusal);
        }
        return Ok(held(done, name));
    }
    let query = args.name.trim();
    let mut entry = match validate_name(query)
        .ok()
        .and_then(|()| read_entry(&entry_dir(&ctx.home, query)))
    {
        Some(entry) => entry,
        None => {
            let live = find_skill(ctx, query)?;
            match read_entry(&entry_dir(&ctx.home, &live.name)) {
                Some(entry) => entry,
                None => open_change(ctx, &live, origin, &now)?,
            }
        }
    };
    if let Some(target) = &entry.target {
        // The review's rules hold for the live skill the change is for.
        let live = find_skill(ctx, target)?;
        review::check_may_touch(&ctx.home, origin, &live)?;
        let rel = args
            .file_path
            .as_deref()
            .filter(|p| !p.is_empty() && *p != "SKILL.md");
        let (path, label) = match rel {
            Some(rel) => (live.skill_dir.join(rel), rel),
            None => (live.path.clone(), "SKILL.md"),
        };
        if path.exists() {
            review::check_viewed(origin, &live, &path, label)?;
        }
    }
    let stage = stage_context(ctx, &entry.name);
    let mut staged = args.clone();
    staged.name = entry.name.clone();
    let done = run(&stage, &staged, &WriteOrigin::new(Actor::Agent))?;
    entry.writes.push(write_label(args));
    entry.updated_at = now;
    save_entry(&ctx.home, &entry)?;
    let name = entry.name.clone();
    Ok(held(done, &name))
}

/// Starts an entry that changes the live skill `live`: a copy of its folder.
fn open_change(
    ctx: &ManageContext,
    live: &crate::Skill,
    origin: &WriteOrigin<'_>,
    now: &str,
) -> Step<InboxEntry> {
    validate_name(&live.name).map_err(|_| {
        Refusal::new(format!(
            "'{}' cannot be held in the inbox: its name does not follow the skill name rule",
            live.name
        ))
    })?;
    let to = staged_skill_dir(&ctx.home, &live.name);
    if let Err(e) = copy_skill(&live.skill_dir, &to) {
        let _ = fs::remove_dir_all(entry_dir(&ctx.home, &live.name));
        return Err(super::internal("cannot copy the skill into the inbox", e));
    }
    let entry = InboxEntry {
        name: live.name.clone(),
        kind: EntryKind::Change,
        category: live.category.clone(),
        target: Some(live.qualified_id()),
        session_id: ctx.session_id.clone(),
        actor: origin.actor.as_str().to_owned(),
        created_at: now.to_owned(),
        updated_at: now.to_owned(),
        writes: Vec::new(),
    };
    save_entry(&ctx.home, &entry)?;
    Ok(entry)
}

/// The regular files below `dir` (relative paths, sorted); links are never
/// followed, so nothing outside the skill is read or copied.
fn regular_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(base: &Path, rel: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        let Ok(items) = fs::read_dir(base.join(rel)) else {
            return;
        };
        for item in items.filter_map(|i| i.ok()) {
            let Ok(kind) = item.file_type() else { continue };
            let path = rel.join(item.file_name());
            if kind.is_dir() && depth < COPY_MAX_DEPTH {
                walk(base, &path, depth + 1, out);
            } else if kind.is_file() {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, Path::new(""), 1, &mut out);
    out.sort();
    out
}

/// Copies a skill's regular files into a new folder.
fn copy_skill(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    for rel in regular_files(from) {
        let target = to.join(&rel);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::copy(from.join(&rel), target)?;
    }
    Ok(())
}

/// The files of a skill folder, relative and sorted, with their text (or
/// `None` for a file that is not UTF-8); hidden files are knack's own.
fn skill_files(dir: &Path) -> Vec<(String, Option<String>)> {
    regular_files(dir)
        .into_iter()
        .filter_map(|rel| {
            let shown = rel.to_string_lossy().into_owned();
            if shown.split('/').any(|part| part.starts_with('.')) {
                return None;
            }
            let text = fs::read_to_string(dir.join(&rel)).ok();
            Some((shown, text))
        })
        .collect()
}

/// The live folder an entry changes, if it has one that still exists.
fn live_dir(ctx: &ManageContext, entry: &InboxEntry) -> Result<Option<PathBuf>, Refused> {
    let Some(target) = &entry.target else {
        return Ok(None);
    };
    match find_skill(ctx, target) {
        Ok(skill) => Ok(Some(skill.skill_dir)),
        Err(refusal) => Err(Refused {
            message: format!(
                "the change in the inbox is for '{target}', which cannot be found now: {}",
                refusal.error
            ),
            hint: Some(format!(
                "Reject it with `knack skills inbox reject {}`.",
                entry.name
            )),
        }),
    }
}

/// A unified diff of what accepting `name` would change in the library.
pub fn diff(ctx: &ManageContext, name: &str) -> Result<String, Refused> {
    let entry = entry(&ctx.home, name)?;
    let staged = skill_files(&staged_skill_dir(&ctx.home, &entry.name));
    let live = match live_dir(ctx, &entry)? {
        Some(dir) => skill_files(&dir),
        None => Vec::new(),
    };
    let mut out = String::new();
    let text = |f: &Option<String>| f.clone().unwrap_or_else(|| "(not text)\n".to_owned());
    let mut paths: Vec<&String> = staged.iter().chain(&live).map(|(p, _)| p).collect();
    paths.sort();
    paths.dedup();
    for path in paths {
        let before = live.iter().find(|(p, _)| p == path).map(|(_, t)| text(t));
        let after = staged.iter().find(|(p, _)| p == path).map(|(_, t)| text(t));
        let (a, b) = (before.unwrap_or_default(), after.unwrap_or_default());
        if a == b {
            continue;
        }
        out.push_str(
            &similar::TextDiff::from_lines(&a, &b)
                .unified_diff()
                .context_radius(3)
                .header(&format!("a/{path}"), &format!("b/{path}"))
                .to_string(),
        );
    }
    Ok(out)
}

/// What accepting an entry did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Accepted {
    pub name: String,
    pub qualified_id: String,
    /// Each write made to the library, as `action path`.
    pub writes: Vec<String>,
}

/// Moves an entry into the library as the user's writes (recorded in the
/// skill's history with actor `user`), then removes it from the inbox. A
/// new skill keeps `agent` as its creator.
pub fn accept(ctx: &ManageContext, name: &str) -> Result<Accepted, Refused> {
    let entry = entry(&ctx.home, name)?;
    let staged_dir = staged_skill_dir(&ctx.home, &entry.name);
    let staged = skill_files(&staged_dir);
    let user = WriteOrigin::new(Actor::User);
    let mut writes = Vec::new();
    let call = |args: SkillManageArgs, writes: &mut Vec<String>| -> Result<Done, Refused> {
        let label = write_label(&args);
        let done = run(ctx, &args, &user).map_err(|r| Refused {
            message: format!(
                "accepting '{}' stopped at '{label}': {}",
                entry.name, r.error
            ),
            hint: Some("What was written before it stays; the inbox entry is kept.".into()),
        })?;
        writes.push(label);
        Ok(done)
    };
    let skill_md = staged
        .iter()
        .find(|(p, _)| p == "SKILL.md")
        .and_then(|(_, t)| t.clone())
        .ok_or_else(|| Refused {
            message: format!("the inbox entry '{}' has no readable SKILL.md", entry.name),
            hint: Some(format!(
                "Reject it with `knack skills inbox reject {}`.",
                entry.name
            )),
        })?;
    let live = live_dir(ctx, &entry)?;
    let live_files = live.as_deref().map(skill_files).unwrap_or_default();
    let qualified_id = match &live {
        None => {
            let mut args = SkillManageArgs::new(ManageAction::Create, entry.name.clone());
            args.content = Some(skill_md);
            args.category = entry.category.clone();
            let done = call(args, &mut writes)?;
            // The agent wrote it; the user only let it in.
            if let Some(dir) = done.path.parent() {
                let _ = super::record_provenance(dir, "agent");
            }
            done.qualified_id
        }
        Some(_) => {
            let target = entry.target.clone().unwrap_or_default();
            let unchanged = live_files
                .iter()
                .any(|(p, t)| p == "SKILL.md" && t.as_deref() == Some(skill_md.as_str()));
            if !unchanged {
                let mut args = SkillManageArgs::new(ManageAction::Edit, target.clone());
                args.content = Some(skill_md);
                call(args, &mut writes)?;
            }
            target
        }
    };
    for (path, text) in staged.iter().filter(|(p, _)| p != "SKILL.md") {
        let Some(text) = text else { continue };
        if live_files
            .iter()
            .any(|(p, t)| p == path && t.as_ref() == Some(text))
        {
            continue;
        }
        let mut args = SkillManageArgs::new(ManageAction::WriteFile, qualified_id.clone());
        args.file_path = Some(path.clone());
        args.file_content = Some(text.clone());
        call(args, &mut writes)?;
    }
    for (path, _) in &live_files {
        if path != "SKILL.md" && !staged.iter().any(|(p, _)| p == path) {
            let mut args = SkillManageArgs::new(ManageAction::RemoveFile, qualified_id.clone());
            args.file_path = Some(path.clone());
            call(args, &mut writes)?;
        }
    }
    reject(&ctx.home, &entry.name)?;
    Ok(Accepted {
        name: entry.name,
        qualified_id,
        writes,
    })
}

/// Removes an entry; the library is untouched.
pub fn reject(home: &KnackHome, name: &str) -> Result<(), Refused> {
    let entry = entry(home, name)?;
    fs::remove_dir_all(entry_dir(home, &entry.name)).map_err(|e| Refused {
        message: format!("cannot remove '{}' from the inbox: {e}", entry.name),
        hint: None,
    })?;
    // The last entry gone, the inbox folder goes too (refused while others remain).
    let _ = fs::remove_dir(inbox_dir(home));
    Ok(())
}

/// An entry as `knack skills inbox --json` lists it.
pub fn entry_json(entry: &InboxEntry) -> serde_json::Value {
    json!({
        "name": entry.name,
        "kind": entry.kind,
        "category": entry.category,
        "target": entry.target,
        "session_id": entry.session_id,
        "actor": entry.actor,
        "created_at": entry.created_at,
        "updated_at": entry.updated_at,
        "writes": entry.writes,
    })
}
