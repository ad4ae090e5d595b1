//! `bench library`: runs agent-loop's `library_cost` example and records what
//! the usage records cost: one recorded use or view (≤ 1 ms, paid by the tool
//! call it counts) and `knack skills stats` over 10,000 skills (≤ 100 ms).

use anyhow::Result;

use super::{BenchArgs, ExampleFigure, Target, Workspace, run_example_group};

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    let figures = [
        ExampleFigure::new(
            "record_use",
            "recording one use in state.db (median)",
            Target::AtMostMs(1.0),
        ),
        ExampleFigure::new(
            "record_view",
            "recording one view in state.db (median)",
            Target::AtMostMs(1.0),
        ),
        ExampleFigure::new(
            "stats_records",
            "stats of 10,000 skills: read the records, build the rows and their JSON (median)",
            Target::AtMostMs(100.0),
        ),
        ExampleFigure::new(
            "stats_command",
            "the same after loading the skill set from its warm discovery snapshot (median)",
            Target::None,
        ),
    ];
    run_example_group(
        ws,
        args,
        ("agent-loop", "library_cost", "library"),
        &figures,
        |stdout, table| {
            let size = stdout
                .lines()
                .find(|l| l.starts_with("stats JSON"))
                .unwrap_or_default();
            format!(
                "## Library health\n\n\
What the skill usage records cost. A recorded use or view is one upsert in \
`state.db` (WAL, `synchronous = NORMAL`) against a table of 5,000 records, \
timed over 2,000 calls after 50 warm-up calls; the tool call that is counted \
pays it. The stats are computed for 10,000 skills in 100 categories, half of \
them with records and half without (those are looked up in their folders, as \
skills written by hand are), discovered as with `skills.scan_max_dirs: 100000`; medians of 20 rounds after 3 warm-up rounds \
(release build).\n\n{table}\n{size}."
            )
        },
    )
}
