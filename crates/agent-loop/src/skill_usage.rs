//! How the library is used: per skill (by qualified id) the views the model
//! made with `skill_view`, the uses (slash invocations, preloads, and a view
//! followed by other work in the same turn), the patches by who made them,
//! the last time of each, and who created it. Kept in `state.db`
//! (migration 5), read by `knack skills stats` and by the skills index.
//!
//! Recording is a side note to the work, never part of it: a record that
//! cannot be written is logged at debug level and the command goes on.
//!
//! A skill moved by hand (a new category, so a new qualified id) keeps its
//! record: when the stats find a record whose id no longer names any skill,
//! and exactly one unrecorded skill now carries its name, the record follows
//! it (see [`follow_renames`]).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use knack_config::KnackHome;
use rusqlite::{Connection, params};
use serde::Serialize;
use serde_json::Value;
use skill_core::clock::{from_unix_seconds, parse_rfc3339, rfc3339, unix_seconds};
use skill_core::manage::provenance;
use skill_core::{Actor, ArchivedSkill, Skill};

use crate::session_store::SessionStore;

/// One thing that happened to a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageEvent {
    /// A successful `skill_view` by the model in the foreground.
    View,
    /// A slash invocation, a preload, or a view followed by work in the turn.
    Use,
    /// A change to an existing skill (edit, patch, write_file, remove_file).
    Patch(Actor),
    /// The skill was created; its record starts afresh.
    Created(Actor),
}

/// The `created_by` a creation by `actor` records. Finer than the
/// provenance sidecar, which calls the review's skills `agent` (the rule the
/// review's write permission needs): here the review is told apart.
pub fn creator_label(actor: Actor) -> &'static str {
    match actor {
        Actor::User => "user",
        Actor::Agent => "agent",
        Actor::Review => "review",
        Actor::Hub => "hub",
        Actor::Sync => "bundled",
    }
}

/// Records `event` for the skill now. Never fails: see the module notes.
pub fn record(store: &SessionStore, qualified_id: &str, name: &str, event: UsageEvent) {
    record_at(store, qualified_id, name, event, SystemTime::now());
}

/// [`record`] at a given time (tests age records with it).
pub fn record_at(
    store: &SessionStore,
    qualified_id: &str,
    name: &str,
    event: UsageEvent,
    at: SystemTime,
) {
    let conn = store.connection();
    if let Err(e) = write(&conn, qualified_id, name, event, unix_seconds(at)) {
        tracing::debug!(error = %e, skill = qualified_id, ?event, "skill usage not recorded");
    }
}

/// Records through the session's store when there is one, else through the
/// home's `state.db` opened for the occasion (`knack tool call`).
pub fn record_in(
    store: Option<&Arc<SessionStore>>,
    home: &KnackHome,
    qualified_id: &str,
    name: &str,
    event: UsageEvent,
) {
    match store {
        Some(store) => record(store, qualified_id, name, event),
        None => match SessionStore::open(home) {
            Ok(store) => record(&store, qualified_id, name, event),
            Err(e) => {
                tracing::debug!(error = %e, skill = qualified_id, "skill usage not recorded: the store is unavailable")
            }
        },
    }
}

