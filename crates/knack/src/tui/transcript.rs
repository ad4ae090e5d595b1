//! The conversation pane: user and assistant messages, tool cards and notes,
//! with per-width caches of wrapped lines so a frame draws only what is visible.

use std::cell::RefCell;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};
use serde_json::Value;

use super::markdown;
use super::theme::Theme;
use super::wrap::wrap_spans;

mod tool_card;

/// Wrapped lines of thinking shown while it streams (the newest ones).
const LIVE_THINKING_LINES: usize = 3;
/// Lines one mouse-wheel notch scrolls.
pub const WHEEL_LINES: usize = 3;

pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

#[derive(Debug, Clone, PartialEq)]
pub enum ToolStatus {
    Running,
    Done {
        success: bool,
        duration_ms: u64,
    },
    /// Replayed from a stored session, where durations are not kept.
    Stored {
        success: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteKind {
    /// Skill loads, catalog changes, skill writes: quiet bookkeeping.
    Subtle,
    Info,
    Retry,
    Error,
    Review,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    User {
        text: String,
    },
    Assistant {
        text: String,
        streaming: bool,
    },
    /// The model's thinking: dimmed, its newest lines shown while it streams,
    /// then folded to one line that Ctrl-O unfolds like a tool card.
    Thinking {
        text: String,
        streaming: bool,
        expanded: bool,
    },
    Tool {
        call_id: String,
        name: String,
        /// As the model sent them (a string when they were not JSON).
        arguments: Value,
        status: ToolStatus,
        /// The tool's reply (its JSON text, cut to a preview) as it arrived.
        output: String,
        expanded: bool,
        /// Shows the reply's JSON instead of the reading of it (Ctrl-T).
        raw: bool,
        /// The permission rule that let the call run without asking.
        approved_by: Option<String>,
        /// What the call changed in files, as unified diffs.
        diffs: Vec<String>,
    },
    Note {
        kind: NoteKind,
        text: String,
    },
}

struct Entry {
    cell: Cell,
    /// Wrapped lines for the width they were made for.
    cache: RefCell<Option<(u16, Vec<Line<'static>>)>>,
}

impl Entry {
    fn new(cell: Cell) -> Self {
        Self {
            cell,
            cache: RefCell::new(None),
        }
    }

    fn changed(&mut self) {
        *self.cache.get_mut() = None;
    }
}

#[derive(Default)]
pub struct Transcript {
    entries: Vec<Entry>,
    /// `None` follows the bottom; `Some(top)` pins the first visible line.
    pinned_top: Option<usize>,
    /// Index of the tool card that Ctrl-O expands.
    selected: Option<usize>,
    /// The last frame's size and look, for scrolling between frames.
    last: Option<Geometry>,
}

#[derive(Clone, Copy)]
struct Geometry {
    width: u16,
    height: usize,
    theme: Theme,
    tick: usize,
}

impl Transcript {
    #[cfg(test)]
    pub fn cells(&self) -> impl Iterator<Item = &Cell> {
        self.entries.iter().map(|e| &e.cell)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn push(&mut self, cell: Cell) {
        self.entries.push(Entry::new(cell));
    }

    pub fn push_note(&mut self, kind: NoteKind, text: impl Into<String>) {
        self.push(Cell::Note {
            kind,
            text: text.into(),
        });
    }

    /// The answer still streaming, wherever it is: a note pushed while it
    /// streams must not split it into a stale part and a repeated whole.
    fn streaming_index(&self) -> Option<usize> {
        self.entries.iter().rposition(|e| {
            matches!(
                e.cell,
                Cell::Assistant {
                    streaming: true,
                    ..
                }
            )
        })
    }

    /// The thinking still streaming, wherever it is (see `streaming_index`).
    fn thinking_index(&self) -> Option<usize> {
        self.entries.iter().rposition(|e| {
            matches!(
                e.cell,
                Cell::Thinking {
                    streaming: true,
                    ..
                }
            )
        })
    }

    pub fn append_reasoning(&mut self, delta: &str) {
        match self.thinking_index() {
            Some(i) => {
                let entry = &mut self.entries[i];
                if let Cell::Thinking { text, .. } = &mut entry.cell {
                    text.push_str(delta);
                }
                entry.changed();
            }
            None => {
                self.settle_stream();
                self.push(Cell::Thinking {
                    text: delta.to_owned(),
                    streaming: true,
                    expanded: false,
                });
            }
        }
    }

    pub fn append_delta(&mut self, delta: &str) {
        // The answer starts: the thinking before it is over and folds away.
        if self.thinking_index().is_some() {
            self.settle_stream();
        }
        match self.streaming_index() {
            Some(i) => {
                let entry = &mut self.entries[i];
                if let Cell::Assistant { text, .. } = &mut entry.cell {
                    text.push_str(delta);
                }
                entry.changed();
            }
            None => self.push(Cell::Assistant {
                text: delta.to_owned(),
                streaming: true,
            }),
        }
    }

    /// The complete message replaces whatever streamed for it.
    pub fn finish_message(&mut self, full: &str) {
        match self.streaming_index() {
            Some(i) => {
                let entry = &mut self.entries[i];
                entry.cell = Cell::Assistant {
                    text: full.to_owned(),
                    streaming: false,
                };
                entry.changed();
            }
            None if full.trim().is_empty() => {}
            None => self.push(Cell::Assistant {
                text: full.to_owned(),
                streaming: false,
            }),
        }
    }

    /// Text streamed since the last complete message is void (a retry follows).
    pub fn discard_stream(&mut self) {
        if let Some(i) = self.streaming_index() {
            self.entries.remove(i);
        }
        if let Some(i) = self.thinking_index() {
            self.entries.remove(i);
        }
    }

    /// Stops showing a stream as live (turn ended, or a tool call began).
    pub fn settle_stream(&mut self) {
        if let Some(i) = self.streaming_index().or_else(|| self.thinking_index()) {
            let entry = &mut self.entries[i];
            if let Cell::Assistant { streaming, .. } | Cell::Thinking { streaming, .. } =
                &mut entry.cell
            {
                *streaming = false;
            }
            entry.changed();
        }
    }

    pub fn begin_tool(&mut self, call_id: &str, name: &str, arguments: &Value) {
        self.settle_stream();
        self.push(Cell::Tool {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            arguments: arguments.clone(),
            status: ToolStatus::Running,
            output: String::new(),
            expanded: false,
            raw: false,
            approved_by: None,
            diffs: Vec::new(),
        });
    }

    /// Marks a card as run without asking because `rule` allows it.
    pub fn approved_by_rule(&mut self, id: &str, rule: &str) {
        if let Some(entry) = self.tool_mut(id) {
            if let Cell::Tool { approved_by, .. } = &mut entry.cell {
                *approved_by = Some(rule.to_owned());
            }
            entry.changed();
        }
    }

    /// Adds a file change to a card, shown as its diff.
    pub fn file_diff(&mut self, id: &str, diff: &str) {
        if let Some(entry) = self.tool_mut(id) {
            if let Cell::Tool { diffs, .. } = &mut entry.cell {
                diffs.push(diff.to_owned());
            }
            entry.changed();
        }
    }

    fn tool_mut(&mut self, id: &str) -> Option<&mut Entry> {
        self.entries
            .iter_mut()
            .rev()
            .find(|e| matches!(&e.cell, Cell::Tool { call_id, .. } if call_id == id))
    }

    pub fn tool_output(&mut self, id: &str, chunk: &str) {
        if let Some(entry) = self.tool_mut(id) {
            if let Cell::Tool { output, .. } = &mut entry.cell {
                if !output.is_empty() && !output.ends_with('\n') {
                    output.push('\n');
                }
                output.push_str(chunk);
            }
            entry.changed();
        }
    }

    pub fn end_tool(&mut self, id: &str, success: bool, duration_ms: u64) {
        if let Some(entry) = self.tool_mut(id) {
            if let Cell::Tool { status, .. } = &mut entry.cell {
                *status = ToolStatus::Done {
                    success,
                    duration_ms,
                };
            }
            entry.changed();
        }
    }

    /// Finishes a card replayed from a stored session.
    pub fn finish_stored_tool(&mut self, id: &str, success: bool) {
        if let Some(entry) = self.tool_mut(id) {
            if let Cell::Tool { status, .. } = &mut entry.cell {
                *status = ToolStatus::Stored { success };
            }
            entry.changed();
        }
    }

    /// Marks every running tool card as failed (the turn ended under them),
    /// showing `result` (a tool result object with its `error`) so the card
    /// says why.
    pub fn abandon_running_tools(&mut self, result: &str) {
        for entry in &mut self.entries {
            if let Cell::Tool { status, output, .. } = &mut entry.cell
                && *status == ToolStatus::Running
            {
                *status = ToolStatus::Done {
                    success: false,
                    duration_ms: 0,
                };
                if output.is_empty() {
                    *output = result.to_owned();
                }
                entry.changed();
            }
        }
    }

    pub fn has_running_tool(&self) -> bool {
        self.entries.iter().any(|e| {
            matches!(
                e.cell,
                Cell::Tool {
                    status: ToolStatus::Running,
                    ..
                }
            )
        })
    }

    /// The cards Ctrl-O folds: tool calls and thinking.
    fn tool_indices(&self) -> Vec<usize> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e.cell, Cell::Tool { .. } | Cell::Thinking { .. }))
            .map(|(i, _)| i)
            .collect()
    }

    /// Moves the tool-card selection; `older` goes up the transcript.
    pub fn select_tool(&mut self, older: bool) {
        let tools = self.tool_indices();
        let Some(&last) = tools.last() else {
            return;
        };
        let old = self.selected;
        self.selected = match self.selected {
            None => Some(last),
            Some(cur) if older => tools
                .iter()
                .rev()
                .find(|i| **i < cur)
                .copied()
                .or(Some(cur)),
            Some(cur) => tools.iter().find(|i| **i > cur).copied(),
        };
        for i in [old, self.selected].into_iter().flatten() {
            if let Some(e) = self.entries.get_mut(i) {
                e.changed();
            }
        }
    }

    pub fn has_selection(&self) -> bool {
        self.selected.is_some()
    }

    pub fn clear_selection(&mut self) {
        if let Some(i) = self.selected.take()
            && let Some(e) = self.entries.get_mut(i)
        {
            e.changed();
        }
    }

    /// Expands or collapses the selected tool card (the newest when none is).
    pub fn toggle_selected_output(&mut self) {
        let target = self
            .selected
            .or_else(|| self.tool_indices().last().copied());
        if let Some(i) = target
            && let Some(entry) = self.entries.get_mut(i)
        {
            if let Cell::Tool { expanded, .. } | Cell::Thinking { expanded, .. } = &mut entry.cell {
                *expanded = !*expanded;
            }
            entry.changed();
        }
    }

    /// Switches the selected tool card (the newest when no tool card is
    /// selected) between its reading as text and the raw JSON.
    pub fn toggle_selected_raw(&mut self) {
        let is_tool = |e: &Entry| matches!(e.cell, Cell::Tool { .. });
        let target = self
            .selected
            .filter(|i| self.entries.get(*i).is_some_and(is_tool))
            .or_else(|| self.entries.iter().rposition(is_tool));
        if let Some(i) = target
            && let Some(entry) = self.entries.get_mut(i)
        {
            if let Cell::Tool { raw, .. } = &mut entry.cell {
                *raw = !*raw;
            }
            entry.changed();
        }
    }

    /// True while the model's thinking streams (the status line says so).
    pub fn is_thinking(&self) -> bool {
        self.thinking_index().is_some()
    }

    #[cfg(test)]
    pub fn is_following(&self) -> bool {
        self.pinned_top.is_none()
    }

    /// Scrolls by `lines` (negative = up), using the last frame's geometry.
    pub fn scroll(&mut self, lines: isize) {
        let Some(g) = self.last else {
            return;
        };
        let bottom_top = self.total_height(&g).saturating_sub(g.height);
        let top = self.pinned_top.unwrap_or(bottom_top) as isize + lines;
        let top = top.max(0) as usize;
        self.pinned_top = (top < bottom_top).then_some(top);
    }

    pub fn page(&self) -> isize {
        self.last.map_or(1, |g| g.height.saturating_sub(2).max(1)) as isize
    }

    pub fn scroll_to_bottom(&mut self) {
        self.pinned_top = None;
    }

    fn lines_of(&self, index: usize, width: u16, theme: &Theme, tick: usize) -> Vec<Line<'static>> {
        let entry = &self.entries[index];
        let selected = self.selected == Some(index);
        render_cell(&entry.cell, width as usize, theme, tick, selected)
    }

