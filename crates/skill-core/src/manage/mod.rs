//! `skill_manage`: the one way skills are written (create, edit, patch, delete,
//! support files), validated, locked, atomic, scanned, undone on refusal and recorded.

pub mod archive;
pub mod atomic;
pub mod inbox;
pub mod lock;
mod paths;
pub mod provenance;
mod review;

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::ErrorKind;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use knack_config::{AgentWrites, Config, KnackHome};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use skill_guard::{PolicyDecision, TrustLevel};

use crate::beneath::{self, Base};
use crate::duplicate::{Draft, NearDuplicate, near_duplicates};
use crate::fuzzy_patch;
use crate::history::{self, SkillIdentity};
use crate::roots::DiscoveryOptions;
use crate::search::SkillSearch;
use crate::skill::{Scope, Skill};
use crate::skill_set::Resolution;
use crate::validate::{
    RuleViolation, SkillMdCheck, validate_category, validate_name, validate_skill_md,
    validate_support_path, validate_support_size,
};

pub use provenance::{PROVENANCE_FILE, Provenance, provenance, record_provenance};

/// What `skill_manage` is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ManageAction {
    Create,
    Edit,
    Patch,
    Delete,
    WriteFile,
    RemoveFile,
}

impl ManageAction {
    pub const ALL: [ManageAction; 6] = [
        ManageAction::Create,
        ManageAction::Edit,
        ManageAction::Patch,
        ManageAction::Delete,
        ManageAction::WriteFile,
        ManageAction::RemoveFile,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ManageAction::Create => "create",
            ManageAction::Edit => "edit",
            ManageAction::Patch => "patch",
            ManageAction::Delete => "delete",
            ManageAction::WriteFile => "write_file",
            ManageAction::RemoveFile => "remove_file",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

/// The arguments of the `skill_manage` tool (CONTRACT.md names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillManageArgs {
    /// create: a new skill from a whole SKILL.md. edit: replace SKILL.md whole (big rewrites only).
    /// patch: replace old_string by new_string in SKILL.md or a support file (preferred for fixes).
    /// delete: remove the skill. write_file / remove_file: add, replace or remove a support file.
    pub action: ManageAction,
    /// For create, the new skill's name (lowercase letters, digits, '.', '_', '-'; at most 64).
    /// Otherwise the skill's name, id ('category/name') or qualified id ('user:category/name').
    pub name: String,
    /// create and edit: the whole SKILL.md, YAML frontmatter (name, description) then a Markdown body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// create only: the category folder, e.g. 'devops' or 'mlops/training'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// write_file, remove_file and patch: a path under references/, templates/, scripts/ or assets/.
    /// patch without it changes SKILL.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
    /// write_file: the file's whole new content (at most 1 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_content: Option<String>,
    /// patch: the text to find, quoted from the file with enough context to be unique.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_string: Option<String>,
    /// patch: the replacement; an empty string deletes the quoted text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_string: Option<String>,
    /// patch: replace every occurrence instead of requiring exactly one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replace_all: bool,
    /// delete: the skill this one was merged into (must exist). Required for the background review.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absorbed_into: Option<String>,
}

impl SkillManageArgs {
    /// Arguments with only `action` and `name` set.
    pub fn new(action: ManageAction, name: impl Into<String>) -> Self {
        Self {
            action,
            name: name.into(),
            content: None,
            category: None,
            file_path: None,
            file_content: None,
            old_string: None,
            new_string: None,
            replace_all: false,
            absorbed_into: None,
        }
    }
}

/// Who is writing; recorded in history and deciding what is allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Actor {
    User,
    Agent,
    Review,
    Hub,
    Sync,
}

impl Actor {
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::User => "user",
            Actor::Agent => "agent",
            Actor::Review => "review",
            Actor::Hub => "hub",
            Actor::Sync => "sync",
        }
    }

    /// The provenance a skill created by this actor records.
    pub fn created_by(self) -> &'static str {
        match self {
            Actor::User => "user",
            Actor::Agent | Actor::Review => "agent",
            Actor::Hub => "hub",
            Actor::Sync => "bundled",
        }
    }
}

/// The origin of one `skill_manage` call.
#[derive(Debug, Clone, Copy)]
pub struct WriteOrigin<'a> {
    pub actor: Actor,
    /// Files `skill_view` served during this review (SKILL.md paths and
    /// support-file paths). Only the review consults it; `None` means none.
    pub viewed: Option<&'a HashSet<PathBuf>>,
}

impl WriteOrigin<'static> {
    pub fn new(actor: Actor) -> Self {
        Self {
            actor,
            viewed: None,
        }
    }
}

impl<'a> WriteOrigin<'a> {
    pub fn review(viewed: &'a HashSet<PathBuf>) -> Self {
        Self {
            actor: Actor::Review,
            viewed: Some(viewed),
        }
    }
}

/// The path to put in the review's viewed set for a skill_view of `skill`
/// (and `file_path`, for a support file).
pub fn viewed_path(skill: &Skill, file_path: Option<&str>) -> PathBuf {
    let path = match file_path.map(str::trim).filter(|p| !p.is_empty()) {
        Some(rel) if rel != "SKILL.md" => skill.skill_dir.join(rel),
        _ => skill.path.clone(),
    };
    fs::canonicalize(&path).unwrap_or(path)
}

/// A snapshot larger than this (about 2,000 skills) takes a load long
/// enough to keep both cores busy; a missing one means a walk, just as long.
const LONG_LOAD_SNAPSHOT_BYTES: u64 = 1 << 20;

/// What `skill_manage` needs besides its arguments.
#[derive(Debug, Clone)]
pub struct ManageContext {
    pub home: KnackHome,
    /// The roots skills are found in (the same engine every surface uses).
    pub options: DiscoveryOptions,
    /// `skills.guard_agent_writes`: scan after each write and undo a blocked one.
    pub guard_writes: bool,
    /// The library and its search index as the caller already holds them,
    /// for the near-duplicate check of a create; `None` builds them then.
    pub library: Option<LibraryIndex>,
    /// `skills.agent_writes`: in `inbox` mode the agent's and the review's
    /// writes are held in the inbox (see [`inbox`]).
    pub agent_writes: AgentWrites,
    /// The session writing, recorded with what it leaves in the inbox.
    pub session_id: Option<String>,
}

/// A skill set and the search index built from it.
#[derive(Debug, Clone)]
pub struct LibraryIndex {
    pub set: Arc<crate::SkillSet>,
    pub search: Arc<SkillSearch>,
}

impl ManageContext {
    pub fn new(home: &KnackHome, config: &Config, cwd: &Path) -> Self {
        Self {
            home: home.clone(),
            options: DiscoveryOptions::resolve(home, config, cwd),
            guard_writes: config.skills.guard_agent_writes,
            library: None,
            agent_writes: config.skills.agent_writes,
            session_id: None,
        }
    }

