//! `knack skills list|view|doctor|validate`: the discovery engine's answers,
//! as tables for people and as CONTRACT.md JSON for scripts.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use skill_core::disclosure::ViewContext;
use skill_core::validate::validate_skill_dir;
use skill_core::{DoctorEntry, EntryStatus, Gate, PreprocessOptions, Resolution, SkillSet};

use crate::cli::{HubSearchArgs, ListArgs, SkillsCommand, ValidateArgs, ViewArgs};
use crate::context::Context;
use crate::exit;
use crate::output::{bold, dim, ellipsize, print_json, print_table};

pub fn run(cmd: SkillsCommand) -> anyhow::Result<u8> {
    let ctx = Context::load()?;
    match cmd {
        SkillsCommand::List(args) => list(&ctx, args),
        SkillsCommand::View(args) => view(&ctx, args),
        SkillsCommand::Doctor(flag) => doctor(&ctx, flag.json),
        SkillsCommand::Validate(args) => validate(&ctx, args),
        cmd @ (SkillsCommand::Sync(_)
        | SkillsCommand::ListModified(_)
        | SkillsCommand::Reset(_)
        | SkillsCommand::OptOut
        | SkillsCommand::OptIn) => super::sync::run(cmd),
        SkillsCommand::Diff(args) if args.bundled => super::sync::run(SkillsCommand::Diff(args)),
        cmd @ (SkillsCommand::History(_)
        | SkillsCommand::Rollback(_)
        | SkillsCommand::Diff(_)
        | SkillsCommand::Log(_)) => super::history::run(cmd),
        cmd @ (SkillsCommand::Stats(_)
        | SkillsCommand::Archive(_)
        | SkillsCommand::Restore(_)
        | SkillsCommand::Pin(_)
        | SkillsCommand::Unpin(_)) => super::library::run(&ctx, cmd),
        SkillsCommand::Inbox(args) => super::inbox::run(&ctx, args),
        SkillsCommand::Search(args) if args.local => search_local(&ctx, &args),
        SkillsCommand::Trust(args) => super::trust::trust(&ctx, args),
        SkillsCommand::Untrust(args) => super::trust::untrust(&ctx, args),
        cmd => super::hub::run(cmd),
    }
}

/// `knack skills search QUERY --local`: the model's `skills_search`, from the CLI.
fn search_local(ctx: &Context, args: &HubSearchArgs) -> anyhow::Result<u8> {
    ctx.with_skills(|set| {
        let search = skill_core::search::SkillSearch::from_skill_set(set);
        let answer = skill_core::search::skills_search_json(&search, set, &args.query, args.limit);
        if args.json {
            print_json(&answer);
        } else if let Some(error) = answer["error"].as_str() {
            eprintln!("knack: {error}");
        } else {
            let rows: Vec<Vec<String>> = answer["results"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| {
                    vec![
                        r["name"].as_str().unwrap_or_default().to_owned(),
                        format!("{:.2}", r["score"].as_f64().unwrap_or(0.0)),
                        r["qualified_id"].as_str().unwrap_or_default().to_owned(),
                        ellipsize(r["description"].as_str().unwrap_or_default(), 60),
                    ]
                })
                .collect();
            if rows.is_empty() {
                println!("No installed skill matches '{}'.", args.query.trim());
            } else {
                print_table(&["NAME", "SCORE", "ID", "DESCRIPTION"], &rows);
            }
        }
        Ok(if answer["success"] == true {
            exit::OK
        } else {
            exit::FAILED
        })
    })
}

fn list(ctx: &Context, args: ListArgs) -> anyhow::Result<u8> {
    ctx.with_skills(|set| list_in(set, args))
}

