//! What deciding on and preparing a compaction costs for a 1,000-message session: the size
//! estimate, the threshold check, the cut and the rewritten history (the model's summarising
//! request excluded). Prints `BENCH` lines that `cargo xtask bench context` reads.

use std::time::{Duration, Instant};

use agent_loop::compaction::{ContextBudget, ProviderCount, choose_cut, estimate_request, rewrite};
use agent_loop::model::{ChatMessage, ToolCall};

const RUNS: usize = 200;

fn session(messages: usize) -> Vec<ChatMessage> {
    let mut history = vec![ChatMessage::system("You are a test. ".repeat(300))];
    let mut turn = 0;
    while history.len() < messages {
        history.push(ChatMessage::user(format!(
            "turn {turn}: {}",
            "word ".repeat(60)
        )));
        let id = format!("call_{turn}");
        history.push(ChatMessage::assistant(
            "",
            vec![ToolCall::function(
                &id,
                "terminal",
                r#"{"command":"ls -la"}"#,
            )],
        ));
        history.push(ChatMessage::tool_result(
            id,
            format!(
                r#"{{"success":true,"output":"{}"}}"#,
                "file.txt ".repeat(80)
            ),
        ));
        history.push(ChatMessage::assistant(format!("done {turn}"), Vec::new()));
        turn += 1;
    }
    history.truncate(messages);
    history
}

fn main() {
    let history = session(1_000);
    let budget = ContextBudget {
        window: 128_000,
        reserve_output: 8_192,
        compact_at: 0.8,
    };
    let count = Some(ProviderCount::new(100_000, 990, 90_000));
    let mut samples: Vec<Duration> = Vec::with_capacity(RUNS);
    let mut kept = 0;
    for _ in 0..RUNS {
        let started = Instant::now();
        let estimate = estimate_request(&history, 12_000, count);
        let due = budget.should_compact(estimate);
        let cut = choose_cut(&history[1..], budget.keep_recent_tokens(6_000), 1);
        if let Some(cut) = cut {
            let rewritten = rewrite(&history[1..], &cut, "a summary of what happened");
            kept += rewritten.len() + usize::from(due);
        }
        samples.push(started.elapsed());
    }
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "BENCH decide_and_rewrite_1000={:.4} ms min={:.4} max={:.4} n={RUNS}",
        ms(samples[RUNS / 2]),
        ms(samples[0]),
        ms(samples[RUNS - 1])
    );
    // Keeps the work from being optimised away.
    println!("messages kept over all runs: {kept}");
}