fn write(
    conn: &Connection,
    qualified_id: &str,
    name: &str,
    event: UsageEvent,
    at: i64,
) -> rusqlite::Result<()> {
    match event {
        UsageEvent::View => {
            conn.execute(
                "INSERT INTO skill_usage (qualified_id, name, views, last_viewed) VALUES (?1, ?2, 1, ?3)
                 ON CONFLICT (qualified_id) DO UPDATE
                 SET name = excluded.name, views = views + 1, last_viewed = excluded.last_viewed",
                params![qualified_id, name, at],
            )?;
        }
        UsageEvent::Use => {
            conn.execute(
                "INSERT INTO skill_usage (qualified_id, name, uses, last_used) VALUES (?1, ?2, 1, ?3)
                 ON CONFLICT (qualified_id) DO UPDATE
                 SET name = excluded.name, uses = uses + 1, last_used = excluded.last_used",
                params![qualified_id, name, at],
            )?;
        }
        UsageEvent::Patch(actor) => {
            // `name` is what the caller typed (maybe an id), so a known
            // record keeps the name a view or a creation gave it.
            let tx = conn.unchecked_transaction()?;
            tx.execute(
                "INSERT INTO skill_usage (qualified_id, name, patches, last_patched) VALUES (?1, ?2, 1, ?3)
                 ON CONFLICT (qualified_id) DO UPDATE
                 SET patches = patches + 1, last_patched = excluded.last_patched",
                params![qualified_id, name, at],
            )?;
            tx.execute(
                "INSERT INTO skill_patches (qualified_id, actor, patches, last_at) VALUES (?1, ?2, 1, ?3)
                 ON CONFLICT (qualified_id, actor) DO UPDATE
                 SET patches = patches + 1, last_at = excluded.last_at",
                params![qualified_id, actor.as_str(), at],
            )?;
            tx.commit()?;
        }
        UsageEvent::Created(actor) => {
            // A new skill under an id some deleted skill once had starts at zero.
            let tx = conn.unchecked_transaction()?;
            tx.execute(
                "INSERT OR REPLACE INTO skill_usage (qualified_id, name, created_by, created_at)
                 VALUES (?1, ?2, ?3, ?4)",
                params![qualified_id, name, creator_label(actor), at],
            )?;
            tx.execute(
                "DELETE FROM skill_patches WHERE qualified_id = ?1",
                [qualified_id],
            )?;
            tx.commit()?;
        }
    }
    Ok(())
}

/// What is recorded of one skill. Times are Unix seconds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsageRecord {
    pub name: String,
    pub created_by: Option<String>,
    pub created_at: Option<i64>,
    pub views: u64,
    pub last_viewed: Option<i64>,
    pub uses: u64,
    pub last_used: Option<i64>,
    pub patches: u64,
    pub last_patched: Option<i64>,
    /// Patches by actor (`user`, `agent`, `review`).
    pub patches_by: BTreeMap<String, u64>,
}

/// Every record, by qualified id. An unreadable table is an error (the
/// caller decides whether to go on without records, as `stats` does).
pub fn load(store: &SessionStore) -> crate::Result<HashMap<String, UsageRecord>> {
    let conn = store.connection();
    let mut out: HashMap<String, UsageRecord> = HashMap::new();
    let count = |v: i64| u64::try_from(v).unwrap_or(0);
    let mut stmt = conn.prepare(
        "SELECT qualified_id, name, created_by, created_at, views, last_viewed, uses, last_used,
                patches, last_patched
         FROM skill_usage",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            UsageRecord {
                name: r.get(1)?,
                created_by: r.get(2)?,
                created_at: r.get(3)?,
                views: count(r.get(4)?),
                last_viewed: r.get(5)?,
                uses: count(r.get(6)?),
                last_used: r.get(7)?,
                patches: count(r.get(8)?),
                last_patched: r.get(9)?,
                patches_by: BTreeMap::new(),
            },
        ))
    })?;
    for row in rows {
        let (id, record) = row?;
        out.insert(id, record);
    }
    drop(stmt);
    let mut stmt = conn.prepare("SELECT qualified_id, actor, patches FROM skill_patches")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            count(r.get(2)?),
        ))
    })?;
    for row in rows {
        let (id, actor, n) = row?;
        if let Some(record) = out.get_mut(&id) {
            record.patches_by.insert(actor, n);
        }
    }
    Ok(out)
}

/// Uses by qualified id, for ordering the skills index.
pub fn use_counts(store: &SessionStore) -> crate::Result<BTreeMap<String, u64>> {
    let conn = store.connection();
    let mut stmt = conn.prepare("SELECT qualified_id, uses FROM skill_usage WHERE uses > 0")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            u64::try_from(r.get::<_, i64>(1)?).unwrap_or(0),
        ))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The home's use counts, empty when the store cannot be read (the index
/// then keeps its plain order).
pub fn use_counts_in(home: &KnackHome) -> BTreeMap<String, u64> {
    // No database yet, no uses: not worth creating one to find that out.
    if !home.state_db().exists() {
        return BTreeMap::new();
    }
    match SessionStore::open(home).and_then(|store| use_counts(&store)) {
        Ok(counts) => counts,
        Err(e) => {
            tracing::debug!(error = %e, "skill usage not read; the skills index keeps its plain order");
            BTreeMap::new()
        }
    }
}

