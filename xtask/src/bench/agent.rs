//! `bench agent`: the turn loop's own cost per model request with a 200-message
//! history (in-process), and the peak memory of `knack run` over a 20-turn session.

use std::fs;
use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use anyhow::{Context as _, Result, bail};

use super::{BenchArgs, Invocation, Row, Stats, Target, Workspace};

const ITERATION_TARGET_MS: f64 = 2.0;
const RSS_TARGET_MB: f64 = 50.0;
/// Resumed `knack run` processes after the one that starts the session.
const RESUMED_RUNS: usize = 20;
/// Every turn: a `skills_list` call, its result, then the answer.
const MESSAGES_PER_TURN: usize = 4;

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    let mut rows = Vec::new();
    let output = ws.run_ignored_tests(
        "agent-loop",
        &["--test", "all"],
        "bench_loop_iteration_200_messages",
        &[],
    )?;
    let lines = super::parse_bench_lines(&output);
    let plain = super::bench_line(&lines, "loop_iteration", &output)?;
    rows.push(Row::from_bench(
        "loop overhead per iteration, 200-message history, in-memory model",
        plain,
        Target::AtMostMs(ITERATION_TARGET_MS),
    ));
    rows.push(Row::from_bench(
        "the same, plus encoding each request as JSON",
        super::bench_line(&lines, "loop_iteration_encoded", &output)?,
        Target::None,
    ));

    ws.build_release("knack")?;
    ws.build_release("test-support")?;
    let work = super::scratch_dir("agent")?;
    let result = measure_runs(ws, &work);
    super::finish_scratch_dir(&work, args.keep);
    let stats = result?;
    let peak_mb = stats.peak_rss_kib as f64 / 1024.0;
    rows.push(Row::new(
        "`knack run` peak RSS, 20 resumed turns against the mock server (max)",
        peak_mb,
        format!("{peak_mb:.1} MB"),
        String::new(),
        Target::AtMostMb(RSS_TARGET_MB),
    ));
    rows.push(Row::timed(
        "`knack run` wall time per resumed turn (incl. the mock's replies)",
        &stats,
        Target::None,
    ));

    let table = super::render_table(&rows);
    println!("\n{table}");
    let body = format!(
        "## Agent loop\n\n\
In-process rows: agent-loop's ignored test `bench_loop_iteration_200_messages` (release build)\n\
drives real `Session`s with a `ModelClient` that answers from memory (a `skills_list` call after\n\
each user message, then a text answer), so the time is the loop's own: building the request,\n\
the catalog check, dispatching the tool, recording every message in `state.db`, events. Each\n\
session is driven until its history holds 200 messages; then {timed} turns are timed and each\n\
turn's time is divided by its two model requests. *Measured* is the median of those per-request\n\
times over all sessions ({n} samples). The second row also encodes each request's messages as\n\
JSON, as the HTTP client does before sending.\n\n\
Memory row: one `knack run --no-review` starts a session against `mock-model-server`\n\
(crates/test-support), then {RESUMED_RUNS} `knack run --resume <id>` processes each add a\n\
turn (a `skills_list` call and an answer), so the last one carries {last} stored messages. Each\n\
process's peak RSS is its own `ru_maxrss` from `wait4`; the row shows the largest. The home is\n\
new, with the default config (bundled skills seeded by the first run).\n\n\
{table}\n\
{provenance}\n\n\
Reproduce: `cargo xtask bench agent` (the in-process rows alone:\n\
`cargo test --release -p agent-loop --test all -- --ignored bench_loop_iteration_200_messages --nocapture`).\n",
        timed = 5,
        n = plain.samples.unwrap_or(0),
        last = (RESUMED_RUNS + 1) * MESSAGES_PER_TURN,
        provenance = super::provenance(&ws.root),
    );
    super::publish(ws, args, "agent", &rows, &body)
}

/// The mock server process; killed and reaped when dropped.
pub(super) struct MockServer {
    child: Child,
    pub(super) base_url: String,
}

