//! `knack skills stats|archive|restore|pin|unpin`: keeping the library
//! healthy. Stats join the usage records of `state.db` with what discovery
//! finds, the archive and the pins; the other commands change one skill,
//! versioned in history like every other skill write.

use std::collections::{HashMap, HashSet};
use std::time::SystemTime;

use agent_loop::SessionStore;
use agent_loop::skill_usage::{self, SkillState, SkillStats, StatsInput, UsageRecord};
use skill_core::manage::archive;
use skill_core::{Actor, ManageContext, Resolution, SkillSet, pins};

use crate::cli::{SkillsCommand, StatsArgs, StatsSort};
use crate::context::Context;
use crate::exit;
use crate::output::{dim, print_json, print_table};

pub fn run(ctx: &Context, cmd: SkillsCommand) -> anyhow::Result<u8> {
    match cmd {
        SkillsCommand::Stats(args) => stats(ctx, &args),
        SkillsCommand::Archive(arg) => archive_one(ctx, &arg.name),
        SkillsCommand::Restore(arg) => restore_one(ctx, &arg.name),
        SkillsCommand::Pin(arg) => set_pin(ctx, &arg.name, true),
        SkillsCommand::Unpin(arg) => set_pin(ctx, &arg.name, false),
        _ => Err(exit::usage("not a library command")),
    }
}

/// The usage records, or none with a warning: the stats still list every
/// skill when the records cannot be read (`knack doctor` says why).
fn usage_records(ctx: &Context) -> (Option<SessionStore>, HashMap<String, UsageRecord>) {
    let loaded = SessionStore::open(&ctx.home)
        .and_then(|store| skill_usage::load(&store).map(|records| (store, records)));
    match loaded {
        Ok((store, records)) => (Some(store), records),
        Err(e) => {
            eprintln!(
                "knack: warning: the skill usage records cannot be read ({e}); counts show as 0 (`knack doctor` checks the store)"
            );
            (None, HashMap::new())
        }
    }
}

fn stats(ctx: &Context, args: &StatsArgs) -> anyhow::Result<u8> {
    let archived = archive::archived_skills(&ctx.home);
    let pinned = pins::read_pins(&ctx.home).unwrap_or_else(|e| {
        eprintln!("knack: warning: {e}; until it is mended every skill counts as pinned for the agent and the review");
        Default::default()
    });
    let (store, mut records) = usage_records(ctx);
    let mut rows = ctx.with_skills(|set| {
        if let Some(store) = &store {
            let current: Vec<(String, String)> = set
                .skills
                .iter()
                .map(|s| (s.qualified_id(), s.name.clone()))
                .collect();
            let archived_ids: HashSet<String> = archived
                .iter()
                .map(|a| a.record.qualified_id.clone())
                .collect();
            skill_usage::follow_renames(store, &mut records, &current, &archived_ids);
        }
        skill_usage::library_stats(&StatsInput {
            skills: &set.skills,
            archived: &archived,
            pinned: &pinned,
            usage: &records,
            now: SystemTime::now(),
            stale_after_days: ctx.config.skills.stale_after_days,
        })
    });
    sort(&mut rows, args.sort);
    if args.json {
        print_json(&rows);
        return Ok(exit::OK);
    }
    if rows.is_empty() {
        println!("No skills yet, so nothing to count.");
        return Ok(exit::OK);
    }
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let state = match r.state {
                SkillState::Active => "active",
                SkillState::Stale => "stale",
                SkillState::Archived => "archived",
            };
            vec![
                r.name.clone(),
                format!("{state}{}", if r.pinned { ", pinned" } else { "" }),
                r.uses.to_string(),
                r.views.to_string(),
                patches_cell(r),
                r.last_used
                    .as_deref()
                    .map_or("never".to_owned(), |t| t.replace('T', " ")),
                r.created_by.clone(),
                r.qualified_id.clone(),
            ]
        })
        .collect();
    print_table(
        &[
            "NAME",
            "STATE",
            "USES",
            "VIEWS",
            "PATCHES",
            "LAST USED",
            "CREATED BY",
            "ID",
        ],
        &table,
    );
    let count = |s: SkillState| rows.iter().filter(|r| r.state == s).count();
    let stale = match ctx.config.skills.stale_after_days {
        0 => "staleness off (skills.stale_after_days is 0)".to_owned(),
        days => format!(
            "{} stale (no use in {days} days, skills.stale_after_days)",
            count(SkillState::Stale)
        ),
    };
    println!(
        "{}",
        dim(&format!(
            "{} skill(s): {} active, {stale}, {} archived",
            rows.len(),
            count(SkillState::Active),
            count(SkillState::Archived)
        ))
    );
    Ok(exit::OK)
}

