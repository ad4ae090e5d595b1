//! `bench guard`: runs skill-guard's own throughput example and records its
//! scan rate (in MB/s) against the ≥ 50 MB/s target.

use std::process::{Command, Stdio};

use anyhow::{Context as _, Result, bail};

use super::{BenchArgs, Row, Target, Workspace};

const EXAMPLE: &str = "crates/skill-guard/examples/throughput.rs";
const TARGET_MB_PER_S: f64 = 50.0;

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    if !ws.root.join(EXAMPLE).is_file() {
        println!("bench guard: not yet implemented ({EXAMPLE} does not exist yet)");
        return Ok(true);
    }
    println!("running skill-guard's throughput example (release)…");
    let output = Command::new(&ws.cargo)
        .args([
            "run",
            "--release",
            "-p",
            "skill-guard",
            "--example",
            "throughput",
        ])
        .current_dir(&ws.root)
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("cannot run {}", ws.cargo))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        bail!(
            "the throughput example failed ({}):\n{stdout}",
            output.status
        );
    }
    let rows: Vec<Row> = stdout
        .lines()
        .filter_map(|line| {
            let rate = mb_per_s(line)?;
            Some(Row::new(
                line.trim(),
                rate,
                format!("{rate:.1} MB/s"),
                String::new(),
                Target::AtLeastMbPerS(TARGET_MB_PER_S),
            ))
        })
        .collect();
    if rows.is_empty() {
        bail!("the throughput example printed no MB/s or MiB/s figure:\n{stdout}");
    }
    let table = super::render_table(&rows);
    println!("\n{table}");
    if !args.no_docs {
        let body = format!(
            "## Guard\n\n\
Scan throughput reported by skill-guard's `throughput` example (release build).\n\n\
{table}\n\
{}\n\n\
Reproduce: `cargo xtask bench guard` (or `cargo run --release -p skill-guard --example throughput`).\n",
            super::provenance(&ws.root),
        );
        let path = super::write_doc_section(&ws.root, "guard", &body)?;
        println!("updated {}", path.display());
    }
    Ok(super::all_passed(&rows))
}

/// The rate on a line such as "scanned 12 MiB: 87.3 MiB/s", in MB/s
/// (MiB/s figures are converted, since the target is in decimal megabytes).
fn mb_per_s(line: &str) -> Option<f64> {
    let (at, factor) = match (line.rfind("MiB/s"), line.rfind("MB/s")) {
        (Some(i), _) => (i, 1.048_576),
        (None, Some(i)) => (i, 1.0),
        (None, None) => return None,
    };
    let before = line[..at].trim_end();
    let start = before
        .rfind(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map_or(0, |i| i + 1);
    before[start..].parse::<f64>().ok().map(|v| v * factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_read_from_the_end_of_a_line() {
        assert_eq!(mb_per_s("scanned 12 MiB in 0.1 s: 87.3 MB/s"), Some(87.3));
        let mib = mb_per_s("scanned 20.0 MiB in 0.243 s: 100.0 MiB/s (4 findings)").unwrap();
        assert!((mib - 104.8576).abs() < 1e-9, "{mib}");
        assert_eq!(mb_per_s("throughput=120MB/s"), Some(120.0));
        assert_eq!(mb_per_s("no figure here"), None);
        assert_eq!(mb_per_s("MB/s"), None);
    }
}
