//! `bench learning`: runs skill-core's `learning_cost` example and records what the
//! learning loop's guards cost at 10,000 skills: the near-duplicate check of a
//! create (≤ 10 ms), how well it separates copies from new work, and an empty inbox.

use anyhow::Result;

use super::{BenchArgs, ExampleFigure, Target, Workspace, run_example_group};

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    let figures = [
        ExampleFigure::new(
            "duplicate_check_10000",
            "near-duplicate check of one create over 10,000 skills, index built (median of 1,000)",
            Target::AtMostMs(10.0),
        ),
        ExampleFigure::new(
            "duplicate_caught_10000",
            "renamed copies of a library skill refused, naming it (of 500)",
            Target::None,
        ),
        ExampleFigure::new(
            "duplicate_flagged_fresh_10000",
            "new skills from another generator seed flagged as duplicates (of 500)",
            Target::None,
        ),
        ExampleFigure::new(
            "inbox_empty_count",
            "looking at an inbox that was never used (median of 2,000)",
            Target::AtMostMs(0.1),
        ),
    ];
    run_example_group(
        ws,
        args,
        ("skill-core", "learning_cost", "learning"),
        &figures,
        |_, table| {
            format!(
                "## Learning loop\n\n\
The guards on what the agent writes, over 10,000 skills made by test-support's \
deterministic generator and written to disk: the near-duplicate check a create \
runs against the session's search index (it reads the five closest skills' \
body heads from disk), how many renamed copies it catches and how many new \
skills it flags, and what an inbox that was never used costs whoever looks at \
it (release build).\n\n{table}"
            )
        },
    )
}
