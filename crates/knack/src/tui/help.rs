//! The `/help` overlay: every key and built-in command on one page, which
//! scrolls when the terminal is shorter than the page.

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};
use unicode_width::UnicodeWidthStr;

use super::palette::BUILTINS;
use super::theme::Theme;
use super::wrap::wrap_spans;

const KEYS: [(&str, &str); 18] = [
    ("enter", "send the message"),
    ("shift-enter, alt-enter, ctrl-j", "new line"),
    ("↑ / ↓", "previous / next input (on the first / last line)"),
    ("/", "commands and skills; tab completes"),
    ("@", "attach a file to the message; tab completes its path"),
    (
        "ctrl-c",
        "interrupt the turn; twice on an empty prompt quits",
    ),
    ("ctrl-d", "quit (from an empty input)"),
    ("ctrl-r", "search the input history"),
    ("pgup / pgdn, wheel", "scroll the transcript"),
    ("ctrl-end", "jump to the bottom"),
    (
        "alt-↑ / alt-↓",
        "select an older / newer tool call or thinking",
    ),
    (
        "ctrl-o",
        "expand or collapse the selected tool output or thinking",
    ),
    (
        "ctrl-t",
        "raw JSON of the selected tool result, or text again",
    ),
    ("esc", "close an overlay, clear the selection, or interrupt"),
    ("ctrl-u", "clear the input"),
    ("ctrl-l", "redraw the screen"),
    ("shift-tab", "approval mode: auto-edits → ask-edits → plan"),
    (
        "y / a / p / n / t",
        "in an approval: once / always this / always a prefix / no / no, saying why",
    ),
];

/// The help page and how far it is scrolled; taller than most terminals
/// (80×24 shows about twenty rows), so it scrolls instead of cutting off.
#[derive(Debug, Default)]
pub struct HelpView {
    scroll: usize,
}

/// What a key did in the help page.
#[derive(Debug, PartialEq, Eq)]
pub enum HelpOutcome {
    Stay,
    Close,
}

impl HelpView {
    pub fn handle_key(&mut self, key: KeyEvent) -> HelpOutcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Enter => return HelpOutcome::Close,
            KeyCode::Char('c') if ctrl => return HelpOutcome::Close,
            KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.scroll += 1,
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(PAGE),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll += PAGE,
            KeyCode::Home => self.scroll = 0,
            KeyCode::End => self.scroll = usize::MAX,
            _ => {}
        }
        // The draw clamps the offset to the page it measures.
        HelpOutcome::Stay
    }

    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        Clear.render(area, buf);
        let text_area = Rect {
            x: area.x + 2,
            y: area.y + 1,
            width: area.width.saturating_sub(4),
            height: area.height.saturating_sub(2),
        };
        let lines = page(text_area.width as usize, theme);
        let rows = text_area.height as usize;
        let overflow = lines.len().saturating_sub(rows);
        self.scroll = self.scroll.min(overflow);
        let hint = if overflow == 0 {
            " esc closes ".to_owned()
        } else {
            let last = (self.scroll + rows).min(lines.len());
            format!(
                " ↑↓ pgup pgdn scroll · {}–{} of {} · esc closes ",
                self.scroll + 1,
                last,
                lines.len()
            )
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border())
            .title(Span::styled(" help ", theme.bold()))
            .title_bottom(Span::styled(hint, theme.dim()));
        block.render(area, buf);
        let shown: Vec<Line<'static>> = lines.into_iter().skip(self.scroll).take(rows).collect();
        Paragraph::new(shown).render(text_area, buf);
    }
}

/// Rows PageUp and PageDown move.
const PAGE: usize = 10;

/// Every row of the page at `width` columns: each description wraps under
/// itself, to the right of its key, so nothing is cut on narrow terminals.
fn page(width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut entries: Vec<(String, String)> = KEYS
        .iter()
        .map(|(k, what)| ((*k).to_owned(), (*what).to_owned()))
        .collect();
    let commands: Vec<(String, String)> = BUILTINS
        .iter()
        .map(|b| {
            (
                format!("/{} {}", b.name, b.args).trim_end().to_owned(),
                b.description.to_owned(),
            )
        })
        .chain(std::iter::once((
            "/<skill> [text]".to_owned(),
            "run a skill with your text".to_owned(),
        )))
        .collect();
    let key_width = entries
        .iter()
        .chain(&commands)
        .map(|(k, _)| UnicodeWidthStr::width(k.as_str()))
        .max()
        .unwrap_or(0)
        + 2;
    // On a narrow screen the key column would leave no room: the
    // description then goes on the lines under its key.
    let side_by_side = width >= key_width + 2 + 20;
    let mut lines = vec![Line::from(Span::styled("keys", theme.heading(2)))];
    let keys_len = entries.len();
    entries.extend(commands);
    for (i, (key, what)) in entries.into_iter().enumerate() {
        if i == keys_len {
            lines.push(Line::default());
            lines.push(Line::from(Span::styled("commands", theme.heading(2))));
        }
        if side_by_side {
            let first = [Span::styled(format!("  {key:<key_width$}"), theme.bold())];
            let rest = [Span::raw(" ".repeat(key_width + 2))];
            lines.extend(wrap_spans(&[Span::raw(what)], width, &first, &rest));
        } else {
            lines.extend(wrap_spans(
                &[Span::styled(key, theme.bold())],
                width,
                &[Span::raw("  ")],
                &[Span::raw("  ")],
            ));
            let indent = [Span::raw("    ")];
            lines.extend(wrap_spans(&[Span::raw(what)], width, &indent, &indent));
        }
    }
    lines
}
