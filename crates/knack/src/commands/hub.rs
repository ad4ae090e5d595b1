//! `knack skills search|browse|inspect|install|uninstall|check|update|audit|tap`:
//! the skills hub, with human output, `--json` for scripts and confirmation prompts.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::Context as _;
use serde_json::{Value, json};
use skill_guard::{PolicyDecision, Verdict};
use skill_hub::{
    AuditResult, CheckStatus, Hub, InstallOptions, Member, SearchOutcome, SkillMeta, Staged,
    StagedMember, Taps, UpdateOutcome,
};

use crate::cli::{
    HubAuditArgs, HubBrowseArgs, HubCheckArgs, HubInspectArgs, HubInstallArgs, HubSearchArgs,
    HubUninstallArgs, HubUpdateArgs, PublishArgs, SkillsCommand, TapCommand,
};
use crate::context::Context;
use crate::exit;
use crate::output::{bold, dim, ellipsize, print_json, print_table};

/// `println!` for human output, wrapped to the terminal's width (or
/// `COLUMNS`) so no line of an install, check or publish runs off the screen.
macro_rules! outln {
    () => {
        println!()
    };
    ($($arg:tt)*) => {
        crate::output::print_fitted(&format!($($arg)*))
    };
}

pub fn handles(cmd: &SkillsCommand) -> bool {
    // `search --local` reads the installed skills, not the hub.
    if let SkillsCommand::Search(args) = cmd {
        return !args.local;
    }
    matches!(
        cmd,
        SkillsCommand::Browse(_)
            | SkillsCommand::Inspect(_)
            | SkillsCommand::Install(_)
            | SkillsCommand::Uninstall(_)
            | SkillsCommand::Check(_)
            | SkillsCommand::Update(_)
            | SkillsCommand::Audit(_)
            | SkillsCommand::Tap(_)
            | SkillsCommand::Publish(_)
    )
}

pub fn run(cmd: SkillsCommand) -> anyhow::Result<u8> {
    // Publishing reads a folder and writes a site: no home, config or network.
    if let SkillsCommand::Publish(args) = cmd {
        return publish(args);
    }
    let ctx = Context::load()?;
    let quiet = match &cmd {
        SkillsCommand::Search(a) => a.json,
        SkillsCommand::Browse(a) => a.json,
        SkillsCommand::Inspect(a) => a.json,
        SkillsCommand::Check(a) => a.json,
        SkillsCommand::Update(a) => a.json,
        SkillsCommand::Audit(a) => a.json,
        _ => false,
    };
    let hub = Hub::new(
        ctx.home.clone(),
        &ctx.config,
        ctx.discovery_options(),
        ctx.cwd.clone(),
        quiet,
    )
    .map_err(hub_error)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    match cmd {
        SkillsCommand::Search(a) => runtime.block_on(search(&hub, a)),
        SkillsCommand::Browse(a) => runtime.block_on(browse(&hub, a)),
        SkillsCommand::Inspect(a) => runtime.block_on(inspect(&hub, a)),
        SkillsCommand::Install(a) => runtime.block_on(install(&hub, a)),
        SkillsCommand::Uninstall(a) => uninstall(&hub, a),
        SkillsCommand::Check(a) => runtime.block_on(check(&hub, a)),
        SkillsCommand::Update(a) => runtime.block_on(update(&hub, a)),
        SkillsCommand::Audit(a) => audit(&hub, a),
        SkillsCommand::Tap(t) => tap(&hub, t),
        _ => Err(exit::usage("not a hub command")),
    }
}

fn hub_error(e: skill_hub::Error) -> anyhow::Error {
    exit::failed(e.to_string())
}

fn meta_json(m: &SkillMeta) -> Value {
    json!({
        "name": m.name,
        "description": m.description,
        "identifier": m.identifier,
        "source": m.source,
        "trust": m.trust,
    })
}

fn warn_problems(outcome: &SearchOutcome) {
    for p in &outcome.problems {
        eprintln!(
            "knack: warning: {} could not be searched: {}",
            p.source, p.error
        );
    }
}

fn print_results(results: &[SkillMeta]) {
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|m| {
            vec![
                m.name.clone(),
                m.trust.to_string(),
                m.identifier.clone(),
                ellipsize(&m.description, 60),
            ]
        })
        .collect();
    print_table(&["NAME", "TRUST", "IDENTIFIER", "DESCRIPTION"], &rows);
}

