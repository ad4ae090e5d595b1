//! `knack eval skill NAME --tasks FILE`: does a skill help? Every task runs
//! with the skill available and with it hidden (`skills.disabled`), the same
//! number of times, each in a fresh workspace and home with the review off;
//! runs are paired by (task, seed, run) and the report gives the difference.

use std::fmt::Write as _;
use std::path::Path;

use std::sync::Arc;

use serde::Serialize;
use serde_json::json;

use crate::Result;
use crate::pool::{Progress, run_all};
use crate::record::{RunMetrics, RunSpec, execute};
use crate::report::{BarGroup, Header, WrittenReport, bar_chart, cell, num, write_report};
use crate::runner::{EvalContext, Verifier};
use crate::setup::{HomeTemplate, Library};
use crate::spec::TaskSpec;
use crate::stats::{Estimate, bootstrap, mean, median};

/// One run of one task in one arm.
#[derive(Debug, Clone, Serialize)]
pub struct SkillRun {
    /// The task's place in the tasks file, from 1.
    pub task: usize,
    /// `with` or `without` the skill.
    pub arm: &'static str,
    pub seed: usize,
    pub run: usize,
    #[serde(flatten)]
    pub metrics: RunMetrics,
}

/// One arm's totals.
#[derive(Debug, Clone, Serialize)]
pub struct ArmSummary {
    pub arm: &'static str,
    pub runs: usize,
    pub errors: usize,
    pub pass_rate: Option<Estimate>,
    pub tokens_total: Option<Estimate>,
    pub tokens_input: Option<f64>,
    pub tokens_cache_read: Option<f64>,
    pub tokens_cache_write: Option<f64>,
    pub tokens_output: Option<f64>,
    pub tokens_reasoning: Option<f64>,
    pub tool_calls: Option<Estimate>,
    pub turns: Option<Estimate>,
    pub wall_ms: Option<Estimate>,
    pub cost_usd: Option<Estimate>,
    /// Share of runs that loaded the skill (the `with` arm).
    pub loaded_share: Option<f64>,
}

/// `with − without` over paired runs: means with bootstrap intervals.
#[derive(Debug, Clone, Serialize)]
pub struct PairedDifference {
    pub pairs: usize,
    pub passed: Option<Estimate>,
    pub tokens_total: Option<Estimate>,
    pub tool_calls: Option<Estimate>,
    pub turns: Option<Estimate>,
    pub wall_ms: Option<Estimate>,
    pub cost_usd: Option<Estimate>,
}

pub struct SkillOutcome {
    pub report: WrittenReport,
    pub difference: PairedDifference,
    pub errors: usize,
    pub stop_reason: Option<String>,
}

pub const ARMS: [&str; 2] = ["with", "without"];