    /// Screen-line count of entry `index` at `width`, filling the cache.
    fn height(&self, index: usize, width: u16, theme: &Theme, tick: usize) -> usize {
        let entry = &self.entries[index];
        if let Some((w, lines)) = entry.cache.borrow().as_ref()
            && *w == width
        {
            return lines.len();
        }
        let lines = self.lines_of(index, width, theme, tick);
        let n = lines.len();
        *entry.cache.borrow_mut() = Some((width, lines));
        n
    }

    /// Draws the visible window of the transcript into `area`.
    fn total_height(&self, g: &Geometry) -> usize {
        (0..self.entries.len())
            .map(|i| self.height(i, g.width, &g.theme, g.tick) + usize::from(i > 0))
            .sum()
    }

    /// Draws the visible window of the transcript into `area`.
    ///
    /// Following the bottom, only the newest entries that fill the window are
    /// wrapped, so a resize of a long transcript costs a screenful, not all of
    /// it; scrolling up measures the rest once (then it is cached).
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, tick: usize) {
        let height = area.height as usize;
        if area.width == 0 || height == 0 {
            return;
        }
        // Running tool cards animate, so they are never served from the cache.
        for entry in &mut self.entries {
            if matches!(
                entry.cell,
                Cell::Tool {
                    status: ToolStatus::Running,
                    ..
                }
            ) {
                entry.changed();
            }
        }
        let g = Geometry {
            width: area.width,
            height,
            theme: *theme,
            tick,
        };
        if let Some(top) = self.pinned_top {
            let bottom_top = self.total_height(&g).saturating_sub(height);
            if top >= bottom_top {
                self.pinned_top = None;
            }
        }
        let visible = match self.pinned_top {
            Some(top) => self.window_from(top, &g),
            None => self.window_at_bottom(&g),
        };
        self.last = Some(g);
        Paragraph::new(visible).render(area, buf);
    }

    fn window_at_bottom(&self, g: &Geometry) -> Vec<Line<'static>> {
        let mut rows: Vec<Line<'static>> = Vec::with_capacity(g.height);
        'entries: for i in (0..self.entries.len()).rev() {
            self.height(i, g.width, &g.theme, g.tick);
            let cache = self.entries[i].cache.borrow();
            let Some((_, lines)) = cache.as_ref() else {
                continue;
            };
            for line in lines.iter().rev() {
                if rows.len() >= g.height {
                    break 'entries;
                }
                rows.push(line.clone());
            }
            if i > 0 {
                if rows.len() >= g.height {
                    break;
                }
                rows.push(Line::default());
            }
        }
        rows.reverse();
        rows
    }

    fn window_from(&self, top: usize, g: &Geometry) -> Vec<Line<'static>> {
        let mut visible: Vec<Line<'static>> = Vec::with_capacity(g.height);
        let mut y = 0usize;
        for i in 0..self.entries.len() {
            if y >= top + g.height {
                break;
            }
            let gap = usize::from(i > 0);
            let h = self.height(i, g.width, &g.theme, g.tick) + gap;
            if y + h <= top {
                y += h;
                continue;
            }
            let cache = self.entries[i].cache.borrow();
            let Some((_, lines)) = cache.as_ref() else {
                continue;
            };
            for (k, line) in std::iter::repeat_n(None, gap)
                .chain(lines.iter().map(Some))
                .enumerate()
            {
                let row = y + k;
                if row < top {
                    continue;
                }
                if row >= top + g.height {
                    break;
                }
                visible.push(line.cloned().unwrap_or_default());
            }
            y += h;
        }
        visible
    }
}

