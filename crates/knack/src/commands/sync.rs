//! `knack skills sync | list-modified | diff | reset | opt-out | opt-in`: the
//! user's view of bundled-skill seeding (the start-up seeding is in context.rs).

use serde_json::{Value, json};
use skill_sync::{ResetOutcome, SyncReport};

use crate::cli::{DiffArgs, ResetArgs, SkillsCommand};
use crate::context::Context;
use crate::exit;
use crate::output::{bold, dim, print_json, print_table};

const OPT_OUT_KEY: &str = "skills.bundled_opt_out";

/// Whether `cmd` belongs to this module (these commands must not seed first).
pub fn handles(cmd: &SkillsCommand) -> bool {
    matches!(
        cmd,
        SkillsCommand::Sync(_)
            | SkillsCommand::ListModified(_)
            | SkillsCommand::Diff(DiffArgs { bundled: true, .. })
            | SkillsCommand::Reset(_)
            | SkillsCommand::OptOut
            | SkillsCommand::OptIn
    )
}

pub fn run(cmd: SkillsCommand) -> anyhow::Result<u8> {
    let ctx = Context::load_unseeded()?;
    match cmd {
        SkillsCommand::Sync(flag) => sync(&ctx, flag.json),
        SkillsCommand::ListModified(flag) => list_modified(&ctx, flag.json),
        SkillsCommand::Diff(args) => diff(&ctx, args),
        SkillsCommand::Reset(args) => reset(&ctx, args),
        SkillsCommand::OptOut => set_opt_out(&ctx, true),
        SkillsCommand::OptIn => set_opt_out(&ctx, false),
        other => Err(anyhow::anyhow!(
            "internal: {other:?} is not a bundled-skills command"
        )),
    }
}

fn bundle() -> anyhow::Result<std::borrow::Cow<'static, skill_bundle::BundleTree>> {
    skill_bundle::bundled_source().map_err(|e| exit::failed(e.to_string()))
}

fn sync_error(e: skill_sync::Error) -> anyhow::Error {
    exit::failed(e.to_string())
}

/// `sync_error`, with the closest bundled skill for a name the bundle lacks.
fn lookup_error(bundle: &skill_bundle::BundleTree, e: skill_sync::Error) -> anyhow::Error {
    match &e {
        skill_sync::Error::NotBundled(name) => {
            let hint = crate::suggest::did_you_mean(
                name,
                bundle.skills().iter().map(|s| s.name()),
                "only skills seeded from knack's bundle have a bundled version to compare with",
            );
            exit::failed(format!("{e}; {hint}"))
        }
        _ => sync_error(e),
    }
}

fn sync(ctx: &Context, json: bool) -> anyhow::Result<u8> {
    if ctx.config.skills.bundled_opt_out {
        if json {
            print_json(&json!({"success": true, "opted_out": true}));
        } else {
            println!(
                "Bundled skills are opted out; nothing was seeded. `knack skills opt-in` turns seeding back on."
            );
        }
        return Ok(exit::OK);
    }
    let bundle = bundle()?;
    let report = skill_sync::sync(&ctx.home.skills_dir(), &bundle);
    let ok = report.errors.is_empty();
    if json {
        let mut value = serde_json::to_value(&report)?;
        if let Value::Object(map) = &mut value {
            map.insert("success".into(), json!(ok));
            map.insert("opted_out".into(), json!(false));
            map.insert("total".into(), json!(bundle.skills().len()));
        }
        print_json(&value);
    } else {
        print_sync_report(&report, bundle.skills().len());
        for problem in report.problems() {
            eprintln!("knack: warning: {problem}");
        }
    }
    Ok(if ok { exit::OK } else { exit::FAILED })
}

fn print_sync_report(report: &SyncReport, total: usize) {
    println!("{} ({total} in this release)", bold("Bundled skills"));
    if report.busy {
        println!("Another knack process is syncing right now; nothing was done.");
        return;
    }
    let lines: [(&str, &Vec<String>, &str); 8] = [
        ("+ added", &report.added, ""),
        ("↑ updated", &report.updated, ""),
        (
            "~ kept customized",
            &report.customized,
            "your edits win; see `knack skills diff NAME --bundled`",
        ),
        (
            "- skipped deleted",
            &report.deleted,
            "you removed them; they are not re-added",
        ),
        (
            "! conflicts",
            &report.conflicts,
            "a folder knack did not seed is in the way; kept",
        ),
        (
            "= recorded",
            &report.adopted,
            "existing copies identical to the bundle",
        ),
        (
            "· cleaned",
            &report.cleaned,
            "no longer bundled, no copy left",
        ),
        (
            "· descriptions",
            &report.descriptions,
            "category DESCRIPTION.md seeded",
        ),
    ];
    for (label, ids, note) in lines {
        if ids.is_empty() {
            continue;
        }
        let note = if note.is_empty() {
            String::new()
        } else {
            format!("  {}", dim(&format!("({note})")))
        };
        println!("  {label} ({}): {}{note}", ids.len(), ids.join(", "));
    }
    println!("  unchanged: {}", report.unchanged.len());
    if report.manifest == skill_sync::ManifestState::Missing && !report.adopted.is_empty() {
        println!(
            "  {}",
            dim("(the manifest was missing and has been rebuilt)")
        );
    }
}