/// `3 (agent 2, review 1)`: the total, then who made them.
fn patches_cell(r: &SkillStats) -> String {
    if r.patches_by.is_empty() {
        return r.patches.to_string();
    }
    let by: Vec<String> = r
        .patches_by
        .iter()
        .map(|(actor, n)| format!("{actor} {n}"))
        .collect();
    format!("{} ({})", r.patches, by.join(", "))
}

fn sort(rows: &mut [SkillStats], by: StatsSort) {
    let name = |r: &SkillStats| (r.name.clone(), r.qualified_id.clone());
    match by {
        StatsSort::Name => rows.sort_by_key(name),
        StatsSort::Uses => {
            rows.sort_by(|a, b| b.uses.cmp(&a.uses).then_with(|| name(a).cmp(&name(b))))
        }
        // RFC 3339 in UTC sorts as text; never-used skills go last.
        StatsSort::LastUsed => rows.sort_by(|a, b| {
            b.last_used
                .cmp(&a.last_used)
                .then_with(|| name(a).cmp(&name(b)))
        }),
    }
}

/// The live skill `name` stands for, as [`live_skill`] finds it, or `None`
/// when no live skill answers to it (and only then may the archive be asked:
/// an ambiguous live name stays an error, whatever the archive holds).
fn live_or_missing(ctx: &Context, name: &str) -> anyhow::Result<Option<(String, String)>> {
    ctx.with_skills(|set| match set.resolve(name) {
        Resolution::NotFound => Ok(None),
        _ => live_skill(set, name).map(Some),
    })
}

/// The error for a name that no live skill answers to.
fn not_found(ctx: &Context, name: &str) -> anyhow::Error {
    ctx.with_skills(|set| live_skill(set, name))
        .err()
        .unwrap_or_else(|| exit::failed(format!("no skill named '{name}'")))
}

/// The live skill `name` stands for, as every surface resolves it, with a
/// person's wording for a miss or an ambiguity.
fn live_skill(set: &SkillSet, name: &str) -> anyhow::Result<(String, String)> {
    match set.resolve(name) {
        Resolution::Found(skill) | Resolution::Gated(skill, _) => {
            Ok((skill.qualified_id(), skill.name.clone()))
        }
        Resolution::Ambiguous(list) => {
            let ids: Vec<String> = list.iter().map(|s| s.qualified_id()).collect();
            Err(exit::failed(format!(
                "'{name}' is ambiguous: it names {} skills ({}); name one by its qualified id",
                ids.len(),
                ids.join(", ")
            )))
        }
        Resolution::NotFound => Err(exit::failed(format!(
            "no skill named '{name}'; {}",
            crate::suggest::skill_hint(set, name)
        ))),
    }
}