pub fn format_duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}m {:02}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

fn render_cell(
    cell: &Cell,
    width: usize,
    theme: &Theme,
    tick: usize,
    selected: bool,
) -> Vec<Line<'static>> {
    match cell {
        Cell::User { text } => {
            let first = [Span::styled("› ", theme.user())];
            let rest = [Span::raw("  ")];
            let mut out = Vec::new();
            for (i, line) in text.lines().enumerate() {
                let lead: &[Span<'static>] = if i == 0 { &first } else { &rest };
                out.extend(wrap_spans(
                    &[Span::styled(line.to_owned(), theme.bold())],
                    width,
                    lead,
                    &rest,
                ));
            }
            if out.is_empty() {
                out.push(Line::from(first.to_vec()));
            }
            out
        }
        Cell::Assistant { text, streaming } => {
            let mut lines = markdown::render(text, width, theme);
            if *streaming {
                let cursor = Span::styled("▍", theme.dim());
                match lines.last_mut() {
                    Some(last) if last.width() < width => last.spans.push(cursor),
                    _ => lines.push(Line::from(cursor)),
                }
            }
            lines
        }
        Cell::Thinking {
            text,
            streaming,
            expanded,
        } => render_thinking(text, *streaming, *expanded, width, theme, selected),
        Cell::Tool {
            name,
            arguments,
            status,
            output,
            expanded,
            raw,
            approved_by,
            diffs,
            ..
        } => tool_card::render(
            &tool_card::ToolCard {
                name,
                arguments,
                status,
                output,
                expanded: *expanded,
                raw: *raw,
                approved_by: approved_by.as_deref(),
                diffs,
            },
            &tool_card::Frame {
                width,
                theme,
                tick,
                selected,
            },
        ),
        Cell::Note { kind, text } => {
            let (mark, style) = match kind {
                NoteKind::Subtle => ("◆ ", theme.dim()),
                NoteKind::Info => ("· ", theme.dim()),
                NoteKind::Retry => ("⟳ ", theme.warning()),
                NoteKind::Error => ("✗ ", theme.failure()),
                NoteKind::Review => ("✦ ", theme.accent()),
            };
            let first = [Span::styled(mark, style)];
            let rest = [Span::raw("  ")];
            let mut out = Vec::new();
            for (i, line) in text.lines().enumerate() {
                let lead: &[Span<'static>] = if i == 0 { &first } else { &rest };
                out.extend(wrap_spans(
                    &[Span::styled(line.to_owned(), style)],
                    width,
                    lead,
                    &rest,
                ));
            }
            out
        }
    }
}

/// Thinking in dim italics behind a gutter: the newest lines while it
/// streams, one folded line once the answer starts, all of it expanded.
fn render_thinking(
    text: &str,
    streaming: bool,
    expanded: bool,
    width: usize,
    theme: &Theme,
    selected: bool,
) -> Vec<Line<'static>> {
    let style = theme.dim().patch(theme.italic());
    let marker = if selected {
        Span::styled("▶ ", theme.selected())
    } else {
        Span::raw("  ")
    };
    let gutter = [Span::styled("    ┆ ", theme.gutter())];
    let mut body = Vec::new();
    for line in text.trim().lines() {
        body.extend(wrap_spans(
            &[Span::styled(line.to_owned(), style)],
            width,
            &gutter,
            &gutter,
        ));
    }
    let count = body.len();
    let plural = if count == 1 { "" } else { "s" };
    let head = if streaming {
        "thinking…".to_owned()
    } else if expanded {
        format!("thinking · {count} line{plural} (ctrl-o collapses)")
    } else {
        format!("thinking · {count} line{plural} (ctrl-o expands)")
    };
    let mut out = wrap_spans(
        &[Span::styled(head, theme.dim())],
        width,
        &[marker, Span::styled("✻ ", theme.dim())],
        &[Span::raw("    ")],
    );
    if streaming && !expanded {
        let skip = count.saturating_sub(LIVE_THINKING_LINES);
        out.extend(body.into_iter().skip(skip));
    } else if expanded {
        out.extend(body);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn screen(t: &mut Transcript, w: u16, h: u16) -> Vec<String> {
        let area = Rect::new(0, 0, w, h);
        let mut buf = Buffer::empty(area);
        t.render(area, &mut buf, &Theme::plain(), 0);
        (0..h)
            .map(|y| {
                (0..w)
                    .map(|x| buf[(x, y)].symbol().to_owned())
                    .collect::<String>()
                    .trim_end()
                    .to_owned()
            })
            .collect()
    }

    #[test]
    fn deltas_stream_into_one_message_that_the_final_text_replaces() {
        let mut t = Transcript::default();
        t.append_delta("Hel");
        t.append_delta("lo");
        assert_eq!(t.len(), 1);
        t.finish_message("Hello!");
        assert_eq!(
            t.cells().next(),
            Some(&Cell::Assistant {
                text: "Hello!".into(),
                streaming: false
            })
        );
    }

    #[test]
    fn a_retry_voids_the_partial_stream() {
        let mut t = Transcript::default();
        t.push(Cell::User { text: "q".into() });
        t.append_delta("partial");
        t.discard_stream();
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn follows_the_bottom_until_scrolled_up_then_stays_put() {
        let mut t = Transcript::default();
        for i in 0..20 {
            t.push_note(NoteKind::Info, format!("line {i}"));
        }
        let s = screen(&mut t, 20, 5);
        assert_eq!(s[4], "· line 19");
        t.scroll(-10);
        assert!(!t.is_following());
        let before = screen(&mut t, 20, 5);
        t.push_note(NoteKind::Info, "line 20");
        assert_eq!(screen(&mut t, 20, 5), before, "a pinned view does not move");
        t.scroll(100);
        assert!(t.is_following());
        assert_eq!(screen(&mut t, 20, 5)[4], "· line 20");
    }

    #[test]
    fn tool_cards_show_status_duration_and_expand() {
        let mut t = Transcript::default();
        t.begin_tool(
            "c1",
            "terminal",
            &json!({"command": "ls -la", "timeout": 5}),
        );
        t.tool_output(
            "c1",
            &json!({"success": true, "output": "a\nb\nc\nd\ne", "exit_code": 0}).to_string(),
        );
        t.end_tool("c1", true, 1500);
        let s = screen(&mut t, 40, 6);
        assert_eq!(s[0], "  ✓ terminal  ls -la  1.5s");
        assert_eq!(s[3], "    │ c");
        assert_eq!(s[4], "    … 2 more lines (ctrl-o expands)");
        t.select_tool(true);
        t.toggle_selected_output();
        let s = screen(&mut t, 40, 8);
        assert!(s.contains(&"    │ e".to_owned()), "{s:?}");
        assert!(s[0].starts_with("▶ ✓ terminal"), "{s:?}");
    }

    #[test]
    fn ctrl_t_switches_the_newest_tool_card_to_raw_json_and_back() {
        let mut t = Transcript::default();
        t.begin_tool("c1", "write_file", &json!({"path": "a.txt"}));
        t.tool_output(
            "c1",
            &json!({"success": true, "path": "/w/a.txt", "bytes_written": 3, "created": true})
                .to_string(),
        );
        t.end_tool("c1", true, 4);
        t.push_note(NoteKind::Info, "after");
        let text = screen(&mut t, 60, 4);
        assert_eq!(text[0], "  ✓ write_file  a.txt — new file, 3 bytes  4ms");
        t.toggle_selected_raw();
        let raw = screen(&mut t, 60, 8);
        assert!(raw[0].ends_with("· raw JSON"), "{raw:?}");
        assert_eq!(raw[2], "    │   \"success\": true,");
        t.toggle_selected_raw();
        assert_eq!(screen(&mut t, 60, 4), text);
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(format_duration(42), "42ms");
        assert_eq!(format_duration(125_000), "2m 05s");
    }
}