    /// Records which session writes (for the inbox's entries).
    pub fn with_session(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }

    /// Uses an index the caller keeps (a session's), instead of building one
    /// on each create.
    pub fn with_library(mut self, set: Arc<crate::SkillSet>, search: Arc<SkillSearch>) -> Self {
        self.library = Some(LibraryIndex { set, search });
        self
    }

    /// The skills `draft` is close to, most alike first: against the
    /// caller's index, else one built here from the whole library.
    fn near_duplicates(&self, draft: &Draft<'_>) -> Vec<NearDuplicate> {
        if let Some(library) = &self.library {
            return near_duplicates(&library.search, &library.set, draft);
        }
        let set = crate::snapshot::load_or_discover(&self.options, &self.home.cache_dir());
        let search = SkillSearch::from_skill_set(&set);
        near_duplicates(&search, &set, draft)
    }

    fn user_root(&self) -> PathBuf {
        self.home.skills_dir()
    }

    /// Skills that answer `query` as the whole current set would (see
    /// `SkillSet::resolve`): from the snapshot's keys when it can answer,
    /// else from the whole set (the snapshot when valid, else discovery).
    fn skills_answering(&self, query: &str) -> crate::SkillSet {
        let cache = self.home.cache_dir();
        // Every action scans what it writes, so the guard warms up on another
        // thread: beside a short load, where a core is idle, but after a long
        // one (thousands of stamps to check, or a walk), which keeps both
        // cores busy and would only lose one to it.
        let long_load = crate::snapshot::written_len(&cache) > LONG_LOAD_SNAPSHOT_BYTES;
        if !long_load {
            skill_guard::prepare();
        }
        let set = crate::snapshot::skills_answering(&self.options, &cache, query)
            .unwrap_or_else(|| crate::snapshot::load_or_discover(&self.options, &cache));
        if long_load {
            skill_guard::prepare();
        }
        set
    }
}

/// A refused or failed call: the sentence, an optional hint, extra keys.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    error: String,
    hint: Option<String>,
    extra: Map<String, Value>,
}

impl Refusal {
    pub(crate) fn new(error: impl Into<String>) -> Self {
        Self {
            error: error.into(),
            hint: None,
            extra: Map::new(),
        }
    }

    pub(crate) fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    fn with(mut self, key: &str, value: Value) -> Self {
        self.extra.insert(key.to_owned(), value);
        self
    }

    fn into_json(self) -> Value {
        let mut map = Map::new();
        map.insert("success".into(), json!(false));
        map.insert("error".into(), json!(self.error));
        if let Some(hint) = self.hint {
            map.insert("hint".into(), json!(hint));
        }
        map.extend(self.extra);
        Value::Object(map)
    }
}

impl From<RuleViolation> for Refusal {
    fn from(v: RuleViolation) -> Self {
        Refusal::new(v.message)
    }
}

/// A refusal from one of the library commands (archive, restore) for a
/// person: the sentence, and how to get what they wanted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub message: String,
    pub hint: Option<String>,
}

impl From<Refusal> for Refused {
    fn from(r: Refusal) -> Self {
        Self {
            message: r.error,
            hint: r.hint,
        }
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Refused {}

type Step<T> = std::result::Result<T, Refusal>;

/// A successful call.
#[derive(Debug)]
pub(crate) struct Done {
    message: String,
    /// The skill written (or deleted), so callers need not resolve it again.
    qualified_id: String,
    path: PathBuf,
    replacements: Option<usize>,
    warnings: Vec<String>,
}

impl Done {
    fn into_json(self) -> Value {
        let mut out = json!({
            "success": true,
            "message": self.message,
            "qualified_id": self.qualified_id,
            "path": self.path.to_string_lossy(),
        });
        if let Some(n) = self.replacements {
            out["replacements"] = json!(n);
        }
        if !self.warnings.is_empty() {
            out["warnings"] = json!(self.warnings);
        }
        out
    }
}

/// Runs `skill_manage` with arguments given as JSON (the tool-call path):
/// anything that is not a valid argument object is a refusal, not a panic.
pub fn skill_manage_json(ctx: &ManageContext, args: &Value, origin: &WriteOrigin<'_>) -> Value {
    let actions = ManageAction::ALL.map(ManageAction::as_str).join(", ");
    let Some(obj) = args.as_object() else {
        return Refusal::new("the arguments must be a JSON object").into_json();
    };
    match obj.get("action") {
        None | Some(Value::Null) => {
            return Refusal::new(format!(
                "the 'action' argument is required: one of {actions}"
            ))
            .into_json();
        }
        Some(Value::String(a)) if ManageAction::parse(a).is_none() => {
            return Refusal::new(format!("unknown action '{a}'; use one of {actions}")).into_json();
        }
        _ => {}
    }
    match serde_json::from_value::<SkillManageArgs>(args.clone()) {
        Ok(parsed) => skill_manage(ctx, &parsed, origin),
        Err(e) => Refusal::new(format!("the arguments do not fit skill_manage: {e}")).into_json(),
    }
}

/// Runs one `skill_manage` call and answers with CONTRACT.md's JSON.
pub fn skill_manage(
    ctx: &ManageContext,
    args: &SkillManageArgs,
    origin: &WriteOrigin<'_>,
) -> Value {
    let result = if inbox::holds(ctx, args, origin) {
        inbox::stage(ctx, args, origin)
    } else {
        run(ctx, args, origin)
    };
    match result {
        Ok(done) => done.into_json(),
        Err(refusal) => refusal.into_json(),
    }
}

/// One action, written where `ctx` says, whatever the inbox setting.
fn run(ctx: &ManageContext, args: &SkillManageArgs, origin: &WriteOrigin<'_>) -> Step<Done> {
    match args.action {
        ManageAction::Create => create(ctx, args, origin),
        ManageAction::Edit => edit(ctx, args, origin),
        ManageAction::Patch => patch(ctx, args, origin),
        ManageAction::Delete => delete(ctx, args, origin),
        ManageAction::WriteFile => write_file(ctx, args, origin),
        ManageAction::RemoveFile => remove_file(ctx, args, origin),
    }
}

fn required<'a>(value: &'a Option<String>, what: &str) -> Step<&'a str> {
    value
        .as_deref()
        .ok_or_else(|| Refusal::new(what.to_owned()))
}

fn identity_of(skill: &Skill) -> SkillIdentity {
    SkillIdentity {
        name: skill.name.clone(),
        id: skill.id.clone(),
        qualified_id: skill.qualified_id(),
        skill_dir: skill.skill_dir.clone(),
    }
}

