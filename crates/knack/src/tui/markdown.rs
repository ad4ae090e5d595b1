//! Markdown for the terminal: CommonMark events from `pulldown-cmark` (with
//! tables, strikethrough and task lists) turned into wrapped, styled ratatui
//! lines. Headings, emphasis, nested lists, quotes, links, tables and code
//! blocks are drawn; no Markdown markup is left in the text.
//!
//! The transcript caches the result per message and width, so this runs once
//! per change of a message (each streamed delta re-renders only its message).

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::theme::Theme;
use super::wrap::wrap_spans;

/// Bullets by nesting depth; deeper lists repeat the last one.
const BULLETS: [&str; 3] = ["• ", "◦ ", "▪ "];
/// The longest horizontal rule drawn, so a wide terminal is not one long line.
const MAX_RULE: usize = 40;
/// Columns narrower than this (when their text is longer) make a table
/// unreadable; such a table is drawn as one "header: value" record per row.
const MIN_TABLE_COLUMN: usize = 6;
/// Between two table columns.
const COLUMN_SEPARATOR: &str = " │ ";
/// Spaces a tab in a code block stands for.
const TAB: &str = "    ";

/// Renders `text` wrapped to `width` columns.
pub fn render(text: &str, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut renderer = Renderer::new(width.max(1), theme);
    for event in Parser::new_ext(text, options) {
        renderer.event(event);
    }
    renderer.finish()
}

/// An open block quote or list item: what it puts before each line.
struct Container {
    /// Before the first line of the item (its bullet or number).
    first: Vec<Span<'static>>,
    /// Before every later line (the bar of a quote, spaces under a bullet).
    rest: Vec<Span<'static>>,
    first_pending: bool,
    is_item: bool,
}

struct CodeBlock {
    lang: String,
    text: String,
}

#[derive(Default)]
struct Table {
    alignments: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span<'static>>>>,
    head_rows: usize,
    row: Vec<Vec<Span<'static>>>,
}

struct Renderer<'t> {
    width: usize,
    theme: &'t Theme,
    out: Vec<Line<'static>>,
    containers: Vec<Container>,
    /// One entry per open list: the next number of an ordered list.
    lists: Vec<Option<u64>>,
    /// The inline text of the current block, split at hard line breaks.
    segments: Vec<Vec<Span<'static>>>,
    /// The style of the current block's text (a heading's, a quote's).
    block_style: Style,
    /// Emphasis, strong, strikethrough and links, innermost last.
    inline_styles: Vec<Style>,
    /// Open links: their target and where their text starts in the segment.
    links: Vec<(String, usize)>,
    quote_depth: usize,
    code: Option<CodeBlock>,
    html: Option<String>,
    table: Option<Table>,
    /// A blank line is owed before the next block.
    gap: bool,
}