fn archive_one(ctx: &Context, name: &str) -> anyhow::Result<u8> {
    let Some((qualified_id, _)) = live_or_missing(ctx, name)? else {
        // Archiving twice is not an error: the skill is already where the
        // user wants it.
        let archived = archive::archived_matching(&ctx.home, name);
        if archived.is_empty() {
            return Err(not_found(ctx, name));
        }
        for a in &archived {
            println!(
                "'{}' ({}) is already archived, at {}; `knack skills restore {}` brings it back.",
                a.record.name,
                a.record.qualified_id,
                a.path.display(),
                a.record.qualified_id
            );
        }
        return Ok(exit::OK);
    };
    let manage = ManageContext::new(&ctx.home, &ctx.config, &ctx.cwd);
    let archived = archive::archive(&manage, &qualified_id, Actor::User)
        .map_err(|refused| exit::failed(refused.to_string()))?;
    println!(
        "Archived '{}' ({}) to {}.",
        archived.record.name,
        archived.record.qualified_id,
        archived.path.display()
    );
    println!(
        "{}",
        dim(&format!(
            "It is gone from every list, the prompt and slash commands; `knack skills restore {}` brings it back.",
            archived.record.name
        ))
    );
    Ok(exit::OK)
}

fn restore_one(ctx: &Context, name: &str) -> anyhow::Result<u8> {
    // Restoring twice is not an error: with nothing of that name archived,
    // a live skill that answers to it is already in place.
    if archive::archived_matching(&ctx.home, name).is_empty()
        && let Some(dir) = ctx.with_skills(|set| match set.resolve(name) {
            Resolution::Found(skill) | Resolution::Gated(skill, _) => Some((
                skill.qualified_id(),
                skill.name.clone(),
                skill.skill_dir.clone(),
            )),
            _ => None,
        })
    {
        let (qualified_id, shown, path) = dir;
        println!(
            "'{shown}' ({qualified_id}) is not archived; it is in place at {}.",
            path.display()
        );
        return Ok(exit::OK);
    }
    let manage = ManageContext::new(&ctx.home, &ctx.config, &ctx.cwd);
    let restored = archive::restore(&manage, name, Actor::User)
        .map_err(|refused| exit::failed(refused.to_string()))?;
    println!(
        "Restored '{}' ({}) to {}.",
        restored.record.name,
        restored.record.qualified_id,
        restored.skill_dir.display()
    );
    Ok(exit::OK)
}

/// Pins or unpins a live skill, an archived one (the pin waits for its
/// restore), or, to unpin, any pinned qualified id whose skill is gone.
fn set_pin(ctx: &Context, name: &str, pin: bool) -> anyhow::Result<u8> {
    let (qualified_id, shown) = match live_or_missing(ctx, name)? {
        Some(found) => found,
        None => {
            let matches = archive::archived_matching(&ctx.home, name);
            let ids: HashSet<&str> = matches
                .iter()
                .map(|a| a.record.qualified_id.as_str())
                .collect();
            match (ids.len(), matches.first()) {
                (1, Some(a)) => (a.record.qualified_id.clone(), a.record.name.clone()),
                _ if !pin && pins::is_pinned(&ctx.home, name) => (name.to_owned(), name.to_owned()),
                (0, _) => return Err(not_found(ctx, name)),
                (n, _) => {
                    let mut ids: Vec<&str> = ids.into_iter().collect();
                    ids.sort_unstable();
                    return Err(exit::failed(format!(
                        "'{name}' is ambiguous: it names {n} archived skills ({}); name one by its qualified id",
                        ids.join(", ")
                    )));
                }
            }
        }
    };
    let changed = pins::set_pinned(&ctx.home, &qualified_id, pin)
        .map_err(|e| exit::failed(format!("the pin was not changed: {e}")))?;
    let message = match (pin, changed) {
        (true, true) => format!(
            "Pinned '{shown}' ({qualified_id}): the background review will not change it and the agent will not delete it; `knack skills unpin {shown}` lifts that."
        ),
        (true, false) => format!("'{shown}' ({qualified_id}) was already pinned."),
        (false, true) => format!("Unpinned '{shown}' ({qualified_id})."),
        (false, false) => format!("'{shown}' ({qualified_id}) was not pinned."),
    };
    println!("{message}");
    Ok(exit::OK)
}