async fn search(hub: &Hub, args: HubSearchArgs) -> anyhow::Result<u8> {
    let outcome = hub
        .search(&args.query, args.source.as_deref())
        .await
        .map_err(hub_error)?;
    if args.json {
        print_json(&json!({
            "success": true,
            "results": outcome.results.iter().map(meta_json).collect::<Vec<_>>(),
            "warnings": outcome.problems,
        }));
        return Ok(exit::OK);
    }
    warn_problems(&outcome);
    if outcome.results.is_empty() {
        outln!("No skills match '{}'.", args.query);
    } else {
        print_results(&outcome.results);
        outln!();
        outln!(
            "{}",
            dim("Install one with `knack skills install IDENTIFIER`.")
        );
    }
    Ok(exit::OK)
}

async fn browse(hub: &Hub, args: HubBrowseArgs) -> anyhow::Result<u8> {
    if args.page == 0 {
        return Err(exit::usage("--page counts from 1"));
    }
    let outcome = hub
        .search("", args.source.as_deref())
        .await
        .map_err(hub_error)?;
    let (page, pages) = outcome.page(args.page);
    if args.json {
        print_json(&json!({
            "success": true,
            "page": args.page,
            "pages": pages,
            "total": outcome.results.len(),
            "results": page.iter().map(meta_json).collect::<Vec<_>>(),
            "warnings": outcome.problems,
        }));
        return Ok(exit::OK);
    }
    warn_problems(&outcome);
    if page.is_empty() {
        outln!(
            "No skills on page {} ({} skill(s) in {} page(s)).",
            args.page,
            outcome.results.len(),
            pages
        );
        return Ok(exit::OK);
    }
    print_results(page);
    outln!();
    outln!(
        "{}",
        dim(&format!(
            "Page {} of {} · {} skill(s){}",
            args.page,
            pages,
            outcome.results.len(),
            if args.page < pages {
                format!(" · next: --page {}", args.page + 1)
            } else {
                String::new()
            }
        ))
    );
    Ok(exit::OK)
}

/// The summary every staged skill gets before a decision.
fn print_staged(staged: &Staged) {
    outln!(
        "{} {}",
        bold(&staged.lock_name()),
        dim(&format!("— {}", staged.description))
    );
    outln!("  identifier  {}", staged.identifier);
    outln!("  source      {} (trust {})", staged.source, staged.trust);
    outln!(
        "  install to  skills/{} ({} file(s))",
        staged.install_path(),
        staged.files.len()
    );
    for w in &staged.warnings {
        outln!("  {} {w}", dim("warning:"));
    }
    outln!(
        "  scan        {}",
        staged
            .report
            .render()
            .trim_end()
            .replace('\n', "\n              ")
    );
}

fn staged_json(staged: &Staged) -> Value {
    let (allowed, reason) = match &staged.decision {
        PolicyDecision::Allow => (true, None),
        PolicyDecision::Block { reason } => (false, Some(reason.clone())),
    };
    json!({
        "success": true,
        "name": staged.name,
        "description": staged.description,
        "identifier": staged.identifier,
        "source": staged.source,
        "trust": staged.trust,
        "category": staged.category,
        "install_path": staged.install_path(),
        "verdict": staged.report.verdict,
        "findings": staged.report.findings,
        "content_hash": staged.content_hash,
        "files": staged.files,
        "allowed": allowed,
        "reason": reason,
        "warnings": staged.warnings,
        "skill_md_head": staged.head(),
    })
}

async fn inspect(hub: &Hub, args: HubInspectArgs) -> anyhow::Result<u8> {
    let staged = match hub.inspect(&args.id).await {
        Ok(staged) => staged,
        // Scripts read stdout: a refusal is a JSON answer too, not silence.
        Err(e) if args.json => {
            print_json(&json!({"success": false, "error": e.to_string()}));
            return Ok(exit::FAILED);
        }
        Err(e) => return Err(hub_error(e)),
    };
    if args.json {
        print_json(&staged_json(&staged));
        return Ok(exit::OK);
    }
    print_staged(&staged);
    match &staged.decision {
        PolicyDecision::Allow => outln!("  policy      an install would be allowed"),
        PolicyDecision::Block { reason } => {
            outln!("  policy      an install would be refused: {reason}")
        }
    }
    outln!();
    outln!("{}", bold("SKILL.md"));
    for line in staged.head().lines() {
        outln!("  {line}");
    }
    outln!();
    outln!("{}", dim("Nothing was installed."));
    Ok(exit::OK)
}

