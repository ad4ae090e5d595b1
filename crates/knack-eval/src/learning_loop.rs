//! `knack eval loop DIR`: does the agent learn? Each family's instances run
//! in order within an arm, in a Latin-square rotation across seeds:
//! `baseline` (no review, every instance starts from the same library, so no
//! skill it writes reaches the next instance), `learning` (the review on and
//! its skills carried from instance to instance), and `curated` (a given
//! skill from the start, no review). Learning at repetition k is compared
//! with baseline on the same instance and seed. Control families run last,
//! their learning arm starting with every skill the learning arm wrote for the
//! other families in that seed: do learned skills hurt unrelated work?

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use std::sync::Arc;

use serde::Serialize;
use serde_json::json;
use tempfile::TempDir;

use crate::order::latin_order;
use crate::pool::{Progress, run_all};
use crate::record::{RunMetrics, RunSpec, execute};
use crate::report::{BarGroup, Header, WrittenReport, bar_chart, cell, write_report};
use crate::runner::{EvalContext, Verifier};
use crate::setup::{HomeTemplate, Library, copy_tree, replace_tree, temp_dir};
use crate::skill_ab::{est, not_run};
use crate::spec::Family;
use crate::stats::{Estimate, bootstrap, mean, median};
use crate::{Error, Result};

/// An arm of the loop eval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Arm {
    Baseline,
    Learning,
    Curated,
}

impl Arm {
    pub const ALL: [Arm; 3] = [Arm::Baseline, Arm::Learning, Arm::Curated];

    pub fn as_str(self) -> &'static str {
        match self {
            Arm::Baseline => "baseline",
            Arm::Learning => "learning",
            Arm::Curated => "curated",
        }
    }

    pub fn parse(name: &str) -> Option<Arm> {
        Self::ALL.into_iter().find(|a| a.as_str() == name.trim())
    }

    /// Whether the self-improvement review runs and skills carry over.
    fn learns(self) -> bool {
        match self {
            Arm::Learning => true,
            Arm::Baseline | Arm::Curated => false,
        }
    }
}

/// One run of the loop eval.
#[derive(Debug, Clone, Serialize)]
pub struct LoopRun {
    pub family: String,
    pub instance: String,
    pub arm: Arm,
    pub seed: usize,
    /// The instance's position in its arm's sequence, from 1.
    pub repetition: usize,
    pub control: bool,
    #[serde(flatten)]
    pub metrics: RunMetrics,
}

/// One arm at one repetition, over the non-control families.
#[derive(Debug, Clone, Serialize)]
pub struct RepetitionSummary {
    pub arm: Arm,
    pub repetition: usize,
    pub runs: usize,
    /// Mean over seeds of each seed's pass share.
    pub pass_rate: Option<Estimate>,
    /// Median over seeds of each seed's mean tokens per run (as if nothing were cached).
    pub tokens_total: Option<Estimate>,
    /// The same for tokens not served from the cache (input + cache write + output).
    pub tokens_fresh: Option<Estimate>,
    pub cost_usd: Option<Estimate>,
    pub cost_uncached_usd: Option<Estimate>,
    pub tool_calls: Option<Estimate>,
    pub review_tokens: Option<Estimate>,
    pub skills_created: usize,
    pub skills_patched: usize,
    /// Runs that had a relevant skill in the library.
    pub relevant_available: usize,
    /// ... and loaded it (activation).
    pub activated: usize,
    /// ... and never loaded it (silent bypass).
    pub silent_bypass: usize,
}

/// An arm against baseline on the same instance and seed, at one repetition.
#[derive(Debug, Clone, Serialize)]
pub struct PairedSummary {
    pub arm: Arm,
    pub repetition: usize,
    pub pairs: usize,
    /// Mean over seeds of the per-seed mean difference (arm − baseline).
    pub passed_difference: Option<Estimate>,
    pub tokens_difference: Option<Estimate>,
    pub cost_difference: Option<Estimate>,
    pub tool_calls_difference: Option<Estimate>,
}

/// Control families: does the learned library hurt unrelated work?
#[derive(Debug, Clone, Serialize)]
pub struct ControlSummary {
    pub arm: Arm,
    pub runs: usize,
    pub pass_rate: Option<Estimate>,
    pub tokens_total: Option<Estimate>,
    /// Runs that loaded a skill learned on another family.
    pub misfires: usize,
}

pub struct LoopOptions {
    pub arms: Vec<Arm>,
    /// Only these families (all when `None`).
    pub families: Option<Vec<String>>,
}

