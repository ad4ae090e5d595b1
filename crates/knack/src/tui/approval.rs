//! The approval modal: a terminal command waits for the user's consent; the
//! answer goes back to the session as `Op::Approval` with the same call id.

use std::collections::VecDeque;

use agent_protocol::ApprovalDecision;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use super::theme::Theme;
use super::wrap::wrap_spans;

const CHOICES: [(ApprovalDecision, char, &str); 3] = [
    (ApprovalDecision::ApproveOnce, 'y', "yes, run it once"),
    (
        ApprovalDecision::ApproveAlways,
        'a',
        "always allow it for this session",
    ),
    (ApprovalDecision::Deny, 'n', "no, deny it"),
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingApproval {
    pub call_id: String,
    pub command: String,
    pub reason: String,
}

/// Requests waiting for an answer, shown one at a time, oldest first.
#[derive(Debug, Default)]
pub struct ApprovalQueue {
    pending: VecDeque<PendingApproval>,
    selected: usize,
}

impl ApprovalQueue {
    pub fn push(&mut self, request: PendingApproval) {
        self.pending.push_back(request);
    }

    pub fn is_active(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Drops every open request (the turn they belonged to ended).
    pub fn clear(&mut self) {
        self.pending.clear();
        self.selected = 0;
    }

    /// The answer a key gives to the front request, if it gives one.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<(String, ApprovalDecision)> {
        let decision = match key.code {
            KeyCode::Up | KeyCode::Char('k') => {
                self.selected = self.selected.saturating_sub(1);
                None
            }
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Tab => {
                self.selected = (self.selected + 1).min(CHOICES.len() - 1);
                None
            }
            KeyCode::Enter => Some(CHOICES[self.selected].0),
            KeyCode::Esc => Some(ApprovalDecision::Deny),
            KeyCode::Char(c) => CHOICES
                .iter()
                .find(|(_, k, _)| *k == c.to_ascii_lowercase())
                .map(|(d, _, _)| *d),
            _ => None,
        }?;
        let request = self.pending.pop_front()?;
        self.selected = 0;
        Some((request.call_id, decision))
    }

    /// The modal's text wrapped to `width` columns: the command (each of its
    /// lines, e.g. an out-of-sandbox justification, on its own), the reason,
    /// then the choices (returned apart). Measured and drawn from the same
    /// lines, so the height always fits what is drawn.
    fn lines(
        req: &PendingApproval,
        selected: usize,
        width: usize,
        theme: &Theme,
    ) -> (Vec<Line<'static>>, Vec<Line<'static>>) {
        let indent = [Span::raw("  ")];
        let mut lines = Vec::new();
        for (i, part) in req.command.split('\n').enumerate() {
            let first = if i == 0 {
                vec![Span::styled("$ ", theme.bold())]
            } else {
                indent.to_vec()
            };
            lines.extend(wrap_spans(
                &[Span::styled(part.to_owned(), theme.bold())],
                width,
                &first,
                &indent,
            ));
        }
        lines.push(Line::default());
        lines.extend(wrap_spans(
            &[Span::styled(req.reason.clone(), theme.dim())],
            width,
            &[],
            &[],
        ));
        lines.push(Line::default());
        let mut choices = Vec::new();
        for (i, (_, key, label)) in CHOICES.iter().enumerate() {
            let marker = if i == selected { "›" } else { " " };
            let first = [Span::styled(format!("{marker}[{key}] "), theme.bold())];
            for line in wrap_spans(&[Span::raw(*label)], width, &first, &[Span::raw("     ")]) {
                choices.push(if i == selected {
                    line.style(theme.selected())
                } else {
                    line
                });
            }
        }
        (lines, choices)
    }

    /// Draws the modal centred in `area`. When it cannot fit, the command
    /// is cut (ending in `…`) so the choices stay on screen.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let Some(req) = self.pending.front() else {
            return;
        };
        let width = area.width.min(72);
        let text_width = width.saturating_sub(4).max(1) as usize;
        let (mut lines, choices) = Self::lines(req, self.selected, text_width, theme);
        let room = area.height.saturating_sub(2) as usize;
        if lines.len() + choices.len() > room {
            lines.truncate(room.saturating_sub(choices.len() + 1));
            lines.push(Line::from(Span::styled("…", theme.dim())));
        }
        lines.extend(choices);
        let height = (lines.len() as u16 + 2).min(area.height);
        let rect = super::centered(area, width, height);
        Clear.render(rect, buf);
        let waiting = self.pending.len() - 1;
        let mut title = " approval needed ".to_owned();
        if waiting > 0 {
            title = format!(" approval needed (+{waiting} waiting) ");
        }
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.warning())
            .title(Span::styled(title, theme.warning()));
        let inner = block.inner(rect);
        block.render(rect, buf);
        Paragraph::new(lines).render(inner.inner(ratatui::layout::Margin::new(1, 0)), buf);
    }
}
