//! A small Markdown renderer for chat text: headings, emphasis, lists, quotes,
//! inline code and fenced code blocks become wrapped, styled ratatui lines.
//!
//! It covers what models write in answers, not the full CommonMark grammar;
//! anything it does not recognise is shown as the text it is.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::theme::Theme;
use super::wrap::wrap_spans;

/// Renders `text` wrapped to `width` columns.
pub fn render(text: &str, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut out: Vec<Line<'static>> = Vec::new();
    let mut paragraph: Option<Paragraph> = None;
    let mut fence: Option<Fence> = None;
    let mut last_blank = true;

    let flush = |paragraph: &mut Option<Paragraph>, out: &mut Vec<Line<'static>>| {
        if let Some(p) = paragraph.take() {
            let spans = inline(&p.text, p.style, theme);
            out.extend(wrap_spans(&spans, width, &p.first, &p.rest));
        }
    };

    for raw in text.lines() {
        if let Some(open) = &fence {
            if is_fence_close(raw, open) {
                fence = None;
            } else {
                let code = raw.strip_prefix(open.indent.as_str()).unwrap_or(raw);
                let gutter = [Span::styled("│ ", theme.gutter())];
                out.extend(wrap_spans(
                    &[Span::styled(code.to_owned(), theme.code_block())],
                    width,
                    &gutter,
                    &gutter,
                ));
            }
            continue;
        }
        let trimmed = raw.trim_start();
        let indent = raw.len() - trimmed.len();

        if let Some(open) = fence_open(raw) {
            flush(&mut paragraph, &mut out);
            let label = if open.lang.is_empty() {
                "┌".to_owned()
            } else {
                format!("┌ {}", open.lang)
            };
            out.push(Line::from(Span::styled(label, theme.gutter())));
            fence = Some(open);
            last_blank = false;
            continue;
        }
        if trimmed.is_empty() {
            flush(&mut paragraph, &mut out);
            if !last_blank {
                out.push(Line::default());
            }
            last_blank = true;
            continue;
        }
        last_blank = false;

        if let Some((level, title)) = heading(trimmed) {
            flush(&mut paragraph, &mut out);
            let spans = inline(title, theme.heading(level), theme);
            out.extend(wrap_spans(&spans, width, &[], &[]));
            continue;
        }
        if is_rule(trimmed) {
            flush(&mut paragraph, &mut out);
            let n = width.clamp(1, 40);
            out.push(Line::from(Span::styled("─".repeat(n), theme.gutter())));
            continue;
        }
        if let Some((marker, body)) = list_item(trimmed) {
            flush(&mut paragraph, &mut out);
            let depth = indent / 2;
            let pad = "  ".repeat(depth);
            let bullet = if marker.is_empty() {
                if depth == 0 { "• " } else { "◦ " }.to_owned()
            } else {
                format!("{marker} ")
            };
            let hang = " ".repeat(bullet.chars().count());
            paragraph = Some(Paragraph {
                text: body.to_owned(),
                style: theme.text(),
                first: vec![Span::raw(pad.clone()), Span::styled(bullet, theme.accent())],
                rest: vec![Span::raw(format!("{pad}{hang}"))],
            });
            continue;
        }
        if let Some(body) = trimmed.strip_prefix('>') {
            flush(&mut paragraph, &mut out);
            let bar = vec![Span::styled("▌ ", theme.gutter())];
            paragraph = Some(Paragraph {
                text: body.trim_start().to_owned(),
                style: theme.italic(),
                first: bar.clone(),
                rest: bar,
            });
            flush(&mut paragraph, &mut out);
            continue;
        }
        if trimmed.starts_with('|') {
            // Tables keep their rows as written; joining them would be worse.
            flush(&mut paragraph, &mut out);
            out.extend(wrap_spans(
                &[Span::raw(trimmed.to_owned())],
                width,
                &[],
                &[],
            ));
            continue;
        }
        match &mut paragraph {
            // A soft line break joins lines into one paragraph (or list item).
            Some(p) => {
                p.text.push(' ');
                p.text.push_str(trimmed);
            }
            None => {
                paragraph = Some(Paragraph {
                    text: trimmed.to_owned(),
                    style: theme.text(),
                    first: Vec::new(),
                    rest: Vec::new(),
                });
            }
        }
    }
    flush(&mut paragraph, &mut out);
    while out.last().is_some_and(|l| l.width() == 0) {
        out.pop();
    }
    out
}

struct Paragraph {
    text: String,
    style: Style,
    first: Vec<Span<'static>>,
    rest: Vec<Span<'static>>,
}