/// Asks on the terminal; refuses without one.
fn confirm(question: &str, yes: bool) -> Result<(), skill_hub::Error> {
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        return Err(skill_hub::Error::Declined(
            "confirmation needed but stdin is not a terminal; pass --yes to proceed".into(),
        ));
    }
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        Ok(())
    } else {
        Err(skill_hub::Error::Declined(
            "cancelled; nothing was changed".into(),
        ))
    }
}

async fn install(hub: &Hub, args: HubInstallArgs) -> anyhow::Result<u8> {
    let opts = InstallOptions {
        category: args.category.clone(),
        force: args.force,
        accept_dangerous: args.accept_dangerous,
    };
    if args.all {
        return install_all(hub, &args, &opts).await;
    }
    let staged = match hub.stage_for_install(&args.id, &opts).await {
        Ok(staged) => staged,
        Err(skill_hub::Error::Collection {
            identifier,
            members,
        }) => {
            print_members(&members);
            // A whole marketplace lists its plugins, not skills.
            let noun = if skill_hub::lists_plugins(&identifier) {
                "plugins"
            } else {
                "skills"
            };
            return Err(exit::failed(format!(
                "{identifier} holds {} {noun}; install one with the identifier listed above, or all of them with `knack skills install {} --all`",
                members.len(),
                args.id
            )));
        }
        Err(e) => return Err(hub_error(e)),
    };
    print_staged(&staged);
    if staged.dangerous_accepted {
        outln!(
            "  policy      a {} skill that scans dangerous is refused; --accept-dangerous lifts that for this install, and the audit log keeps the findings",
            staged.trust
        );
    }
    let question = if staged.dangerous_accepted {
        format!(
            "{} scans DANGEROUS (findings above). Install it into skills/{} anyway?",
            staged.name,
            staged.install_path()
        )
    } else {
        format!(
            "Install {} into skills/{}? A skill can change how the agent behaves.",
            staged.name,
            staged.install_path()
        )
    };
    // A dangerous skill from a source the user named can still be accepted
    // by hand; the refusal says how (a name found by search cannot).
    let acceptable = staged.report.verdict == Verdict::Dangerous
        && !args.accept_dangerous
        && hub.accepts_dangerous_from(&args.id).is_ok();
    let identifier = staged.identifier.clone();
    let installed = hub
        .install(staged, |_| confirm(&question, args.yes))
        .map_err(|e| match e {
            skill_hub::Error::Blocked { reason } if acceptable => exit::failed(format!(
                "install refused: {reason}; {}",
                accept_dangerous_hint(&identifier)
            )),
            other => install_error(other),
        })?;
    outln!(
        "Installed {} → {} ({}, {})",
        bold(&installed.name),
        installed.path.display(),
        installed.entry.trust_level,
        installed.entry.scan_verdict
    );
    Ok(exit::OK)
}

/// How to accept a skill refused for its dangerous scan, after reading its findings.
fn accept_dangerous_hint(identifier: &str) -> String {
    format!(
        "to accept it after reading its findings, install it on its own: `knack skills install {identifier} --accept-dangerous`"
    )
}

fn install_error(e: skill_hub::Error) -> anyhow::Error {
    match e {
        skill_hub::Error::Blocked { reason } => exit::failed(format!("install refused: {reason}")),
        other => hub_error(other),
    }
}

/// The skills of a collection, each with what installs it alone.
fn print_members(members: &[Member]) {
    let rows: Vec<Vec<String>> = members
        .iter()
        .map(|m| {
            vec![
                m.name.clone(),
                m.identifier
                    .clone()
                    .unwrap_or_else(|| format!("{} (inside the archive)", m.path)),
                ellipsize(&m.description, 60),
            ]
        })
        .collect();
    print_table(&["NAME", "INSTALL WITH", "DESCRIPTION"], &rows);
    outln!();
}

