//! `bench mcp`: runs mcp-client's `mcp_cost` example against test-support's MCP server and
//! records what two stdio servers add to a session's start (≤ 300 ms) and one tool call's
//! round trip through the client (≤ 5 ms).

use anyhow::Result;

use super::{BenchArgs, ExampleFigure, Target, Workspace, run_example_group};

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    // The example finds the server binary next to its own folder.
    ws.build_release("test-support")?;
    let figures = [
        ExampleFigure::new(
            "start_added_by_two_servers",
            "session start: two local stdio servers, started in parallel, added (median)",
            Target::AtMostMs(300.0),
        ),
        ExampleFigure::new(
            "tool_call_round_trip",
            "one tool call through the client, round trip (median; the server's own work is an echo)",
            Target::AtMostMs(5.0),
        ),
    ];
    run_example_group(
        ws,
        args,
        ("mcp-client", "mcp_cost", "mcp"),
        &figures,
        |_, table| {
            format!(
                "## MCP\n\n\
What MCP servers cost a session, measured with test-support's small rmcp server: \
15 starts of two stdio servers against starts with none, then 300 `echo` calls \
(release build).\n\n{table}"
            )
        },
    )
}
