//! Human output helpers: colour only when stdout is a terminal and NO_COLOR is
//! unset, and plain aligned tables.

use std::io::{self, BufWriter, IsTerminal, StdoutLock, Write};

use serde::Serialize;

use crate::terminal_text::escape;

pub fn color_enabled() -> bool {
    colors_allowed() && std::io::stdout().is_terminal()
}

/// Colour for what goes to stderr (progress, notes): the same rule, on stderr.
pub fn stderr_color_enabled() -> bool {
    colors_allowed() && std::io::stderr().is_terminal()
}

/// `NO_COLOR` (set and not empty) turns styling off everywhere.
fn colors_allowed() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Wraps `text` in an ANSI style when colour is on.
pub fn paint(text: &str, ansi: &str) -> String {
    if color_enabled() {
        format!("\x1b[{ansi}m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

pub fn bold(text: &str) -> String {
    paint(text, "1")
}

pub fn dim(text: &str) -> String {
    paint(text, "2")
}

/// Prints rows as left-aligned columns; the last column is never padded.
pub fn print_table(header: &[&str], rows: &[Vec<String>]) {
    // One write for the whole table: a line-buffered stdout would make a
    // system call per row.
    let text = render_table(header, rows);
    write_stdout(|out| out.write_all(text.as_bytes()));
}

/// The text `print_table` prints, each line ending in a newline.
fn render_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let cols = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(cols) {
            widths[i] = widths[i].max(escape(cell).chars().count());
        }
    }
    let line = |cells: &[&str], out: &mut String| {
        let start = out.len();
        for (i, cell) in cells.iter().enumerate() {
            out.push_str(cell);
            if i + 1 < cells.len() {
                let pad = widths[i] - cell.chars().count() + 2;
                out.extend(std::iter::repeat_n(' ', pad));
            }
        }
        let kept = out[start..].trim_end().len();
        out.truncate(start + kept);
    };
    let mut head = String::new();
    line(header, &mut head);
    let mut text = bold(&head);
    text.push('\n');
    for row in rows {
        // Cells hold names, titles and descriptions that models, skills and servers wrote:
        // their control characters are shown, never obeyed (and never mis-measured).
        let escaped: Vec<_> = row.iter().map(|cell| escape(cell)).collect();
        let cells: Vec<&str> = escaped.iter().map(AsRef::as_ref).collect();
        line(&cells, &mut text);
        text.push('\n');
    }
    text
}

/// Pretty JSON (two-space indent) and a newline, streamed to stdout.
pub fn print_json<T: Serialize + ?Sized>(value: &T) {
    write_stdout(|out| write_json(out, value));
}

/// What `print_json` prints, written to `out`.
fn write_json<W: Write, T: Serialize + ?Sized>(out: &mut W, value: &T) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(io::Error::other)?;
    out.write_all(b"\n")
}

/// Runs `write` on a locked, buffered stdout (a concrete type, so the many
/// small writes of a serializer inline). A reader that went away (a closed
/// pipe) is not an error worth a message.
fn write_stdout(write: impl FnOnce(&mut BufWriter<StdoutLock<'static>>) -> io::Result<()>) {
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let result = write(&mut out).and_then(|()| out.flush());
    if let Err(e) = result
        && e.kind() != io::ErrorKind::BrokenPipe
    {
        eprintln!("knack: cannot write to stdout: {e}");
    }
}

/// Cuts `text` to `max` characters, marking the cut with an ellipsis.
pub fn ellipsize(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{kept}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_written_pretty_with_a_closing_newline() {
        let value = serde_json::json!({
            "success": true, "count": 2, "empty": [], "none": {},
            "text": "tab\tquote\" é", "nested": [{"a": null}, 1.5],
        });
        let mut out = Vec::new();
        write_json(&mut out, &value).unwrap();
        let expected = format!("{}\n", serde_json::to_string_pretty(&value).unwrap());
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }

    #[test]
    fn table_pads_all_but_the_last_column_and_trims_line_ends() {
        let rows = vec![
            vec!["deploy ⚠".to_owned(), "devops".to_owned(), "".to_owned()],
            vec!["a".to_owned(), "".to_owned(), "Use when é".to_owned()],
        ];
        // The header is painted only on a terminal.
        assert_eq!(
            render_table(&["NAME", "CATEGORY", "DESCRIPTION"], &rows),
            format!(
                "{}\ndeploy ⚠  devops\na                   Use when é\n",
                bold("NAME      CATEGORY  DESCRIPTION")
            )
        );
        assert_eq!(render_table(&["ONLY"], &[]), format!("{}\n", bold("ONLY")));
    }
}