impl<'t> Renderer<'t> {
    fn new(width: usize, theme: &'t Theme) -> Self {
        Self {
            width,
            theme,
            out: Vec::new(),
            containers: Vec::new(),
            lists: Vec::new(),
            segments: vec![Vec::new()],
            block_style: theme.text(),
            inline_styles: Vec::new(),
            links: Vec::new(),
            quote_depth: 0,
            code: None,
            html: None,
            table: None,
            gap: false,
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => {
                if let Some(code) = &mut self.code {
                    code.text.push_str(&text);
                } else if let Some(html) = &mut self.html {
                    html.push_str(&text);
                } else {
                    self.push_text(&text, self.style());
                }
            }
            Event::Code(code) => {
                let style = self.style().patch(self.theme.inline_code());
                self.push_text(&code, style);
            }
            Event::Html(html) => match &mut self.html {
                Some(block) => block.push_str(&html),
                None => self.push_text(&html, self.style()),
            },
            Event::InlineHtml(html) | Event::InlineMath(html) | Event::DisplayMath(html) => {
                self.push_text(&html, self.style());
            }
            Event::FootnoteReference(name) => self.push_text(&format!("[^{name}]"), self.style()),
            Event::SoftBreak => self.push_text(" ", self.style()),
            Event::HardBreak => self.segments.push(Vec::new()),
            Event::Rule => {
                self.flush_inline();
                self.open_block();
                let (first, _) = self.prefixes();
                let room = self.width.saturating_sub(spans_width(&first));
                let mut spans = first;
                spans.push(Span::styled(
                    "─".repeat(room.clamp(1, MAX_RULE)),
                    self.theme.gutter(),
                ));
                self.out.push(Line::from(spans));
                self.gap = true;
            }
            Event::TaskListMarker(done) => {
                if let Some(item) = self.containers.last_mut().filter(|c| c.is_item) {
                    let mark = if done { "☑ " } else { "☐ " };
                    item.first = vec![Span::styled(mark, self.theme.accent())];
                    item.rest = vec![Span::raw("  ")];
                }
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.open_block(),
            Tag::Heading { level, .. } => {
                self.flush_inline();
                self.open_block();
                self.block_style = self.theme.heading(heading_level(level));
            }
            Tag::BlockQuote(_) => {
                self.flush_inline();
                self.open_block();
                let bar = vec![Span::styled("▌ ", self.theme.gutter())];
                self.containers.push(Container {
                    first: bar.clone(),
                    rest: bar,
                    first_pending: true,
                    is_item: false,
                });
                self.quote_depth += 1;
            }
            Tag::CodeBlock(kind) => {
                self.flush_inline();
                self.open_block();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_owned()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some(CodeBlock {
                    lang,
                    text: String::new(),
                });
            }
            Tag::HtmlBlock => {
                self.flush_inline();
                self.open_block();
                self.html = Some(String::new());
            }
            Tag::List(start) => {
                // The text of the item this list is nested in comes first.
                self.flush_inline();
                self.open_block();
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush_inline();
                self.open_block();
                let depth = self.lists.len().saturating_sub(1);
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let marker = format!("{n}. ");
                        *n += 1;
                        marker
                    }
                    _ => BULLETS[depth.min(BULLETS.len() - 1)].to_owned(),
                };
                let hang = " ".repeat(marker.width());
                self.containers.push(Container {
                    first: vec![Span::styled(marker, self.theme.accent())],
                    rest: vec![Span::raw(hang)],
                    first_pending: true,
                    is_item: true,
                });
            }
            Tag::Table(alignments) => {
                self.flush_inline();
                self.open_block();
                self.table = Some(Table {
                    alignments,
                    ..Table::default()
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.row.clear();
                }
            }
            Tag::TableCell => self.segments = vec![Vec::new()],
            Tag::Emphasis => self.inline_styles.push(self.theme.italic()),
            Tag::Strong => self.inline_styles.push(self.theme.bold()),
            Tag::Strikethrough => self.inline_styles.push(self.theme.strike()),
            Tag::Link { dest_url, .. } => self.open_link(&dest_url),
            Tag::Image { dest_url, .. } => {
                self.push_text("image: ", self.theme.dim());
                self.open_link(&dest_url);
            }
            // Not enabled in the parser options; their text still shows.
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::Superscript
            | Tag::Subscript
            | Tag::MetadataBlock(_) => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush_inline();
                self.gap = true;
            }
            TagEnd::Heading(_) => {
                self.flush_inline();
                self.block_style = self.theme.text();
                self.gap = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.containers.pop();
                self.quote_depth = self.quote_depth.saturating_sub(1);
                self.gap = true;
            }
            TagEnd::CodeBlock => {
                if let Some(code) = self.code.take() {
                    self.emit_code(&code);
                }
                self.gap = true;
            }
            TagEnd::HtmlBlock => {
                if let Some(html) = self.html.take() {
                    let style = self.theme.dim();
                    for line in html.trim_end_matches('\n').lines() {
                        self.emit(&[Span::styled(line.to_owned(), style)]);
                    }
                }
                self.gap = true;
            }
            TagEnd::List(_) => {
                self.flush_inline();
                self.lists.pop();
                // A list nested in a tight item runs on into the next item.
                self.gap = !self.containers.last().is_some_and(|c| c.is_item);
            }
            TagEnd::Item => {
                self.flush_inline();
                if let Some(item) = self.containers.last()
                    && item.first_pending
                {
                    // An empty item still shows its bullet.
                    let (first, _) = self.prefixes();
                    self.out.push(Line::from(first));
                }
                self.containers.pop();
            }
            TagEnd::TableCell => {
                let cell: Vec<Span<'static>> = std::mem::take(&mut self.segments)
                    .into_iter()
                    .enumerate()
                    .flat_map(|(i, seg)| {
                        let join = (i > 0).then(|| Span::raw(" "));
                        join.into_iter().chain(seg)
                    })
                    .collect();
                self.segments = vec![Vec::new()];
                if let Some(table) = &mut self.table {
                    table.row.push(cell);
                }
            }
            TagEnd::TableHead | TagEnd::TableRow => {
                if let Some(table) = &mut self.table {
                    let row = std::mem::take(&mut table.row);
                    table.rows.push(row);
                    if tag == TagEnd::TableHead {
                        table.head_rows = table.rows.len();
                    }
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.emit_table(&table);
                }
                self.gap = true;
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.inline_styles.pop();
            }
            TagEnd::Link | TagEnd::Image => self.close_link(),
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::Superscript
            | TagEnd::Subscript
            | TagEnd::MetadataBlock(_) => {}
        }
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        self.flush_inline();
        if let Some(code) = self.code.take() {
            self.emit_code(&code);
        }
        while self.out.last().is_some_and(|l| l.width() == 0) {
            self.out.pop();
        }
        self.out
    }

    /// The style of text here: the block's, in italics inside a quote, with
    /// the open inline styles on top.
    fn style(&self) -> Style {
        let mut style = self.block_style;
        if self.quote_depth > 0 {
            style = style.patch(self.theme.italic());
        }
        for s in &self.inline_styles {
            style = style.patch(*s);
        }
        style
    }

    fn push_text(&mut self, text: &str, style: Style) {
        if text.is_empty() {
            return;
        }
        if let Some(segment) = self.segments.last_mut() {
            segment.push(Span::styled(text.to_owned(), style));
        }
    }

    fn open_link(&mut self, url: &str) {
        let at = self.segments.last().map_or(0, Vec::len);
        self.links.push((url.to_owned(), at));
        self.inline_styles.push(self.theme.link());
    }

    /// The link's text stays; its target follows, dimmed, unless it says the
    /// same (an autolink) or there is none.
    fn close_link(&mut self) {
        self.inline_styles.pop();
        let Some((url, at)) = self.links.pop() else {
            return;
        };
        let label: String = self
            .segments
            .last()
            .map(|seg| seg.iter().skip(at).map(|s| s.content.as_ref()).collect())
            .unwrap_or_default();
        let same = url == label || url.strip_prefix("mailto:") == Some(label.as_str());
        if !url.is_empty() && !same {
            self.push_text(&format!(" ({url})"), self.theme.dim());
        }
    }

    /// A blank line before a block that follows another one.
    fn open_block(&mut self) {
        if self.gap && !self.out.is_empty() {
            let spans: Vec<Span<'static>> = self
                .containers
                .iter()
                .filter(|c| !c.is_item)
                .flat_map(|c| c.rest.iter().cloned())
                .collect();
            self.out.push(Line::from(spans));
        }
        self.gap = false;
    }

    /// The prefixes of the next block's first line and of its later lines;
    /// using the first one spends the bullets of the items it opens.
    fn prefixes(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut first = Vec::new();
        let mut rest = Vec::new();
        for c in &mut self.containers {
            if c.first_pending {
                first.extend(c.first.iter().cloned());
                c.first_pending = false;
            } else {
                first.extend(c.rest.iter().cloned());
            }
            rest.extend(c.rest.iter().cloned());
        }
        (first, rest)
    }

    /// Wraps the collected inline text as one block.
    fn flush_inline(&mut self) {
        let segments = std::mem::replace(&mut self.segments, vec![Vec::new()]);
        if segments.iter().all(Vec::is_empty) {
            return;
        }
        let (first, rest) = self.prefixes();
        for (i, segment) in segments.iter().enumerate() {
            let lead = if i == 0 { &first } else { &rest };
            self.out
                .extend(wrap_spans(segment, self.width, lead, &rest));
        }
    }

    /// One logical line of its own, wrapped under the current prefixes.
    fn emit(&mut self, spans: &[Span<'static>]) {
        let (first, rest) = self.prefixes();
        self.out
            .extend(wrap_spans(spans, self.width, &first, &rest));
    }

    /// A code block: its language on the opening line, then each line behind
    /// a gutter, never joined with its neighbours.
    fn emit_code(&mut self, code: &CodeBlock) {
        let label = if code.lang.is_empty() {
            "┌".to_owned()
        } else {
            format!("┌ {}", code.lang)
        };
        self.emit(&[Span::styled(label, self.theme.gutter())]);
        let (_, rest) = self.prefixes();
        let mut gutter = rest;
        gutter.push(Span::styled("│ ", self.theme.gutter()));
        let style = self.theme.code_block();
        let text = code.text.strip_suffix('\n').unwrap_or(&code.text);
        for line in text.split('\n') {
            let line = line.replace('\t', TAB);
            self.out.extend(wrap_spans(
                &[Span::styled(line, style)],
                self.width,
                &gutter,
                &gutter,
            ));
        }
    }

    fn emit_table(&mut self, table: &Table) {
        let columns = table
            .rows
            .iter()
            .map(Vec::len)
            .max()
            .unwrap_or(0)
            .max(table.alignments.len());
        if columns == 0 {
            return;
        }
        let (first, rest) = self.prefixes();
        let room = self.width.saturating_sub(spans_width(&rest)).max(1);
        let natural: Vec<usize> = (0..columns)
            .map(|c| {
                table
                    .rows
                    .iter()
                    .filter_map(|row| row.get(c))
                    .map(|cell| spans_width(cell))
                    .max()
                    .unwrap_or(0)
                    .max(1)
            })
            .collect();
        let separators = COLUMN_SEPARATOR.width() * (columns - 1);
        let widths = room
            .checked_sub(separators)
            .and_then(|budget| fit_columns(&natural, budget));
        let lines = match widths {
            Some(widths) => self.table_grid(table, &widths),
            None => self.table_records(table, room),
        };
        for (i, line) in lines.into_iter().enumerate() {
            let mut spans = if i == 0 { first.clone() } else { rest.clone() };
            spans.extend(line);
            self.out.push(Line::from(spans));
        }
    }

    /// Rows of aligned columns; a cell too long for its column wraps inside it.
    fn table_grid(&self, table: &Table, widths: &[usize]) -> Vec<Vec<Span<'static>>> {
        let empty = Vec::new();
        let rows: Vec<Vec<Vec<Line<'static>>>> = table
            .rows
            .iter()
            .enumerate()
            .map(|(r, row)| {
                let head = r < table.head_rows;
                let bold = self.theme.bold();
                widths
                    .iter()
                    .enumerate()
                    .map(|(c, w)| {
                        let cell = row.get(c).unwrap_or(&empty);
                        let spans: Vec<Span<'static>> = cell
                            .iter()
                            .map(|s| {
                                let style = if head { s.style.patch(bold) } else { s.style };
                                Span::styled(s.content.clone(), style)
                            })
                            .collect();
                        wrap_spans(&spans, *w, &[], &[])
                    })
                    .collect()
            })
            .collect();
        // A column whose cells wrapped may use less than its share.
        let widths: Vec<usize> = (0..widths.len())
            .map(|c| {
                rows.iter()
                    .flat_map(|row| row[c].iter().map(Line::width))
                    .max()
                    .unwrap_or(1)
                    .max(1)
            })
            .collect();
        let mut out = Vec::new();
        for (r, cells) in rows.into_iter().enumerate() {
            let height = cells.iter().map(Vec::len).max().unwrap_or(1);
            for k in 0..height {
                let mut spans = Vec::new();
                for (c, w) in widths.iter().enumerate() {
                    if c > 0 {
                        spans.push(Span::styled(COLUMN_SEPARATOR, self.theme.gutter()));
                    }
                    let line = cells[c].get(k).cloned().unwrap_or_default();
                    let last = c + 1 == widths.len();
                    let align = table.alignments.get(c).copied().unwrap_or(Alignment::None);
                    spans.extend(aligned(line, *w, align, last));
                }
                out.push(spans);
            }
            if r + 1 == table.head_rows {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                out.push(vec![Span::styled(rule.join("─┼─"), self.theme.gutter())]);
            }
        }
        out
    }

    /// A table too wide for the screen: each row as `header: value` lines.
    fn table_records(&self, table: &Table, room: usize) -> Vec<Vec<Span<'static>>> {
        let headers: Vec<String> = table
            .rows
            .iter()
            .take(table.head_rows)
            .flatten()
            .map(|cell| cell.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        let mut out = Vec::new();
        for (r, row) in table.rows.iter().enumerate().skip(table.head_rows) {
            if r > table.head_rows {
                out.push(Vec::new());
            }
            for (c, cell) in row.iter().enumerate() {
                let label = match headers.get(c).filter(|h| !h.is_empty()) {
                    Some(h) => format!("{h}: "),
                    None => String::new(),
                };
                let first = vec![Span::styled(label, self.theme.bold())];
                let hang = vec![Span::raw("  ")];
                out.extend(
                    wrap_spans(cell, room, &first, &hang)
                        .into_iter()
                        .map(|l| l.spans),
                );
            }
        }
        out
    }
}

