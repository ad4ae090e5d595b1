//! Human output helpers: colour only when stdout is a terminal and NO_COLOR is
//! unset, plain aligned tables, and lines that fit the terminal's width.

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

/// The width human output must fit: `COLUMNS` when set, else the size of
/// the terminal stdout is; `None` (no limit) when stdout is a pipe or a
/// file and `COLUMNS` is unset, so what a script reads is never cut.
pub fn output_width() -> Option<usize> {
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0);
    columns.or_else(|| {
        io::stdout()
            .is_terminal()
            .then(|| crossterm::terminal::size().ok())
            .flatten()
            .map(|(cols, _)| usize::from(cols))
            .filter(|&c| c > 0)
    })
}

/// Narrowest width wrapping aims for: below it, lines are cut this long.
const MIN_WIDTH: usize = 20;

/// Prints one line of human output, wrapped to [`output_width`]:
/// continuation lines are indented two columns past the line's own indent.
pub fn print_fitted(line: &str) {
    let text = match output_width() {
        Some(width) => fit_line(line, width),
        None => line.to_owned(),
    };
    println!("{text}");
}

/// `line` wrapped at spaces to `width` display columns (ANSI styles take
/// none); a word longer than a whole line (a path, a URL) is broken. Lines
/// of the input are wrapped one by one.
pub fn fit_line(line: &str, width: usize) -> String {
    let width = width.max(MIN_WIDTH);
    line.split('\n')
        .map(|l| fit_one(l, width))
        .collect::<Vec<_>>()
        .join("\n")
}

fn fit_one(line: &str, width: usize) -> String {
    if visible_width(line) <= width {
        return line.to_owned();
    }
    let indent = line.len() - line.trim_start_matches(' ').len();
    let hang = " ".repeat((indent + 2).min(width / 2));
    let mut out = String::from(&line[..indent]);
    let mut used = indent;
    let mut line_start = true;
    for word in line[indent..].split(' ').filter(|w| !w.is_empty()) {
        let mut word = word.to_owned();
        let mut w = visible_width(&word);
        if !line_start && used + 1 + w > width {
            out.push('\n');
            out.push_str(&hang);
            used = hang.len();
            line_start = true;
        }
        if !line_start {
            out.push(' ');
            used += 1;
        }
        // A word wider than what is left of a fresh line is broken (only
        // plain text: a styled word is kept whole rather than split mid-style).
        while used + w > width && !word.contains('\x1b') && w > 1 {
            let room = width.saturating_sub(used).max(1);
            let head: String = take_columns(&word, room);
            word = word[head.len()..].to_owned();
            out.push_str(&head);
            out.push('\n');
            out.push_str(&hang);
            used = hang.len();
            w = visible_width(&word);
        }
        out.push_str(&word);
        used += w;
        line_start = false;
    }
    out
}

/// The longest prefix of `text` at most `columns` wide (at least one character).
fn take_columns(text: &str, columns: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > columns && !out.is_empty() {
            break;
        }
        out.push(c);
        used += w;
    }
    out
}

/// Display columns of `text`, leaving out ANSI escape sequences.
fn visible_width(text: &str) -> usize {
    let mut width = 0;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // CSI: ESC [ … final byte in @..~
            for d in chars.by_ref() {
                if ('@'..='~').contains(&d) && d != '[' {
                    break;
                }
            }
            continue;
        }
        width += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
    }
    width
}

/// Prints rows as left-aligned columns; the last column is never padded,
/// and is cut with an ellipsis where the line would pass [`output_width`].
pub fn print_table(header: &[&str], rows: &[Vec<String>]) {
    // One write for the whole table: a line-buffered stdout would make a
    // system call per row.
    let text = render_table_within(header, rows, output_width());
    write_stdout(|out| out.write_all(text.as_bytes()));
}

/// The text `print_table` prints with no width limit.
#[cfg(test)]
fn render_table(header: &[&str], rows: &[Vec<String>]) -> String {
    render_table_within(header, rows, None)
}

/// The text `print_table` prints, each line ending in a newline; with a
/// width, the last column is cut to what is left of it (never below 10
/// columns: a table wider than that is left to the terminal).
fn render_table_within(header: &[&str], rows: &[Vec<String>], width: Option<usize>) -> String {
    let cut_last = |cells: &[&str], widths: &[usize]| -> Option<String> {
        let width = width?;
        let last = cells.len().checked_sub(1)?;
        let start: usize = widths[..last].iter().map(|w| w + 2).sum();
        let room = width.saturating_sub(start).max(10);
        (cells[last].chars().count() > room).then(|| ellipsize(cells[last], room))
    };
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
        let mut cells: Vec<&str> = escaped.iter().map(AsRef::as_ref).collect();
        let cut = cut_last(&cells, &widths);
        if let (Some(cut), Some(last)) = (&cut, cells.last_mut()) {
            *last = cut;
        }
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
    fn long_lines_wrap_to_the_width_with_a_hanging_indent() {
        let line = format!(
            "  skip  composio-gmail — install refused: the skill scans caution (2 findings) and comes from a community source; {}",
            "/tmp/very/long/path/".repeat(8)
        );
        for width in [40, 80, 120] {
            let fitted = fit_line(&line, width);
            for l in fitted.lines() {
                assert!(visible_width(l) <= width, "{width}: {l:?}");
            }
            // Nothing is lost but the spaces wrapping replaced.
            let squash = |t: &str| t.split_whitespace().collect::<String>();
            assert_eq!(squash(&fitted), squash(&line));
            assert!(
                fitted.lines().skip(1).all(|l| l.starts_with("    ")),
                "{fitted}"
            );
        }
        assert_eq!(fit_line("short", 80), "short");
        // Styles take no columns.
        let styled = format!("\x1b[1m{}\x1b[0m", "x".repeat(30));
        assert_eq!(fit_line(&styled, 30), styled);
    }

    #[test]
    fn a_table_cuts_its_last_column_to_the_width() {
        let rows = vec![vec!["alpha".to_owned(), "d".repeat(200)]];
        let text = render_table_within(&["NAME", "DESCRIPTION"], &rows, Some(60));
        let row = text.lines().nth(1).unwrap();
        assert_eq!(row.chars().count(), 60, "{row}");
        assert!(row.ends_with('…'));
        let wide = render_table_within(&["NAME", "DESCRIPTION"], &rows, None);
        assert!(wide.lines().nth(1).unwrap().chars().count() > 200);
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
