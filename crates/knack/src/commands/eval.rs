//! `knack eval`: parses the flags, resolves the provider, checks the inputs
//! against the user's library, and hands the work to the `knack-eval` crate.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use knack_eval::{AgentCommand, EvalContext, ProviderInfo, spec};
use serde_json::json;

use crate::cli::{EvalArgs, EvalCommand};
use crate::context::Context;
use crate::exit;

/// Exit code after Ctrl-C (CONTRACT.md).
const INTERRUPTED: u8 = 130;

/// Seeds of `loop` by default: one full Latin square over a five-instance family.
const LOOP_SEEDS: usize = 5;

pub fn run(cmd: EvalCommand) -> anyhow::Result<u8> {
    let ctx = Context::load()?;
    match cmd {
        EvalCommand::Triggers { file, common } => {
            let cases = spec::load_triggers(&file).map_err(input_error)?;
            let expected: Vec<String> = cases.iter().filter_map(|c| c.expected.clone()).collect();
            check_skills(&ctx, &expected, "the triggers file")?;
            let eval = context(&ctx, &common, "triggers", 1)?;
            let outcome = knack_eval::triggers::run_triggers(&eval, &file, &cases)?;
            let summary =
                json!({"recall": outcome.overall.recall, "precision": outcome.overall.precision});
            finish(
                &eval,
                &common,
                &outcome.report,
                summary,
                outcome.errors,
                outcome.stop_reason,
            )
        }
        EvalCommand::Skill {
            name,
            tasks,
            runs,
            common,
        } => {
            if runs == 0 {
                return Err(exit::usage("--runs must be at least 1"));
            }
            let specs = spec::load_tasks(&tasks).map_err(input_error)?;
            check_skills(&ctx, std::slice::from_ref(&name), "the skill to measure")?;
            let eval = context(&ctx, &common, "skill", 1)?;
            let outcome = knack_eval::skill_ab::run_skill_ab(&eval, &name, &tasks, &specs, runs)?;
            let summary = json!({"difference": outcome.difference});
            finish(
                &eval,
                &common,
                &outcome.report,
                summary,
                outcome.errors,
                outcome.stop_reason,
            )
        }
        EvalCommand::Loop {
            dir,
            arms,
            families,
            common,
        } => {
            let arms = parse_arms(&arms)?;
            let all = spec::load_families(&dir).map_err(input_error)?;
            let selected =
                knack_eval::learning_loop::select_families(all, families.as_deref(), &dir)
                    .map_err(input_error)?;
            if arms.contains(&knack_eval::learning_loop::Arm::Curated)
                && !selected.iter().any(|f| f.curated_skill.is_some())
            {
                return Err(exit::usage(
                    "--arms curated: none of the chosen families has a curated_skill in its family.yaml",
                ));
            }
            let eval = context(&ctx, &common, "loop", LOOP_SEEDS)?;
            let options = knack_eval::learning_loop::LoopOptions { arms, families };
            let outcome = knack_eval::learning_loop::run_loop(&eval, &dir, &selected, &options)?;
            let summary = json!({"headline": outcome.headline});
            finish(
                &eval,
                &common,
                &outcome.report,
                summary,
                outcome.errors,
                outcome.stop_reason,
            )
        }
    }
}

/// A bad eval file is the user's to fix: exit 2 with the file named.
fn input_error(err: knack_eval::Error) -> anyhow::Error {
    match err {
        knack_eval::Error::Spec { .. } | knack_eval::Error::Io { .. } => {
            exit::usage(err.to_string())
        }
        other => other.into(),
    }
}

fn parse_arms(names: &[String]) -> anyhow::Result<Vec<knack_eval::learning_loop::Arm>> {
    let mut arms = Vec::new();
    for name in names {
        let arm = knack_eval::learning_loop::Arm::parse(name).ok_or_else(|| {
            exit::usage(format!(
                "--arms: unknown arm '{name}'; the arms are baseline, learning and curated"
            ))
        })?;
        if !arms.contains(&arm) {
            arms.push(arm);
        }
    }
    if arms.is_empty() {
        return Err(exit::usage("--arms: name at least one arm"));
    }
    Ok(arms)
}

/// Every skill named must be in the user's library, or the eval would measure a typo.
fn check_skills(ctx: &Context, names: &[String], what: &str) -> anyhow::Result<()> {
    ctx.with_skills(|set| {
        for name in names {
            match agent_loop::invocation::resolve_preload(set, name) {
                Err(e) => {
                    return Err(exit::usage(format!(
                        "{what} names '{name}': {e}; {}",
                        crate::suggest::skill_hint(set, name)
                    )));
                }
                // Runs happen in temp workspaces: a skill of this project would be missing from every one.
                Ok(skill) if skill.scope.label() == "project" =>
                {
                    return Err(exit::usage(format!(
                        "{what} names '{name}', a project skill of {}; knack eval runs in temp workspaces with your home library, so copy it to {} to measure it",
                        skill.path.display(),
                        ctx.home.skills_dir().display()
                    )));
                }
                Ok(_) => {}
            }
        }
        Ok(())
    })
}

