//! `bench hub`: runs skill-hub's `check_cost` example and records what `skills check`
//! and `update` cost for 80 skills installed from one local git repository (target ≤ 30 s).

use anyhow::Result;

use super::{BenchArgs, ExampleFigure, Target, Workspace, run_example_group};

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    let figures = [
        ExampleFigure::new(
            "hub_check_80",
            "skills check of 80 skills from one local git repository (median of 5)",
            Target::AtMostMs(30_000.0),
        ),
        ExampleFigure::new(
            "hub_update_80_two_changed",
            "skills update of the same 80, two changed upstream (one run)",
            Target::None,
        ),
    ];
    run_example_group(
        ws,
        args,
        ("skill-hub", "check_cost", "hub"),
        &figures,
        |_, table| {
            format!(
                "## Hub check and update\n\n\
`knack skills check` groups installed skills by repository and fetches each \
once (at most 4 sources at a time); this is 80 skills installed from one \
local git repository (`git+file://`), two of them changed upstream, and the \
`update` that re-installs those two (release build).\n\n{table}"
            )
        },
    )
}