fn heading_level(level: HeadingLevel) -> usize {
    level as usize
}

fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(Span::width).sum()
}

/// Column widths that fit `budget`: the natural widths when they fit,
/// otherwise the widest columns are narrowed first (to a common cap, the
/// columns left over getting one more each). `None` when even that would
/// squeeze a column under [`MIN_TABLE_COLUMN`].
fn fit_columns(natural: &[usize], budget: usize) -> Option<Vec<usize>> {
    if natural.iter().sum::<usize>() <= budget {
        return Some(natural.to_vec());
    }
    let floor: usize = natural.iter().map(|n| (*n).min(MIN_TABLE_COLUMN)).sum();
    if floor > budget {
        return None;
    }
    let capped = |cap: usize| natural.iter().map(|n| (*n).min(cap)).sum::<usize>();
    let mut cap = MIN_TABLE_COLUMN;
    while capped(cap + 1) <= budget {
        cap += 1;
    }
    let mut widths: Vec<usize> = natural.iter().map(|n| (*n).min(cap)).collect();
    let mut spare = budget - capped(cap);
    for (w, n) in widths.iter_mut().zip(natural) {
        if spare == 0 {
            break;
        }
        if *n > *w {
            *w += 1;
            spare -= 1;
        }
    }
    Some(widths)
}

