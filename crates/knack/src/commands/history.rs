//! `knack skills history|rollback`: the versions skill_manage kept of a skill,
//! with the SKILL.md diff of each write, and restoring one of them.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use skill_core::Resolution;
use skill_core::history;
use skill_core::manage::provenance;

use crate::cli::{HistoryArgs, RollbackArgs, SkillsCommand};
use crate::context::Context;
use crate::exit;
use crate::output::{bold, dim, print_json};
use crate::terminal_text::escape;

pub fn handles(cmd: &SkillsCommand) -> bool {
    matches!(cmd, SkillsCommand::History(_) | SkillsCommand::Rollback(_))
}

pub fn run(cmd: SkillsCommand) -> anyhow::Result<u8> {
    let ctx = Context::load()?;
    match cmd {
        SkillsCommand::History(args) => show(&ctx, args),
        SkillsCommand::Rollback(args) => rollback(&ctx, args),
        _ => Err(exit::usage("not a history command")),
    }
}

/// A live skill is named by its qualified id (so two skills with one name
/// never mix); a deleted one only by what its history recorded. The live
/// skill's folder comes along to explain a missing history.
fn history_key(ctx: &Context, name: &str) -> anyhow::Result<(String, Option<PathBuf>)> {
    let set = ctx.discover();
    match set.resolve(name) {
        Resolution::Found(skill) | Resolution::Gated(skill, _) => {
            Ok((skill.qualified_id(), Some(skill.skill_dir.clone())))
        }
        Resolution::Ambiguous(list) => {
            let ids: Vec<String> = list.iter().map(|s| s.qualified_id()).collect();
            Err(exit::failed(format!(
                "'{name}' is ambiguous ({}); pass a qualified id",
                ids.join(", ")
            )))
        }
        Resolution::NotFound => Ok((name.to_owned(), None)),
    }
}

/// History holds the writes made through skill_manage. A live skill with none
/// was not "never written": it came from the hub, the bundle or the user's own
/// editor, so say which, and what starts its history.
fn history_error(
    ctx: &Context,
    name: &str,
    key: &str,
    skill_dir: Option<&Path>,
    err: skill_core::Error,
) -> anyhow::Error {
    let recorded = history::skill_history_dir(&ctx.home, key).is_dir();
    let text = err.to_string();
    // No live skill and no history answer to the name: most likely a typo.
    if skill_dir.is_none() && text.starts_with("no history for") {
        return exit::failed(format!(
            "no history for '{name}': no skill has that name, now or before; {}",
            crate::suggest::skill_hint(&ctx.discover(), name)
        ));
    }
    let Some(dir) = skill_dir.filter(|_| !recorded) else {
        return exit::failed(text);
    };
    let origin = match provenance(dir).created_by.as_str() {
        "hub" => format!(
            "it was installed from the hub (`knack skills audit {name}` shows its source and scan)"
        ),
        "bundled" => format!(
            "it was seeded from knack's bundled skills (`knack skills diff {name}` shows your changes)"
        ),
        _ => "it was written outside knack's skill tools".to_owned(),
    };
    exit::failed(format!(
        "'{name}' has no recorded versions yet: {origin}. knack keeps a version for every \
change made through its skill tools (as the agent makes them); the first one starts its history."
    ))
}

fn show(ctx: &Context, args: HistoryArgs) -> anyhow::Result<u8> {
    let (key, live) = history_key(ctx, &args.name)?;
    let versions = history::list_with_diffs(&ctx.home, &key)
        .map_err(|e| history_error(ctx, &args.name, &key, live.as_deref(), e))?;
    if args.json {
        let items: Vec<Value> = versions
            .iter()
            .map(|v| {
                json!({
                    "version": v.record.version,
                    "time": v.record.time,
                    "action": v.record.action,
                    "actor": v.record.actor,
                    "hash": v.record.hash,
                    "diff": v.diff,
                })
            })
            .collect();
        print_json(&Value::Array(items));
        return Ok(exit::OK);
    }
    for v in &versions {
        let r = &v.record;
        // File names and diffs are a skill's content, which a model may have written.
        let file = r
            .file
            .as_deref()
            .map(|f| format!(" {}", escape(f)))
            .unwrap_or_default();
        println!(
            "{}  {}  {}{file} by {}  {}",
            bold(&format!("#{}", r.version)),
            r.time,
            r.action,
            r.actor.as_str(),
            dim(r.hash.as_deref().unwrap_or("(removed)"))
        );
        if !v.diff.is_empty() {
            for line in v.diff.lines() {
                println!("    {}", escape(line));
            }
        }
    }
    if let Some(first) = versions.first() {
        println!(
            "{}",
            dim(&format!(
                "{} version(s) of {}. Version N holds the skill as it was before write N; `knack skills rollback {} --to N` restores it.",
                versions.len(),
                first.record.qualified_id,
                args.name
            ))
        );
    }
    Ok(exit::OK)
}

fn rollback(ctx: &Context, args: RollbackArgs) -> anyhow::Result<u8> {
    let (key, live) = history_key(ctx, &args.name)?;
    // Undoing a hub install would remove the folder behind the hub's back and
    // leave its lock entry pointing at nothing: that is `uninstall`'s job.
    if let Ok(versions) = history::list(&ctx.home, &key) {
        let target = args.to.unwrap_or(versions.len());
        if versions
            .iter()
            .any(|v| v.version == target && v.action == "install" && !v.existed_before)
        {
            return Err(exit::failed(format!(
                "version #{target} of '{}' is its installation from the hub; remove it with `knack skills uninstall {}` instead",
                args.name, args.name
            )));
        }
    }
    let outcome = history::rollback(&ctx.home, &key, args.to)
        .map_err(|e| history_error(ctx, &args.name, &key, live.as_deref(), e))?;
    println!(
        "Restored {} to how it was before write #{} (recorded as version #{}).",
        outcome.skill_dir.display(),
        outcome.restored,
        outcome.version
    );
    Ok(exit::OK)
}
