//! The approval modal: a terminal command waits for the user's consent; the
//! answer goes back to the session as `Op::Approval` with the same call id.

use std::collections::VecDeque;

use agent_protocol::ApprovalDecision;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};

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

    /// Rows the modal needs at `width` (borders included).
    fn height(&self, width: u16) -> u16 {
        let Some(req) = self.pending.front() else {
            return 0;
        };
        let inner = width.saturating_sub(4) as usize;
        let cmd = wrap_spans(&[Span::raw(req.command.clone())], inner, &[], &[]).len();
        let reason = wrap_spans(&[Span::raw(req.reason.clone())], inner, &[], &[]).len();
        (cmd + reason + CHOICES.len() + 2) as u16 + 2
    }

    /// Draws the modal centred in `area`.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let Some(req) = self.pending.front() else {
            return;
        };
        let width = area.width.min(72);
        let height = self.height(width).min(area.height);
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
        let mut lines = vec![
            Line::from(Span::styled(format!("$ {}", req.command), theme.bold())),
            Line::default(),
            Line::from(Span::styled(req.reason.clone(), theme.dim())),
            Line::default(),
        ];
        for (i, (_, key, label)) in CHOICES.iter().enumerate() {
            let marker = if i == self.selected { "›" } else { " " };
            let line = Line::from(vec![
                Span::styled(format!("{marker}[{key}] "), theme.bold()),
                Span::raw(*label),
            ]);
            lines.push(if i == self.selected {
                line.style(theme.selected())
            } else {
                line
            });
        }
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .render(inner.inner(ratatui::layout::Margin::new(1, 0)), buf);
    }
}
