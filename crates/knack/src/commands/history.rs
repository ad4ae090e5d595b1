//! `knack skills history|rollback|diff|log`: the versions skill_manage kept of
//! a skill, with the SKILL.md diff of each write, restoring one of them, one
//! write's diff, and every write across the library.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use skill_core::Resolution;
use skill_core::history;
use skill_core::manage::provenance;

use crate::cli::{DiffArgs, HistoryArgs, LogArgs, RollbackArgs, SkillsCommand};
use crate::context::Context;
use crate::exit;
use crate::output::{bold, dim, print_json};
use crate::terminal_text::escape;

pub fn handles(cmd: &SkillsCommand) -> bool {
    matches!(
        cmd,
        SkillsCommand::History(_)
            | SkillsCommand::Rollback(_)
            | SkillsCommand::Log(_)
            | SkillsCommand::Diff(DiffArgs { bundled: false, .. })
    )
}

pub fn run(cmd: SkillsCommand) -> anyhow::Result<u8> {
    let ctx = Context::load()?;
    match cmd {
        SkillsCommand::History(args) => show(&ctx, args),
        SkillsCommand::Rollback(args) => rollback(&ctx, args),
        SkillsCommand::Diff(args) => diff(&ctx, args),
        SkillsCommand::Log(args) => log(&ctx, args),
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
            "it was seeded from knack's bundled skills (`knack skills diff {name} --bundled` shows your changes)"
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

/// `knack skills diff NAME [--version N]`: what one write changed, the
/// latest by default.
fn diff(ctx: &Context, args: DiffArgs) -> anyhow::Result<u8> {
    let (key, live) = history_key(ctx, &args.name)?;
    let versions = history::list_with_diffs(&ctx.home, &key)
        .map_err(|e| history_error(ctx, &args.name, &key, live.as_deref(), e))?;
    let chosen = match args.version {
        None => versions.last(),
        Some(n) => versions.iter().find(|v| v.record.version == n),
    };
    let Some(v) = chosen else {
        let known: Vec<String> = versions
            .iter()
            .map(|v| v.record.version.to_string())
            .collect();
        return Err(exit::failed(format!(
            "'{}' has no version {}; its versions are {} (see `knack skills history {}`)",
            args.name,
            args.version.unwrap_or_default(),
            known.join(", "),
            args.name
        )));
    };
    let r = &v.record;
    let (added, removed) = history::diff_stat(&v.diff);
    if args.json {
        print_json(&json!({
            "skill": r.name,
            "qualified_id": r.qualified_id,
            "version": r.version,
            "time": r.time,
            "action": r.action,
            "actor": r.actor,
            "added": added,
            "removed": removed,
            "diff": v.diff,
        }));
        return Ok(exit::OK);
    }
    println!(
        "{}  {}  {} by {}  {}",
        bold(&format!("#{}", r.version)),
        r.time,
        r.action,
        r.actor.as_str(),
        stat(added, removed)
    );
    if v.diff.is_empty() {
        println!("{}", dim("(this write changed no text)"));
    }
    // A diff is a skill's content, which a model may have written.
    for line in v.diff.lines() {
        println!("{}", escape(line));
    }
    Ok(exit::OK)
}

fn stat(added: usize, removed: usize) -> String {
    format!("+{added} -{removed}")
}

/// The oldest time `--since` keeps, or a usage error naming the accepted forms.
fn since_cutoff(when: &str, now: std::time::SystemTime) -> anyhow::Result<std::time::SystemTime> {
    let bad = || {
        exit::usage(format!(
            "--since '{when}' is not a duration or a date; use a number with m, h, d or w \
(30m, 2h, 1d, 7d, 2w) or a UTC date YYYY-MM-DD (2026-12-01)"
        ))
    };
    let when = when.trim();
    let midnight = format!("{when}T00:00:00Z");
    if let Some(at) = skill_core::clock::parse_rfc3339(&midnight) {
        // The parser takes day numbers past the month's end; a date that
        // does not read back the same (2026-02-30) is not a date.
        return if skill_core::clock::rfc3339(at) == midnight {
            Ok(at)
        } else {
            Err(bad())
        };
    }
    let Some((last, _)) = when.char_indices().last() else {
        return Err(bad());
    };
    let (number, unit) = when.split_at(last);
    let number: u64 = number.parse().map_err(|_| bad())?;
    let seconds = match unit {
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        _ => return Err(bad()),
    };
    let span = std::time::Duration::from_secs(number.checked_mul(seconds).ok_or_else(bad)?);
    Ok(now.checked_sub(span).unwrap_or(std::time::UNIX_EPOCH))
}

/// `knack skills log [--since WHEN]`: every write across the library.
fn log(ctx: &Context, args: LogArgs) -> anyhow::Result<u8> {
    let cutoff = args
        .since
        .as_deref()
        .map(|w| since_cutoff(w, std::time::SystemTime::now()))
        .transpose()?;
    let entries: Vec<history::VersionDiff> = history::log(&ctx.home)
        .map_err(|e| exit::failed(e.to_string()))?
        .into_iter()
        .filter(
            |v| match (cutoff, skill_core::clock::parse_rfc3339(&v.record.time)) {
                (Some(cut), Some(at)) => at >= cut,
                _ => true,
            },
        )
        .collect();
    if args.json {
        let items: Vec<Value> = entries
            .iter()
            .map(|v| {
                let (added, removed) = history::diff_stat(&v.diff);
                json!({
                    "time": v.record.time,
                    "skill": v.record.name,
                    "qualified_id": v.record.qualified_id,
                    "action": v.record.action,
                    "actor": v.record.actor,
                    "version": v.record.version,
                    "added": added,
                    "removed": removed,
                })
            })
            .collect();
        print_json(&Value::Array(items));
        return Ok(exit::OK);
    }
    if entries.is_empty() {
        println!(
            "{}",
            dim(
                "No skill writes recorded in this window (knack records every write made through its skill tools)."
            )
        );
        return Ok(exit::OK);
    }
    for v in &entries {
        let r = &v.record;
        let (added, removed) = history::diff_stat(&v.diff);
        // Names and file names come from skills a model may have written.
        let file = r
            .file
            .as_deref()
            .map(|f| format!(" {}", escape(f)))
            .unwrap_or_default();
        println!(
            "{}  {}  {}{file}  by {}  #{}  {}",
            r.time,
            bold(&escape(&r.qualified_id)),
            r.action,
            r.actor.as_str(),
            r.version,
            stat(added, removed)
        );
    }
    println!(
        "{}",
        dim(
            "`knack skills diff NAME --version N` shows one write; `knack skills rollback NAME --to N` undoes it."
        )
    );
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn since_takes_durations_and_dates_and_names_the_forms_otherwise() {
        let now = UNIX_EPOCH + Duration::from_secs(10 * 86_400);
        assert_eq!(
            since_cutoff("2h", now).unwrap(),
            now - Duration::from_secs(7_200)
        );
        assert_eq!(
            since_cutoff("7d", now).unwrap(),
            now - Duration::from_secs(7 * 86_400)
        );
        assert!(since_cutoff("30d", now).unwrap() < UNIX_EPOCH);
        assert_eq!(
            since_cutoff("1970-01-02", now).unwrap(),
            UNIX_EPOCH + Duration::from_secs(86_400)
        );
        for bad in [
            "",
            "h",
            "2x",
            "yesterday",
            "2026-13-01",
            "2026-02-30",
            "-1d",
            "2é",
        ] {
            let err = since_cutoff(bad, now).unwrap_err().to_string();
            assert!(
                err.contains("2026-12-01") && err.contains("7d"),
                "{bad}: {err}"
            );
        }
    }
}
