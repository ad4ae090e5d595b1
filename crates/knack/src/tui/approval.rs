//! The approval modal: a tool call waits for the user's consent; the answer goes back to
//! the session as `Op::Approval` with the same call id.
//!
//! Keys answer only once the modal has been on screen, with no key pressed, for
//! [`GRACE`]: until then every key is typing meant for the draft (someone typing their
//! next message when the modal appears must not answer it with the `y` of "why"). The
//! safe choice, no, is the one Enter picks until the user moves.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use agent_protocol::ApprovalDecision;
use knack_config::{Action, PermissionRule};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use super::theme::Theme;
use super::wrap::wrap_spans;

/// How long the modal must be visible, with no key pressed, before keys answer it.
pub const GRACE: Duration = Duration::from_millis(600);

/// Most diff lines the modal shows; the rest is summarised in one line.
const MAX_DIFF_LINES: usize = 40;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingApproval {
    pub call_id: String,
    pub command: String,
    pub reason: String,
    /// The rule "always" saves for exactly this action.
    pub exact_rule: Option<String>,
    /// The wider rule offered for editing ("commands starting with …").
    pub prefix_rule: Option<String>,
    /// What an edit will change.
    pub diff: Option<String>,
}

/// One answer the modal sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalReply {
    pub call_id: String,
    pub decision: ApprovalDecision,
    pub rule: Option<String>,
    pub message: Option<String>,
}

/// What a key did while the modal was up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalKey {
    /// The front request is answered.
    Answered(ApprovalReply),
    /// The modal used the key (moved, started or edited a field).
    Used,
    /// The modal is not taking keys yet: the key is typing for the draft.
    TypeAhead,
}

/// The choices, in the order shown. `Choice::No` is the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Once,
    AlwaysExact,
    AlwaysPrefix,
    No,
    NoWithReason,
}

impl Choice {
    fn key(self) -> char {
        match self {
            Self::Once => 'y',
            Self::AlwaysExact => 'a',
            Self::AlwaysPrefix => 'p',
            Self::No => 'n',
            Self::NoWithReason => 't',
        }
    }
}

/// A text field the modal is editing.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Field {
    /// The words a saved prefix rule starts with.
    Prefix(String),
    /// What the model is told with a "no".
    Reason(String),
}

/// Requests waiting for an answer, shown one at a time, oldest first.
#[derive(Debug, Default)]
pub struct ApprovalQueue {
    pending: VecDeque<PendingApproval>,
    selected: Option<usize>,
    field: Option<Field>,
    /// When the front request last saw a key, or appeared: keys answer from GRACE later.
    quiet_since: Option<Instant>,
}

impl ApprovalQueue {
    pub fn push(&mut self, request: PendingApproval, now: Instant) {
        if self.pending.is_empty() {
            self.quiet_since = Some(now);
        }
        self.pending.push_back(request);
    }

