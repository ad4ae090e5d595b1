//! A list to choose one entry from, filtered as you type: `/resume` picks a
//! stored session with it and `/model` a provider profile. The rows for
//! sessions are built here too (title, model, age, message count).

use std::time::{SystemTime, UNIX_EPOCH};

use agent_loop::SessionSummary;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use super::theme::Theme;
use super::wrap::truncate;

/// One entry of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickerRow {
    /// What choosing the row gives back (a session id, a provider name).
    pub value: String,
    pub title: String,
    /// The dim text after the title.
    pub detail: String,
    /// The entry in use now (this session, the active provider).
    pub current: bool,
}

/// What a key press in the picker asks the app to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickerOutcome {
    Stay,
    Close,
    Chosen(String),
}

#[derive(Debug)]
pub struct Picker {
    /// The frame's title, e.g. "resume a session".
    title: &'static str,
    /// What Enter does, for the hint at the bottom.
    action: &'static str,
    rows: Vec<PickerRow>,
    query: String,
    selected: usize,
}

impl Picker {
    pub fn new(title: &'static str, action: &'static str, rows: Vec<PickerRow>) -> Self {
        Self {
            title,
            action,
            rows,
            query: String::new(),
            selected: 0,
        }
    }

    /// Rows whose title, detail or value hold every word of the filter
    /// (ignoring case), in their original order: the newest sessions stay first.
    fn shown(&self) -> Vec<&PickerRow> {
        let words: Vec<String> = self
            .query
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        self.rows
            .iter()
            .filter(|row| {
                let hay = format!("{} {} {}", row.title, row.detail, row.value).to_lowercase();
                words.iter().all(|w| hay.contains(w.as_str()))
            })
            .collect()
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> PickerOutcome {
        let count = self.shown().len();
        match filter_keys(&mut self.query, &mut self.selected, &key, count) {
            FilterKey::Handled => {}
            FilterKey::Close => return PickerOutcome::Close,
            FilterKey::Other => match key.code {
                KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                    return PickerOutcome::Close;
                }
                KeyCode::Enter => {
                    if let Some(row) = self.shown().get(self.selected) {
                        return PickerOutcome::Chosen(row.value.clone());
                    }
                }
                _ => {}
            },
        }
        PickerOutcome::Stay
    }

    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        Clear.render(area, buf);
        let shown = self.shown();
        let selected = self.selected.min(shown.len().saturating_sub(1));
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border())
            .title(Span::styled(
                format!(" {} ({} of {}) ", self.title, shown.len(), self.rows.len()),
                theme.bold(),
            ))
            .title_bottom(Span::styled(
                format!(
                    " type to filter · ↑↓ move · enter {} · esc close ",
                    self.action
                ),
                theme.dim(),
            ));
        let inner = block.inner(area);
        block.render(area, buf);
        let [search, body] =
            Layout::vertical([Constraint::Length(2), Constraint::Min(1)]).areas(inner);
        render_query("filter: ", &self.query, search, buf, theme);

        let room = body.width as usize;
        let title_width = shown
            .iter()
            .map(|r| unicode_width::UnicodeWidthStr::width(r.title.as_str()))
            .max()
            .unwrap_or(0)
            .min(room.saturating_sub(4) / 2)
            .max(4);
        let height = body.height as usize;
        let first = (selected + 1).saturating_sub(height);
        let mut lines: Vec<Line<'static>> = shown
            .iter()
            .enumerate()
            .skip(first)
            .take(height)
            .map(|(i, row)| {
                let title = truncate(&row.title, title_width);
                let pad = title_width
                    .saturating_sub(unicode_width::UnicodeWidthStr::width(title.as_str()));
                // "in use" leads, so a narrow terminal cuts the details instead.
                let detail = if row.current {
                    format!("in use · {}", row.detail)
                } else {
                    row.detail.clone()
                };
                let detail_room = room.saturating_sub(title_width + 4);
                let marker = if i == selected { "› " } else { "  " };
                let line = Line::from(vec![
                    Span::styled(marker, theme.accent()),
                    Span::styled(title, theme.bold()),
                    Span::raw(" ".repeat(pad + 2)),
                    Span::styled(truncate(&detail, detail_room), theme.dim()),
                ]);
                if i == selected {
                    line.style(theme.selected())
                } else {
                    line
                }
            })
            .collect();
        if lines.is_empty() {
            let text = if self.rows.is_empty() {
                "nothing to choose from yet"
            } else {
                "nothing matches the filter"
            };
            lines.push(Line::from(Span::styled(text, theme.dim())));
        }
        Paragraph::new(lines).render(body, buf);
    }
}

/// The picker's rows for stored sessions, newest first as the store lists
/// them; `now` makes the ages (and so the tests) deterministic.
pub fn session_rows(sessions: &[SessionSummary], current: &str, now: SystemTime) -> Vec<PickerRow> {
    sessions
        .iter()
        .map(|s| {
            let plural = if s.message_count == 1 { "" } else { "s" };
            PickerRow {
                value: s.id.clone(),
                title: s.title.clone().unwrap_or_else(|| "(no title yet)".into()),
                detail: format!(
                    "{} · {} · {} message{plural} · {}",
                    s.model,
                    age(&s.started_at, now),
                    s.message_count,
                    s.id
                ),
                current: s.id == current,
            }
        })
        .collect()
}

