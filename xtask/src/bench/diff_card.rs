//! `bench diff`: the frame time of a transcript holding an expanded 500-line edit diff
//! card, from the TUI's own ignored timing test run in release.

use anyhow::{Context as _, Result};

use super::{BenchArgs, Row, Target, Workspace};

const TEST: &str = "frame_time_of_a_500_line_diff_card";
const FRAME_TARGET_MS: f64 = 5.0;

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    let output = ws.run_ignored_tests("knack", &["--bin", "knack"], TEST, &[])?;
    let missing = || format!("the `{TEST}` test printed no frame times:\n{output}");
    let median = number_after(&output, "streaming frames").with_context(missing)?;
    let cold = number_after(&output, "(cold) frame").with_context(missing)?;
    let spread = match (
        number_after(&output, "(min"),
        number_after(&output, ", max"),
    ) {
        (Some(lo), Some(hi)) => format!("{}–{}", super::fmt_ms(lo), super::fmt_ms(hi)),
        _ => String::new(),
    };
    let rows = vec![
        Row::new(
            "frame with an expanded 500-line diff card, 120×40",
            median,
            super::fmt_ms(median),
            spread,
            Target::AtMostMs(FRAME_TARGET_MS),
        ),
        Row::new(
            "first frame (wraps every diff line once)",
            cold,
            super::fmt_ms(cold),
            String::new(),
            Target::None,
        ),
    ];
    let table = super::render_table(&rows);
    println!("\n{table}");
    let body = format!(
        "## Edit diff cards\n\n\
From the knack binary's ignored unit test `{TEST}` (release build): one `write_file`\n\
card whose diff has 500 changed lines (every other line of a 500-line file), expanded,\n\
drawn into a 120×40 ratatui test backend. *Measured* is the median of 50 frames, each\n\
after one streamed delta, as during a turn; the first frame is a single timing.\n\n\
{table}\n\
{provenance}\n\n\
Reproduce: `cargo xtask bench diff` (or\n\
`cargo test --release -p knack --bin knack -- --ignored {TEST} --nocapture`).\n",
        provenance = super::provenance(&ws.root),
    );
    super::publish(ws, args, "diff", &rows, &body)
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

    #[test]
    fn frame_times_are_read_from_the_tests_output() {
        let output = "500-line diff card, 120x40: first (cold) frame 3.500 ms; median of 50 \
                      streaming frames 1.250 ms (min 1.000, max 2.750)\n";
        assert_eq!(number_after(output, "streaming frames"), Some(1.25));
        assert_eq!(number_after(output, "(cold) frame"), Some(3.5));
        assert_eq!(number_after(output, "(min"), Some(1.0));
        assert_eq!(number_after(output, ", max"), Some(2.75));
    }
}