pub struct LoopOutcome {
    pub report: WrittenReport,
    pub headline: Vec<PairedSummary>,
    pub errors: usize,
    pub stop_reason: Option<String>,
}

/// One arm's walk through one family's instances for one seed.
struct Sequence<'a> {
    family: &'a Family,
    arm: Arm,
    seed: usize,
    /// Skills learned elsewhere that this sequence starts with (control families).
    inherited: Option<&'a Path>,
}

struct SequenceResult {
    runs: Vec<LoopRun>,
    /// The library as the sequence left it (the learning arm's learned skills).
    library: TempDir,
}

/// Picks the families the options name, with a clear error for an unknown one.
pub fn select_families(
    all: Vec<Family>,
    names: Option<&[String]>,
    dir: &Path,
) -> Result<Vec<Family>> {
    let Some(names) = names else {
        return Ok(all);
    };
    for name in names {
        if !all.iter().any(|f| &f.name == name) {
            let known: Vec<&str> = all.iter().map(|f| f.name.as_str()).collect();
            return Err(Error::spec(
                dir,
                format!(
                    "--families: no family named '{name}'; the families here are: {}",
                    known.join(", ")
                ),
            ));
        }
    }
    Ok(all
        .into_iter()
        .filter(|f| names.contains(&f.name))
        .collect())
}

pub fn run_loop(
    ctx: &EvalContext,
    dir: &Path,
    families: &[Family],
    options: &LoopOptions,
) -> Result<LoopOutcome> {
    let template = HomeTemplate::build(ctx.user_home.as_deref(), Library::Empty)?;
    let sequences_for = |control: bool, seed: usize| -> Vec<(usize, &Family, Arm)> {
        families
            .iter()
            .filter(|f| f.control == control)
            .flat_map(|f| {
                options
                    .arms
                    .iter()
                    .filter(|a| **a != Arm::Curated || f.curated_skill.is_some())
                    .map(move |a| (seed, f, *a))
            })
            .collect()
    };
    let total_runs: usize = (0..ctx.seeds)
        .flat_map(|s| {
            sequences_for(false, s)
                .into_iter()
                .chain(sequences_for(true, s))
        })
        .map(|(_, f, _)| f.instances.len())
        .sum();
    let progress = Progress::new(total_runs, ctx.progress, Arc::clone(&ctx.interrupted));

    // Phase 1: the task families.
    let jobs: Vec<(usize, &Family, Arm)> = (0..ctx.seeds)
        .flat_map(|s| sequences_for(false, s))
        .collect();
    let phase1: Vec<SequenceResult> = run_all(jobs, ctx.jobs, |(seed, family, arm)| {
        run_sequence(
            ctx,
            &template,
            &Sequence {
                family,
                arm,
                seed,
                inherited: None,
            },
            &progress,
        )
    })
    .into_iter()
    .collect::<Result<_>>()?;

    // Every skill the learning arm left behind, merged per seed.
    let mut learned: BTreeMap<usize, TempDir> = BTreeMap::new();
    for result in &phase1 {
        let Some(first) = result.runs.first() else {
            continue;
        };
        if first.arm != Arm::Learning {
            continue;
        }
        let union = match learned.entry(first.seed) {
            std::collections::btree_map::Entry::Occupied(slot) => slot.into_mut(),
            std::collections::btree_map::Entry::Vacant(slot) => {
                slot.insert(temp_dir("knack-eval-learned-")?)
            }
        };
        copy_tree(result.library.path(), union.path())?;
    }
    let inherited_names: BTreeMap<usize, Vec<String>> = learned
        .iter()
        .map(|(seed, dir)| (*seed, skill_names(dir.path())))
        .collect();

    // Phase 2: control families, the learning arm starting from that union.
    let jobs: Vec<(usize, &Family, Arm)> = (0..ctx.seeds)
        .flat_map(|s| sequences_for(true, s))
        .collect();
    let phase2: Vec<SequenceResult> = run_all(jobs, ctx.jobs, |(seed, family, arm)| {
        let inherited = if arm == Arm::Learning {
            learned.get(&seed).map(TempDir::path)
        } else {
            None
        };
        run_sequence(
            ctx,
            &template,
            &Sequence {
                family,
                arm,
                seed,
                inherited,
            },
            &progress,
        )
    })
    .into_iter()
    .collect::<Result<_>>()?;
    progress.finish();

    let runs: Vec<LoopRun> = phase1
        .into_iter()
        .chain(phase2)
        .flat_map(|r| r.runs)
        .collect();
    let errors = runs.iter().filter(|r| r.metrics.error.is_some()).count();
    let max_rep = families
        .iter()
        .filter(|f| !f.control)
        .map(|f| f.instances.len())
        .max()
        .unwrap_or(0);
    let mut per_repetition = Vec::new();
    for arm in &options.arms {
        for k in 1..=max_rep {
            per_repetition.push(summarize_repetition(*arm, k, &runs));
        }
    }
    let mut headline = Vec::new();
    for arm in options.arms.iter().filter(|a| **a != Arm::Baseline) {
        if options.arms.contains(&Arm::Baseline) {
            for k in 1..=max_rep {
                headline.push(paired(*arm, k, &runs));
            }
        }
    }
    let control: Vec<ControlSummary> = options
        .arms
        .iter()
        .map(|arm| summarize_control(*arm, &runs, &inherited_names))
        .collect();

    let inputs: Vec<String> = families
        .iter()
        .map(|f| {
            format!(
                "{} ({} instances{})",
                f.name,
                f.instances.len(),
                if f.control { ", control" } else { "" }
            )
        })
        .collect();
    let mut header = Header::new(ctx, "loop", inputs);
    header.inputs.insert(0, dir.display().to_string());
    let arms: Vec<&str> = options.arms.iter().map(|a| a.as_str()).collect();
    let json = json!({
        "notice": header.notice,
        "header": header,
        "arms": arms,
        "families": families.iter().map(|f| json!({"name": f.name, "description": f.description, "control": f.control, "instances": f.instances.iter().map(|i| i.name.clone()).collect::<Vec<_>>(), "curated_skill": f.curated_skill, "curated_name": f.curated_name})).collect::<Vec<_>>(),
        "runs": runs,
        "summary": {
            "headline": headline,
            "per_repetition": per_repetition,
            "control": control,
            "errors": errors,
        },
    });
    let md = markdown(
        &header,
        &options.arms,
        &headline,
        &per_repetition,
        &control,
        &runs,
        errors,
    );
    let groups: Vec<BarGroup> = (1..=max_rep)
        .map(|k| BarGroup {
            label: format!("rep {k}"),
            values: options
                .arms
                .iter()
                .map(|arm| {
                    per_repetition
                        .iter()
                        .find(|s| s.arm == *arm && s.repetition == k)
                        .and_then(|s| s.tokens_total)
                        .map_or(0.0, |e| e.value)
                })
                .collect(),
        })
        .collect();
    let svg = bar_chart(
        "Tokens per run by repetition (median over seeds, review included)",
        header.notice.as_deref(),
        &arms,
        &groups,
        "tokens",
    );
    let report = write_report(&ctx.out, &json, &md, &svg)?;
    Ok(LoopOutcome {
        report,
        headline,
        errors,
        stop_reason: progress.stop_reason(),
    })
}