pub fn run_skill_ab(
    ctx: &EvalContext,
    skill: &str,
    file: &Path,
    tasks: &[TaskSpec],
    runs: usize,
) -> Result<SkillOutcome> {
    let with = HomeTemplate::build(ctx.user_home.as_deref(), Library::User)?;
    let without = HomeTemplate::build(ctx.user_home.as_deref(), Library::User)?;
    let mut disabled = knack_config::Config::load_file(&without.root().join("config.yaml"))?
        .skills
        .disabled;
    disabled.push(skill.to_owned());
    without.set("skills.disabled", &serde_json::to_string(&disabled)?)?;

    let mut jobs = Vec::new();
    for (t, task) in tasks.iter().enumerate() {
        for seed in 0..ctx.seeds {
            for run in 0..runs {
                for arm in ARMS {
                    jobs.push((t, task, seed, run, arm));
                }
            }
        }
    }
    let progress = Progress::new(jobs.len(), ctx.progress, Arc::clone(&ctx.interrupted));
    let relevant = vec![skill.to_owned()];
    let records = run_all(
        jobs,
        ctx.jobs,
        |(t, task, seed, run, arm)| -> Result<SkillRun> {
            let verifier = Verifier::Shell(task.verify.clone());
            let template = if arm == "with" { &with } else { &without };
            let metrics = if progress.stopped() {
                not_run()
            } else {
                let spec = RunSpec {
                    template,
                    library: None,
                    fixture: task.fixture.as_deref(),
                    prompt: &task.prompt,
                    verifier: &verifier,
                    review: false,
                    relevant: if arm == "with" { &relevant } else { &[] },
                };
                execute(ctx, &spec, &progress, &format!("task {} {arm}", t + 1))?.metrics
            };
            Ok(SkillRun {
                task: t + 1,
                arm,
                seed,
                run,
                metrics,
            })
        },
    );
    progress.finish();
    let records: Vec<SkillRun> = records.into_iter().collect::<Result<_>>()?;
    let errors = records.iter().filter(|r| r.metrics.error.is_some()).count();
    let arms: Vec<ArmSummary> = ARMS
        .iter()
        .map(|arm| summarize_arm(arm, &records))
        .collect();
    let difference = paired_difference(&records);

    let header = Header::new(
        ctx,
        "skill",
        vec![format!("skill {skill}"), file.display().to_string()],
    );
    let json = json!({
        "notice": header.notice,
        "header": header,
        "skill": skill,
        "runs": records,
        "summary": {"arms": arms, "difference": difference, "errors": errors, "runs_per_arm": runs * ctx.seeds},
    });
    let mut md = header.markdown(&format!("Does `{skill}` help?"));
    let _ = writeln!(
        md,
        "{} task(s) × {} run(s) × {} seed(s) per arm; review off in both arms; {errors} error(s).\n",
        tasks.len(),
        runs,
        ctx.seeds
    );
    md.push_str("| arm | runs | pass rate | median tokens | tool calls | turns | wall ms | cost USD | skill loaded |\n|---|---|---|---|---|---|---|---|---|\n");
    for a in &arms {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            a.arm,
            a.runs,
            est(a.pass_rate, 2),
            est(a.tokens_total, 0),
            est(a.tool_calls, 1),
            est(a.turns, 1),
            est(a.wall_ms, 0),
            est(a.cost_usd, 4),
            num(a.loaded_share, 2)
        );
    }
    let _ = writeln!(
        md,
        "\n## Paired difference (with − without, mean over {} pairs, 95 % bootstrap interval)\n\n- passed: {}\n- tokens: {}\n- tool calls: {}\n- turns: {}\n- wall ms: {}\n- cost USD: {}\n",
        difference.pairs,
        est(difference.passed, 2),
        est(difference.tokens_total, 0),
        est(difference.tool_calls, 1),
        est(difference.turns, 1),
        est(difference.wall_ms, 0),
        est(difference.cost_usd, 4)
    );
    for r in records.iter().filter(|r| r.metrics.error.is_some()) {
        let _ = writeln!(
            md,
            "- error, task {} ({}): {}",
            r.task,
            r.arm,
            cell(r.metrics.error.as_deref().unwrap_or_default())
        );
    }
    let groups: Vec<BarGroup> = (1..=tasks.len())
        .map(|task| BarGroup {
            label: format!("task {task}"),
            values: ARMS
                .iter()
                .map(|arm| {
                    let totals: Vec<f64> = records
                        .iter()
                        .filter(|r| r.task == task && r.arm == *arm && r.metrics.error.is_none())
                        .map(|r| r.metrics.tokens_total as f64)
                        .collect();
                    median(&totals).unwrap_or(0.0)
                })
                .collect(),
        })
        .collect();
    let svg = bar_chart(
        &format!("Median tokens per task, with and without {skill}"),
        header.notice.as_deref(),
        &ARMS,
        &groups,
        "tokens",
    );
    let report = write_report(&ctx.out, &json, &md, &svg)?;
    Ok(SkillOutcome {
        report,
        difference,
        errors,
        stop_reason: progress.stop_reason(),
    })
}

