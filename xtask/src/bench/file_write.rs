//! `bench file-write`: runs agent-loop's `write_file_cost` example and records what a
//! `write_file` through the boundary costs (gate + fd-relative replacement), against ≤ 2 ms.

use anyhow::Result;

use super::{BenchArgs, ExampleFigure, Target, Workspace, run_example_group};

const TARGET_MS: f64 = 2.0;

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    let figures = [
        ExampleFigure::new(
            "write_file",
            "`write_file` of 4 KB into an existing folder (median)",
            Target::AtMostMs(TARGET_MS),
        ),
        ExampleFigure::new(
            "write_file_new_folders",
            "`write_file` that makes two folders first (median)",
            Target::None,
        ),
        ExampleFigure::new(
            "patch",
            "`patch` of the same file: read, patch, replace (median)",
            Target::None,
        ),
    ];
    run_example_group(
        ws,
        args,
        ("agent-loop", "write_file_cost", "file-write"),
        &figures,
        |_stdout, table| {
            format!(
                "## File writes\n\n\
What a file tool's write costs through the boundary: the gate (path resolution, the \
skill-folder and protected-folder rules) and the replacement opened fd-relative beneath \
the workspace with openat2 (a temporary file renamed in the same folder handle, without \
an fsync: see the durability note in crates/agent-loop/src/tools/beneath.rs). \
Medians of 1,000 calls through the tool registry (release build).\n\n{table}"
            )
        },
    )
}