/// How long ago an RFC 3339 UTC time (`2026-01-31T12:00:05Z`, as the store
/// writes it) was: "5 min ago", "3 h ago", "2 d ago", else the date.
pub fn age(started_at: &str, now: SystemTime) -> String {
    let date = started_at.get(..10).unwrap_or(started_at).to_owned();
    let (Some(then), Ok(now)) = (parse_utc(started_at), now.duration_since(UNIX_EPOCH)) else {
        return date;
    };
    let secs = (now.as_secs() as i64).saturating_sub(then).max(0);
    match secs {
        0..60 => "just now".into(),
        60..3_600 => format!("{} min ago", secs / 60),
        3_600..86_400 => format!("{} h ago", secs / 3_600),
        86_400..2_592_000 => format!("{} d ago", secs / 86_400),
        _ => date,
    }
}

/// Seconds since the epoch of `YYYY-MM-DDTHH:MM:SSZ`.
fn parse_utc(text: &str) -> Option<i64> {
    let num = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    // Days from the civil date (Howard Hinnant's algorithm, the inverse of
    // the one skill_core::clock formats with).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3_600 + mi * 60 + s)
}

/// The query line at the top of a type-to-filter list, with its cursor.
pub(super) fn render_query(label: &str, query: &str, area: Rect, buf: &mut Buffer, theme: &Theme) {
    Paragraph::new(vec![
        Line::from(vec![
            Span::styled(label.to_owned(), theme.dim()),
            Span::raw(query.to_owned()),
            Span::styled("▏", theme.dim()),
        ]),
        Line::default(),
    ])
    .render(area, buf);
}

/// What a key did to a type-to-filter list.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum FilterKey {
    /// It moved the selection or edited the query.
    Handled,
    /// Esc with an empty query: the list should close.
    Close,
    /// Not a list key: the caller's own keys (Enter, Tab, …) decide.
    Other,
}

/// The keys every type-to-filter list shares (the session and model pickers,
/// the skills browser): arrows and pages move the selection within `count`
/// rows, typing and Backspace edit the query (and go back to the first row),
/// Esc clears the query, or closes the list when it is already empty.
pub(super) fn filter_keys(
    query: &mut String,
    selected: &mut usize,
    key: &KeyEvent,
    count: usize,
) -> FilterKey {
    let last = count.saturating_sub(1);
    match key.code {
        KeyCode::Esc if query.is_empty() => return FilterKey::Close,
        KeyCode::Esc => {
            query.clear();
            *selected = 0;
        }
        KeyCode::Up => *selected = selected.saturating_sub(1),
        KeyCode::Down => *selected = (*selected + 1).min(last),
        KeyCode::PageUp => *selected = selected.saturating_sub(10),
        KeyCode::PageDown => *selected = (*selected + 10).min(last),
        KeyCode::Backspace => {
            query.pop();
            *selected = 0;
        }
        KeyCode::Char(c)
            if !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            query.push(c);
            *selected = 0;
        }
        _ => return FilterKey::Other,
    }
    FilterKey::Handled
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn list_keys_move_within_the_rows_edit_the_query_and_close_on_an_empty_esc() {
        let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
        let (mut query, mut selected) = (String::new(), 0);
        let mut press = |code| filter_keys(&mut query, &mut selected, &key(code), 3);
        assert_eq!(press(KeyCode::PageDown), FilterKey::Handled);
        assert_eq!(press(KeyCode::Down), FilterKey::Handled);
        assert_eq!(press(KeyCode::Enter), FilterKey::Other);
        assert_eq!(press(KeyCode::Char('x')), FilterKey::Handled);
        assert_eq!(press(KeyCode::Esc), FilterKey::Handled);
        assert_eq!(press(KeyCode::Esc), FilterKey::Close);
        assert_eq!((query.as_str(), selected), ("", 0));
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(
            filter_keys(&mut query, &mut selected, &ctrl_c, 3),
            FilterKey::Other
        );
        selected = 1;
        filter_keys(&mut query, &mut selected, &key(KeyCode::PageDown), 3);
        assert_eq!(selected, 2, "never past the last row");
    }

    #[test]
    fn ages_read_like_a_person_would_say_them() {
        let at = |secs: u64| UNIX_EPOCH + Duration::from_secs(secs);
        let start = "2024-12-31T23:59:59Z";
        let then = 1_735_689_599;
        assert_eq!(parse_utc(start), Some(then as i64));
        assert_eq!(age(start, at(then + 5)), "just now");
        assert_eq!(age(start, at(then + 300)), "5 min ago");
        assert_eq!(age(start, at(then + 3 * 3_600)), "3 h ago");
        assert_eq!(age(start, at(then + 2 * 86_400)), "2 d ago");
        assert_eq!(age(start, at(then + 90 * 86_400)), "2024-12-31");
        assert_eq!(age("garbage", at(then)), "garbage");
    }

    #[test]
    fn the_filter_keeps_rows_holding_every_word() {
        let row = |value: &str, title: &str| PickerRow {
            value: value.into(),
            title: title.into(),
            detail: "gpt · 1 h ago".into(),
            current: false,
        };
        let mut picker = Picker::new(
            "t",
            "open",
            vec![row("a1", "Fix the build"), row("b2", "Write docs")],
        );
        for c in "BUILD fix".chars() {
            picker.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        assert_eq!(picker.shown().len(), 1);
        assert_eq!(
            picker.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
            PickerOutcome::Chosen("a1".into())
        );
    }
}