fn list_in(set: &SkillSet, args: ListArgs) -> anyhow::Result<u8> {
    let listing = skill_core::skill_listing(set, args.category.as_deref());
    if args.json {
        print_json(&listing);
        return Ok(exit::OK);
    }
    if listing.skills.is_empty() {
        // The listing's own message is written for the model; this one for a person.
        match &args.category {
            Some(category) => println!("No skills in category '{category}'."),
            None => println!(
                "No skills yet. Install one with `knack skills install ID` (find one with \
`knack skills search`), or write a folder with a SKILL.md under $KNACK_HOME/skills/."
            ),
        }
        return Ok(exit::OK);
    }
    let rows: Vec<Vec<String>> = listing
        .skills
        .iter()
        .map(|s| {
            let marked = if set.ambiguous_names.contains(s.name) {
                format!("{} ⚠", s.name)
            } else {
                s.name.to_owned()
            };
            vec![
                marked,
                s.category.unwrap_or("-").to_owned(),
                s.scope.label().to_owned(),
                ellipsize(s.description, 60),
            ]
        })
        .collect();
    // Folder names and categories come from the disk as they are; nothing
    // read from skill files reaches the terminal unescaped.
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|row| {
            row.into_iter()
                .map(|cell| crate::terminal_text::escape(&cell).into_owned())
                .collect()
        })
        .collect();
    print_table(&["NAME", "CATEGORY", "SCOPE", "DESCRIPTION"], &rows);
    let mut footer = format!("{} skill(s)", listing.skills.len());
    if !set.ambiguous_names.is_empty() {
        footer.push_str("; ⚠ = name used by more than one skill, load it by its qualified id (see `knack skills doctor`)");
    }
    println!("{}", dim(&footer));
    for notice in &set.notices {
        eprintln!("note: {notice}");
    }
    Ok(exit::OK)
}

fn view(ctx: &Context, args: ViewArgs) -> anyhow::Result<u8> {
    ctx.with_skills(|set| view_in(ctx, set, args))
}

