//! `bench client`: runs agent-loop's `client_overhead` example and records what one model
//! request costs the client on each wire (build, serialise, parse), against the ≤ 2 ms target.

use std::process::{Command, Stdio};

use anyhow::{Context as _, Result, bail};

use super::{BenchArgs, Row, Target, Workspace, bench_line, parse_bench_lines};

const TARGET_MS: f64 = 2.0;

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    println!("running agent-loop's client_overhead example (release)…");
    let output = Command::new(&ws.cargo)
        .args([
            "run",
            "--release",
            "-p",
            "agent-loop",
            "--example",
            "client_overhead",
        ])
        .current_dir(&ws.root)
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("cannot run {}", ws.cargo))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        bail!(
            "the client_overhead example failed ({}):\n{stdout}",
            output.status
        );
    }
    let lines = parse_bench_lines(&stdout);
    let mut rows = Vec::new();
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
            let line = bench_line(&lines, &format!("{prefix}_{wire}"), &stdout)?;
            rows.push(Row::from_bench(format!("{label}: {what}"), line, target));
        }
    }
    let table = super::render_table(&rows);
    println!("\n{table}");
    let sizes: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("request body"))
        .collect();
    if !args.no_docs {
        let body = format!(
            "## Model client\n\n\
What one model request costs knack's own client, network excluded: cloning a \
200-message history (system prompt about 8 KB, tool results about 1.5 KB, the \
reasoning each wire replays) into a request with 20 frozen tool specs, \
serialising it, and decoding and assembling a streamed reply of 400 text deltas, \
one tool call in 20 pieces and usage, read in 1 KiB pieces. Medians of 300 rounds \
after 20 warm-up rounds (release build).\n\n\
{table}\n\
Sizes: {}.\n\n\
{}\n\n\
Reproduce: `cargo xtask bench client` (or `cargo run --release -p agent-loop --example client_overhead`).\n",
            sizes.join("; "),
            super::provenance(&ws.root),
        );
        let path = super::write_doc_section(&ws.root, "client", &body)?;
        println!("updated {}", path.display());
    }
    Ok(super::all_passed(&rows))
}