impl MockServer {
    pub(super) fn start(program: &Path, script: &Path) -> Result<Self> {
        let mut child = Command::new(program)
            .arg(script)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("cannot run {}", program.display()))?;
        let mut first = String::new();
        if let Some(stdout) = child.stdout.take() {
            BufReader::new(stdout).read_line(&mut first)?;
        }
        let base_url = first.trim().to_owned();
        let server = Self { child, base_url };
        if !server.base_url.starts_with("http://") {
            bail!("mock-model-server printed no base URL (got '{first}')");
        }
        Ok(server)
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A reply script for `turns` turns: a `skills_list` call, then a short answer.
fn script(turns: usize) -> String {
    let entries: Vec<String> = (0..turns)
        .flat_map(|t| {
            [
                format!(
                    r#"{{"tool_calls": [{{"id": "call-{t}", "name": "skills_list", "arguments": "{{}}"}}]}}"#
                ),
                format!(
                    r#"{{"text": "Turn {t}: the list above shows the skills available here; none needs changing.", "usage": {{"prompt_tokens": 2000, "completion_tokens": 30, "cached_tokens": 1800}}}}"#
                ),
            ]
        })
        .collect();
    format!("[\n{}\n]\n", entries.join(",\n"))
}

fn measure_runs(ws: &Workspace, work: &Path) -> Result<Stats> {
    let script_path = work.join("script.json");
    fs::write(&script_path, script(RESUMED_RUNS + 1))?;
    let server = MockServer::start(&ws.release_binary("mock-model-server"), &script_path)?;
    let home = work.join("home");
    fs::create_dir_all(&home)?;
    let cwd = work.join("project");
    fs::create_dir_all(&cwd)?;
    let run = |extra: &[&str]| Invocation {
        program: ws.release_binary("knack"),
        args: extra.iter().map(|a| (*a).to_owned()).collect(),
        env: vec![
            ("KNACK_HOME".into(), home.display().to_string()),
            ("KNACK_BASE_URL".into(), server.base_url.clone()),
            ("KNACK_MODEL".into(), "mock-model".into()),
            ("KNACK_API_KEY".into(), "bench-key".into()),
            ("NO_COLOR".into(), "1".into()),
        ],
        env_remove_prefix: Some("KNACK_".into()),
        cwd: cwd.clone(),
    };

    let first = run(&[
        "run",
        "--json",
        "--no-review",
        "turn 0: what skills are here?",
    ])
    .capture()?;
    let session = session_id(&first)
        .with_context(|| format!("the first `knack run --json` named no session:\n{first}"))?;
    let mut times = Vec::with_capacity(RESUMED_RUNS);
    let mut peak = 0;
    for turn in 1..=RESUMED_RUNS {
        let prompt = format!("turn {turn}: and now?");
        let resumed = run(&["run", "--no-review", "--resume", &session, &prompt]);
        let (took, rss) = resumed.run_once()?;
        times.push(took);
        peak = peak.max(rss);
    }
    let listed = run(&["sessions", "list", "--json"]).capture()?;
    let expected = (RESUMED_RUNS + 1) * MESSAGES_PER_TURN;
    if !listed.contains(&format!("\"message_count\": {expected}"))
        && !listed.contains(&format!("\"message_count\":{expected}"))
    {
        bail!("the session does not hold {expected} messages after the runs:\n{listed}");
    }
    drop(server);
    Ok(Stats::from_samples(times, peak))
}

/// The `session_id` of the `session_started` event in `knack run --json` output.
fn session_id(json_lines: &str) -> Option<String> {
    json_lines
        .lines()
        .filter(|l| l.contains("session_started"))
        .find_map(|l| {
            let after = &l[l.find("\"session_id\"")? + "\"session_id\"".len()..];
            let after = after.trim_start().strip_prefix(':')?.trim_start();
            let value = after.strip_prefix('"')?;
            Some(value[..value.find('"')?].to_owned())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_id_comes_from_the_started_event() {
        let out = "{\"type\":\"session_started\",\"session_id\":\"20250601-abc\",\"model\":\"m\"}\n\
                   {\"type\":\"turn_complete\"}\n";
        assert_eq!(session_id(out).as_deref(), Some("20250601-abc"));
        assert_eq!(session_id("{\"type\":\"turn_complete\"}"), None);
    }

    #[test]
    fn the_script_is_a_json_array_of_two_replies_per_turn() {
        let text = script(3);
        assert!(text.trim_start().starts_with('[') && text.trim_end().ends_with(']'));
        assert_eq!(text.matches("\"tool_calls\"").count(), 3);
        assert_eq!(text.matches("\"text\"").count(), 3);
        assert!(text.contains("\"id\": \"call-2\""));
    }
}