struct Fence {
    marker: String,
    indent: String,
    lang: String,
}

fn fence_open(raw: &str) -> Option<Fence> {
    let trimmed = raw.trim_start();
    let indent = &raw[..raw.len() - trimmed.len()];
    if indent.len() > 3 {
        return None;
    }
    let tick = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let count = trimmed.chars().take_while(|c| *c == tick).count();
    if count < 3 {
        return None;
    }
    let lang = trimmed[count..].trim();
    if tick == '`' && lang.contains('`') {
        return None;
    }
    Some(Fence {
        marker: trimmed[..count].to_owned(),
        indent: indent.to_owned(),
        lang: lang.split_whitespace().next().unwrap_or("").to_owned(),
    })
}

fn is_fence_close(raw: &str, open: &Fence) -> bool {
    let t = raw.trim();
    let tick = open.marker.chars().next().unwrap_or('`');
    t.len() >= open.marker.len() && t.chars().all(|c| c == tick)
}

fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &line[level..];
    if rest.is_empty() {
        return Some((level, ""));
    }
    rest.starts_with(' ')
        .then(|| (level, rest.trim().trim_end_matches('#').trim_end()))
}

fn is_rule(line: &str) -> bool {
    let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    compact.len() >= 3
        && ['-', '*', '_']
            .iter()
            .any(|m| compact.chars().all(|c| c == *m))
}

/// `- x`, `* x`, `+ x` give an empty marker (a bullet); `3. x` gives "3.".
fn list_item(line: &str) -> Option<(String, &str)> {
    for bullet in ["- ", "* ", "+ "] {
        if let Some(body) = line.strip_prefix(bullet) {
            let body = body
                .strip_prefix("[ ] ")
                .map(|b| ("☐ ", b))
                .or_else(|| body.strip_prefix("[x] ").map(|b| ("☑ ", b)));
            return Some(match body {
                Some((box_, b)) => (box_.trim_end().to_owned(), b),
                None => (String::new(), line[2..].trim_start()),
            });
        }
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if (1..=9).contains(&digits) {
        let after = &line[digits..];
        for sep in [". ", ") "] {
            if let Some(body) = after.strip_prefix(sep) {
                return Some((format!("{}.", &line[..digits]), body.trim_start()));
            }
        }
    }
    None
}

/// Inline Markdown: `code`, **strong**, *emphasis*, _emphasis_, ~~strike~~,
/// [links](url) and backslash escapes.
pub fn inline(text: &str, base: Style, theme: &Theme) -> Vec<Span<'static>> {
    let chars: Vec<char> = text.chars().collect();
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut buf = String::new();
    let (mut strong, mut em, mut strike) = (false, false, false);
    let style_now = |strong: bool, em: bool, strike: bool| {
        let mut s = base;
        if strong {
            s = s.patch(theme.bold());
        }
        if em {
            s = s.patch(theme.italic());
        }
        if strike {
            s = s.patch(theme.strike());
        }
        s
    };
    let push = |buf: &mut String, spans: &mut Vec<Span<'static>>, style: Style| {
        if !buf.is_empty() {
            spans.push(Span::styled(std::mem::take(buf), style));
        }
    };
    let rest_has = |from: usize, pat: &[char]| -> bool {
        chars.len() >= pat.len()
            && (from..=chars.len() - pat.len()).any(|i| chars[i..i + pat.len()] == *pat)
    };

    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let prev = if i == 0 { None } else { Some(chars[i - 1]) };
        let current = style_now(strong, em, strike);
        match c {
            '\\' if next.is_some_and(|n| n.is_ascii_punctuation()) => {
                buf.extend(next);
                i += 2;
                continue;
            }
            '`' => {
                let ticks = chars[i..].iter().take_while(|c| **c == '`').count();
                let fence: Vec<char> = vec!['`'; ticks];
                if let Some(end) = (i + ticks..chars.len().saturating_sub(ticks - 1))
                    .find(|j| chars[*j..*j + ticks] == *fence)
                {
                    push(&mut buf, &mut spans, current);
                    let code: String = chars[i + ticks..end].iter().collect();
                    let code = if ticks > 1 {
                        code.trim().to_owned()
                    } else {
                        code
                    };
                    spans.push(Span::styled(code, base.patch(theme.inline_code())));
                    i = end + ticks;
                    continue;
                }
            }
            '*' | '_' if next == Some(c) => {
                let pair = [c, c];
                let opening = !strong
                    && chars.get(i + 2).is_some_and(|n| !n.is_whitespace())
                    && rest_has(i + 3, &pair);
                if opening || strong {
                    push(&mut buf, &mut spans, current);
                    strong = !strong;
                    i += 2;
                    continue;
                }
            }
            '*' | '_' => {
                let word_inside = c == '_' && prev.is_some_and(char::is_alphanumeric) && !em;
                let opening = !em
                    && !word_inside
                    && next.is_some_and(|n| !n.is_whitespace())
                    && rest_has(i + 2, &[c]);
                let closing = em && prev.is_some_and(|p| !p.is_whitespace());
                if opening || closing {
                    push(&mut buf, &mut spans, current);
                    em = !em;
                    i += 1;
                    continue;
                }
            }
            '~' if next == Some('~') && (strike || rest_has(i + 2, &['~', '~'])) => {
                push(&mut buf, &mut spans, current);
                strike = !strike;
                i += 2;
                continue;
            }
            '[' => {
                if let Some((label, url, used)) = link(&chars[i..]) {
                    push(&mut buf, &mut spans, current);
                    spans.push(Span::styled(label.clone(), current.patch(theme.link())));
                    if url != label {
                        spans.push(Span::styled(format!(" ({url})"), theme.dim()));
                    }
                    i += used;
                    continue;
                }
            }
            _ => {}
        }
        buf.push(c);
        i += 1;
    }
    push(&mut buf, &mut spans, style_now(strong, em, strike));
    spans
}

