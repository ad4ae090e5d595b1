//! `bench sandbox`: runs knack-sandbox's `setup_cost` example and records what confining a
//! command adds to starting it, against the ≤ 5 ms target.

use std::process::{Command, Stdio};

use anyhow::{Context as _, Result, bail};

use super::{BenchArgs, Row, Target, Workspace, bench_line, parse_bench_lines};

const TARGET_MS: f64 = 5.0;

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    println!("running knack-sandbox's setup_cost example (release)…");
    let output = Command::new(&ws.cargo)
        .args([
            "run",
            "--release",
            "-p",
            "knack-sandbox",
            "--example",
            "setup_cost",
        ])
        .current_dir(&ws.root)
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("cannot run {}", ws.cargo))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        bail!(
            "the setup_cost example failed ({}):\n{stdout}",
            output.status
        );
    }
    let lines = parse_bench_lines(&stdout);
    let figures = [
        (
            "spawn_plain",
            "`true`, spawned and reaped, no sandbox",
            Target::None,
        ),
        (
            "spawn_landlock",
            "`true` under workspace-write (Landlock)",
            Target::None,
        ),
        (
            "spawn_landlock_mounts",
            "`true` with a protected folder and a hidden file (Landlock + mount namespace)",
            Target::None,
        ),
        (
            "overhead_landlock",
            "sandbox setup added, Landlock only (median)",
            Target::AtMostMs(TARGET_MS),
        ),
        (
            "overhead_landlock_mounts",
            "sandbox setup added, with mount namespace (median)",
            Target::AtMostMs(TARGET_MS),
        ),
    ];
    let mut rows = Vec::new();
    for (name, figure, target) in figures {
        let line = bench_line(&lines, name, &stdout)?;
        rows.push(Row::new(
            figure,
            line.value,
            line.measured(),
            line.spread(),
            target,
        ));
    }
    let table = super::render_table(&rows);
    println!("\n{table}");
    let support = stdout
        .lines()
        .find_map(|l| l.strip_prefix("sandbox support: "))
        .unwrap_or("unknown");
    if !args.no_docs {
        let body = format!(
            "## Sandbox\n\n\
What confining a terminal command costs: medians of 300 spawns of `true` each way \
(release build). Kernel support here: {support}.\n\n\
{table}\n\
{}\n\n\
Reproduce: `cargo xtask bench sandbox` (or `cargo run --release -p knack-sandbox --example setup_cost`).\n",
            super::provenance(&ws.root),
        );
        let path = super::write_doc_section(&ws.root, "sandbox", &body)?;
        println!("updated {}", path.display());
    }
    Ok(super::all_passed(&rows))
}
