//! `knack eval triggers FILE`: does the right skill fire? Each prompt is the
//! first turn of a session in one shared home and workspace (so every session
//! has the same prefix and the provider's cache is used); a prompt counts as
//! triggered when the model loads the expected skill before doing anything else.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use std::sync::Arc;

use serde::Serialize;
use serde_json::json;

use crate::Result;
use crate::pool::{Progress, run_all};
use crate::report::{BarGroup, Header, WrittenReport, bar_chart, cell, num, write_report};
use crate::runner::{self, EvalContext, SessionRequest};
use crate::setup::{HomeTemplate, Library, workspace};
use crate::spec::TriggerCase;
use crate::trace::Tokens;

/// One prompt's result.
#[derive(Debug, Clone, Serialize)]
pub struct PromptResult {
    pub prompt: String,
    /// The skill that should fire, `none` when none should.
    pub expected: String,
    /// The skills loaded before anything else.
    pub loaded: Vec<String>,
    pub ok: bool,
    pub seed: usize,
    pub tokens: Tokens,
    pub error: Option<String>,
}

/// Recall and precision, `null` when undefined (nothing expected, nothing loaded).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Score {
    pub recall: Option<f64>,
    pub precision: Option<f64>,
    pub expected: usize,
    pub triggered: usize,
    pub correct: usize,
}

impl Score {
    fn finish(mut self) -> Self {
        self.recall = (self.expected > 0).then(|| self.correct as f64 / self.expected as f64);
        self.precision = (self.triggered > 0).then(|| self.correct as f64 / self.triggered as f64);
        self
    }
}

/// The scores of a set of results, overall and per skill.
pub fn score(results: &[PromptResult]) -> (Score, BTreeMap<String, Score>) {
    let mut per_skill: BTreeMap<String, Score> = BTreeMap::new();
    let mut overall = Score::default();
    for r in results.iter().filter(|r| r.error.is_none()) {
        if r.expected != "none" {
            per_skill.entry(r.expected.clone()).or_default().expected += 1;
            overall.expected += 1;
        }
        for skill in &r.loaded {
            let entry = per_skill.entry(skill.clone()).or_default();
            entry.triggered += 1;
            overall.triggered += 1;
            if *skill == r.expected {
                entry.correct += 1;
                overall.correct += 1;
            }
        }
    }
    let per_skill = per_skill
        .into_iter()
        .map(|(k, v)| (k, v.finish()))
        .collect();
    (overall.finish(), per_skill)
}

/// The result of a triggers eval.
pub struct TriggersOutcome {
    pub report: WrittenReport,
    pub overall: Score,
    pub errors: usize,
    pub stop_reason: Option<String>,
}

