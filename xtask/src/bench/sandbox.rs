//! `bench sandbox`: runs knack-sandbox's `setup_cost` example and records what confining a
//! command (namespaces, Landlock, seccomp) adds to starting it, against the ≤ 5 ms target.

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
            "spawn_sandboxed",
            "`true` under a bare workspace policy",
            Target::None,
        ),
        ExampleFigure::new(
            "spawn_sandboxed_like_knack",
            "`true` under a policy like knack's (protected paths, a mask, a hidden file)",
            Target::None,
        ),
        ExampleFigure::new(
            "run_sandboxed_like_knack",
            "the same through `run` (output pipe, poll, kill guard)",
            Target::None,
        ),
        ExampleFigure::new(
            "overhead_sandboxed",
            "sandbox setup added, bare workspace policy (median)",
            Target::AtMostMs(TARGET_MS),
        ),
        ExampleFigure::new(
            "overhead_sandboxed_like_knack",
            "sandbox setup added, policy like knack's (median)",
            Target::AtMostMs(TARGET_MS),
        ),
        ExampleFigure::new(
            "overhead_run_like_knack",
            "sandbox setup added through `run`, policy like knack's (median)",
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
(release build). Each sandboxed spawn makes a user, mount and PID namespace (a supervisor, \
an init and the command), builds the read-only view and applies Landlock and seccomp. \
The minimum is the cost on an idle core; the medians move with the machine's load, \
since each spawn hands over between four processes. Kernel support here: {support}.\n\n{table}"
            )
        },
    )
}
