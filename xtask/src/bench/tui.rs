//! `bench tui`: the frame time of a 1,000-message transcript, from the TUI's own
//! ignored timing test run in release.

use anyhow::{Context as _, Result};

use super::{BenchArgs, Row, Target, Workspace};

const TEST: &str = "frame_time_of_a_1000_message_transcript";
const FRAME_TARGET_MS: f64 = 5.0;

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    let output = ws.run_ignored_tests("knack", &["--bin", "knack"], TEST, &[])?;
    let missing = || format!("the `{TEST}` test printed no frame times:\n{output}");
    let median = number_after(&output, "streaming frames").with_context(missing)?;
    let min = number_after(&output, "(min");
    let max = number_after(&output, ", max");
    let cold = number_after(&output, "(cold) frame").with_context(missing)?;
    let page_up = number_after(&output, "at this width").with_context(missing)?;
    let spread = match (min, max) {
        (Some(lo), Some(hi)) => format!("{}–{}", super::fmt_ms(lo), super::fmt_ms(hi)),
        _ => String::new(),
    };
    let rows = vec![
        Row::new(
            "frame while streaming, 1,000-message transcript, 120×40",
            median,
            super::fmt_ms(median),
            spread,
            Target::AtMostMs(FRAME_TARGET_MS),
        ),
        Row::new(
            "first frame of that transcript",
            cold,
            super::fmt_ms(cold),
            String::new(),
            Target::None,
        ),
        Row::new(
            "first PageUp (wraps every entry at this width)",
            page_up,
            super::fmt_ms(page_up),
            String::new(),
            Target::None,
        ),
    ];
    let table = super::render_table(&rows);
    println!("\n{table}");
    let body = format!(
        "## TUI\n\n\
From the knack binary's ignored unit test `{TEST}` (release build): a transcript of\n\
1,000 entries (250 × user message, answer, tool call with output, note) drawn into a 120×40\n\
ratatui test backend. *Measured* is the median of 50 frames, each after one streamed\n\
delta into the newest message, as during a turn; the first frame and the first scroll up\n\
are single timings.\n\n\
{table}\n\
{provenance}\n\n\
Reproduce: `cargo xtask bench tui` (or\n\
`cargo test --release -p knack --bin knack -- --ignored {TEST} --nocapture`).\n",
        provenance = super::provenance(&ws.root),
    );
    super::publish(ws, args, "tui", &rows, &body)
}

/// The first number after the first `marker` in `text` (skipping spaces, colons and brackets).
fn number_after(text: &str, marker: &str) -> Option<f64> {
    let rest = &text[text.find(marker)? + marker.len()..];
    let rest = rest.trim_start_matches([' ', ':', '(', ')']);
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "running 1 test\n\
first PageUp (wraps all 1000 entries at this width): 7.125 ms\n\
1000-message transcript, 120x40: first (cold) frame 3.500 ms; median of 50 streaming frames 1.250 ms (min 1.000, max 2.750)\n\
test tui::tests::frame_time_of_a_1000_message_transcript ... ok\n";

    #[test]
    fn frame_times_are_read_from_the_tests_output() {
        assert_eq!(number_after(OUTPUT, "streaming frames"), Some(1.25));
        assert_eq!(number_after(OUTPUT, "(min"), Some(1.0));
        assert_eq!(number_after(OUTPUT, ", max"), Some(2.75));
        assert_eq!(number_after(OUTPUT, "(cold) frame"), Some(3.5));
        assert_eq!(number_after(OUTPUT, "at this width"), Some(7.125));
        assert_eq!(number_after(OUTPUT, "no such marker"), None);
    }
}
