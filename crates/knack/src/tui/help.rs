//! The `/help` overlay: every key and built-in command on one page.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use super::palette::BUILTINS;
use super::theme::Theme;

const KEYS: [(&str, &str); 16] = [
    ("enter", "send the message"),
    ("shift-enter, alt-enter, ctrl-j", "new line"),
    ("↑ / ↓", "previous / next input (on the first / last line)"),
    ("/", "commands and skills; tab completes"),
    ("@", "attach a file to the message; tab completes its path"),
    (
        "ctrl-c",
        "interrupt the turn; twice on an empty prompt quits",
    ),
    ("ctrl-d", "quit"),
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
    ("esc", "close an overlay, clear the selection"),
    ("ctrl-u", "clear the input"),
    ("ctrl-l", "redraw the screen"),
    ("y / a / n", "in an approval: once / always / deny"),
];

pub fn render(area: Rect, buf: &mut Buffer, theme: &Theme) {
    Clear.render(area, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border())
        .title(Span::styled(" help ", theme.bold()))
        .title_bottom(Span::styled(" esc closes ", theme.dim()));
    let inner = block.inner(area);
    block.render(area, buf);
    let key_width = KEYS
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0)
        + 2;
    let mut lines = vec![Line::from(Span::styled("keys", theme.heading(2)))];
    for (key, what) in KEYS {
        lines.push(Line::from(vec![
            Span::styled(format!("  {key:<key_width$}"), theme.bold()),
            Span::raw(what),
        ]));
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled("commands", theme.heading(2))));
    for b in BUILTINS {
        let name = format!("/{} {}", b.name, b.args);
        lines.push(Line::from(vec![
            Span::styled(format!("  {:<key_width$}", name.trim_end()), theme.bold()),
            Span::raw(b.description),
        ]));
    }
    lines.push(Line::from(vec![
        Span::styled(format!("  {:<key_width$}", "/<skill> [text]"), theme.bold()),
        Span::raw("run a skill with your text"),
    ]));
    Paragraph::new(lines).render(inner.inner(ratatui::layout::Margin::new(1, 0)), buf);
}