fn list_modified(ctx: &Context, json: bool) -> anyhow::Result<u8> {
    let bundle = bundle()?;
    let modified =
        skill_sync::list_modified(&ctx.home.skills_dir(), &bundle).map_err(sync_error)?;
    if json {
        print_json(&json!({
            "success": true,
            "count": modified.len(),
            "modified": modified,
        }));
        return Ok(exit::OK);
    }
    if modified.is_empty() {
        println!("No bundled skill has local changes.");
        return Ok(exit::OK);
    }
    let rows: Vec<Vec<String>> = modified
        .iter()
        .map(|m| {
            vec![
                m.id.clone(),
                if m.bundled_changed { "held back" } else { "-" }.to_owned(),
                m.path.display().to_string(),
            ]
        })
        .collect();
    print_table(&["ID", "UPDATE", "PATH"], &rows);
    println!(
        "{}",
        dim(
            "`knack skills diff ID --bundled` shows the changes; `knack skills reset ID --restore` takes the bundled version"
        )
    );
    Ok(exit::OK)
}

fn diff(ctx: &Context, args: DiffArgs) -> anyhow::Result<u8> {
    let bundle = bundle()?;
    let diff = skill_sync::diff(&ctx.home.skills_dir(), &bundle, &args.name)
        .map_err(|e| lookup_error(&bundle, e))?;
    if args.json {
        let mut value = serde_json::to_value(&diff)?;
        if let Value::Object(map) = &mut value {
            map.insert("success".into(), json!(true));
            map.insert("modified".into(), json!(!diff.files.is_empty()));
        }
        print_json(&value);
        return Ok(exit::OK);
    }
    if diff.files.is_empty() {
        println!("Your copy of {} matches the bundled version.", diff.id);
        return Ok(exit::OK);
    }
    for file in &diff.files {
        match &file.diff {
            Some(text) => print!("{text}"),
            None => println!("Binary file {} differs", file.path),
        }
    }
    Ok(exit::OK)
}

fn reset(ctx: &Context, args: ResetArgs) -> anyhow::Result<u8> {
    let bundle = bundle()?;
    let outcome = skill_sync::reset(&ctx.home.skills_dir(), &bundle, &args.name, args.restore)
        .map_err(|e| lookup_error(&bundle, e))?;
    if args.json {
        let mut value = serde_json::to_value(&outcome)?;
        if let Value::Object(map) = &mut value {
            map.insert("success".into(), json!(true));
        }
        print_json(&value);
        return Ok(exit::OK);
    }
    match outcome {
        ResetOutcome::Rebaselined { id } => {
            println!("{id} matches the bundled version; it stays tracked and will receive updates.")
        }
        ResetOutcome::Untracked { id } => println!(
            "{id} is no longer tracked: your copy stays as it is and bundled updates will not touch it. \
             `knack skills reset {id} --restore` takes the bundled version instead."
        ),
        ResetOutcome::Forgotten { id } => println!(
            "{id} was deleted; it is no longer recorded, so the next start (or `knack skills sync`) seeds it again."
        ),
        ResetOutcome::Restored { id, backup } => {
            println!("{id} now holds the bundled version and will receive updates.");
            if let Some(backup) = backup {
                println!("Your previous copy was moved to {}", backup.display());
            }
        }
    }
    Ok(exit::OK)
}

fn set_opt_out(ctx: &Context, opt_out: bool) -> anyhow::Result<u8> {
    let value = if opt_out { "true" } else { "false" };
    super::config::set_key(&ctx.home, OPT_OUT_KEY, value)?;
    if opt_out {
        println!(
            "Bundled skills will no longer be seeded or updated. Copies already in {} stay; delete them by hand if you want them gone.",
            ctx.home.skills_dir().display()
        );
    } else {
        println!(
            "Bundled skills will be seeded again from the next start (or run `knack skills sync` now)."
        );
    }
    Ok(exit::OK)
}
