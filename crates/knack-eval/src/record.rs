//! One measured run: prepare a workspace and a home, run the session, run the
//! verifier, and turn it all into the numbers every report carries.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use tempfile::TempDir;

use crate::Result;
use crate::pool::Progress;
use crate::runner::{self, EvalContext, SessionRequest, Verifier, millis};
use crate::setup::{HomeTemplate, workspace};
use crate::trace::{SessionTrace, Tokens};

/// Skill events of one run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SkillEvents {
    /// Skills the agent or its review created in this run.
    pub created: Vec<String>,
    /// Skills the agent or its review changed in this run.
    pub patched: Vec<String>,
    /// Skills the run loaded (slash, preload, auto, or `skill_view`).
    pub loaded: Vec<String>,
    /// Skills relevant to this task that were in the library when the run began.
    pub available: Vec<String>,
    /// Whether a relevant skill was loaded; `null` when none was available.
    pub activated: Option<bool>,
}

/// The numbers of one run, shared by every mode's run records.
#[derive(Debug, Clone, Serialize)]
pub struct RunMetrics {
    /// The verifier's verdict; `null` when the run is an error.
    pub passed: Option<bool>,
    /// Why the run could not be measured (the provider did not answer, say).
    pub error: Option<String>,
    /// Every token of the run: conversation, review and compaction.
    pub tokens: Tokens,
    /// `tokens` summed once each (input + cache read + cache write + output).
    pub tokens_total: u64,
    /// Tool calls of the conversation.
    pub tool_calls: u32,
    /// Model requests of the conversation.
    pub turns: u32,
    /// The agent session's wall time, review included.
    pub wall_ms: u64,
    /// The eval's own time around it: copies, verifier start, accounting.
    pub harness_ms: u64,
    /// Billed cost, cache discounts included; `null` without prices.
    pub cost_usd: Option<f64>,
    /// The cost as if nothing had been cached; `null` without prices.
    pub cost_uncached_usd: Option<f64>,
    /// Tokens of the self-improvement review (part of `tokens`).
    pub review_tokens: u64,
    /// Tokens of compaction requests (part of `tokens`).
    pub compact_tokens: u64,
    pub skills: SkillEvents,
    /// The end of the verifier's output when it failed.
    pub verify_output: Option<String>,
}

/// What a run needs besides the context.
pub struct RunSpec<'a> {
    pub template: &'a HomeTemplate,
    /// The skills folder to start from (default: the template's).
    pub library: Option<&'a Path>,
    pub fixture: Option<&'a Path>,
    pub prompt: &'a str,
    pub verifier: &'a Verifier,
    pub review: bool,
    /// Skills that count as relevant for activation.
    pub relevant: &'a [String],
}

/// A finished run: its numbers, its trace, and its home (for skills that carry over).
pub struct Executed {
    pub metrics: RunMetrics,
    pub trace: SessionTrace,
    pub home: TempDir,
}

/// The run's own temp home. A run that must not learn cannot grow its library
/// in the foreground either: a skill the model writes there is held in the inbox,
/// out of every index (`skills.agent_writes: inbox`).
fn run_home(spec: &RunSpec<'_>) -> Result<TempDir> {
    let home = spec.template.instantiate(spec.library)?;
    if !spec.review {
        knack_config::set_dotted(
            &home.path().join("config.yaml"),
            "skills.agent_writes",
            "inbox",
        )?;
    }
    Ok(home)
}

/// Runs one session and its verifier. A run whose model never answered is
/// recorded as an error and stops the other workers from starting runs.
pub fn execute(
    ctx: &EvalContext,
    spec: &RunSpec<'_>,
    progress: &Progress,
    label: &str,
) -> Result<Executed> {
    let started = Instant::now();
    let home = run_home(spec)?;
    let ws = workspace(spec.fixture)?;
    let outcome = runner::run_session(
        &ctx.agent,
        &SessionRequest {
            home: home.path(),
            workspace: ws.path(),
            prompt: spec.prompt,
            review: spec.review,
            max_iterations: None,
        },
    )?;
    let error = outcome.infrastructure_error();
    // The verifier runs only after the session (review included) has ended,
    // and never for a run that could not reach the model.
    let verdict = match &error {
        Some(_) => None,
        None => Some(runner::verify(spec.verifier, ws.path())?),
    };
    if let Some(why) = &error {
        progress.stop(why.clone());
    }
    let tokens = outcome.all_tokens();
    let trace = outcome.trace.clone();
    let loaded = trace.loaded.clone();
    let available: Vec<String> = spec.relevant.to_vec();
    let activated = (!available.is_empty()).then(|| loaded.iter().any(|l| available.contains(l)));
    let metrics = RunMetrics {
        passed: verdict.as_ref().map(|v| v.passed),
        error,
        tokens,
        tokens_total: tokens.total(),
        tool_calls: trace.tool_calls,
        turns: trace.turns,
        wall_ms: outcome.wall_ms,
        harness_ms: millis(started.elapsed()).saturating_sub(outcome.wall_ms),
        cost_usd: outcome.cost_usd,
        cost_uncached_usd: runner::uncached_cost(ctx.provider.prices.as_ref(), &tokens),
        review_tokens: outcome.review_tokens.total(),
        compact_tokens: outcome.compact_tokens.total(),
        skills: SkillEvents {
            created: trace.created(),
            patched: trace.patched(),
            loaded,
            available,
            activated,
        },
        verify_output: verdict.filter(|v| !v.passed).map(|v| v.output_tail),
    };
    progress.run_done(label);
    Ok(Executed {
        metrics,
        trace,
        home,
    })
}

#[cfg(test)]
mod run_home_tests {
    use super::*;
    use crate::setup::Library;

    #[test]
    fn only_a_learning_run_writes_skills_into_its_library() {
        let template = HomeTemplate::build(None, Library::Empty).unwrap();
        let verifier = Verifier::Shell("true".into());
        let writes = |review: bool| {
            let spec = RunSpec {
                template: &template,
                library: None,
                fixture: None,
                prompt: "p",
                verifier: &verifier,
                review,
                relevant: &[],
            };
            let home = run_home(&spec).unwrap();
            knack_config::Config::load_file(&home.path().join("config.yaml"))
                .unwrap()
                .skills
                .agent_writes
        };
        assert_eq!(writes(false), knack_config::AgentWrites::Inbox);
        assert_eq!(writes(true), knack_config::AgentWrites::Direct);
    }
}