fn run_sequence(
    ctx: &EvalContext,
    template: &HomeTemplate,
    seq: &Sequence<'_>,
    progress: &Progress,
) -> Result<SequenceResult> {
    let library = temp_dir("knack-eval-library-")?;
    copy_tree(&template.skills_dir(), library.path())?;
    let mut relevant: Vec<String> = Vec::new();
    if let Some(inherited) = seq.inherited {
        copy_tree(inherited, library.path())?;
    }
    if seq.arm == Arm::Curated
        && let (Some(skill), Some(name)) = (&seq.family.curated_skill, &seq.family.curated_name)
    {
        copy_tree(skill, &library.path().join(name))?;
        relevant.push(name.clone());
    }
    let order = latin_order(seq.family.instances.len(), seq.seed);
    let mut runs = Vec::with_capacity(order.len());
    for (position, &index) in order.iter().enumerate() {
        let instance = &seq.family.instances[index];
        let metrics = if progress.stopped() {
            not_run()
        } else {
            let verifier = Verifier::Script(instance.verify.clone());
            let spec = RunSpec {
                template,
                library: Some(library.path()),
                fixture: instance.fixture.as_deref(),
                prompt: &instance.prompt,
                verifier: &verifier,
                review: seq.arm.learns(),
                relevant: &relevant,
            };
            let label = format!("{} {} {}", seq.family.name, seq.arm.as_str(), instance.name);
            let executed = execute(ctx, &spec, progress, &label)?;
            if seq.arm.learns() {
                // What the run's library holds now is where the next instance starts.
                replace_tree(&executed.home.path().join("skills"), library.path())?;
                for name in executed
                    .metrics
                    .skills
                    .created
                    .iter()
                    .chain(&executed.metrics.skills.patched)
                {
                    if !relevant.contains(name) {
                        relevant.push(name.clone());
                    }
                }
            }
            executed.metrics
        };
        runs.push(LoopRun {
            family: seq.family.name.clone(),
            instance: instance.name.clone(),
            arm: seq.arm,
            seed: seq.seed,
            repetition: position + 1,
            control: seq.family.control,
            metrics,
        });
    }
    Ok(SequenceResult { runs, library })
}

