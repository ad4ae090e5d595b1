//! Word wrapping of styled text to a column width, so the transcript can cache
//! finished screen lines and draw them without ratatui re-wrapping each frame.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// A run of characters that wrap as one unit (a word or a gap) with its styles.
struct Piece {
    chars: Vec<(char, Style)>,
    width: usize,
    blank: bool,
}

fn char_width(c: char) -> usize {
    // Control characters would corrupt the screen; they count as one cell and
    // are replaced when drawn.
    c.width().unwrap_or(1)
}

fn pieces(spans: &[Span<'_>]) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    for span in spans {
        for c in span.content.chars() {
            let c = if c == '\t' {
                ' '
            } else if c.is_control() {
                '\u{fffd}'
            } else {
                c
            };
            let blank = c == ' ';
            let w = char_width(c);
            match out.last_mut() {
                Some(last) if last.blank == blank => {
                    last.chars.push((c, span.style));
                    last.width += w;
                }
                _ => out.push(Piece {
                    chars: vec![(c, span.style)],
                    width: w,
                    blank,
                }),
            }
        }
    }
    out
}

/// Collects styled characters into spans, merging neighbours of equal style.
#[derive(Default)]
struct LineBuilder {
    spans: Vec<Span<'static>>,
    current: String,
    style: Style,
    width: usize,
}

impl LineBuilder {
    fn push(&mut self, c: char, style: Style) {
        if style != self.style && !self.current.is_empty() {
            self.spans
                .push(Span::styled(std::mem::take(&mut self.current), self.style));
        }
        self.style = style;
        self.current.push(c);
        self.width += char_width(c);
    }

    fn finish(mut self) -> Vec<Span<'static>> {
        if !self.current.is_empty() {
            self.spans.push(Span::styled(self.current, self.style));
        }
        self.spans
    }
}

/// Wraps one logical line into screen lines no wider than `width` (prefixes
/// included). `first` starts the first screen line, `rest` every later one.
pub fn wrap_spans(
    spans: &[Span<'_>],
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    let prefix_width = |p: &[Span<'static>]| p.iter().map(Span::width).sum::<usize>();
    let mut lines: Vec<Vec<Span<'static>>> = Vec::new();
    let mut builder = LineBuilder::default();
    let mut avail = width.saturating_sub(prefix_width(first)).max(1);
    let rest_avail = width.saturating_sub(prefix_width(rest)).max(1);
    let mut at_start = true;

    let flush = |builder: &mut LineBuilder, lines: &mut Vec<Vec<Span<'static>>>| {
        let done = std::mem::take(builder);
        lines.push(done.finish());
    };

    for piece in pieces(spans) {
        if piece.blank {
            if builder.width + piece.width <= avail {
                for (c, s) in piece.chars {
                    builder.push(c, s);
                }
            } else if !at_start || builder.width > 0 {
                // A gap at a break point is dropped rather than carried over.
                flush(&mut builder, &mut lines);
                avail = rest_avail;
            }
            at_start = false;
            continue;
        }
        if builder.width + piece.width > avail && builder.width > 0 {
            trim_trailing_blank(&mut builder);
            flush(&mut builder, &mut lines);
            avail = rest_avail;
        }
        for (c, s) in piece.chars {
            let w = char_width(c);
            if builder.width + w > avail && builder.width > 0 {
                flush(&mut builder, &mut lines);
                avail = rest_avail;
            }
            builder.push(c, s);
        }
        at_start = false;
    }
    flush(&mut builder, &mut lines);

    lines
        .into_iter()
        .enumerate()
        .map(|(i, body)| {
            let mut spans: Vec<Span<'static>> = if i == 0 {
                first.to_vec()
            } else {
                rest.to_vec()
            };
            spans.extend(body);
            Line::from(spans)
        })
        .collect()
}

fn trim_trailing_blank(builder: &mut LineBuilder) {
    while builder.current.ends_with(' ') {
        builder.current.pop();
        builder.width = builder.width.saturating_sub(1);
    }
}

/// Cuts `text` to at most `max` display columns, ending with `…` when cut.
pub fn truncate(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    let total: usize = text.chars().map(char_width).sum();
    if total <= max {
        return text.to_owned();
    }
    for c in text.chars() {
        let w = char_width(c);
        if used + w + 1 > max {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn plain(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn wraps_at_word_boundaries_and_drops_the_break_gap() {
        let lines = wrap_spans(&[Span::raw("the quick brown fox jumps")], 10, &[], &[]);
        assert_eq!(plain(&lines), vec!["the quick", "brown fox", "jumps"]);
    }

    #[test]
    fn long_words_are_split_and_prefixes_count_toward_the_width() {
        let first = [Span::raw("- ")];
        let rest = [Span::raw("  ")];
        let lines = wrap_spans(&[Span::raw("abcdefghij k")], 6, &first, &rest);
        assert_eq!(plain(&lines), vec!["- abcd", "  efgh", "  ij k"]);
        assert!(lines.iter().all(|l| l.width() <= 6));
    }

    #[test]
    fn styles_survive_wrapping_and_wide_characters_count_double() {
        let bold = Style::default().add_modifier(ratatui::style::Modifier::BOLD);
        let lines = wrap_spans(
            &[Span::raw("ab "), Span::styled("漢字漢字", bold)],
            6,
            &[],
            &[],
        );
        assert_eq!(plain(&lines), vec!["ab", "漢字漢", "字"]);
        assert_eq!(lines[1].spans[0].style, bold);
    }

    #[test]
    fn empty_input_gives_one_empty_line() {
        let lines = wrap_spans(&[], 10, &[Span::raw("> ")], &[]);
        assert_eq!(plain(&lines), vec!["> "]);
    }

    #[test]
    fn truncate_marks_the_cut() {
        assert_eq!(truncate("hello world", 6), "hello…");
        assert_eq!(truncate("short", 6), "short");
    }
}
