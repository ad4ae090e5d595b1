//! `bench checkpoint`: how long the note of a 1,000-file workspace takes before a turn's
//! first command (outside git and in git), from agent-loop's ignored timing test.

use anyhow::{Context as _, Result};

use super::{BenchArgs, Row, Target, Workspace};

const TEST: &str = "checkpoint_of_a_1000_file_workspace";
const TARGET_MS: f64 = 50.0;

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    let output = ws.run_ignored_tests("agent-loop", &["--lib"], TEST, &[])?;
    let missing = || format!("the `{TEST}` test printed no timings:\n{output}");
    let plain = number_after(&output, "outside git median").with_context(missing)?;
    let git = number_after(&output, "git median").with_context(missing)?;
    let rows = vec![
        Row::new(
            "checkpoint before a command, 1,000 files, outside git",
            plain,
            super::fmt_ms(plain),
            String::new(),
            Target::AtMostMs(TARGET_MS),
        ),
        Row::new(
            "the same in a git repository (10 files edited)",
            git,
            super::fmt_ms(git),
            String::new(),
            Target::AtMostMs(TARGET_MS),
        ),
    ];
    let table = super::render_table(&rows);
    println!("\n{table}");
    let body = format!(
        "## Checkpoints\n\n\
From agent-loop's ignored unit test `{TEST}` (release build): the workspace note a turn\n\
takes before its first command, for undo, of 1,000 source files of about 1 kB in 20\n\
folders; outside git every file is read, in git only HEAD and the 10 edited files.\n\
*Measured* is the median of 15 notes.\n\n\
{table}\n\
{provenance}\n\n\
Reproduce: `cargo xtask bench checkpoint` (or\n\
`cargo test --release -p agent-loop --lib -- --ignored {TEST} --nocapture`).\n",
        provenance = super::provenance(&ws.root),
    );
    super::publish(ws, args, "checkpoint", &rows, &body)
}

/// The first number after the last `marker` in `text` (skipping spaces and colons).
fn number_after(text: &str, marker: &str) -> Option<f64> {
    let rest = &text[text.rfind(marker)? + marker.len()..];
    let rest = rest.trim_start_matches([' ', ':']);
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timings_are_read_from_the_tests_output() {
        let output = "checkpoint of a 1,000-file workspace: outside git median 11.821 ms (min 6.868, \
                      max 23.617); git median 16.067 ms (min 8.846, max 26.988)\n";
        assert_eq!(number_after(output, "outside git median"), Some(11.821));
        assert_eq!(number_after(output, "git median"), Some(16.067));
    }
}