/// Moves the records of skills that were moved by hand to their new
/// qualified id (see the module notes). Returns how many followed.
pub fn follow_renames(
    store: &SessionStore,
    records: &mut HashMap<String, UsageRecord>,
    current: &[(String, String)],
    archived: &HashSet<String>,
) -> usize {
    let current_ids: HashSet<&str> = current.iter().map(|(id, _)| id.as_str()).collect();
    let mut orphans_by_name: HashMap<&str, Vec<&str>> = HashMap::new();
    for (id, record) in records.iter() {
        if !current_ids.contains(id.as_str()) && !archived.contains(id) {
            orphans_by_name
                .entry(record.name.as_str())
                .or_default()
                .push(id.as_str());
        }
    }
    if orphans_by_name.is_empty() {
        return 0;
    }
    let mut unrecorded_by_name: HashMap<&str, Vec<&str>> = HashMap::new();
    for (id, name) in current {
        if !records.contains_key(id) {
            unrecorded_by_name
                .entry(name.as_str())
                .or_default()
                .push(id.as_str());
        }
    }
    let moves: Vec<(String, String)> = orphans_by_name
        .iter()
        .filter_map(
            |(name, old)| match (old.as_slice(), unrecorded_by_name.get(name)) {
                ([old], Some(new)) if new.len() == 1 => {
                    Some(((*old).to_owned(), new[0].to_owned()))
                }
                _ => None,
            },
        )
        .collect();
    let conn = store.connection();
    let mut moved = 0;
    for (old, new) in moves {
        let result = conn.unchecked_transaction().and_then(|tx| {
            tx.execute(
                "UPDATE skill_usage SET qualified_id = ?2 WHERE qualified_id = ?1",
                params![old, new],
            )?;
            tx.execute(
                "UPDATE skill_patches SET qualified_id = ?2 WHERE qualified_id = ?1",
                params![old, new],
            )?;
            tx.commit()
        });
        match result {
            Ok(()) => {
                if let Some(record) = records.remove(&old) {
                    records.insert(new, record);
                }
                moved += 1;
            }
            Err(e) => tracing::debug!(error = %e, %old, %new, "skill usage record not moved"),
        }
    }
    moved
}

/// Whether the usage records can be read, for `knack doctor`: the number of
/// records, or why not.
pub fn check(home: &KnackHome) -> std::result::Result<usize, String> {
    let store = SessionStore::open(home).map_err(|e| e.to_string())?;
    load(&store).map(|r| r.len()).map_err(|e| e.to_string())
}

/// Where a skill stands in its lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SkillState {
    Active,
    /// Not used for `skills.stale_after_days`; listed, never removed.
    Stale,
    /// In `skills/.archive/`; `knack skills restore` brings it back.
    Archived,
}

/// One line of `knack skills stats` (CONTRACT.md's keys, then additions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillStats {
    pub name: String,
    pub qualified_id: String,
    pub created_by: String,
    pub views: u64,
    pub uses: u64,
    pub patches: u64,
    /// RFC 3339, or null when never used.
    pub last_used: Option<String>,
    pub state: SkillState,
    pub pinned: bool,
    pub patches_by: BTreeMap<String, u64>,
}

/// Everything the stats are computed from; `now` is passed in so the stale
/// rule can be tested with any clock.
pub struct StatsInput<'a> {
    pub skills: &'a [Skill],
    pub archived: &'a [ArchivedSkill],
    pub pinned: &'a BTreeSet<String>,
    pub usage: &'a HashMap<String, UsageRecord>,
    pub now: SystemTime,
    /// `skills.stale_after_days`; 0 turns staleness off.
    pub stale_after_days: u32,
}

/// The stale rule, in one place: no use for `days` days, counted from the
/// later of creation and last use. Unknown times never make a skill stale.
pub fn is_stale(
    created: Option<SystemTime>,
    last_used: Option<SystemTime>,
    now: SystemTime,
    days: u32,
) -> bool {
    if days == 0 {
        return false;
    }
    let Some(since) = created.max(last_used) else {
        return false;
    };
    now.duration_since(since)
        .is_ok_and(|idle| idle >= Duration::from_secs(u64::from(days) * 86_400))
}

/// Who created the skill in `dir` and when, as far as the folder says:
/// the provenance sidecar, else the frontmatter's `created_by`, else `user`.
fn folder_provenance(
    dir: &Path,
    frontmatter_created_by: Option<&str>,
) -> (String, Option<SystemTime>) {
    match provenance::sidecar(dir) {
        Some(p) => (
            p.created_by.trim().to_owned(),
            p.created_at.as_deref().and_then(parse_rfc3339),
        ),
        None => (
            frontmatter_created_by
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .unwrap_or("user")
                .to_owned(),
            None,
        ),
    }
}

