//! `bench context`: runs agent-loop's `compaction_cost` example and records what deciding on
//! and preparing a compaction of a 1,000-message session costs, against the ≤ 5 ms target.

use anyhow::Result;

use super::{BenchArgs, ExampleFigure, Target, Workspace, run_example_group};

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    let figures = [ExampleFigure::new(
        "decide_and_rewrite_1000",
        "estimate, threshold, cut and rewritten history, 1,000 messages (median)",
        Target::AtMostMs(5.0),
    )];
    run_example_group(
        ws,
        args,
        ("agent-loop", "compaction_cost", "context"),
        &figures,
        |_, table| {
            format!(
                "## Context budget\n\n\
Deciding whether a session must compact and building its compacted history, \
without the model's summarising request: median of 200 runs over a \
1,000-message session with tool calls (release build).\n\n{table}"
            )
        },
    )
}