/// Resolves an existing skill with the one lookup rule every surface uses.
fn find_skill(ctx: &ManageContext, name: &str) -> Step<Skill> {
    paths::check_skill_query(name).map_err(Refusal::new)?;
    let set = ctx.skills_answering(name);
    match set.resolve(name) {
        Resolution::Found(skill) | Resolution::Gated(skill, _) => Ok(skill.clone()),
        Resolution::Ambiguous(candidates) => {
            let ids: Vec<String> = candidates.iter().map(|s| s.qualified_id()).collect();
            Err(Refusal::new(format!(
                "'{name}' is ambiguous: it names {} skills ({}); refusing to guess",
                ids.len(),
                ids.join(", ")
            ))
            .hint("Pass the qualified id of the skill to change, e.g. 'user:category/name'.")
            .with("matches", json!(ids)))
        }
        Resolution::NotFound => Err(Refusal::new(format!(
            "no skill named '{name}'; create it first with action 'create'"
        ))
        .hint("Call skills_list to see every skill.")),
    }
}

fn internal(what: &str, e: impl std::fmt::Display) -> Refusal {
    Refusal::new(format!("{what}: {e}; the skill was left as it was"))
}

/// How to take a write back when the guard refuses it; every step is
/// relative to a folder handle, so undoing never follows a link either.
enum Undo<'a> {
    /// Put these exact bytes back.
    Restore {
        dir: BorrowedFd<'a>,
        name: &'a str,
        bytes: &'a [u8],
    },
    /// Remove a file the write created, and the folders it created for it.
    Remove {
        dir: BorrowedFd<'a>,
        name: &'a str,
        created: Option<(BorrowedFd<'a>, &'a str)>,
    },
    /// Remove a whole new skill, from the topmost folder the create made.
    RemoveTree {
        parent: BorrowedFd<'a>,
        name: &'a str,
    },
}

impl Undo<'_> {
    fn apply(self) -> std::io::Result<()> {
        match self {
            Undo::Restore { dir, name, bytes } => atomic::write_at(dir, name, bytes),
            Undo::Remove { dir, name, created } => {
                rustix::fs::unlinkat(dir, name, rustix::fs::AtFlags::empty())?;
                if let Some((parent, top)) = created {
                    beneath::remove_tree_at(parent, top)?;
                }
                Ok(())
            }
            Undo::RemoveTree { parent, name } => beneath::remove_tree_at(parent, name),
        }
    }
}

/// One finding as a report line: severity, category, file:line, match, why.
fn finding_line(f: &skill_guard::Finding) -> String {
    format!(
        "{} {} {}:{} \"{}\" ({})",
        f.severity, f.category, f.file, f.line, f.matched, f.description
    )
}

/// The refusal for a blocked verdict, or none when the policy allows it.
fn blocked(
    findings: &[skill_guard::Finding],
    verdict: skill_guard::Verdict,
    outcome: &str,
) -> Option<Refusal> {
    match skill_guard::decide(TrustLevel::AgentCreated, verdict, false) {
        PolicyDecision::Allow => None,
        PolicyDecision::Block { reason } => {
            let mut sorted: Vec<&skill_guard::Finding> = findings.iter().collect();
            sorted.sort_by_key(|f| std::cmp::Reverse(f.severity));
            let lines: Vec<String> = sorted.into_iter().map(finding_line).collect();
            Some(
                Refusal::new(format!(
                    "the guard blocked this write ({verdict} verdict: {reason}); {outcome}"
                ))
                .hint("Remove or rewrite the flagged lines listed in 'findings', then retry.")
                .with("findings", json!(lines)),
            )
        }
    }
}

/// What a patch changes, for the guard: the file it rewrites and the
/// findings that file already had. A skill whose existing text scans
/// dangerous may still be patched, so long as the patch adds no finding:
/// the write is judged by what it changes, not by what it leaves alone.
struct ChangeBaseline<'a> {
    file: &'a str,
    before: Vec<skill_guard::Finding>,
}

impl<'a> ChangeBaseline<'a> {
    /// The baseline of `file`, which held `previous` (nothing: a new file).
    fn of(ctx: &ManageContext, file: &'a str, previous: Option<&[u8]>) -> Self {
        let before = match previous {
            Some(bytes) if ctx.guard_writes => skill_guard::scan_text(
                &String::from_utf8_lossy(bytes),
                file,
                skill_guard::ScanScope::Skill,
            ),
            _ => Vec::new(),
        };
        ChangeBaseline { file, before }
    }

    /// The findings of `after` the change brought: those in the changed file
    /// that the file did not have before (the same pattern on the same text;
    /// line numbers move when lines are added above). Findings in other
    /// files are left out: a patch of one file does not change them.
    fn added(&self, after: Vec<skill_guard::Finding>) -> Vec<skill_guard::Finding> {
        let mut had: HashMap<(String, String), usize> = HashMap::new();
        for f in &self.before {
            *had.entry((f.pattern_id.clone(), f.matched.clone()))
                .or_default() += 1;
        }
        let mut added = Vec::new();
        for f in after.into_iter().filter(|f| f.file == self.file) {
            match had.get_mut(&(f.pattern_id.clone(), f.matched.clone())) {
                Some(n) if *n > 0 => *n -= 1,
                _ => added.push(f),
            }
        }
        added
    }
}

/// Scans the text about to be written, so dangerous bytes never reach the
/// disk (not even for the moment before the folder scan would undo them).
/// With a baseline, only the findings the change adds count.
fn prescan(
    ctx: &ManageContext,
    rel: &str,
    text: &str,
    baseline: Option<&ChangeBaseline<'_>>,
) -> Step<()> {
    // The skill's own `.skillignore` does not exempt a file written here:
    // whoever writes through skill_manage could write that ignore file too.
    if !ctx.guard_writes {
        return Ok(());
    }
    let mut findings = skill_guard::scan_text(text, rel, skill_guard::ScanScope::Skill);
    if let Some(baseline) = baseline {
        findings = baseline.added(findings);
    }
    let verdict = skill_guard::verdict_of(&findings);
    match blocked(&findings, verdict, "nothing was written") {
        Some(refusal) => Err(refusal),
        None => Ok(()),
    }
}

