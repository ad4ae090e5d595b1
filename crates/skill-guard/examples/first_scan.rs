//! Times the first scan of a small skill in a fresh process: what every
//! `skill_manage` write pays, since the pattern set is compiled on first use.

use std::time::Instant;

use skill_guard::{ScanScope, scan_text};

fn main() {
    let text = "---\nname: demo\ndescription: Use when you need a demo.\n---\n\n# Demo\n\nRun `ls -la` and read the output.\n";
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
        "first scan (compiles the catalog): {:.2} ms; second scan: {:.3} ms; findings: {}; \
first context-scope scan: {:.2} ms ({} findings)",
        first.as_secs_f64() * 1000.0,
        second.as_secs_f64() * 1000.0,
        findings.len(),
        context_first.as_secs_f64() * 1000.0,
        context.len()
    );
}