/// A run skipped because the provider was found down earlier.
pub(crate) fn not_run() -> RunMetrics {
    RunMetrics {
        passed: None,
        error: Some("not run: the eval stopped early (see the other errors)".into()),
        tokens: Default::default(),
        tokens_total: 0,
        tool_calls: 0,
        turns: 0,
        wall_ms: 0,
        harness_ms: 0,
        cost_usd: None,
        cost_uncached_usd: None,
        review_tokens: 0,
        compact_tokens: 0,
        skills: Default::default(),
        verify_output: None,
    }
}

pub(crate) fn est(e: Option<Estimate>, decimals: usize) -> String {
    match e {
        Some(e) if e.n > 1 => format!(
            "{:.d$} [{:.d$}, {:.d$}]",
            e.value,
            e.low,
            e.high,
            d = decimals
        ),
        Some(e) => format!("{:.d$}", e.value, d = decimals),
        None => "–".to_owned(),
    }
}

fn summarize_arm(arm: &'static str, records: &[SkillRun]) -> ArmSummary {
    let ok: Vec<&RunMetrics> = records
        .iter()
        .filter(|r| r.arm == arm && r.metrics.error.is_none())
        .map(|r| &r.metrics)
        .collect();
    let col = |f: fn(&RunMetrics) -> f64| ok.iter().map(|m| f(m)).collect::<Vec<f64>>();
    let costs: Vec<f64> = ok.iter().filter_map(|m| m.cost_usd).collect();
    let with_skill: Vec<bool> = ok.iter().filter_map(|m| m.skills.activated).collect();
    ArmSummary {
        arm,
        runs: records.iter().filter(|r| r.arm == arm).count(),
        errors: records
            .iter()
            .filter(|r| r.arm == arm && r.metrics.error.is_some())
            .count(),
        pass_rate: bootstrap(&col(|m| f64::from(u8::from(m.passed == Some(true)))), mean),
        tokens_total: bootstrap(&col(|m| m.tokens_total as f64), median),
        tokens_input: median(&col(|m| m.tokens.input as f64)),
        tokens_cache_read: median(&col(|m| m.tokens.cache_read as f64)),
        tokens_cache_write: median(&col(|m| m.tokens.cache_write as f64)),
        tokens_output: median(&col(|m| m.tokens.output as f64)),
        tokens_reasoning: median(&col(|m| m.tokens.reasoning as f64)),
        tool_calls: bootstrap(&col(|m| f64::from(m.tool_calls)), median),
        turns: bootstrap(&col(|m| f64::from(m.turns)), median),
        wall_ms: bootstrap(&col(|m| m.wall_ms as f64), median),
        cost_usd: bootstrap(&costs, median),
        loaded_share: mean(
            &with_skill
                .iter()
                .map(|&b| f64::from(u8::from(b)))
                .collect::<Vec<_>>(),
        ),
    }
}

/// Pairs each `with` run with the `without` run of the same task, seed and run number.
pub fn paired_difference(records: &[SkillRun]) -> PairedDifference {
    let mut diffs: Vec<(&RunMetrics, &RunMetrics)> = Vec::new();
    for w in records
        .iter()
        .filter(|r| r.arm == "with" && r.metrics.error.is_none())
    {
        if let Some(o) = records.iter().find(|o| {
            o.arm == "without"
                && o.task == w.task
                && o.seed == w.seed
                && o.run == w.run
                && o.metrics.error.is_none()
        }) {
            diffs.push((&w.metrics, &o.metrics));
        }
    }
    let d = |f: fn(&RunMetrics) -> f64| {
        bootstrap(
            &diffs.iter().map(|(w, o)| f(w) - f(o)).collect::<Vec<_>>(),
            mean,
        )
    };
    let cost: Vec<f64> = diffs
        .iter()
        .filter_map(|(w, o)| Some(w.cost_usd? - o.cost_usd?))
        .collect();
    PairedDifference {
        pairs: diffs.len(),
        passed: d(|m| f64::from(u8::from(m.passed == Some(true)))),
        tokens_total: d(|m| m.tokens_total as f64),
        tool_calls: d(|m| f64::from(m.tool_calls)),
        turns: d(|m| f64::from(m.turns)),
        wall_ms: d(|m| m.wall_ms as f64),
        cost_usd: bootstrap(&cost, mean),
    }
}