/// Scans the whole skill as agent-created after a write; a blocked verdict
/// undoes the write.
fn scan_or_undo(
    ctx: &ManageContext,
    skill_dir: &Path,
    undo: Undo,
    baseline: Option<&ChangeBaseline<'_>>,
) -> Step<()> {
    if !ctx.guard_writes {
        return Ok(());
    }
    // Every file is scanned: a `.skillignore` inside the skill could have been
    // written through skill_manage to hide the next file (see `prescan`).
    let refusal =
        match skill_guard::scan_skill_dir_with(skill_dir, &skill_guard::SkillIgnore::default()) {
            Ok(report) => match baseline.map_or_else(
                || {
                    blocked(
                        &report.findings,
                        report.verdict,
                        "the skill was restored to what it was",
                    )
                },
                |baseline| {
                    let added = baseline.added(report.findings.clone());
                    let verdict = skill_guard::verdict_of(&added);
                    blocked(&added, verdict, "the skill was restored to what it was")
                },
            ) {
                None => return Ok(()),
                Some(refusal) => refusal,
            },
            Err(e) => Refusal::new(format!(
                "the guard could not scan the skill ({e}), so the write was undone"
            )),
        };
    match undo.apply() {
        Ok(()) => Err(refusal),
        Err(e) => Err(Refusal::new(format!(
            "{} — but undoing the write failed: {e}",
            refusal.error
        ))),
    }
}

/// One file write of an action: the skill folder (opened beneath its root),
/// where the file goes in it, what it gets, and the file relative to the
/// skill folder (`None` for SKILL.md).
struct FileChange<'a> {
    folder: &'a Base,
    place: &'a paths::FilePlace,
    bytes: &'a [u8],
    action: ManageAction,
    rel: Option<&'a str>,
    /// For a patch: what the file's findings were, so only added ones count.
    baseline: Option<&'a ChangeBaseline<'a>>,
}

/// Writes one file of an existing skill under its lock: keep the version,
/// write atomically, scan, record. Any failure leaves the skill as it was.
/// Every step goes through folder handles opened without following links.
fn write_recorded(
    ctx: &ManageContext,
    origin: &WriteOrigin<'_>,
    identity: &SkillIdentity,
    change: FileChange<'_>,
    scan_first: Option<&dyn Fn() -> Step<()>>,
) -> Step<()> {
    let FileChange {
        folder,
        place,
        bytes,
        action,
        rel,
        baseline,
    } = change;
    let keep_previous = || -> Step<(Option<Vec<u8>>, history::Pending)> {
        let previous = place
            .read()
            .map_err(|e| internal(&format!("cannot read {}", place.path.display()), e))?;
        let pending = history::begin(&ctx.home, identity, Some(folder))
            .map_err(|e| internal("cannot keep history", e))?;
        Ok((previous, pending))
    };
    let (previous, pending) = match scan_first {
        None => keep_previous()?,
        Some(scan) => {
            // The folder as it was is copied aside on another thread while
            // this one scans the new text; a refused text only drops the copy.
            let (scanned, kept) = std::thread::scope(|scope| {
                let keep = &keep_previous;
                let helper = std::thread::Builder::new().spawn_scoped(scope, keep);
                let scanned = scan();
                let kept = match helper {
                    Ok(helper) => helper.join().unwrap_or_else(|_| {
                        Err(Refusal::new("keeping the history of this write failed"))
                    }),
                    // No thread to spare: one after the other.
                    Err(_) => keep_previous(),
                };
                (scanned, kept)
            });
            if let Err(refusal) = scanned {
                if let Ok((_, pending)) = kept {
                    pending.discard();
                }
                return Err(refusal);
            }
            kept?
        }
    };
    let missing: Vec<&str> = place.missing.iter().map(String::as_str).collect();
    let (dir, created) = match beneath::create_dirs_at(place.dir.as_fd(), &missing) {
        Ok(made) => made,
        Err(e) => {
            pending.discard();
            let parent = place.path.parent().unwrap_or(&folder.real);
            return Err(link_refusal(parent, &e)
                .unwrap_or_else(|| internal(&format!("cannot create {}", parent.display()), e)));
        }
    };
    let created = created
        .as_ref()
        .map(|(fd, name)| (fd.as_fd(), name.as_str()));
    if let Err(e) = atomic::write_at(dir.as_fd(), &place.name, bytes) {
        pending.discard();
        if let Some((parent, top)) = created {
            let _ = beneath::remove_tree_at(parent, top);
        }
        return Err(internal(
            &format!("cannot write {}", place.path.display()),
            e,
        ));
    }
    let undo = || match &previous {
        Some(bytes) => Undo::Restore {
            dir: dir.as_fd(),
            name: &place.name,
            bytes,
        },
        None => Undo::Remove {
            dir: dir.as_fd(),
            name: &place.name,
            created,
        },
    };
    if let Err(refusal) = scan_or_undo(ctx, &identity.skill_dir, undo(), baseline) {
        pending.discard();
        return Err(refusal);
    }
    if let Err(e) = pending.commit(action.as_str(), origin.actor, rel) {
        let _ = undo().apply();
        return Err(internal("cannot record the write in history", e));
    }
    Ok(())
}

/// The refusal for a write stopped by a link, naming the rule.
fn link_refusal(path: &Path, e: &std::io::Error) -> Option<Refusal> {
    beneath::is_link_refusal(e).then(|| {
        Refusal::new(format!(
            "{} is a symbolic link or is reached through one; skills are written only in real folders beneath their skills root, never through links",
            path.display()
        ))
    })
}

/// The root `skill` was found in.
fn root_path(ctx: &ManageContext, skill: &Skill) -> PathBuf {
    ctx.options
        .roots
        .get(skill.root_index)
        .map(|r| r.path.clone())
        .unwrap_or_else(|| ctx.user_root())
}

/// Opens the skill folder for writing, under its lock: beneath its root and
/// through no link (a skill folder that is a link, or sits in a linked
/// category, is refused by rule; one that is gone was deleted meanwhile).
fn open_skill(ctx: &ManageContext, skill: &Skill) -> Step<Base> {
    let root_path = root_path(ctx, skill);
    if root_path.join(&skill.id) != skill.skill_dir || skill.id.is_empty() {
        return Err(Refusal::new(format!(
            "{} is not the folder '{}' below its root {}; it is not written",
            skill.skill_dir.display(),
            skill.id,
            root_path.display()
        )));
    }
    let root = Base::open(&root_path).map_err(|e| internal("cannot open the skills root", e))?;
    match root.open_dir(&skill.id) {
        Ok(folder) => Ok(folder),
        Err(e) if e.kind() == ErrorKind::NotFound => Err(Refusal::new(format!(
            "skill '{}' disappeared while waiting to write it (another writer deleted it)",
            skill.name
        ))),
        Err(e) => Err(link_refusal(&skill.skill_dir, &e)
            .unwrap_or_else(|| internal("cannot open the skill folder", e))),
    }
}