fn context(
    ctx: &Context,
    args: &EvalArgs,
    mode: &str,
    default_seeds: usize,
) -> anyhow::Result<EvalContext> {
    if args.jobs == 0 {
        return Err(exit::usage("--jobs must be at least 1"));
    }
    let seeds = args.seeds.unwrap_or(default_seeds);
    if seeds == 0 {
        return Err(exit::usage("--seeds must be at least 1"));
    }
    let resolution =
        agent_loop::setup::resolve_settings(&ctx.home, &ctx.config, &args.model.flags())?;
    let Some(model) = resolution.model else {
        return Err(exit::Coded {
            code: exit::CONFIG,
            message: "no model name configured: set KNACK_MODEL, `knack config set model.name NAME`, or --model NAME".into(),
        }
        .into());
    };
    let base_url = resolution.settings.base_url.clone();
    let mut model_args = Vec::new();
    if let Some(provider) = &args.model.provider {
        model_args.extend(["--provider".to_owned(), provider.clone()]);
    }
    if let Some(name) = &args.model.model {
        model_args.extend(["--model".to_owned(), name.clone()]);
    }
    let program = std::env::current_exe().map_err(|e| {
        exit::failed(format!(
            "cannot find the knack binary to run sessions with: {e}"
        ))
    })?;
    let out = args.out.clone().unwrap_or_else(|| {
        let stamp = skill_core::clock::session_stamp(std::time::SystemTime::now());
        ctx.home
            .root()
            .join("evals")
            .join(format!("{stamp}-{mode}"))
    });
    let scripted_mock = knack_eval::runner::is_scripted_mock(&base_url);
    if scripted_mock {
        eprintln!("knack: {}", knack_eval::report::MOCK_NOTICE);
    }
    Ok(EvalContext {
        agent: AgentCommand {
            program,
            model_args,
        },
        provider: ProviderInfo {
            provider: resolution
                .provider
                .unwrap_or_else(|| "environment".to_owned()),
            model,
            base_url,
            prices: resolution.settings.prices,
            scripted_mock,
        },
        user_home: Some(ctx.home.root().to_path_buf()),
        out: absolute(out),
        jobs: args.jobs,
        seeds,
        progress: !args.json,
        interrupted: watch_ctrl_c(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
    })
}

/// A flag set by Ctrl-C. The runs in flight get the signal from the terminal
/// too and end; the eval starts no more, writes the report of what ran (its
/// temp homes, which hold a copy of `.env`, are removed) and exits 130.
fn watch_ctrl_c() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let set = Arc::clone(&flag);
    // The handler is in place before this returns, so no run can start
    // while Ctrl-C would still end the process at once.
    let watcher = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .and_then(|runtime| {
            let signal = runtime.block_on(async {
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
            })?;
            Ok((runtime, signal))
        });
    match watcher {
        Ok((runtime, mut signal)) => {
            std::thread::spawn(move || {
                if runtime.block_on(signal.recv()).is_some() {
                    // Set before saying so: whoever reads the line may rely on it.
                    set.store(true, Ordering::SeqCst);
                    eprintln!(
                        "knack: interrupted; finishing the runs in flight and writing the report"
                    );
                }
            });
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot watch for Ctrl-C; it will end knack eval at once")
        }
    }
    flag
}

fn absolute(path: PathBuf) -> PathBuf {
    std::path::absolute(&path).unwrap_or(path)
}

/// Says where the report went; a run that could not reach the provider makes the command fail.
fn finish(
    eval: &EvalContext,
    args: &EvalArgs,
    report: &knack_eval::report::WrittenReport,
    summary: serde_json::Value,
    errors: usize,
    stop: Option<String>,
) -> anyhow::Result<u8> {
    if args.json {
        let line = json!({
            "success": errors == 0,
            "report": report,
            "summary": summary,
            "errors": errors,
        });
        println!("{line}");
    } else {
        println!("{}", report.dir.display());
        eprintln!(
            "knack: report written: {} (also report.json, chart.svg)",
            report.markdown.display()
        );
    }
    if eval.interrupted.load(Ordering::SeqCst) {
        return Ok(INTERRUPTED);
    }
    if errors > 0 {
        let why = stop.unwrap_or_else(|| "see the report".to_owned());
        eprintln!("knack: {errors} run(s) could not be measured: {why}");
        return Ok(exit::FAILED);
    }
    Ok(exit::OK)
}
