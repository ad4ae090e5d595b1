//! `bench client`: runs model-client's `client_overhead` example and records what one model
//! request costs the client on each wire (build, serialise, parse), against the ≤ 2 ms target.

use anyhow::Result;

use super::{BenchArgs, ExampleFigure, Target, Workspace, run_example_group};

const TARGET_MS: f64 = 2.0;

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    let mut figures = Vec::new();
    for (wire, label) in [
        ("chat", "Chat Completions"),
        ("anthropic", "Anthropic Messages"),
        ("responses", "OpenAI Responses"),
    ] {
        for (prefix, what, target) in [
            (
                "client",
                "per request: build, serialise, parse the reply (median)",
                Target::AtMostMs(TARGET_MS),
            ),
            (
                "encode",
                "building and serialising the request",
                Target::None,
            ),
            ("parse", "decoding and assembling the stream", Target::None),
        ] {
            figures.push(ExampleFigure::new(
                format!("{prefix}_{wire}"),
                format!("{label}: {what}"),
                target,
            ));
        }
    }
    run_example_group(
        ws,
        args,
        ("model-client", "client_overhead", "client"),
        &figures,
        |stdout, table| {
            let sizes: Vec<&str> = stdout
                .lines()
                .filter(|l| l.contains("request body"))
                .collect();
            format!(
                "## Model client\n\n\
What one model request costs knack's own client, network excluded: cloning a \
200-message history (system prompt about 8 KB, tool results about 1.5 KB, the \
reasoning each wire replays) into a request with 20 frozen tool specs, \
serialising it, and decoding and assembling a streamed reply of 400 text deltas, \
one tool call in 20 pieces and usage, read in 1 KiB pieces. Medians of 300 rounds \
after 20 warm-up rounds (release build).\n\n{table}\nSizes: {}.",
                sizes.join("; ")
            )
        },
    )
}