/// One screen line of a cell padded to `width` by its column's alignment;
/// the last column of a left-aligned row gets no trailing padding.
fn aligned(line: Line<'static>, width: usize, align: Alignment, last: bool) -> Vec<Span<'static>> {
    let pad = width.saturating_sub(line.width());
    let (left, right) = match align {
        Alignment::Right => (pad, 0),
        Alignment::Center => (pad / 2, pad - pad / 2),
        Alignment::Left | Alignment::None => (0, if last { 0 } else { pad }),
    };
    let mut spans = Vec::new();
    if left > 0 {
        spans.push(Span::raw(" ".repeat(left)));
    }
    spans.extend(line.spans);
    if right > 0 {
        spans.push(Span::raw(" ".repeat(right)));
    }
    spans
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

    fn plain(md: &str, width: usize) -> Vec<String> {
        text_of(&render(md, width, &Theme::plain()))
    }

    #[test]
    fn paragraphs_join_soft_breaks_and_wrap() {
        assert_eq!(
            plain("one two\nthree four\n\nnext", 11),
            vec!["one two", "three four", "", "next"]
        );
    }

    #[test]
    fn a_hard_break_starts_a_new_line() {
        assert_eq!(plain("one  \ntwo", 20), vec!["one", "two"]);
    }

    #[test]
    fn headings_lists_and_quotes() {
        let md = "# Title\n\n- first item\n  - nested\n\n> quoted";
        assert_eq!(
            plain(md, 40),
            vec!["Title", "", "• first item", "  ◦ nested", "", "▌ quoted"]
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
    fn ordered_lists_count_from_their_start_and_wrap_under_their_text() {
        let md = "3. alpha beta gamma\n4. delta\n   1. inner one";
        assert_eq!(
            plain(md, 14),
            vec![
                "3. alpha beta",
                "   gamma",
                "4. delta",
                "   1. inner",
                "      one"
            ]
        );
    }

    #[test]
    fn task_lists_get_boxes() {
        assert_eq!(
            plain("- [ ] todo\n- [x] done", 20),
            vec!["☐ todo", "☑ done"]
        );
    }

    #[test]
    fn fenced_code_keeps_its_lines_and_gets_a_gutter() {
        let md = "Run:\n```sh\ncargo  test\n\t--all\n```\ndone";
        let lines = render(md, 40, &Theme::colored());
        assert_eq!(
            text_of(&lines),
            vec![
                "Run:",
                "",
                "┌ sh",
                "│ cargo  test",
                "│     --all",
                "",
                "done"
            ]
        );
        assert_eq!(lines[3].spans[1].style, Theme::colored().code_block());
    }

    #[test]
    fn an_unclosed_fence_renders_the_rest_as_code_while_streaming() {
        assert_eq!(plain("```\nlet x = 1;", 40), vec!["┌", "│ let x = 1;"]);
    }

    #[test]
    fn inline_styles_leave_no_markup() {
        let theme = Theme::colored();
        let lines = render(
            "a **b** *c* `d` ~~e~~ [f](http://x) snake_case_name",
            80,
            &theme,
        );
        let spans = &lines[0].spans;
        let words: Vec<(&str, Style)> = spans
            .iter()
            .map(|s| (s.content.as_ref(), s.style))
            .collect();
        assert!(words.contains(&("b", theme.bold())));
        assert!(words.contains(&("c", theme.italic())));
        assert!(words.contains(&("d", theme.inline_code())));
        assert!(words.contains(&("e", theme.strike())));
        assert!(words.contains(&("f", theme.link())));
        assert_eq!(
            text_of(&lines),
            vec!["a b c d e f (http://x) snake_case_name"]
        );
    }

    #[test]
    fn links_show_their_target_unless_it_is_the_text() {
        assert_eq!(
            plain("see <https://a.io> and [docs](https://b.io/x)", 80),
            vec!["see https://a.io and docs (https://b.io/x)"]
        );
    }

    #[test]
    fn lone_markers_stay_literal() {
        assert_eq!(plain("2 * 3 = 6 and a_b", 40), vec!["2 * 3 = 6 and a_b"]);
    }

    #[test]
    fn tables_align_their_columns() {
        let md = "| name | n |\n|:--|--:|\n| alpha | 1 |\n| b | 22 |";
        assert_eq!(
            plain(md, 40),
            vec!["name  │  n", "──────┼───", "alpha │  1", "b     │ 22"]
        );
    }

    #[test]
    fn a_wide_table_wraps_inside_its_columns() {
        let md = "| key | what it does |\n|---|---|\n| a | one two three four five six |";
        let lines = plain(md, 20);
        assert_eq!(
            lines,
            vec![
                "key │ what it does",
                "────┼──────────────",
                "a   │ one two three",
                "    │ four five six"
            ]
        );
    }

    #[test]
    fn a_table_too_wide_for_columns_becomes_records() {
        let md = "| first column | second column | third column |\n|---|---|---|\n| one | two | three |\n| four | five | six |";
        assert_eq!(
            plain(md, 20),
            vec![
                "first column: one",
                "second column: two",
                "third column: three",
                "",
                "first column: four",
                "second column: five",
                "third column: six",
            ]
        );
    }

    #[test]
    fn column_widths_narrow_the_widest_first() {
        assert_eq!(fit_columns(&[3, 30], 20), Some(vec![3, 17]));
        assert_eq!(fit_columns(&[20, 20], 21), Some(vec![11, 10]));
        assert_eq!(fit_columns(&[20, 20, 20], 10), None);
    }

    #[test]
    fn nothing_gets_wider_than_the_width() {
        let md = "# A heading that is long\n\n> a quote that wraps around\n\n\
                  - item with `code` and [a link](https://example.com/long/path)\n\n\
                  | a | b |\n|---|---|\n| 1 | 2 |\n\n```\nlong code line that wraps\n```";
        for width in [8, 12, 20, 33] {
            for line in render(md, width, &Theme::plain()) {
                assert!(line.width() <= width, "{width}: {line:?}");
            }
        }
    }
}