/// SKILL.md of an open skill folder, refused when it is a link.
fn skill_md_place(folder: &Base, skill: &Skill) -> Step<paths::FilePlace> {
    if beneath::kind_at(folder.fd.as_fd(), "SKILL.md")
        .is_ok_and(|k| k == rustix::fs::FileType::Symlink)
    {
        return Err(Refusal::new(format!(
            "SKILL.md of '{}' is a symbolic link; skill files are never written or removed through links",
            skill.name
        )));
    }
    paths::FilePlace::top(folder, "SKILL.md").map_err(|e| internal("cannot open SKILL.md", e))
}

fn lock(ctx: &ManageContext, skill_dir: &Path) -> Step<lock::SkillLock> {
    lock::lock_skill(&ctx.user_root(), skill_dir)
        .map_err(|e| internal("cannot lock the skill for writing", e))
}

/// The `name` an existing SKILL.md's frontmatter holds, as written (not cut
/// to the length discovery shows).
fn name_as_written(text: &str) -> Option<String> {
    crate::frontmatter::parse_skill_md(crate::frontmatter::strip_bom(text))
        .ok()
        .and_then(|p| p.frontmatter.name)
}

/// The frontmatter name of an edited SKILL.md must stay the skill's name
/// (as discovery shows it, as the old file wrote it, or its folder's).
fn check_keeps_name(skill: &Skill, new_name: &str, written: Option<&str>) -> Step<()> {
    let dir_name = skill
        .skill_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if new_name == skill.name || new_name == dir_name || Some(new_name) == written {
        return Ok(());
    }
    Err(Refusal::new(format!(
        "the new SKILL.md is named '{new_name}' but the skill is '{}'; renaming is not done by editing (create the new skill, then delete this one with absorbed_into)",
        skill.name
    )))
}

fn create(ctx: &ManageContext, args: &SkillManageArgs, origin: &WriteOrigin<'_>) -> Step<Done> {
    let name = args.name.as_str();
    validate_name(name)?;
    let category = args
        .category
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty());
    if let Some(c) = category {
        validate_category(c)?;
    }
    let content = required(
        &args.content,
        "content is required for create: pass the whole SKILL.md (frontmatter with name and description, then the body)",
    )?;
    let valid = validate_skill_md(content, SkillMdCheck::New)?;
    if valid.name != name {
        return Err(Refusal::new(format!(
            "the frontmatter name '{}' differs from the name argument '{name}'; they must be the same",
            valid.name
        )));
    }
    let set = ctx.skills_answering(name);
    let existing = match set.resolve(name) {
        Resolution::Found(s) | Resolution::Gated(s, _) => vec![s.qualified_id()],
        Resolution::Ambiguous(list) => list.iter().map(|s| s.qualified_id()).collect(),
        Resolution::NotFound => Vec::new(),
    };
    if !existing.is_empty() {
        return Err(Refusal::new(format!(
            "a skill named '{name}' already exists ({}); choose another name or patch the existing skill",
            existing.join(", ")
        )));
    }
    let mut warnings = valid.warnings;
    let draft = Draft::of_skill_md(name, &valid.description, content);
    duplicate_verdict(origin, name, &ctx.near_duplicates(&draft), &mut warnings)?;
    prescan(ctx, "SKILL.md", content, None)?;
    let root = ctx.user_root();
    let id = match category {
        Some(c) => format!("{c}/{name}"),
        None => name.to_owned(),
    };
    let skill_dir = root.join(&id);
    check_create_path(&root, &id)?;
    atomic::create_dirs(&root).map_err(|e| internal("cannot create the user skills folder", e))?;
    let _lock = lock(ctx, &skill_dir)?;
    // From here on every step is relative to the root's handle: the checks
    // above are repeated by the walk itself, so a link swapped in after them
    // stops the create instead of redirecting it.
    let root_dir =
        Base::open(&root).map_err(|e| internal("cannot open the user skills folder", e))?;
    let (deepest, missing) = paths::create_place(&root_dir, &id).map_err(Refusal::new)?;
    let identity = SkillIdentity {
        name: name.to_owned(),
        id: id.clone(),
        qualified_id: format!("{}:{id}", Scope::User.namespace()),
        skill_dir: skill_dir.clone(),
    };
    let pending = history::begin(&ctx.home, &identity, None)
        .map_err(|e| internal("cannot keep history", e))?;
    let (categories, last) = missing.split_at(missing.len().saturating_sub(1));
    let categories: Vec<&str> = categories.iter().map(String::as_str).collect();
    type Made = (std::os::fd::OwnedFd, (std::os::fd::OwnedFd, String));
    let made = beneath::create_dirs_at(deepest.as_fd(), &categories).and_then(
        |(parent, top)| -> std::io::Result<Made> {
            // The skill folder itself must be new: another writer's folder is
            // never written into.
            let folder_name = last.first().map(String::as_str).unwrap_or(name);
            rustix::fs::mkdirat(&parent, folder_name, rustix::fs::Mode::from_raw_mode(0o755))
                .map_err(std::io::Error::from)
                .inspect_err(|_| {
                    if let Some((top_parent, top_name)) = &top {
                        let _ = beneath::remove_tree_at(top_parent.as_fd(), top_name);
                    }
                })?;
            let top = match top {
                Some(top) => top,
                None => (parent.try_clone()?, folder_name.to_owned()),
            };
            let folder = rustix::fs::openat(
                &parent,
                folder_name,
                beneath::DIR_FLAGS | rustix::fs::OFlags::NOFOLLOW,
                rustix::fs::Mode::empty(),
            )?;
            Ok((folder, top))
        },
    );
    let (folder, (top_parent, top_name)) = match made {
        Ok(made) => made,
        Err(e) => {
            pending.discard();
            return Err(link_refusal(&skill_dir, &e)
                .unwrap_or_else(|| internal("cannot create the skill folder", e)));
        }
    };
    let remove_created = || Undo::RemoveTree {
        parent: top_parent.as_fd(),
        name: &top_name,
    };
    let skill_md = skill_dir.join("SKILL.md");
    let written = atomic::write_at(folder.as_fd(), "SKILL.md", content.as_bytes())
        .and_then(|()| provenance::record_provenance_at(folder.as_fd(), origin.actor.created_by()));
    if let Err(e) = written {
        pending.discard();
        let _ = remove_created().apply();
        return Err(internal("cannot write SKILL.md", e));
    }
    if let Err(refusal) = scan_or_undo(ctx, &skill_dir, remove_created(), None) {
        pending.discard();
        return Err(refusal);
    }
    if let Err(e) = pending.commit(ManageAction::Create.as_str(), origin.actor, None) {
        let _ = remove_created().apply();
        return Err(internal("cannot record the write in history", e));
    }
    let place = match category {
        Some(c) => format!("category '{c}'"),
        None => "the user skills folder".to_owned(),
    };
    Ok(Done {
        qualified_id: identity.qualified_id,
        message: format!(
            "Created skill '{name}' in {place}. Add reference files with action 'write_file' (e.g. file_path 'references/notes.md')."
        ),
        path: skill_md,
        replacements: None,
        warnings,
    })
}

