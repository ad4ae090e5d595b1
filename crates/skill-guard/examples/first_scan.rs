//! Times the first scan of a small skill in a fresh process: what every
//! `skill_manage` write pays: the literal gates are built and the patterns
//! whose gates open are compiled on first use.

use std::time::Instant;

use skill_guard::{ScanScope, scan_text};

fn main() {
    // `first_scan [FILE]`: the first scan of FILE instead of the tiny skill.
    let own = std::env::args().nth(1).map(std::fs::read_to_string);
    let text = match &own {
        Some(Ok(text)) => text.as_str(),
        Some(Err(e)) => panic!("cannot read the file: {e}"),
        None => {
            "---\nname: demo\ndescription: Use when you need a demo.\n---\n\n# Demo\n\nRun `ls -la` and read the output.\n"
        }
    };
    let start = Instant::now();
    let findings = scan_text(text, "SKILL.md", ScanScope::Skill);
    let first = start.elapsed();
    let start = Instant::now();
    let again = scan_text(text, "SKILL.md", ScanScope::Skill);
    let second = start.elapsed();
    assert_eq!(findings.len(), again.len());
    let start = Instant::now();
    let context = scan_text(text, "AGENTS.md", ScanScope::Context);
    let context_first = start.elapsed();
    println!(
        "first scan ({} bytes): {:.2} ms; second scan: {:.3} ms; findings: {}; \
first context-scope scan: {:.2} ms ({} findings)",
        text.len(),
        first.as_secs_f64() * 1000.0,
        second.as_secs_f64() * 1000.0,
        findings.len(),
        context_first.as_secs_f64() * 1000.0,
        context.len()
    );
}
