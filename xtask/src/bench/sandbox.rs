//! `bench sandbox`: runs knack-sandbox's `setup_cost` example and records what confining a
//! command adds to starting it, against the ≤ 5 ms target.

use anyhow::Result;

use super::{BenchArgs, ExampleFigure, Target, Workspace, run_example_group};

const TARGET_MS: f64 = 5.0;

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    let figures = [
        ExampleFigure::new(
            "spawn_plain",
            "`true`, spawned and reaped, no sandbox",
            Target::None,
        ),
        ExampleFigure::new(
            "spawn_landlock",
            "`true` under workspace-write (Landlock)",
            Target::None,
        ),
        ExampleFigure::new(
            "spawn_landlock_mounts",
            "`true` with a protected folder and a hidden file (Landlock + mount namespace)",
            Target::None,
        ),
        ExampleFigure::new(
            "overhead_landlock",
            "sandbox setup added, Landlock only (median)",
            Target::AtMostMs(TARGET_MS),
        ),
        ExampleFigure::new(
            "overhead_landlock_mounts",
            "sandbox setup added, with mount namespace (median)",
            Target::AtMostMs(TARGET_MS),
        ),
    ];
    run_example_group(
        ws,
        args,
        ("knack-sandbox", "setup_cost", "sandbox"),
        &figures,
        |stdout, table| {
            let support = stdout
                .lines()
                .find_map(|l| l.strip_prefix("sandbox support: "))
                .unwrap_or("unknown");
            format!(
                "## Sandbox\n\n\
What confining a terminal command costs: medians of 300 spawns of `true` each way \
(release build). Kernel support here: {support}.\n\n{table}"
            )
        },
    )
}
