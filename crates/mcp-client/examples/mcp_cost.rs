//! What MCP servers cost a session: starting two local stdio servers (in parallel) against
//! starting none, and the round trip of one tool call through the client. Uses the test
//! server built by `cargo build --release -p test-support --bins` (next to this example's
//! folder, or `KNACK_TEST_MCP_SERVER`). Prints `BENCH` lines for `cargo xtask bench mcp`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use knack_config::McpServerConfig;
use mcp_client::{McpHub, StartOptions};
use serde_json::{Map, json};

const START_RUNS: usize = 15;
const CALL_RUNS: usize = 300;

fn server_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("KNACK_TEST_MCP_SERVER") {
        return Some(PathBuf::from(path));
    }
    // target/release/examples/mcp_cost → target/release/mcp-test-server
    let exe = std::env::current_exe().ok()?;
    let candidate = exe.parent()?.parent()?.join("mcp-test-server");
    candidate.is_file().then_some(candidate)
}

fn median_ms(mut samples: Vec<Duration>) -> (f64, f64, f64) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    (
        ms(samples[samples.len() / 2]),
        ms(samples[0]),
        ms(samples[samples.len() - 1]),
    )
}

fn report(name: &str, samples: Vec<Duration>) -> f64 {
    let n = samples.len();
    let (median, min, max) = median_ms(samples);
    println!("BENCH {name}={median:.4} ms min={min:.4} max={max:.4} n={n}");
    median
}

fn main() {
    let Some(server) = server_binary() else {
        eprintln!("the MCP test server is not built: cargo build --release -p test-support --bins");
        std::process::exit(1);
    };
    let Ok(runtime) = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    else {
        eprintln!("cannot start the async runtime");
        std::process::exit(1);
    };
    let stdio = |name: &str| {
        (
            name.to_owned(),
            McpServerConfig {
                command: Some(server.display().to_string()),
                ..McpServerConfig::default()
            },
        )
    };
    let none: BTreeMap<String, McpServerConfig> = BTreeMap::new();
    let two: BTreeMap<String, McpServerConfig> = [stdio("a"), stdio("b")].into_iter().collect();
    runtime.block_on(async {
        let time_start = |servers: &BTreeMap<String, McpServerConfig>| {
            let servers = servers.clone();
            async move {
                let started = Instant::now();
                let hub = McpHub::start(&servers, StartOptions::default()).await;
                let elapsed = started.elapsed();
                (elapsed, hub)
            }
        };
        let mut without = Vec::new();
        let mut with_two = Vec::new();
        for _ in 0..START_RUNS {
            without.push(time_start(&none).await.0);
            let (elapsed, hub) = time_start(&two).await;
            if hub.tools().is_empty() {
                eprintln!("the test servers did not start: {:?}", hub.statuses());
                std::process::exit(1);
            }
            with_two.push(elapsed);
            drop(hub);
        }
        let base = report("start_no_servers", without);
        let two_servers = report("start_two_stdio_servers", with_two);
        println!(
            "BENCH start_added_by_two_servers={:.4} ms n={START_RUNS}",
            (two_servers - base).max(0.0)
        );

        let (_, hub) = time_start(&two).await;
        let mut args = Map::new();
        args.insert("text".into(), json!("ping"));
        let mut calls = Vec::with_capacity(CALL_RUNS);
        for _ in 0..CALL_RUNS {
            let started = Instant::now();
            let outcome = hub.call("a", "echo", args.clone()).await;
            calls.push(started.elapsed());
            if outcome.is_err() {
                eprintln!("a call failed: {outcome:?}");
                std::process::exit(1);
            }
        }
        report("tool_call_round_trip", calls);
    });
}