/// What `install --all` did with one skill of the collection.
enum MemberOutcome {
    Installed,
    /// Already installed from this very identifier: nothing to do.
    AlreadyInstalled,
    /// Not installed; the reason was printed when it happened.
    Skipped,
}

/// `install ID --all`: every skill of the collection through the same
/// quarantine, scan, policy and lock as a single install, with one
/// confirmation for all. Each install is atomic on its own; one that fails
/// leaves the others as they are.
async fn install_all(
    hub: &Hub,
    args: &HubInstallArgs,
    opts: &InstallOptions,
) -> anyhow::Result<u8> {
    let members = hub
        .stage_collection(&args.id, opts)
        .await
        .map_err(hub_error)?;
    let lock = hub.lock().map_err(hub_error)?;
    let total = members.len();
    outln!("{} holds {total} skill(s):", bold(&args.id));
    let mut ready = Vec::new();
    let mut outcomes: Vec<(String, MemberOutcome)> = Vec::new();
    for StagedMember { member, staged } in members {
        let staged = match staged {
            Ok(staged) => staged,
            Err(e) => {
                outln!("  {} {} — {e}", dim("skip "), bold(&member.name));
                outcomes.push((member.name, MemberOutcome::Skipped));
                continue;
            }
        };
        let name = staged.lock_name();
        let same_source = lock
            .installed
            .get(&name)
            .is_some_and(|e| e.identifier == staged.identifier);
        if same_source {
            outln!("  {} {}", dim("have "), bold(&name));
            outcomes.push((name, MemberOutcome::AlreadyInstalled));
        } else if staged.decision.is_allowed() {
            outln!(
                "  {} {} — scan {}, into skills/{}",
                dim("ready"),
                bold(&name),
                staged.report.verdict.as_str(),
                staged.install_path()
            );
            ready.push(staged);
        } else {
            // Through `install` like a single refusal, so it is logged the same way.
            let dangerous = staged.report.verdict == Verdict::Dangerous;
            let identifier = staged.identifier.clone();
            let declined = || {
                Err(skill_hub::Error::Declined(
                    "a refused skill is never installed".into(),
                ))
            };
            let why = match hub.install(staged, |_| declined()) {
                Err(skill_hub::Error::Blocked { reason }) if dangerous => format!(
                    "install refused: {reason}; {}",
                    accept_dangerous_hint(&identifier)
                ),
                Err(skill_hub::Error::Blocked { reason }) => format!("install refused: {reason}"),
                Err(e) => e.to_string(),
                Ok(_) => "refused by the policy".to_owned(),
            };
            outln!("  {} {} — {why}", dim("skip "), bold(&name));
            outcomes.push((name, MemberOutcome::Skipped));
        }
    }
    if !ready.is_empty() {
        let question = format!(
            "Install {} skill(s) into skills/? Skills can change how the agent behaves.",
            ready.len()
        );
        confirm(&question, args.yes).map_err(hub_error)?;
    }
    for staged in ready {
        let name = staged.lock_name();
        let outcome = match hub.install(staged, |_| Ok(())) {
            Ok(installed) => {
                outln!(
                    "Installed {} → {} ({}, {})",
                    bold(&installed.name),
                    installed.path.display(),
                    installed.entry.trust_level,
                    installed.entry.scan_verdict
                );
                MemberOutcome::Installed
            }
            Err(e) => {
                outln!("Not installed {}: {e}", bold(&name));
                MemberOutcome::Skipped
            }
        };
        outcomes.push((name, outcome));
    }
    let count = |f: fn(&MemberOutcome) -> bool| outcomes.iter().filter(|(_, o)| f(o)).count();
    let installed = count(|o| matches!(o, MemberOutcome::Installed));
    let already = count(|o| matches!(o, MemberOutcome::AlreadyInstalled));
    let skipped: Vec<&str> = outcomes
        .iter()
        .filter(|(_, o)| matches!(o, MemberOutcome::Skipped))
        .map(|(n, _)| n.as_str())
        .collect();
    outln!();
    outln!(
        "{installed} installed, {already} already installed, {} skipped (of {total}).",
        skipped.len()
    );
    if !skipped.is_empty() {
        outln!(
            "Skipped: {}. Each skill is installed on its own, so the installed ones are complete and the skipped ones left nothing behind.",
            skipped.join(", ")
        );
    }
    Ok(if skipped.is_empty() {
        exit::OK
    } else {
        exit::FAILED
    })
}