/// The stats of every discovered and every archived skill, sorted by name
/// then qualified id (the caller re-sorts as asked).
pub fn library_stats(input: &StatsInput<'_>) -> Vec<SkillStats> {
    let empty = UsageRecord::default();
    let mut out = Vec::with_capacity(input.skills.len() + input.archived.len());
    for skill in input.skills {
        let qualified_id = skill.qualified_id();
        let record = input.usage.get(&qualified_id).unwrap_or(&empty);
        let last_used = record.last_used.map(from_unix_seconds);
        let recorded_creation = record.created_at.map(from_unix_seconds);
        // The folder is only looked at for what the record does not know.
        let from_folder = (record.created_by.is_none()
            || (recorded_creation.is_none() && needs_creation(last_used, input)))
        .then(|| folder_provenance(&skill.skill_dir, skill.frontmatter.created_by.as_deref()));
        let created_by = record
            .created_by
            .clone()
            .or_else(|| from_folder.as_ref().map(|(by, _)| by.clone()))
            .unwrap_or_else(|| "user".to_owned());
        let state = if needs_creation(last_used, input) {
            let created = recorded_creation
                .or_else(|| from_folder.as_ref().and_then(|(_, at)| *at))
                .or_else(|| modified(&skill.path));
            if is_stale(created, last_used, input.now, input.stale_after_days) {
                SkillState::Stale
            } else {
                SkillState::Active
            }
        } else {
            SkillState::Active
        };
        out.push(SkillStats {
            pinned: input.pinned.contains(&qualified_id),
            name: skill.name.clone(),
            qualified_id,
            created_by,
            views: record.views,
            uses: record.uses,
            patches: record.patches,
            last_used: last_used.map(rfc3339),
            state,
            patches_by: record.patches_by.clone(),
        });
    }
    for archived in input.archived {
        let r = &archived.record;
        let record = input.usage.get(&r.qualified_id).unwrap_or(&empty);
        let created_by = record.created_by.clone().unwrap_or_else(|| {
            let md = std::fs::read_to_string(archived.path.join("SKILL.md")).unwrap_or_default();
            let fm =
                skill_core::frontmatter::parse_skill_md(skill_core::frontmatter::strip_bom(&md))
                    .ok()
                    .and_then(|p| p.frontmatter.created_by);
            folder_provenance(&archived.path, fm.as_deref()).0
        });
        out.push(SkillStats {
            name: r.name.clone(),
            qualified_id: r.qualified_id.clone(),
            created_by,
            views: record.views,
            uses: record.uses,
            patches: record.patches,
            last_used: record.last_used.map(|t| rfc3339(from_unix_seconds(t))),
            state: SkillState::Archived,
            pinned: input.pinned.contains(&r.qualified_id),
            patches_by: record.patches_by.clone(),
        });
    }
    out.sort_by(|a, b| (&a.name, &a.qualified_id).cmp(&(&b.name, &b.qualified_id)));
    out
}