pub fn run_triggers(
    ctx: &EvalContext,
    file: &Path,
    cases: &[TriggerCase],
) -> Result<TriggersOutcome> {
    let template = HomeTemplate::build(ctx.user_home.as_deref(), Library::User)?;
    let home = template.instantiate(None)?;
    // Sessions run side by side in this home: create the store (and its
    // schema) once, before any of them races to.
    agent_loop::SessionStore::open(&knack_config::KnackHome::at(home.path()))?;
    let ws = workspace(None)?;
    let jobs: Vec<(usize, &TriggerCase)> = (0..ctx.seeds)
        .flat_map(|seed| cases.iter().map(move |c| (seed, c)))
        .collect();
    let progress = Progress::new(jobs.len(), ctx.progress, Arc::clone(&ctx.interrupted));
    let results = run_all(jobs, ctx.jobs, |(seed, case)| -> Result<PromptResult> {
        let expected = case.expected.clone().unwrap_or_else(|| "none".to_owned());
        if progress.stopped() {
            return Ok(PromptResult {
                prompt: case.prompt.clone(),
                expected,
                loaded: Vec::new(),
                ok: false,
                seed,
                tokens: Tokens::default(),
                error: Some("not run: the eval stopped early (see the other errors)".into()),
            });
        }
        let outcome = runner::run_session(
            &ctx.agent,
            &SessionRequest {
                home: home.path(),
                workspace: ws.path(),
                prompt: &case.prompt,
                review: false,
                // Only the first reply matters: did it load the skill first?
                max_iterations: Some(1),
            },
        )?;
        let error = outcome.infrastructure_error();
        if let Some(why) = &error {
            progress.stop(why.clone());
        }
        let loaded = outcome.trace.loaded_first.clone();
        let ok = error.is_none()
            && match &case.expected {
                Some(skill) => loaded.contains(skill),
                None => loaded.is_empty(),
            };
        progress.run_done(&case.prompt);
        Ok(PromptResult {
            prompt: case.prompt.clone(),
            expected,
            loaded,
            ok,
            seed,
            tokens: outcome.all_tokens(),
            error,
        })
    });
    progress.finish();
    let results: Vec<PromptResult> = results.into_iter().collect::<Result<_>>()?;
    let (overall, per_skill) = score(&results);
    let errors = results.iter().filter(|r| r.error.is_some()).count();
    let header = Header::new(ctx, "triggers", vec![file.display().to_string()]);
    let misses: Vec<&PromptResult> = results
        .iter()
        .filter(|r| r.error.is_none() && r.expected != "none" && !r.loaded.contains(&r.expected))
        .collect();
    let false_triggers: Vec<&PromptResult> = results
        .iter()
        .filter(|r| r.error.is_none() && r.loaded.iter().any(|l| *l != r.expected))
        .collect();
    let mut tokens = Tokens::default();
    for r in &results {
        tokens.add(&r.tokens);
    }
    let json = json!({
        "notice": header.notice,
        "header": header,
        "prompts": results,
        "summary": {
            "recall": overall.recall,
            "precision": overall.precision,
            "overall": overall,
            "per_skill": per_skill,
            "misses": misses.iter().map(|r| json!({"prompt": r.prompt, "expected": r.expected, "loaded": r.loaded})).collect::<Vec<_>>(),
            "false_triggers": false_triggers.iter().map(|r| json!({"prompt": r.prompt, "expected": r.expected, "loaded": r.loaded})).collect::<Vec<_>>(),
            "errors": errors,
            "tokens": tokens,
        },
    });

    let mut md = header.markdown("Skill triggers");
    let _ = writeln!(
        md,
        "Overall: recall **{}**, precision **{}** over {} prompt run(s); {} error(s).\n",
        num(overall.recall, 2),
        num(overall.precision, 2),
        results.len(),
        errors
    );
    md.push_str("| skill | expected | triggered | correct | recall | precision |\n|---|---|---|---|---|---|\n");
    for (skill, s) in &per_skill {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} |",
            cell(skill),
            s.expected,
            s.triggered,
            s.correct,
            num(s.recall, 2),
            num(s.precision, 2)
        );
    }
    md.push_str("\n## Misses (the expected skill was not loaded first)\n\n");
    if misses.is_empty() {
        md.push_str("None.\n");
    }
    for r in &misses {
        let _ = writeln!(
            md,
            "- `{}` expected **{}**, loaded: {}",
            cell(&r.prompt),
            r.expected,
            loaded_list(&r.loaded)
        );
    }
    md.push_str("\n## False triggers (a skill that should not have fired)\n\n");
    if false_triggers.is_empty() {
        md.push_str("None.\n");
    }
    for r in &false_triggers {
        let _ = writeln!(
            md,
            "- `{}` expected **{}**, loaded: {}",
            cell(&r.prompt),
            r.expected,
            loaded_list(&r.loaded)
        );
    }
    for r in results.iter().filter(|r| r.error.is_some()) {
        let _ = writeln!(
            md,
            "- error on `{}`: {}",
            cell(&r.prompt),
            r.error.as_deref().unwrap_or_default()
        );
    }
    let groups: Vec<BarGroup> = per_skill
        .iter()
        .map(|(skill, s)| BarGroup {
            label: skill.clone(),
            values: vec![s.recall.unwrap_or(0.0), s.precision.unwrap_or(0.0)],
        })
        .collect();
    let svg = bar_chart(
        "Trigger recall and precision per skill",
        header.notice.as_deref(),
        &["recall", "precision"],
        &groups,
        "",
    );
    let report = write_report(&ctx.out, &json, &md, &svg)?;
    Ok(TriggersOutcome {
        report,
        overall,
        errors,
        stop_reason: progress.stop_reason(),
    })
}

fn loaded_list(loaded: &[String]) -> String {
    if loaded.is_empty() {
        "nothing".to_owned()
    } else {
        loaded.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(expected: &str, loaded: &[&str]) -> PromptResult {
        PromptResult {
            prompt: "p".into(),
            expected: expected.into(),
            loaded: loaded.iter().map(|s| (*s).to_owned()).collect(),
            ok: false,
            seed: 0,
            tokens: Tokens::default(),
            error: None,
        }
    }

    #[test]
    fn recall_and_precision_per_skill_and_overall() {
        let results = [
            result("deploy", &["deploy"]),
            result("deploy", &[]),
            result("none", &["deploy"]),
            result("release", &["release"]),
            result("none", &[]),
        ];
        let (overall, per_skill) = score(&results);
        assert_eq!(per_skill["deploy"].recall, Some(0.5));
        assert_eq!(per_skill["deploy"].precision, Some(0.5));
        assert_eq!(per_skill["release"].recall, Some(1.0));
        assert_eq!(overall.recall, Some(2.0 / 3.0));
        assert_eq!(overall.precision, Some(2.0 / 3.0));
    }
}