    pub fn is_active(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Whether keys answer the modal now (it has been visible and quiet for [`GRACE`]).
    pub fn is_armed(&self, now: Instant) -> bool {
        self.quiet_since
            .is_some_and(|since| now.saturating_duration_since(since) >= GRACE)
    }

    /// Drops every open request (the turn they belonged to ended).
    pub fn clear(&mut self) {
        self.pending.clear();
        self.reset(None);
    }

    fn reset(&mut self, now: Option<Instant>) {
        self.selected = None;
        self.field = None;
        self.quiet_since = now;
    }

    fn choices(&self) -> Vec<Choice> {
        let Some(req) = self.pending.front() else {
            return Vec::new();
        };
        let mut choices = vec![Choice::Once];
        if req.exact_rule.is_some() {
            choices.push(Choice::AlwaysExact);
        }
        if req.prefix_rule.is_some() {
            choices.push(Choice::AlwaysPrefix);
        }
        choices.extend([Choice::No, Choice::NoWithReason]);
        choices
    }

    fn selected_index(&self, choices: &[Choice]) -> usize {
        self.selected.unwrap_or_else(|| {
            choices
                .iter()
                .position(|c| *c == Choice::No)
                .unwrap_or_default()
        })
    }

    /// What `key`, pressed at `now`, does to the front request.
    pub fn handle_key(&mut self, key: KeyEvent, now: Instant) -> ApprovalKey {
        if !self.is_armed(now) {
            // Typing that was meant for the draft: it restarts the quiet period.
            self.quiet_since = Some(now);
            return ApprovalKey::TypeAhead;
        }
        let outcome = self.answer_key(key);
        if matches!(outcome, ApprovalKey::Answered(_)) {
            // The next request, if any, is a new modal: its grace period starts now.
            self.reset(self.is_active().then_some(now));
        }
        outcome
    }

    fn answer_key(&mut self, key: KeyEvent) -> ApprovalKey {
        if self.field.is_some() {
            return self.edit_field(key);
        }
        let choices = self.choices();
        let selected = self.selected_index(&choices);
        let choice = match key.code {
            KeyCode::Up | KeyCode::Char('k') => {
                self.selected = Some(selected.saturating_sub(1));
                return ApprovalKey::Used;
            }
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Tab => {
                self.selected = Some((selected + 1).min(choices.len() - 1));
                return ApprovalKey::Used;
            }
            KeyCode::Enter => choices[selected],
            KeyCode::Esc => Choice::No,
            KeyCode::Char(c) => match choices.iter().find(|ch| ch.key() == c) {
                Some(choice) => *choice,
                None => return ApprovalKey::Used,
            },
            _ => return ApprovalKey::Used,
        };
        self.choose(choice)
    }

    fn choose(&mut self, choice: Choice) -> ApprovalKey {
        let Some(req) = self.pending.front() else {
            return ApprovalKey::Used;
        };
        match choice {
            Choice::Once => self.answer(ApprovalDecision::ApproveOnce, None, None),
            Choice::AlwaysExact => {
                let rule = req.exact_rule.clone();
                self.answer(ApprovalDecision::ApproveAlways, rule, None)
            }
            Choice::AlwaysPrefix => {
                let words = req
                    .prefix_rule
                    .as_deref()
                    .and_then(prefix_words)
                    .unwrap_or_default();
                self.field = Some(Field::Prefix(words));
                ApprovalKey::Used
            }
            Choice::No => self.answer(ApprovalDecision::Deny, None, None),
            Choice::NoWithReason => {
                self.field = Some(Field::Reason(String::new()));
                ApprovalKey::Used
            }
        }
    }

    fn edit_field(&mut self, key: KeyEvent) -> ApprovalKey {
        let Some(field) = &mut self.field else {
            return ApprovalKey::Used;
        };
        let text = match field {
            Field::Prefix(text) | Field::Reason(text) => text,
        };
        match key.code {
            KeyCode::Esc => self.field = None,
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => text.clear(),
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => text.push(c),
            KeyCode::Enter => match field.clone() {
                Field::Prefix(words) => {
                    if self.prefix_covers(&words) {
                        let rule = format!("terminal({}:*)", words.trim());
                        return self.answer(ApprovalDecision::ApproveAlways, Some(rule), None);
                    }
                }
                Field::Reason(reason) => {
                    let message = Some(reason.trim().to_owned()).filter(|m| !m.is_empty());
                    return self.answer(ApprovalDecision::Deny, None, message);
                }
            },
            _ => {}
        }
        ApprovalKey::Used
    }

    /// Whether `terminal(<words>:*)` covers the front command: a rule that would not
    /// cover what is on screen is never offered for saving.
    fn prefix_covers(&self, words: &str) -> bool {
        let Some(req) = self.pending.front() else {
            return false;
        };
        PermissionRule::parse(&format!("terminal({}:*)", words.trim())).is_ok_and(|rule| {
            rule.allows(&Action::Command {
                command: &req.command,
                outside: false,
                destructive: false,
            })
        })
    }

    fn answer(
        &mut self,
        decision: ApprovalDecision,
        rule: Option<String>,
        message: Option<String>,
    ) -> ApprovalKey {
        let Some(request) = self.pending.pop_front() else {
            return ApprovalKey::Used;
        };
        ApprovalKey::Answered(ApprovalReply {
            call_id: request.call_id,
            decision,
            rule,
            message,
        })
    }

    fn choice_label(req: &PendingApproval, choice: Choice) -> String {
        match choice {
            Choice::Once => "yes, once".to_owned(),
            Choice::AlwaysExact => {
                let what = match req.exact_rule.as_deref() {
                    Some(rule) if rule.starts_with("web_fetch(") => "this domain",
                    Some(rule) if rule.starts_with("write(") => "this file",
                    Some(rule) if rule.starts_with("mcp__") => "this tool",
                    _ => "exactly this command",
                };
                format!("always allow {what}")
            }
            Choice::AlwaysPrefix => {
                let words = req
                    .prefix_rule
                    .as_deref()
                    .and_then(prefix_words)
                    .unwrap_or_default();
                format!("always allow commands starting with `{words}` (edit)")
            }
            Choice::No => "no".to_owned(),
            Choice::NoWithReason => "no, and tell the model why".to_owned(),
        }
    }

    /// The modal's text wrapped to `width` columns: the command (each of its lines on
    /// its own), the reason, an edit's diff, then the choices or the field being edited
    /// (returned apart so they always stay on screen).
    fn lines(
        &self,
        req: &PendingApproval,
        armed: bool,
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
        if let Some(diff) = &req.diff {
            lines.push(Line::default());
            lines.extend(diff_lines(diff, MAX_DIFF_LINES, theme));
        }
        lines.push(Line::default());
        let mut bottom = Vec::new();
        match &self.field {
            Some(Field::Prefix(words)) => {
                bottom.push(Line::from(Span::styled(
                    "always allow commands starting with:",
                    theme.bold(),
                )));
                bottom.extend(wrap_spans(
                    &[Span::raw(words.clone()), Span::styled("▏", theme.accent())],
                    width,
                    &[Span::raw("  ")],
                    &indent,
                ));
                let help = if self.prefix_covers(words) {
                    Span::styled("enter saves the rule · esc goes back", theme.dim())
                } else {
                    Span::styled(
                        "these words do not start the command above · esc goes back",
                        theme.warning(),
                    )
                };
                bottom.push(Line::from(help));
            }
            Some(Field::Reason(reason)) => {
                bottom.push(Line::from(Span::styled(
                    "no — tell the model why:",
                    theme.bold(),
                )));
                bottom.extend(wrap_spans(
                    &[Span::raw(reason.clone()), Span::styled("▏", theme.accent())],
                    width,
                    &[Span::raw("  ")],
                    &indent,
                ));
                bottom.push(Line::from(Span::styled(
                    "enter sends · esc goes back",
                    theme.dim(),
                )));
            }
            None => {
                let choices = self.choices();
                let selected = self.selected_index(&choices);
                for (i, choice) in choices.iter().enumerate() {
                    let marker = if i == selected { "›" } else { " " };
                    let first = [Span::styled(
                        format!("{marker}[{}] ", choice.key()),
                        theme.bold(),
                    )];
                    let label = Self::choice_label(req, *choice);
                    for line in
                        wrap_spans(&[Span::raw(label)], width, &first, &[Span::raw("     ")])
                    {
                        bottom.push(if i == selected {
                            line.style(theme.selected())
                        } else {
                            line
                        });
                    }
                }
                if !armed {
                    bottom.push(Line::from(Span::styled(
                        "typing goes to your message; pause to answer",
                        theme.dim(),
                    )));
                }
            }
        }
        (lines, bottom)
    }

    /// Draws the modal centred in `area`. When it cannot fit, the top part (command,
    /// reason, diff) is cut, ending in `…`, so the choices stay on screen.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, now: Instant) {
        let Some(req) = self.pending.front() else {
            return;
        };
        let width = area.width.min(if req.diff.is_some() { 100 } else { 72 });
        let text_width = width.saturating_sub(4).max(1) as usize;
        let (mut lines, bottom) = self.lines(req, self.is_armed(now), text_width, theme);
        let room = area.height.saturating_sub(2) as usize;
        if lines.len() + bottom.len() > room {
            lines.truncate(room.saturating_sub(bottom.len() + 1));
            lines.push(Line::from(Span::styled("…", theme.dim())));
        }
        lines.extend(bottom);
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

/// The words of a `terminal(<words>:*)` rule.
fn prefix_words(rule: &str) -> Option<String> {
    rule.strip_prefix("terminal(")
        .and_then(|r| r.strip_suffix(":*)"))
        .map(str::to_owned)
}

/// A unified diff as coloured lines (added green, removed red, hunk headers dim), at most
/// `max` of them and then one line saying how many more there are.
pub fn diff_lines(diff: &str, max: usize, theme: &Theme) -> Vec<Line<'static>> {
    let total = diff.lines().count();
    let mut lines: Vec<Line<'static>> = diff
        .lines()
        .take(max)
        .map(|line| Line::from(Span::styled(line.to_owned(), diff_style(line, theme))))
        .collect();
    if total > max {
        lines.push(Line::from(Span::styled(
            format!("… {} more diff lines", total - max),
            theme.dim(),
        )));
    }
    lines
}

fn diff_style(line: &str, theme: &Theme) -> Style {
    if line.starts_with("+++") || line.starts_with("---") {
        theme.bold()
    } else if line.starts_with('+') {
        theme.success()
    } else if line.starts_with('-') {
        theme.failure()
    } else if line.starts_with("@@") {
        theme.accent()
    } else {
        theme.text()
    }
}