/// What a create close to the skills `near` gets. Covering two or more of
/// them, it is an umbrella over them (as a merge makes): written, with a note
/// to absorb them. Else, repeating one: the agent and the review are refused
/// and pointed at that skill; a person, the hub and the bundled seeding are
/// only warned (their copy may be deliberate).
fn duplicate_verdict(
    origin: &WriteOrigin<'_>,
    name: &str,
    near: &[NearDuplicate],
    warnings: &mut Vec<String>,
) -> Step<()> {
    let percent = |x: f32| format!("{:.0} %", x * 100.0);
    let covered: Vec<&NearDuplicate> = near.iter().filter(|n| n.is_covered()).collect();
    if covered.len() >= 2 {
        let names: Vec<String> = covered.iter().map(|n| format!("'{}'", n.name)).collect();
        warnings.push(format!(
            "'{name}' covers the existing skills {}; once it holds what they say, delete each with absorbed_into='{name}' so the library keeps one skill for the topic",
            names.join(", ")
        ));
        return Ok(());
    }
    let Some(one) = near.iter().find(|n| n.is_duplicate()) else {
        return Ok(());
    };
    let existing = &one.name;
    match origin.actor {
        Actor::Agent | Actor::Review => Err(Refusal::new(format!(
            "'{name}' would repeat the existing skill '{existing}' ({}, {} alike); patch '{existing}' instead of creating a near-copy",
            one.qualified_id,
            percent(one.similarity)
        ))
        .hint(format!(
            "Call skill_view('{existing}'), then skill_manage(action='patch', name='{existing}', ...) to add what is new, or action='write_file' with a file_path under references/ for longer material. If '{existing}' is not yours to change, leave it as it is."
        ))
        .with("similar_skill", json!(one.qualified_id))
        .with("similarity", json!(one.similarity))),
        Actor::User | Actor::Hub | Actor::Sync => {
            warnings.push(format!(
                "'{name}' is {} alike to the existing skill '{existing}' ({}); consider extending that one instead",
                percent(one.similarity),
                one.qualified_id
            ));
            Ok(())
        }
    }
}

