//! Soak: 1,000 turns in one session against the mock server over real HTTP,
//! measuring resident memory and checking that every request kept the frozen prefix.
//!
//! Run with `cargo test --release -p agent-loop --test all -- --ignored soak`.
//! The mock runs in a child process (this same test binary, re-executed), so
//! the requests it keeps in memory do not count against the agent's memory.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use agent_loop::session::{EventSink, Session, SessionOptions, TurnOutcome};
use knack_config::{Config, KnackHome};
use prompt_builder::Platform;
use serde_json::json;
use test_support::{CapturedRequest, MockModelServer, check_invariants, parse_script};
use tokio_util::sync::CancellationToken;

const TURNS: usize = 1_000;
/// Every tenth turn the model calls a tool before answering.
const TOOL_EVERY: usize = 10;
const CHILD_SCRIPT: &str = "KNACK_SOAK_MOCK_SCRIPT";
const CHILD_LOG: &str = "KNACK_SOAK_MOCK_LOG";
const SELF_NAME: &str = "suite::soak::soak_thousand_turns";

fn vm_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// The child's job: serve the script, log every request, exit when stdin closes.
fn serve_as_child(script: &str, log: &str) {
    let entries = parse_script(&std::fs::read_to_string(script).unwrap()).unwrap();
    let server = MockModelServer::start_blocking_with(0, Some(log.into())).unwrap();
    server.enqueue_script(entries);
    println!("BASE_URL {}", server.base_url());
    std::io::stdout().flush().unwrap();
    let mut sink = String::new();
    while std::io::stdin().read_line(&mut sink).unwrap_or(0) > 0 {}
}

fn script() -> serde_json::Value {
    let mut entries = Vec::new();
    for turn in 0..TURNS {
        if turn % TOOL_EVERY == 0 {
            entries.push(json!({"tool_calls": [
                {"id": format!("c{turn}"), "name": "skills_list", "arguments": "{}"}
            ]}));
        }
        entries.push(json!({"text": format!("ok {turn}")}));
    }
    json!(entries)
}

#[test]
#[ignore = "soak: 1,000 turns; run in release with --ignored"]
fn soak_thousand_turns() {
    if let (Ok(script), Ok(log)) = (std::env::var(CHILD_SCRIPT), std::env::var(CHILD_LOG)) {
        serve_as_child(&script, &log);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script_path = dir.path().join("script.json");
    let log_path = dir.path().join("requests.jsonl");
    std::fs::write(&script_path, script().to_string()).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            SELF_NAME,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_SCRIPT, &script_path)
        .env(CHILD_LOG, &log_path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child_out = BufReader::new(child.stdout.take().unwrap());
    let base_url = loop {
        let mut line = String::new();
        assert!(
            child_out.read_line(&mut line).unwrap() > 0,
            "mock child died"
        );
        // libtest may print the test's name on the same line first.
        if let Some((_, url)) = line.trim().split_once("BASE_URL ") {
            break url.to_owned();
        }
    };

    let home = dir.path().join("home");
    let cwd = dir.path().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (rss, history_len, history_bytes, turn_times) = runtime.block_on(async {
        // Nobody listens: events are dropped as a detached frontend's would be.
        let (events, rx) = EventSink::channel();
        drop(rx);
        let options = SessionOptions {
            max_iterations: 10,
            review: false,
            ..SessionOptions::new(
                KnackHome::at(&home),
                Config::default(),
                cwd,
                Platform::Cli,
                "mock-model",
            )
        };
        let client = Arc::new(super::client(&base_url, 2));
        let mut session = Session::start(options, client, events).unwrap();
        let mut rss = Vec::new();
        let mut times = Vec::with_capacity(TURNS);
        for turn in 0..TURNS {
            let started = Instant::now();
            let outcome = session
                .run_turn(&format!("t{turn}"), CancellationToken::new())
                .await
                .unwrap();
            times.push(started.elapsed());
            assert_eq!(outcome, TurnOutcome::Answered(format!("ok {turn}")));
            if [100, 500, 1000].contains(&(turn + 1)) {
                rss.push((turn + 1, vm_rss_kib()));
            }
        }
        let bytes: usize = session
            .history()
            .iter()
            .map(|m| serde_json::to_string(m).unwrap().len())
            .sum();
        (rss, session.history().len(), bytes, times)
    });
    drop(runtime);
    drop(child.stdin.take());
    child.wait().unwrap();

    // Every request against the first: same system prompt and tools bytes,
    // and each tool call answered exactly once.
    let log = BufReader::new(std::fs::File::open(&log_path).unwrap());
    let mut first: Option<CapturedRequest> = None;
    let mut requests = 0;
    let mut log_bytes = 0;
    for line in log.lines() {
        let line = line.unwrap();
        log_bytes += line.len();
        let request: CapturedRequest = serde_json::from_str(&line).unwrap();
        requests += 1;
        match &first {
            None => {
                check_invariants(std::slice::from_ref(&request)).unwrap();
                first = Some(request);
            }
            Some(first) => check_invariants(&[first.clone(), request])
                .unwrap_or_else(|e| panic!("request #{requests}: {e}")),
        }
    }
    assert_eq!(requests, TURNS + TURNS / TOOL_EVERY);

    let at = |n: usize| rss.iter().find(|(t, _)| *t == n).unwrap().1;
    let (at_100, at_500, at_1000) = (at(100), at(500), at(1000));
    let growth = (at_1000 as f64 - at_100 as f64) / at_100 as f64 * 100.0;
    let mut sorted = turn_times.clone();
    sorted.sort();
    let median = sorted[sorted.len() / 2];
    let p99 = sorted[sorted.len() * 99 / 100];
    let first_100: std::time::Duration =
        turn_times[..100].iter().sum::<std::time::Duration>() / 100;
    let last_100: std::time::Duration = turn_times[TURNS - 100..]
        .iter()
        .sum::<std::time::Duration>()
        / 100;
    println!(
        "SOAK turns={TURNS} requests={requests} history_messages={history_len} \
         history_json_bytes={history_bytes} request_log_bytes={log_bytes} \
         rss_kib@100={at_100} rss_kib@500={at_500} rss_kib@1000={at_1000} growth={growth:.1}% \
         turn_median={median:?} turn_p99={p99:?} mean_first_100={first_100:?} mean_last_100={last_100:?}"
    );
    assert!(
        growth <= 10.0,
        "RSS grew {growth:.1}% from turn 100 to 1000"
    );
}