/// The names of the skills under a library folder (folders holding a SKILL.md).
fn skill_names(dir: &Path) -> Vec<String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(std::result::Result::ok)
        .filter(|e| e.file_name() == "SKILL.md")
        .filter_map(|e| {
            e.path()
                .parent()?
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .collect()
}

/// Per seed, the mean of `value` over `runs`; then `statistic` over seeds with its interval.
fn over_seeds(
    runs: &[&LoopRun],
    value: impl Fn(&RunMetrics) -> Option<f64>,
    statistic: fn(&[f64]) -> Option<f64>,
) -> Option<Estimate> {
    let mut by_seed: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for run in runs {
        if let Some(v) = value(&run.metrics) {
            by_seed.entry(run.seed).or_default().push(v);
        }
    }
    let per_seed: Vec<f64> = by_seed.values().filter_map(|v| mean(v)).collect();
    bootstrap(&per_seed, statistic)
}

fn measured(run: &LoopRun) -> bool {
    run.metrics.error.is_none()
}

fn passed(m: &RunMetrics) -> Option<f64> {
    m.passed.map(|p| f64::from(u8::from(p)))
}

fn summarize_repetition(arm: Arm, k: usize, runs: &[LoopRun]) -> RepetitionSummary {
    let here: Vec<&LoopRun> = runs
        .iter()
        .filter(|r| r.arm == arm && r.repetition == k && !r.control && measured(r))
        .collect();
    let count = |f: fn(&LoopRun) -> bool| here.iter().filter(|r| f(r)).count();
    RepetitionSummary {
        arm,
        repetition: k,
        runs: here.len(),
        pass_rate: over_seeds(&here, passed, mean),
        tokens_total: over_seeds(&here, |m| Some(m.tokens_total as f64), median),
        tokens_fresh: over_seeds(
            &here,
            |m| Some((m.tokens.input + m.tokens.cache_write + m.tokens.output) as f64),
            median,
        ),
        cost_usd: over_seeds(&here, |m| m.cost_usd, median),
        cost_uncached_usd: over_seeds(&here, |m| m.cost_uncached_usd, median),
        tool_calls: over_seeds(&here, |m| Some(f64::from(m.tool_calls)), median),
        review_tokens: over_seeds(&here, |m| Some(m.review_tokens as f64), median),
        skills_created: here.iter().map(|r| r.metrics.skills.created.len()).sum(),
        skills_patched: here.iter().map(|r| r.metrics.skills.patched.len()).sum(),
        relevant_available: count(|r| r.metrics.skills.activated.is_some()),
        activated: count(|r| r.metrics.skills.activated == Some(true)),
        silent_bypass: count(|r| r.metrics.skills.activated == Some(false)),
    }
}

/// `arm` at repetition k against baseline on the same family, instance and seed.
fn paired(arm: Arm, k: usize, runs: &[LoopRun]) -> PairedSummary {
    let mut by_seed: BTreeMap<usize, Vec<(&RunMetrics, &RunMetrics)>> = BTreeMap::new();
    for run in runs
        .iter()
        .filter(|r| r.arm == arm && r.repetition == k && !r.control && measured(r))
    {
        let base = runs.iter().find(|b| {
            b.arm == Arm::Baseline
                && b.family == run.family
                && b.instance == run.instance
                && b.seed == run.seed
                && measured(b)
        });
        if let Some(base) = base {
            by_seed
                .entry(run.seed)
                .or_default()
                .push((&run.metrics, &base.metrics));
        }
    }
    let pairs = by_seed.values().map(Vec::len).sum();
    let diff = |f: &dyn Fn(&RunMetrics) -> Option<f64>| {
        let per_seed: Vec<f64> = by_seed
            .values()
            .filter_map(|pairs| {
                mean(
                    &pairs
                        .iter()
                        .filter_map(|(a, b)| Some(f(a)? - f(b)?))
                        .collect::<Vec<_>>(),
                )
            })
            .collect();
        bootstrap(&per_seed, mean)
    };
    PairedSummary {
        arm,
        repetition: k,
        pairs,
        passed_difference: diff(&passed),
        tokens_difference: diff(&|m| Some(m.tokens_total as f64)),
        cost_difference: diff(&|m| m.cost_usd),
        tool_calls_difference: diff(&|m| Some(f64::from(m.tool_calls))),
    }
}

fn summarize_control(
    arm: Arm,
    runs: &[LoopRun],
    inherited: &BTreeMap<usize, Vec<String>>,
) -> ControlSummary {
    let here: Vec<&LoopRun> = runs
        .iter()
        .filter(|r| r.arm == arm && r.control && measured(r))
        .collect();
    let misfires = here
        .iter()
        .filter(|r| {
            let names = inherited
                .get(&r.seed)
                .map(Vec::as_slice)
                .unwrap_or_default();
            arm == Arm::Learning && r.metrics.skills.loaded.iter().any(|l| names.contains(l))
        })
        .count();
    ControlSummary {
        arm,
        runs: here.len(),
        pass_rate: over_seeds(&here, passed, mean),
        tokens_total: over_seeds(&here, |m| Some(m.tokens_total as f64), median),
        misfires,
    }
}

fn markdown(
    header: &Header,
    arms: &[Arm],
    headline: &[PairedSummary],
    reps: &[RepetitionSummary],
    control: &[ControlSummary],
    runs: &[LoopRun],
    errors: usize,
) -> String {
    let mut md = header.markdown("Does the agent learn?");
    let _ = writeln!(
        md,
        "{} run(s), {errors} error(s). Tokens count every request of a run: the conversation, the review and compaction. Intervals are 95 % bootstrap intervals over seeds.\n",
        runs.len()
    );
    if !headline.is_empty() {
        md.push_str("## Headline: each arm at repetition k against baseline on the same instance\n\n| arm | k | pairs | Δ pass | Δ tokens | Δ cost USD | Δ tool calls |\n|---|---|---|---|---|---|---|\n");
        for h in headline {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} |",
                h.arm.as_str(),
                h.repetition,
                h.pairs,
                est(h.passed_difference, 2),
                est(h.tokens_difference, 0),
                est(h.cost_difference, 4),
                est(h.tool_calls_difference, 1)
            );
        }
        md.push('\n');
    }
    if reps.is_empty() {
        md.push_str("Only control families were chosen: there is no learning curve or headline, only the control rows below.\n\n");
    }
    md.push_str("## Per repetition (task families)\n\n| arm | k | runs | pass rate | tokens | fresh tokens | cost USD | uncached cost USD | tool calls | review tokens | created | patched | activated | silent bypass |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for arm in arms {
        for r in reps.iter().filter(|r| r.arm == *arm) {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {}/{} | {} |",
                arm.as_str(),
                r.repetition,
                r.runs,
                est(r.pass_rate, 2),
                est(r.tokens_total, 0),
                est(r.tokens_fresh, 0),
                est(r.cost_usd, 4),
                est(r.cost_uncached_usd, 4),
                est(r.tool_calls, 1),
                est(r.review_tokens, 0),
                r.skills_created,
                r.skills_patched,
                r.activated,
                r.relevant_available,
                r.silent_bypass
            );
        }
    }
    md.push_str("\n## Control families (unrelated work; learning starts with every skill learned on the other families)\n\n| arm | runs | pass rate | tokens | misfires |\n|---|---|---|---|---|\n");
    for c in control {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} |",
            c.arm.as_str(),
            c.runs,
            est(c.pass_rate, 2),
            est(c.tokens_total, 0),
            c.misfires
        );
    }
    let stray = runs
        .iter()
        .filter(|r| {
            r.arm != Arm::Learning
                && !(r.metrics.skills.created.is_empty() && r.metrics.skills.patched.is_empty())
        })
        .count();
    if stray > 0 {
        let _ = writeln!(
            md,
            "\n{stray} run(s) outside the learning arm wrote a skill in the foreground; such runs keep agent writes in the inbox (skills.agent_writes: inbox), so the skill never reached an index or the next instance, but that run's tokens include the write."
        );
    }
    let failures: Vec<&LoopRun> = runs
        .iter()
        .filter(|r| r.metrics.error.is_some() || r.metrics.passed == Some(false))
        .collect();
    if !failures.is_empty() {
        md.push_str("\n## Failed and errored runs\n\n");
        for r in failures {
            let why = r
                .metrics
                .error
                .clone()
                .or_else(|| r.metrics.verify_output.clone())
                .unwrap_or_default();
            let _ = writeln!(
                md,
                "- {} / {} ({}, seed {}, rep {}): {}",
                r.family,
                r.instance,
                r.arm.as_str(),
                r.seed,
                r.repetition,
                cell(why.trim())
            );
        }
    }
    md
}