fn view_in(ctx: &Context, set: &SkillSet, args: ViewArgs) -> anyhow::Result<u8> {
    let env = ctx.home.env_file();
    let view_ctx = ViewContext {
        preprocess: PreprocessOptions::from_config(&ctx.home, &ctx.config),
        session_id: None,
        env: &env,
    };
    let mut result = skill_core::skill_view(set, &args.name, args.file.as_deref(), &view_ctx);
    let ok = result["success"].as_bool().unwrap_or(false);
    if args.json {
        print_json(&result);
        return Ok(if ok { exit::OK } else { exit::FAILED });
    }
    // A skill's text and fields are printed as they are, but a skill may be a model's or
    // a stranger's work: its control characters are shown, never obeyed.
    crate::terminal_text::escape_json(&mut result);
    if !ok {
        return Err(exit::failed(describe_failure(set, &args, &result)));
    }
    let content = result["content"].as_str().unwrap_or_default();
    print!("{}", crate::terminal_text::escape(content));
    if !result["content"]
        .as_str()
        .unwrap_or_default()
        .ends_with('\n')
    {
        println!();
    }
    if args.file.is_none() {
        if let Some(missing) = result["missing_required_environment_variables"].as_array()
            && !missing.is_empty()
        {
            eprintln!(
                "note: this skill needs {} (set in the environment or $KNACK_HOME/.env)",
                missing
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if let Some(files) = result["linked_files"].as_object()
            && !files.is_empty()
        {
            let all: Vec<&str> = files
                .values()
                .filter_map(Value::as_array)
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            eprintln!("files: {} (view one with --file PATH)", all.join(", "));
        }
        if let Some(short) = result["short_description"].as_str() {
            eprintln!("short description: {short}");
        }
        for (key, label) in [
            ("allowed_tools", "allowed tools (not enforced)"),
            ("requires_mcp", "expects MCP servers"),
            ("dependencies", "depends on"),
            ("missing_commands", "note: commands not found on PATH"),
        ] {
            if let Some(list) = result[key].as_array() {
                let items: Vec<&str> = list.iter().filter_map(Value::as_str).collect();
                eprintln!("{label}: {}", items.join(", "));
            }
        }
    }
    Ok(exit::OK)
}

/// What a person reads when `skills view` fails. The tool result's `hint`
/// speaks to the model (which tool to call next), so it is left out; the
/// name is resolved again to say what the person can do instead.
fn describe_failure(set: &SkillSet, args: &ViewArgs, result: &Value) -> String {
    let error = result["error"].as_str().unwrap_or("failed");
    let name = args.name.trim();
    match set.resolve(name) {
        Resolution::NotFound => {
            let bare = name.rsplit(['/', ':']).next().unwrap_or(name);
            let visible = set.visible();
            let shown: Vec<&str> = visible.iter().take(20).map(|s| s.name.as_str()).collect();
            let more = if visible.len() > shown.len() {
                " … (`knack skills list` shows them all)"
            } else {
                ""
            };
            let otherwise = if shown.is_empty() {
                "there are no skills yet".to_owned()
            } else {
                format!("available skills: {}{more}", shown.join(", "))
            };
            let hint = crate::suggest::did_you_mean(
                bare,
                visible.iter().map(|s| s.name.as_str()),
                &otherwise,
            );
            format!("{error}; {hint}")
        }
        Resolution::Ambiguous(skills) => {
            let ids: Vec<String> = skills.iter().map(|s| s.qualified_id()).collect();
            format!(
                "{error}\n  name one of them by its id, e.g. `knack skills view {}`: {}",
                ids[0],
                ids.join(", ")
            )
        }
        Resolution::Gated(_, Gate::Disabled) => format!(
            "{error}: config.yaml lists it in skills.disabled; remove it there \
(`knack config get skills.disabled` shows the list) to use it"
        ),
        Resolution::Found(_) | Resolution::Gated(_, _) => {
            let mut text = error.to_owned();
            let files: Vec<&str> = result["available_files"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if let (Some(typed), false) = (args.file.as_deref(), files.is_empty()) {
                let hint = crate::suggest::did_you_mean(typed, files.iter().copied(), "");
                if !hint.is_empty() {
                    text.push_str(&format!("; {hint}"));
                }
                text.push_str(&format!("\n  files of this skill: {}", files.join(", ")));
            }
            text
        }
    }
}

fn doctor(ctx: &Context, json: bool) -> anyhow::Result<u8> {
    ctx.with_skills(|set| doctor_in(ctx, set, json))
}

fn doctor_in(ctx: &Context, set: &SkillSet, json: bool) -> anyhow::Result<u8> {
    let mut entries = skill_core::doctor_report(set);
    entries.extend(quarantined_entries(&ctx.home.hub_dir().join("quarantine")));
    let mut notices = set.notices.clone();
    notices.extend(skill_core::dot_folder_notices(set));
    notices.extend(super::prompt::index_notice(ctx, set));
    notices.extend(prerequisite_notices(ctx, set));
    if json {
        let value = json!({
            "roots": set.roots.iter().map(|r| json!({
                "path": r.path, "scope": r.scope, "skills": r.skills, "truncated": r.truncated,
            })).collect::<Vec<_>>(),
            "skills": entries.iter().map(entry_json).collect::<Vec<_>>(),
            "notices": notices,
        });
        print_json(&value);
        return Ok(exit::OK);
    }
    println!("{}", bold("Roots (in precedence order)"));
    for r in &set.roots {
        let state = if !r.path.is_dir() {
            " (missing)".to_owned()
        } else if r.truncated {
            " (walk truncated)".to_owned()
        } else {
            String::new()
        };
        println!(
            "  {:<9} {} — {} skill(s){state}",
            r.scope.label(),
            r.path.display(),
            r.skills
        );
    }
    println!();
    println!("{}", bold("SKILL.md files"));
    if entries.is_empty() {
        println!("  none found");
    }
    for e in &entries {
        let status = format!("{:?}", e.status).to_lowercase();
        let who = e
            .qualified_id
            .clone()
            .unwrap_or_else(|| e.path.display().to_string());
        let mut line = format!("  {status:<11} {who}");
        if !e.reason.is_empty() {
            line.push_str(&format!(" — {}", e.reason));
        }
        println!("{line}");
        if e.qualified_id.is_some() && e.status != EntryStatus::Ok {
            println!("              {}", dim(&e.path.display().to_string()));
        }
        for w in &e.warnings {
            println!("              {} {w}", dim("warning:"));
        }
    }
    if !notices.is_empty() {
        println!();
        println!("{}", bold("Notices"));
        for n in &notices {
            println!("  {n}");
        }
    }
    let count = |s: EntryStatus| entries.iter().filter(|e| e.status == s).count();
    println!();
    println!(
        "{} ok, {} skipped, {} gated, {} ambiguous, {} truncated, {} quarantined",
        count(EntryStatus::Ok),
        count(EntryStatus::Skipped),
        count(EntryStatus::Gated),
        count(EntryStatus::Ambiguous),
        count(EntryStatus::Truncated),
        count(EntryStatus::Quarantined)
    );
    Ok(exit::OK)
}

/// Skills whose declared commands are not on PATH or whose MCP servers
/// are not configured, and the fields knack shows without acting on.
fn prerequisite_notices(ctx: &Context, set: &SkillSet) -> Vec<String> {
    let mut out = Vec::new();
    for skill in set.visible() {
        let fm = &skill.frontmatter;
        let id = skill.qualified_id();
        let missing = skill_core::setup::missing_commands(&fm.required_commands);
        if !missing.is_empty() {
            out.push(format!(
                "{id} needs commands not found on PATH: {}",
                missing.join(", ")
            ));
        }
        let unconfigured: Vec<&str> = fm
            .requires_mcp
            .iter()
            .map(String::as_str)
            .filter(|server| !ctx.config.mcp_servers.contains_key(*server))
            .collect();
        if !unconfigured.is_empty() {
            out.push(format!(
                "{id} expects MCP server(s) not in config.yaml mcp_servers: {}",
                unconfigured.join(", ")
            ));
        }
        if !fm.dependencies.is_empty() {
            out.push(format!(
                "{id} depends on: {} (knack installs nothing; check they are present)",
                fm.dependencies.join(", ")
            ));
        }
        if !fm.allowed_tools.is_empty() {
            out.push(format!(
                "{id} declares allowed-tools: {} (shown, not enforced; see docs/skill-format.md)",
                fm.allowed_tools.join(", ")
            ));
        }
    }
    out
}

fn entry_json(e: &DoctorEntry) -> Value {
    json!({
        "path": e.path,
        "status": e.status,
        "name": e.name,
        "qualified_id": e.qualified_id,
        "reason": e.reason,
        "warnings": e.warnings,
    })
}

/// Skills the hub holds back (an install that did not finish or was refused).
fn quarantined_entries(quarantine: &Path) -> Vec<DoctorEntry> {
    let mut found = Vec::new();
    find_skill_mds(quarantine, 0, &mut found);
    found.sort();
    found
        .into_iter()
        .map(|p| {
            DoctorEntry::new(
                &p,
                EntryStatus::Quarantined,
                "held in the hub's quarantine; it is not loaded until an install completes".into(),
            )
        })
        .collect()
}

fn find_skill_mds(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > 4 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name == "SKILL.md" {
            out.push(path);
        } else if path.is_dir() && !skill_core::is_skipped_dir(&name.to_string_lossy()) {
            // Skip what discovery skips: `.history/` holds old copies of every
            // written skill, which are neither skills nor the user's to fix.
            find_skill_mds(&path, depth + 1, out);
        }
    }
}

fn validate(ctx: &Context, args: ValidateArgs) -> anyhow::Result<u8> {
    let dirs: Vec<PathBuf> = if args.paths.is_empty() {
        ctx.discover()
            .skills
            .iter()
            .map(|s| s.skill_dir.clone())
            .collect()
    } else {
        let mut dirs = Vec::new();
        for path in &args.paths {
            if !path.exists() {
                return Err(exit::failed(format!("{} does not exist", path.display())));
            }
            if path.is_file() {
                dirs.push(path.parent().unwrap_or(Path::new(".")).to_path_buf());
            } else if path.join("SKILL.md").is_file() {
                dirs.push(path.clone());
            } else {
                let mut found = Vec::new();
                find_skill_mds(path, 0, &mut found);
                found.sort();
                if found.is_empty() {
                    return Err(exit::failed(format!(
                        "no SKILL.md found under {}",
                        path.display()
                    )));
                }
                dirs.extend(
                    found
                        .iter()
                        .filter_map(|p| p.parent().map(Path::to_path_buf)),
                );
            }
        }
        dirs
    };
    let results: Vec<(PathBuf, skill_core::validate::DirValidation)> = dirs
        .into_iter()
        .map(|d| {
            // One verdict: the same guard scan as install and skill_manage.
            let mut v = validate_skill_dir(&d);
            skill_core::validate::guard_check(&d, &mut v);
            (d, v)
        })
        .collect();
    let invalid = results.iter().filter(|(_, v)| !v.is_valid()).count();
    if args.json {
        print_json(&json!({
            "success": invalid == 0,
            "checked": results.len(),
            "invalid": invalid,
            "results": results.iter().map(|(d, v)| json!({
                "path": d.join("SKILL.md"),
                "valid": v.is_valid(),
                "errors": v.errors,
                "warnings": v.warnings,
            })).collect::<Vec<_>>(),
        }));
    } else {
        for (dir, v) in &results {
            let mark = if v.is_valid() { "ok     " } else { "INVALID" };
            println!("{mark} {}", dir.join("SKILL.md").display());
            for e in &v.errors {
                println!("        error: {e}");
            }
            for w in &v.warnings {
                println!("        {} {w}", dim("warning:"));
            }
        }
        println!("{} checked, {} invalid", results.len(), invalid);
    }
    Ok(if invalid == 0 { exit::OK } else { exit::FAILED })
}
