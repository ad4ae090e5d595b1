//! `bench eval`: the cost `knack eval` adds around each agent session (home
//! and workspace copies, verifier start, accounting, report) and the wall
//! time of 100 scripted runs with `--jobs 4` against the mock model server.

use std::fs;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context as _, Result, bail};

use super::agent::MockServer;
use super::{BenchArgs, Invocation, Row, Target, Workspace};

const HARNESS_TARGET_MS: f64 = 50.0;
const TOTAL_TARGET_MS: f64 = 60_000.0;
const INSTANCES: usize = 5;
/// Two arms × 10 seeds × 5 instances = 100 runs.
const SEEDS: usize = 10;
const RUNS: usize = 2 * SEEDS * INSTANCES;
const JOBS: usize = 4;

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    ws.build_release("knack")?;
    ws.build_release("test-support")?;
    let work = super::scratch_dir("eval")?;
    let result = measure(ws, &work);
    super::finish_scratch_dir(&work, args.keep);
    let (total_ms, harness, agent) = result?;
    let rows = vec![
        Row::new(
            "harness overhead per run (copies, verifier, accounting), median",
            harness.median,
            super::fmt_ms(harness.median),
            format!(
                "{}–{}",
                super::fmt_ms(harness.min),
                super::fmt_ms(harness.max)
            ),
            Target::AtMostMs(HARNESS_TARGET_MS),
        ),
        Row::new(
            "the agent session itself (`knack run --json`), median",
            agent.median,
            super::fmt_ms(agent.median),
            format!("{}–{}", super::fmt_ms(agent.min), super::fmt_ms(agent.max)),
            Target::None,
        ),
        Row::new(
            format!("{RUNS} scripted runs with --jobs {JOBS}, whole `knack eval loop`"),
            total_ms,
            super::fmt_ms(total_ms),
            String::new(),
            Target::AtMostMs(TOTAL_TARGET_MS),
        ),
    ];
    let table = super::render_table(&rows);
    println!("\n{table}");
    let body = format!(
        "## Eval harness\n\n\
`knack eval loop` over one generated family of {INSTANCES} instances (a one-file fixture, a\n\
verifier that checks the file), arms baseline and learning, {SEEDS} seeds: {RUNS} runs, {JOBS} at a time,\n\
against `mock-model-server` answering every request with a short text (no tool calls, so no\n\
review). Each run's `harness_ms` in report.json is the eval's own time around the session:\n\
copying the temp home and the fixture, starting the verifier, reading the session store.\n\
The last row is the whole command, report writing included.\n\n\
{table}\n\
{}\n\n\
Reproduce: `cargo xtask bench eval` (add `--keep` to read the report).\n",
        super::provenance(&ws.root),
    );
    super::publish(ws, args, "eval", &rows, &body)
}

/// Median, min and max of a list of milliseconds.
struct Spread {
    median: f64,
    min: f64,
    max: f64,
}

impl Spread {
    fn of(mut values: Vec<f64>) -> Result<Self> {
        if values.is_empty() {
            bail!("the report holds no runs");
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let median = if n % 2 == 1 {
            values[n / 2]
        } else {
            (values[n / 2 - 1] + values[n / 2]) / 2.0
        };
        Ok(Self {
            median,
            min: values[0],
            max: values[n - 1],
        })
    }
}

fn measure(ws: &Workspace, work: &Path) -> Result<(f64, Spread, Spread)> {
    let family = work.join("evals/bench");
    fs::create_dir_all(&family)?;
    fs::write(
        family.join("family.yaml"),
        "name: bench\ndescription: a trivial family for timing the harness\ncontrol: false\n",
    )?;
    for i in 0..INSTANCES {
        let dir = family.join(format!("i{i}"));
        fs::create_dir_all(dir.join("fixture"))?;
        fs::write(dir.join("task.md"), format!("Say hello to instance {i}.\n"))?;
        fs::write(dir.join("fixture/input.txt"), format!("instance {i}\n"))?;
        fs::write(dir.join("verify.sh"), "test -f input.txt\n")?;
    }
    let replies: Vec<String> = (0..RUNS)
        .map(|i| {
            format!(
                r#"{{"text": "Hello {i}.", "usage": {{"prompt_tokens": 1500, "completion_tokens": 5, "cached_tokens": 1200}}}}"#
            )
        })
        .collect();
    let script = work.join("script.json");
    fs::write(&script, format!("[\n{}\n]\n", replies.join(",\n")))?;
    let server = MockServer::start(&ws.release_binary("mock-model-server"), &script)?;
    let home = work.join("home");
    fs::create_dir_all(&home)?;
    let out = work.join("report");
    let eval = Invocation {
        program: ws.release_binary("knack"),
        args: [
            "eval", "loop", "--seeds", "10", "--jobs", "4", "--json", "--out",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .chain([
            out.display().to_string(),
            work.join("evals").display().to_string(),
        ])
        .collect(),
        env: vec![
            ("KNACK_HOME".into(), home.display().to_string()),
            ("KNACK_BASE_URL".into(), server.base_url.clone()),
            ("KNACK_MODEL".into(), "mock-model".into()),
            ("NO_COLOR".into(), "1".into()),
        ],
        env_remove_prefix: Some("KNACK_".into()),
        cwd: work.to_path_buf(),
    };
    let started = Instant::now();
    eval.capture()?;
    let total_ms = started.elapsed().as_secs_f64() * 1000.0;
    let report = fs::read_to_string(out.join("report.json"))
        .with_context(|| format!("no report in {}", out.display()))?;
    let harness = numbers_of(&report, "harness_ms");
    let agent = numbers_of(&report, "wall_ms");
    if harness.len() != RUNS {
        bail!(
            "expected {RUNS} runs in the report, found {}",
            harness.len()
        );
    }
    if report.matches("\"passed\": true").count() != RUNS {
        bail!("not every scripted run passed its verifier:\n{report}");
    }
    Ok((total_ms, Spread::of(harness)?, Spread::of(agent)?))
}

/// Every number written as `"key": N` in pretty-printed JSON.
fn numbers_of(json: &str, key: &str) -> Vec<f64> {
    let needle = format!("\"{key}\": ");
    json.match_indices(&needle)
        .filter_map(|(at, _)| {
            let rest = &json[at + needle.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            rest[..end].parse().ok()
        })
        .collect()
}