/// Whether the creation time can matter: only when the last use alone does
/// not keep the skill active.
fn needs_creation(last_used: Option<SystemTime>, input: &StatsInput<'_>) -> bool {
    let days = input.stale_after_days;
    days > 0 && (last_used.is_none() || is_stale(None, last_used, input.now, days))
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The skills viewed in this turn and not yet counted as used: a view
/// followed by any other work in the same turn is a use, once per skill.
#[derive(Debug, Default)]
pub struct TurnUses {
    pending: Vec<(String, String)>,
    counted: HashSet<String>,
}

/// Tools that look at or maintain skills; calling them is not "work" that
/// turns an earlier view into a use.
const SKILL_TOOLS: [&str; 3] = ["skills_list", "skill_view", "skill_manage"];

impl TurnUses {
    /// A skill invoked or preloaded this turn: a use already. Returns
    /// whether it was not counted yet.
    pub fn invoked(&mut self, qualified_id: &str) -> bool {
        self.pending.retain(|(id, _)| id != qualified_id);
        self.counted.insert(qualified_id.to_owned())
    }

    /// Notes one finished tool call and its result; returns the skills
    /// (qualified id, name) that now count as used.
    pub fn after_call(&mut self, tool: &str, result: &str) -> Vec<(String, String)> {
        if tool == "skill_view" {
            if let Ok(value) = serde_json::from_str::<Value>(result)
                && value["success"].as_bool() == Some(true)
                && let (Some(id), Some(name)) =
                    (value["qualified_id"].as_str(), value["name"].as_str())
                && !self.counted.contains(id)
                && !self.pending.iter().any(|(p, _)| p == id)
            {
                self.pending.push((id.to_owned(), name.to_owned()));
            }
            return Vec::new();
        }
        if SKILL_TOOLS.contains(&tool) || self.pending.is_empty() {
            return Vec::new();
        }
        let used = std::mem::take(&mut self.pending);
        for (id, _) in &used {
            self.counted.insert(id.clone());
        }
        used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: u64 = 86_400;

    fn at(days: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + days * DAY)
    }

    #[test]
    fn stale_counts_from_the_later_of_creation_and_last_use() {
        assert!(!is_stale(Some(at(0)), None, at(59), 60));
        assert!(is_stale(Some(at(0)), None, at(60), 60));
        assert!(!is_stale(Some(at(0)), Some(at(30)), at(60), 60));
        assert!(is_stale(Some(at(0)), Some(at(30)), at(90), 60));
        // A use recorded before a (re-)creation does not age the new skill.
        assert!(!is_stale(Some(at(50)), Some(at(0)), at(100), 60));
        assert!(!is_stale(None, None, at(1000), 60), "unknown is not stale");
        assert!(!is_stale(Some(at(0)), None, at(1000), 0), "0 turns it off");
    }

    /// A discovered skill in a temp folder, created (by its sidecar) at `created`.
    fn skill_at(dir: &Path, name: &str, created: Option<SystemTime>) -> Skill {
        let skill_dir = dir.join(name);
        std::fs::create_dir_all(&skill_dir).unwrap();
        std::fs::write(
            skill_dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: Use when {name}\n---\nbody\n"),
        )
        .unwrap();
        if let Some(at) = created {
            std::fs::write(
                skill_dir.join(provenance::PROVENANCE_FILE),
                format!(
                    "{{\"created_by\": \"agent\", \"created_at\": \"{}\"}}",
                    rfc3339(at)
                ),
            )
            .unwrap();
        }
        let (set, _) = skill_core::discover(&skill_core::DiscoveryOptions::with_roots(vec![
            skill_core::SkillRoot {
                path: dir.to_path_buf(),
                scope: skill_core::Scope::User,
            },
        ]));
        set.skills.into_iter().find(|s| s.name == name).unwrap()
    }

    #[test]
    fn stats_mark_skills_stale_by_an_injected_clock() {
        let tmp = tempfile::tempdir().unwrap();
        let fresh = skill_at(tmp.path(), "fresh", Some(at(0)));
        let idle = skill_at(tmp.path(), "idle", Some(at(0)));
        let used = skill_at(tmp.path(), "used", Some(at(0)));
        let recorded = skill_at(tmp.path(), "recorded", None);
        let mut usage = HashMap::new();
        usage.insert(
            "user:used".to_owned(),
            UsageRecord {
                uses: 3,
                last_used: Some(unix_seconds(at(50))),
                ..UsageRecord::default()
            },
        );
        usage.insert(
            "user:recorded".to_owned(),
            UsageRecord {
                created_by: Some("review".into()),
                created_at: Some(unix_seconds(at(40))),
                ..UsageRecord::default()
            },
        );
        let skills = vec![fresh, idle, used, recorded];
        let pinned = BTreeSet::from(["user:idle".to_owned()]);
        let stats_at = |now: SystemTime, days: u32| -> BTreeMap<String, (SkillState, String)> {
            library_stats(&StatsInput {
                skills: &skills,
                archived: &[],
                pinned: &pinned,
                usage: &usage,
                now,
                stale_after_days: days,
            })
            .into_iter()
            .map(|s| (s.name, (s.state, s.created_by)))
            .collect()
        };
        let state = |m: &BTreeMap<String, (SkillState, String)>, n: &str| m[n].0;
        let day_59 = stats_at(at(59), 60);
        assert_eq!(state(&day_59, "idle"), SkillState::Active);
        let day_95 = stats_at(at(95), 60);
        assert_eq!(state(&day_95, "idle"), SkillState::Stale);
        assert_eq!(state(&day_95, "used"), SkillState::Active, "used on day 50");
        assert_eq!(
            state(&day_95, "recorded"),
            SkillState::Active,
            "created on day 40"
        );
        assert_eq!(day_95["recorded"].1, "review");
        assert_eq!(day_95["idle"].1, "agent");
        let day_120 = stats_at(at(120), 60);
        assert_eq!(state(&day_120, "used"), SkillState::Stale);
        assert_eq!(state(&day_120, "recorded"), SkillState::Stale);
        assert!(
            stats_at(at(1000), 0)
                .values()
                .all(|(s, _)| *s == SkillState::Active),
            "0 turns staleness off"
        );
    }

    #[test]
    fn a_view_then_work_is_one_use() {
        let mut turn = TurnUses::default();
        let view = r#"{"success": true, "name": "deploy", "qualified_id": "user:ops/deploy"}"#;
        assert!(turn.after_call("skill_view", view).is_empty());
        assert!(turn.after_call("skill_view", view).is_empty());
        assert!(turn.after_call("skills_list", "{}").is_empty());
        assert_eq!(
            turn.after_call("terminal", "{}"),
            vec![("user:ops/deploy".to_owned(), "deploy".to_owned())]
        );
        assert!(turn.after_call("skill_view", view).is_empty());
        assert!(
            turn.after_call("terminal", "{}").is_empty(),
            "once per turn"
        );
        // A failed view and an invoked skill are no (second) use.
        let mut turn = TurnUses::default();
        assert!(turn.invoked("user:ops/deploy"));
        assert!(!turn.invoked("user:ops/deploy"));
        turn.after_call("skill_view", view);
        turn.after_call("skill_view", r#"{"success": false, "error": "no"}"#);
        assert!(turn.after_call("read_file", "{}").is_empty());
    }

    #[test]
    fn records_count_and_follow_a_moved_skill() {
        let tmp = tempfile::tempdir().unwrap();
        let store = SessionStore::open_path(&tmp.path().join("state.db")).unwrap();
        record_at(
            &store,
            "user:a/x",
            "x",
            UsageEvent::Created(Actor::Review),
            at(0),
        );
        record_at(&store, "user:a/x", "x", UsageEvent::View, at(1));
        record_at(&store, "user:a/x", "x", UsageEvent::Use, at(2));
        record_at(&store, "user:a/x", "x", UsageEvent::Use, at(3));
        record_at(
            &store,
            "user:a/x",
            "x",
            UsageEvent::Patch(Actor::Agent),
            at(4),
        );
        record_at(
            &store,
            "user:a/x",
            "x",
            UsageEvent::Patch(Actor::Review),
            at(5),
        );
        record_at(
            &store,
            "user:a/x",
            "x",
            UsageEvent::Patch(Actor::Review),
            at(6),
        );
        let mut records = load(&store).unwrap();
        let r = &records["user:a/x"];
        assert_eq!((r.views, r.uses, r.patches), (1, 2, 3));
        assert_eq!(r.created_by.as_deref(), Some("review"));
        assert_eq!(r.last_used, Some(unix_seconds(at(3))));
        assert_eq!(
            r.patches_by,
            BTreeMap::from([("agent".to_owned(), 1), ("review".to_owned(), 2)])
        );
        assert_eq!(use_counts(&store).unwrap()["user:a/x"], 2);

        let current = vec![("user:b/x".to_owned(), "x".to_owned())];
        assert_eq!(
            follow_renames(&store, &mut records, &current, &HashSet::new()),
            1
        );
        assert_eq!(load(&store).unwrap()["user:b/x"].uses, 2);
        assert!(records.contains_key("user:b/x"));

        // Creating under a used id starts the record afresh.
        record_at(
            &store,
            "user:b/x",
            "x",
            UsageEvent::Created(Actor::User),
            at(7),
        );
        let r = &load(&store).unwrap()["user:b/x"];
        assert_eq!((r.uses, r.patches, r.patches_by.len()), (0, 0, 0));
    }

    #[test]
    fn a_broken_table_is_an_error_for_readers_and_silent_for_writers() {
        let tmp = tempfile::tempdir().unwrap();
        let store = SessionStore::open_path(&tmp.path().join("state.db")).unwrap();
        store
            .connection()
            .execute_batch("DROP TABLE skill_usage; CREATE TABLE skill_usage (junk TEXT);")
            .unwrap();
        record(&store, "user:x", "x", UsageEvent::View);
        assert!(load(&store).is_err());
    }
}
