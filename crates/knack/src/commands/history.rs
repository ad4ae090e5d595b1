//! `knack skills history|rollback`: the versions skill_manage kept of a skill,
//! with the SKILL.md diff of each write, and restoring one of them.

use serde_json::{Value, json};
use skill_core::Resolution;
use skill_core::history;

use crate::cli::{HistoryArgs, RollbackArgs, SkillsCommand};
use crate::context::Context;
use crate::exit;
use crate::output::{bold, dim, print_json};

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
/// never mix); a deleted one only by what its history recorded.
fn history_key(ctx: &Context, name: &str) -> anyhow::Result<String> {
    let set = ctx.discover();
    match set.resolve(name) {
        Resolution::Found(skill) | Resolution::Gated(skill, _) => Ok(skill.qualified_id()),
        Resolution::Ambiguous(list) => {
            let ids: Vec<String> = list.iter().map(|s| s.qualified_id()).collect();
            Err(exit::failed(format!(
                "'{name}' is ambiguous ({}); pass a qualified id",
                ids.join(", ")
            )))
        }
        Resolution::NotFound => Ok(name.to_owned()),
    }
}

fn show(ctx: &Context, args: HistoryArgs) -> anyhow::Result<u8> {
    let key = history_key(ctx, &args.name)?;
    let versions =
        history::list_with_diffs(&ctx.home, &key).map_err(|e| exit::failed(e.to_string()))?;
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
        let file = r
            .file
            .as_deref()
            .map(|f| format!(" {f}"))
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
                println!("    {line}");
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
    let key = history_key(ctx, &args.name)?;
    let outcome =
        history::rollback(&ctx.home, &key, args.to).map_err(|e| exit::failed(e.to_string()))?;
    println!(
        "Restored {} to how it was before write #{} (recorded as version #{}).",
        outcome.skill_dir.display(),
        outcome.restored,
        outcome.version
    );
    Ok(exit::OK)
}