fn uninstall(hub: &Hub, args: HubUninstallArgs) -> anyhow::Result<u8> {
    let entry = hub.installed(&args.name).map_err(|e| match e {
        // A typo of a name the hub did install: say which.
        skill_hub::Error::NotInstalled(message) => {
            let Ok(lock) = hub.lock() else {
                return exit::failed(message);
            };
            match crate::suggest::closest(&args.name, lock.installed.keys().map(String::as_str)) {
                Some(name) => exit::failed(format!("{message}; did you mean '{name}'?")),
                None => exit::failed(message),
            }
        }
        other => hub_error(other),
    })?;
    confirm(
        &format!("Remove {} (skills/{})?", args.name, entry.install_path),
        args.yes,
    )
    .map_err(hub_error)?;
    hub.uninstall(&args.name).map_err(hub_error)?;
    outln!(
        "Removed {} (installed from {}).",
        args.name,
        entry.identifier
    );
    Ok(exit::OK)
}

async fn check(hub: &Hub, args: HubCheckArgs) -> anyhow::Result<u8> {
    let results = hub.check(args.name.as_deref()).await.map_err(hub_error)?;
    if args.json {
        print_json(&json!({"success": true, "results": results}));
        return Ok(exit::OK);
    }
    if results.is_empty() {
        outln!("No hub-installed skills.");
        return Ok(exit::OK);
    }
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            let status = match &r.status {
                CheckStatus::UpToDate => "up to date".to_owned(),
                CheckStatus::UpdateAvailable => "update available".to_owned(),
                CheckStatus::Unavailable(why) => format!("unavailable: {why}"),
                CheckStatus::InvalidInstall(why) => format!("invalid install: {why}"),
            };
            vec![r.name.clone(), status, r.identifier.clone()]
        })
        .collect();
    print_table(&["NAME", "STATUS", "IDENTIFIER"], &rows);
    if results
        .iter()
        .any(|r| r.status == CheckStatus::UpdateAvailable)
    {
        outln!();
        outln!(
            "{}",
            dim("Run `knack skills update` to install the new versions.")
        );
    }
    Ok(exit::OK)
}

async fn update(hub: &Hub, args: HubUpdateArgs) -> anyhow::Result<u8> {
    let results = hub
        .update(args.name.as_deref(), args.force)
        .await
        .map_err(hub_error)?;
    let failed = results
        .iter()
        .any(|(_, o)| matches!(o, UpdateOutcome::Failed(_)));
    if args.json {
        let items: Vec<Value> = results
            .iter()
            .map(|(name, o)| {
                let mut v = serde_json::to_value(o).unwrap_or(Value::Null);
                if let Some(map) = v.as_object_mut() {
                    map.insert("name".into(), json!(name));
                }
                v
            })
            .collect();
        print_json(&json!({"success": !failed, "results": items}));
    } else if results.is_empty() {
        outln!("No hub-installed skills.");
    } else {
        for (name, outcome) in &results {
            match outcome {
                UpdateOutcome::Updated { verdict } => outln!("{name}: updated (scan {verdict})"),
                UpdateOutcome::UpToDate => outln!("{name}: up to date"),
                UpdateOutcome::Failed(why) => outln!("{name}: not updated: {why}"),
            }
        }
    }
    Ok(if failed { exit::FAILED } else { exit::OK })
}

fn verdict_rank(v: &str) -> u8 {
    match v {
        "safe" => 0,
        "caution" => 1,
        _ => 2,
    }
}

fn got_worse(r: &AuditResult) -> bool {
    r.error.is_some()
        || r.verdict
            .is_some_and(|v| verdict_rank(v.as_str()) > verdict_rank(&r.locked_verdict))
}