/// A new skill's folder may only pass through real folders of the user root.
fn check_create_path(root: &Path, id: &str) -> Step<()> {
    let mut cur = root.to_path_buf();
    for part in id.split('/') {
        cur.push(part);
        match fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(Refusal::new(format!(
                    "{} is a symbolic link; new skills are only created in real folders of the user skills folder",
                    cur.display()
                )));
            }
            Ok(m) if !m.is_dir() => {
                return Err(Refusal::new(format!(
                    "{} is a file, so no skill can be created there",
                    cur.display()
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

fn edit(ctx: &ManageContext, args: &SkillManageArgs, origin: &WriteOrigin<'_>) -> Step<Done> {
    let content = required(
        &args.content,
        "content is required for edit: pass the whole new SKILL.md (for small changes use action 'patch')",
    )?;
    let skill = find_skill(ctx, &args.name)?;
    let before = Some(skill.description.as_str());
    let written = std::fs::read_to_string(&skill.path)
        .ok()
        .and_then(|old| name_as_written(&old));
    let name_before = Some(written.as_deref().unwrap_or(&skill.name));
    let valid = validate_skill_md(
        content,
        SkillMdCheck::Change {
            before,
            name_before,
        },
    )?;
    check_keeps_name(&skill, &valid.name, written.as_deref())?;
    review::check_may_touch(&ctx.home, origin, &skill)?;
    review::check_viewed(origin, &skill, &skill.path, "SKILL.md")?;
    let _lock = lock(ctx, &skill.skill_dir)?;
    let folder = open_skill(ctx, &skill)?;
    let place = skill_md_place(&folder, &skill)?;
    let previous = place.read().ok().flatten();
    let baseline = ChangeBaseline::of(ctx, "SKILL.md", previous.as_deref());
    prescan(ctx, "SKILL.md", content, Some(&baseline))?;
    if previous.is_some_and(|old| old == content.as_bytes()) {
        return Ok(Done {
            qualified_id: skill.qualified_id(),
            message: format!(
                "SKILL.md of '{}' already has this content; nothing changed.",
                skill.name
            ),
            path: skill.path,
            replacements: None,
            warnings: valid.warnings,
        });
    }
    let change = FileChange {
        folder: &folder,
        place: &place,
        bytes: content.as_bytes(),
        action: ManageAction::Edit,
        rel: None,
        baseline: Some(&baseline),
    };
    write_recorded(ctx, origin, &identity_of(&skill), change, None)?;
    Ok(Done {
        qualified_id: skill.qualified_id(),
        message: format!("Replaced SKILL.md of '{}'.", skill.name),
        path: skill.path,
        replacements: None,
        warnings: valid.warnings,
    })
}

fn patch(ctx: &ManageContext, args: &SkillManageArgs, origin: &WriteOrigin<'_>) -> Step<Done> {
    let old = required(
        &args.old_string,
        "old_string is required for patch: quote the text to replace",
    )?;
    let new = required(
        &args.new_string,
        "new_string is required for patch (an empty string deletes the quoted text)",
    )?;
    if old.is_empty() {
        return Err(Refusal::new(fuzzy_patch::PatchError::EmptyOld.to_string()));
    }
    let rel = args
        .file_path
        .as_deref()
        .filter(|p| !p.is_empty() && *p != "SKILL.md");
    if let Some(rel) = rel {
        validate_support_path(rel)?;
    }
    let skill = find_skill(ctx, &args.name)?;
    let (target, label) = match rel {
        Some(rel) => (skill.skill_dir.join(rel), rel.to_owned()),
        None => (skill.path.clone(), "SKILL.md".to_owned()),
    };
    review::check_may_touch(&ctx.home, origin, &skill)?;
    review::check_viewed(origin, &skill, &target, &label)?;
    let _lock = lock(ctx, &skill.skill_dir)?;
    let folder = open_skill(ctx, &skill)?;
    let place = match rel {
        Some(rel) => paths::support_place(&folder, rel).map_err(Refusal::new)?,
        None => skill_md_place(&folder, &skill)?,
    };
    let bytes = match place.read() {
        Ok(Some(b)) => b,
        Ok(None) => {
            return Err(Refusal::new(format!(
                "the file '{label}' does not exist in skill '{}'",
                skill.name
            ))
            .with("available_files", json!(paths::support_files(&folder.real))));
        }
        Err(e) => return Err(internal(&format!("cannot read '{label}'"), e)),
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return Err(Refusal::new(format!(
            "'{label}' is not UTF-8 text, so it cannot be patched; replace it with write_file"
        )));
    };
    let (patched, replacements) =
        fuzzy_patch::apply(&text, old, new, args.replace_all).map_err(|e| {
            let hint = e.hint().map(str::to_owned);
            let refusal = Refusal::new(format!("patch of '{label}' failed: {e}"));
            match hint {
                Some(h) => refusal.hint(h),
                None => refusal,
            }
        })?;
    let mut warnings = Vec::new();
    if rel.is_none() {
        let before = Some(skill.description.as_str());
        let written = name_as_written(&text);
        let check = SkillMdCheck::Change {
            before,
            name_before: Some(written.as_deref().unwrap_or(&skill.name)),
        };
        let valid = validate_skill_md(&patched, check).map_err(|v| {
            Refusal::new(format!(
                "the patch would leave SKILL.md invalid: {}; nothing was changed",
                v.message
            ))
        })?;
        check_keeps_name(&skill, &valid.name, written.as_deref())?;
        warnings = valid.warnings;
    } else {
        validate_support_size(patched.len())?;
    }
    // The file as it was is the baseline: a skill that already scans
    // dangerous can still be patched when the patch adds no finding.
    let baseline = ChangeBaseline::of(ctx, &label, Some(text.as_bytes()));
    let scan = || prescan(ctx, &label, &patched, Some(&baseline));
    let change = FileChange {
        folder: &folder,
        place: &place,
        bytes: patched.as_bytes(),
        action: ManageAction::Patch,
        rel,
        baseline: Some(&baseline),
    };
    write_recorded(ctx, origin, &identity_of(&skill), change, Some(&scan))?;
    let plural = if replacements == 1 { "" } else { "s" };
    Ok(Done {
        qualified_id: skill.qualified_id(),
        message: format!(
            "Patched {label} of '{}' ({replacements} replacement{plural}).",
            skill.name
        ),
        path: place.path,
        replacements: Some(replacements),
        warnings,
    })
}

fn write_file(ctx: &ManageContext, args: &SkillManageArgs, origin: &WriteOrigin<'_>) -> Step<Done> {
    let rel = required(
        &args.file_path,
        "file_path is required for write_file, for example 'references/api.md'",
    )?;
    if rel == "SKILL.md" {
        return Err(Refusal::new(
            "write_file writes support files only; change SKILL.md with action 'edit' or 'patch'",
        ));
    }
    validate_support_path(rel)?;
    let body = required(
        &args.file_content,
        "file_content is required for write_file: the file's whole content",
    )?;
    validate_support_size(body.len())?;
    let skill = find_skill(ctx, &args.name)?;
    let target = skill.skill_dir.join(rel);
    review::check_may_touch(&ctx.home, origin, &skill)?;
    if target.exists() {
        review::check_viewed(origin, &skill, &target, rel)?;
    }
    let _lock = lock(ctx, &skill.skill_dir)?;
    let folder = open_skill(ctx, &skill)?;
    let place = paths::support_place(&folder, rel).map_err(Refusal::new)?;
    let existed = place.exists();
    let previous = place.read().ok().flatten();
    let baseline = ChangeBaseline::of(ctx, rel, previous.as_deref());
    prescan(ctx, rel, body, Some(&baseline))?;
    if previous.is_some_and(|old| old == body.as_bytes()) {
        return Ok(Done {
            qualified_id: skill.qualified_id(),
            message: format!(
                "'{rel}' of '{}' already has this content; nothing changed.",
                skill.name
            ),
            path: place.path,
            replacements: None,
            warnings: Vec::new(),
        });
    }
    let change = FileChange {
        folder: &folder,
        place: &place,
        bytes: body.as_bytes(),
        action: ManageAction::WriteFile,
        rel: Some(rel),
        baseline: Some(&baseline),
    };
    write_recorded(ctx, origin, &identity_of(&skill), change, None)?;
    let verb = if existed { "Replaced" } else { "Wrote" };
    Ok(Done {
        qualified_id: skill.qualified_id(),
        message: format!("{verb} '{rel}' in skill '{}'.", skill.name),
        path: place.path,
        replacements: None,
        warnings: Vec::new(),
    })
}

fn remove_file(
    ctx: &ManageContext,
    args: &SkillManageArgs,
    origin: &WriteOrigin<'_>,
) -> Step<Done> {
    let rel = required(
        &args.file_path,
        "file_path is required for remove_file, for example 'references/old.md'",
    )?;
    validate_support_path(rel)?;
    let skill = find_skill(ctx, &args.name)?;
    let target = skill.skill_dir.join(rel);
    review::check_may_touch(&ctx.home, origin, &skill)?;
    review::check_viewed(origin, &skill, &target, rel)?;
    let _lock = lock(ctx, &skill.skill_dir)?;
    let folder = open_skill(ctx, &skill)?;
    let place = paths::support_place(&folder, rel).map_err(Refusal::new)?;
    if !place.exists() {
        return Err(Refusal::new(format!(
            "the file '{rel}' does not exist in skill '{}'",
            skill.name
        ))
        .with("available_files", json!(paths::support_files(&folder.real))));
    }
    let pending = history::begin(&ctx.home, &identity_of(&skill), Some(&folder))
        .map_err(|e| internal("cannot keep history", e))?;
    if let Err(e) = rustix::fs::unlinkat(
        &place.dir,
        place.name.as_str(),
        rustix::fs::AtFlags::empty(),
    ) {
        pending.discard();
        return Err(internal(&format!("cannot remove '{rel}'"), e));
    }
    let _ = rustix::fs::fsync(&place.dir);
    let folders: Vec<&str> = rel.split('/').collect();
    paths::remove_empty_dirs_at(&folder, &folders[..folders.len().saturating_sub(1)]);
    pending
        .commit(ManageAction::RemoveFile.as_str(), origin.actor, Some(rel))
        .map_err(|e| {
            Refusal::new(format!(
                "removed '{rel}' but could not record it in history: {e}"
            ))
        })?;
    Ok(Done {
        qualified_id: skill.qualified_id(),
        message: format!("Removed '{rel}' from skill '{}'.", skill.name),
        path: place.path,
        replacements: None,
        warnings: Vec::new(),
    })
}

fn delete(ctx: &ManageContext, args: &SkillManageArgs, origin: &WriteOrigin<'_>) -> Step<Done> {
    let skill = find_skill(ctx, &args.name)?;
    review::check_may_touch(&ctx.home, origin, &skill)?;
    let absorbed = args
        .absorbed_into
        .as_deref()
        .map(str::trim)
        .filter(|a| !a.is_empty());
    if origin.actor == Actor::Review && absorbed.is_none() {
        return Err(Refusal::new(format!(
            "the background review may only delete '{}' after merging it into another skill: pass absorbed_into naming that skill",
            skill.name
        ))
        .hint("Patch the umbrella skill with this skill's useful content first, then delete with absorbed_into set to its name."));
    }
    // The user keeps a pinned skill; the model in the foreground may still
    // patch it (the review may not touch it at all, see `review`).
    if origin.actor == Actor::Agent
        && let Some(why) = crate::pins::pin_status(&ctx.home, &skill.qualified_id())
            .refusal(&skill.name, "deleted")
    {
        return Err(
            Refusal::new(format!("{why}; patches to it are still allowed"))
                .hint(crate::pins::unpin_hint(&skill.name)),
        );
    }
    if let Some(target) = absorbed {
        check_absorbed_into(ctx, &skill, target)?;
    }
    check_delete_target(ctx, &skill)?;
    // The review never destroys: what it retires goes to the archive.
    let removal = if origin.actor == Actor::Review {
        Removal::Archive(absorbed)
    } else {
        Removal::Delete
    };
    let (message, path) = take_away(ctx, &skill, origin.actor, removal)?;
    let message = match (removal, absorbed) {
        (Removal::Archive(_), Some(a)) => format!("{message} Its content was merged into '{a}'."),
        (Removal::Delete, Some(a)) => format!(
            "Deleted skill '{}'. Its content lives on in '{a}'. `knack skills rollback {}` brings it back.",
            skill.name,
            skill.qualified_id()
        ),
        _ => message,
    };
    Ok(Done {
        qualified_id: skill.qualified_id(),
        message,
        path,
        replacements: None,
        warnings: Vec::new(),
    })
}

/// How a skill leaves its root: removed, or moved into the archive (with the
/// skill it was merged into, if any).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Removal<'a> {
    Delete,
    Archive(Option<&'a str>),
}

/// Deletes or archives `skill` (already checked by the caller) under its
/// lock, keeping the version in history. Returns the message and the path
/// (the archive folder, or the skill folder that is gone).
fn take_away(
    ctx: &ManageContext,
    skill: &Skill,
    actor: Actor,
    removal: Removal<'_>,
) -> Step<(String, PathBuf)> {
    let _lock = lock(ctx, &skill.skill_dir)?;
    let folder = open_skill(ctx, skill)?;
    let pending = history::begin(&ctx.home, &identity_of(skill), Some(&folder))
        .map_err(|e| internal("cannot keep history", e))?;
    drop(folder);
    let root_path = root_path(ctx, skill);
    let parts: Vec<&str> = skill.id.split('/').collect();
    let (folder_name, categories) = parts.split_last().unwrap_or((&"", &[]));
    // The folder is removed or moved relative to its parent's handle, opened
    // beneath the root through no link: a link swapped in after the checks
    // is moved or removed itself, never followed.
    let root = Base::open(&root_path);
    let parent = root
        .as_ref()
        .map_err(|e| std::io::Error::new(e.kind(), e.to_string()))
        .and_then(|root| root.open_dir(&categories.join("/")));
    let parent = match parent {
        Ok(parent) => parent,
        Err(e) => {
            pending.discard();
            return Err(link_refusal(&skill.skill_dir, &e)
                .unwrap_or_else(|| internal("cannot open the skill's parent folder", e)));
        }
    };
    let (action, pending, message, path) = match removal {
        Removal::Archive(absorbed) => {
            let entry =
                match archive::move_into_archive(ctx, skill, &parent, folder_name, actor, absorbed)
                {
                    Ok(entry) => entry,
                    Err(e) => {
                        pending.discard();
                        return Err(internal("cannot archive the skill", e));
                    }
                };
            let path = archive::archive_dir(&ctx.home).join(&entry);
            (
                "archive",
                pending.archived_to(entry),
                format!(
                    "Archived skill '{}' to {}; `knack skills restore {}` brings it back.",
                    skill.name,
                    path.display(),
                    skill.qualified_id()
                ),
                path,
            )
        }
        Removal::Delete => {
            if let Err(e) = beneath::remove_tree_at(parent.fd.as_fd(), folder_name) {
                pending.discard();
                return Err(internal("cannot delete the skill folder", e));
            }
            (
                ManageAction::Delete.as_str(),
                pending,
                format!(
                    "Deleted skill '{}'. `knack skills rollback {}` brings it back.",
                    skill.name,
                    skill.qualified_id()
                ),
                skill.skill_dir.clone(),
            )
        }
    };
    let _ = rustix::fs::fsync(&parent.fd);
    if let Ok(root) = &root {
        paths::remove_empty_dirs_at(root, categories);
    }
    pending.commit(action, actor, None).map_err(|e| {
        Refusal::new(format!(
            "{action}d '{}' but could not record it in history: {e}",
            skill.name
        ))
    })?;
    Ok((message, path))
}

fn check_absorbed_into(ctx: &ManageContext, skill: &Skill, target: &str) -> Step<()> {
    let set = ctx.skills_answering(target);
    match set.resolve(target) {
        Resolution::Found(umbrella) if umbrella.skill_dir == skill.skill_dir => {
            Err(Refusal::new(format!(
                "absorbed_into '{target}' is the skill being deleted; name the skill its content was merged into"
            )))
        }
        Resolution::Found(_) => Ok(()),
        Resolution::Ambiguous(list) => Err(Refusal::new(format!(
            "absorbed_into '{target}' is ambiguous ({}); use a qualified id",
            list.iter()
                .map(|s| s.qualified_id())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        Resolution::Gated(..) | Resolution::NotFound => Err(Refusal::new(format!(
            "absorbed_into '{target}' does not name an existing skill; create or patch that skill first, then delete"
        ))),
    }
}

/// Never delete a link, a root, or anything not strictly inside its root.
fn check_delete_target(ctx: &ManageContext, skill: &Skill) -> Step<()> {
    let dir = &skill.skill_dir;
    let meta =
        fs::symlink_metadata(dir).map_err(|e| internal("cannot inspect the skill folder", e))?;
    if meta.file_type().is_symlink() {
        return Err(Refusal::new(format!(
            "{} is a symbolic link; remove the link yourself if that is what you want",
            dir.display()
        )));
    }
    let canon =
        fs::canonicalize(dir).map_err(|e| internal("cannot resolve the skill folder", e))?;
    let roots: Vec<PathBuf> = ctx
        .options
        .roots
        .iter()
        .filter_map(|r| fs::canonicalize(&r.path).ok())
        .collect();
    if roots.contains(&canon) {
        return Err(Refusal::new(format!(
            "{} is a skills root itself; deleting it would remove every skill in it",
            dir.display()
        )));
    }
    if !roots.iter().any(|r| canon.starts_with(r)) {
        return Err(Refusal::new(format!(
            "{} is not inside any skills root, so it is not deleted",
            dir.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