/// `[label](url)` at the start of `chars`: the label, the url and the chars used.
fn link(chars: &[char]) -> Option<(String, String, usize)> {
    let close = chars.iter().position(|c| *c == ']')?;
    if chars.get(close + 1) != Some(&'(') {
        return None;
    }
    let end = close + 2 + chars[close + 2..].iter().position(|c| *c == ')')?;
    let label: String = chars[1..close].iter().collect();
    let url: String = chars[close + 2..end].iter().collect();
    (!label.is_empty() && !url.contains(' ')).then_some((label, url, end + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use ratatui::style::Modifier;

    fn text_of(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn paragraphs_join_soft_breaks_and_wrap() {
        let lines = render("one two\nthree four\n\nnext", 11, &Theme::plain());
        assert_eq!(text_of(&lines), vec!["one two", "three four", "", "next"]);
    }

    #[test]
    fn headings_lists_and_quotes() {
        let md = "# Title\n- first item\n  - nested\n2. second\n> quoted";
        let lines = render(md, 40, &Theme::plain());
        assert_eq!(
            text_of(&lines),
            vec![
                "Title",
                "• first item",
                "  ◦ nested",
                "2. second",
                "▌ quoted"
            ]
        );
        let colored = render(md, 40, &Theme::colored());
        assert!(
            colored[0].spans[0]
                .style
                .add_modifier
                .contains(Modifier::BOLD)
        );
    }

    #[test]
    fn fenced_code_keeps_its_lines_and_gets_a_gutter() {
        let md = "Run:\n```sh\ncargo  test\n  --all\n```\ndone";
        let lines = render(md, 40, &Theme::colored());
        assert_eq!(
            text_of(&lines),
            vec!["Run:", "┌ sh", "│ cargo  test", "│   --all", "done"]
        );
        assert_eq!(lines[2].spans[1].style, Theme::colored().code_block());
    }

    #[test]
    fn an_unclosed_fence_renders_the_rest_as_code_while_streaming() {
        let lines = render("```\nlet x = 1;", 40, &Theme::plain());
        assert_eq!(text_of(&lines), vec!["┌", "│ let x = 1;"]);
    }

    #[test]
    fn inline_styles() {
        let theme = Theme::colored();
        let spans = inline(
            "a **b** *c* `d` ~~e~~ [f](http://x) snake_case_name",
            Style::default(),
            &theme,
        );
        let words: Vec<(&str, Style)> = spans
            .iter()
            .map(|s| (s.content.as_ref(), s.style))
            .collect();
        assert!(words.contains(&("b", theme.bold())));
        assert!(words.contains(&("c", theme.italic())));
        assert!(words.contains(&("d", theme.inline_code())));
        assert!(words.contains(&("e", theme.strike())));
        assert!(words.contains(&("f", theme.link())));
        let all: String = spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(all, "a b c d e f (http://x) snake_case_name");
    }

    #[test]
    fn lone_markers_stay_literal() {
        let spans = inline("2 * 3 = 6 and a_b", Style::default(), &Theme::plain());
        let all: String = spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(all, "2 * 3 = 6 and a_b");
    }
}