fn audit(hub: &Hub, args: HubAuditArgs) -> anyhow::Result<u8> {
    let results = hub.audit(args.name.as_deref()).map_err(hub_error)?;
    let worse = results.iter().any(got_worse);
    if args.json {
        let items: Vec<Value> = results
            .iter()
            .map(|r| {
                json!({
                    "name": r.name,
                    "install_path": r.install_path,
                    "locked_verdict": r.locked_verdict,
                    "verdict": r.verdict,
                    "changed": r.changed,
                    "modified": r.modified,
                    "error": r.error,
                    "findings": r.report.as_ref().map(|rep| rep.findings.clone()).unwrap_or_default(),
                })
            })
            .collect();
        print_json(&json!({"success": !worse, "results": items}));
        return Ok(if worse { exit::FAILED } else { exit::OK });
    }
    if results.is_empty() {
        outln!("No hub-installed skills.");
        return Ok(exit::OK);
    }
    for r in &results {
        let now = r.verdict.map(Verdict::as_str).unwrap_or("unreadable");
        let change = if r.changed {
            format!("{} → {now} (changed)", r.locked_verdict)
        } else {
            now.to_owned()
        };
        let modified = if r.modified {
            ", files changed since install"
        } else {
            ""
        };
        outln!("{} {change}{modified}", bold(&r.name));
        if let Some(e) = &r.error {
            outln!("  {e}");
        }
        if let Some(report) = &r.report
            && !report.findings.is_empty()
        {
            for line in report.render().lines() {
                outln!("  {line}");
            }
        }
    }
    Ok(if worse { exit::FAILED } else { exit::OK })
}

fn tap(hub: &Hub, cmd: TapCommand) -> anyhow::Result<u8> {
    let taps = hub.taps();
    match cmd {
        TapCommand::List(flag) => {
            let list = taps.list().map_err(hub_error)?;
            if flag.json {
                print_json(&json!({
                    "success": true,
                    "taps": list.iter().map(|t| json!({"repo": t.repo})).collect::<Vec<_>>(),
                }));
            } else if list.is_empty() {
                outln!("No taps. Add one with `knack skills tap add owner/repo`.");
            } else {
                for t in list {
                    outln!("{}", t.repo);
                }
            }
            Ok(exit::OK)
        }
        TapCommand::Add { repo } => {
            let repo = Taps::normalize(&repo, hub.cwd()).map_err(hub_error)?;
            if taps.add(&repo).map_err(hub_error)? {
                outln!("Tapped {repo}; its skills now appear in search and browse.");
            } else {
                outln!("{repo} is already tapped.");
            }
            Ok(exit::OK)
        }
        TapCommand::Remove { repo } => {
            let normalized = Taps::normalize(&repo, hub.cwd()).unwrap_or(repo);
            if taps.remove(&normalized).map_err(hub_error)? {
                outln!("Removed the tap {normalized}.");
                Ok(exit::OK)
            } else {
                Err(exit::failed(format!(
                    "{normalized} is not tapped; `knack skills tap list` shows the taps"
                )))
            }
        }
    }
}

fn publish(args: PublishArgs) -> anyhow::Result<u8> {
    let report = skill_hub::publish(&args.dir, &args.out).map_err(hub_error)?;
    let index = args
        .out
        .join(skill_hub::WELL_KNOWN_DIR)
        .join(skill_hub::INDEX_FILE);
    // Like `install --all`: the site is written, but a skipped skill is a
    // failure a script should notice.
    let code = if report.skipped.is_empty() {
        exit::OK
    } else {
        exit::FAILED
    };
    if args.json {
        print_json(&json!({
            "success": true,
            "index": index,
            "skills": report.published,
            "skipped": report.skipped,
            "notes": report.notes,
        }));
        return Ok(code);
    }
    for p in &report.published {
        outln!("{}  {}  {}", bold(&p.name), p.url, dim(&p.digest));
    }
    for s in &report.skipped {
        let who = s.name.as_deref().unwrap_or(&s.path);
        outln!("skip  {who}  {}  ({})", s.reason, dim(&s.path));
    }
    for note in &report.notes {
        eprintln!("note: {note}");
    }
    outln!(
        "Published {} skill(s) to {}{}. Serve {} over HTTPS and install with `knack skills install well-known:https://HOST#NAME`.",
        report.published.len(),
        index.display(),
        if report.skipped.is_empty() {
            String::new()
        } else {
            format!("; skipped {}", report.skipped.len())
        },
        args.out.display()
    );
    Ok(code)
}
