//! The `/skills` overlay: skills grouped by category with a search field, a
//! detail pane, and a full view of one skill's SKILL.md and linked files.

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};

use super::markdown;
use super::picker::{FilterKey, filter_keys, render_query};
use super::skills::SkillEntry;
use super::theme::Theme;
use super::wrap::truncate;

/// What a key press in the browser asks the app to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrowserOutcome {
    Stay,
    Close,
    /// Close and put this text into the input.
    Insert(String),
}

#[derive(Debug, Default)]
pub struct SkillsBrowser {
    pub query: String,
    selected: usize,
    view: Option<SkillPage>,
}

/// One skill opened for reading.
#[derive(Debug)]
struct SkillPage {
    entry: SkillEntry,
    text: String,
    files: Vec<String>,
    scroll: usize,
}

impl SkillPage {
    fn open(entry: &SkillEntry) -> Self {
        let text = std::fs::read_to_string(&entry.skill_md)
            .unwrap_or_else(|err| format!("(cannot read {}: {err})", entry.skill_md.display()));
        let files = skill_core::disclosure::linked_files(&entry.skill_dir)
            .into_iter()
            .flat_map(|(_, list)| match list {
                serde_json::Value::Array(items) => items
                    .into_iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect::<Vec<_>>(),
                _ => Vec::new(),
            })
            .collect();
        Self {
            entry: entry.clone(),
            text,
            files,
            scroll: 0,
        }
    }
}

impl SkillsBrowser {
    /// Indices into `skills` that match the search: all in category order
    /// without one; with one, best first as the palette ranks — a match in
    /// the name (an exact name first, then a prefix) before a match found
    /// only in the id or description, so typing `weather` puts `weather` on top.
    pub fn filtered(&self, skills: &[SkillEntry]) -> Vec<usize> {
        let query = self.query.trim();
        if query.is_empty() {
            return (0..skills.len()).collect();
        }
        let pattern = Pattern::parse(query, CaseMatching::Ignore, Normalization::Smart);
        let mut matcher = Matcher::new(Config::DEFAULT);
        let mut buf = Vec::new();
        let lower = query.to_lowercase();
        let mut scored: Vec<(u32, u32, usize)> = skills
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let name = s.name.to_lowercase();
                let in_name = pattern.score(Utf32Str::new(&s.name, &mut buf), &mut matcher);
                let tier = match in_name {
                    Some(_) if name == lower => 3,
                    Some(_) if name.starts_with(&lower) => 2,
                    Some(_) => 1,
                    None => 0,
                };
                let score = match in_name {
                    Some(score) => score,
                    None => {
                        let hay = format!("{} {}", s.id, s.description);
                        pattern.score(Utf32Str::new(&hay, &mut buf), &mut matcher)?
                    }
                };
                Some((tier, score, i))
            })
            .collect();
        // Ties keep the category order.
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
        scored.into_iter().map(|(_, _, i)| i).collect()
    }

    pub fn handle_key(&mut self, key: KeyEvent, skills: &[SkillEntry]) -> BrowserOutcome {
        if let Some(page) = &mut self.view {
            match key.code {
                KeyCode::Esc | KeyCode::Left | KeyCode::Backspace | KeyCode::Char('q') => {
                    self.view = None;
                }
                KeyCode::Up | KeyCode::Char('k') => page.scroll = page.scroll.saturating_sub(1),
                KeyCode::Down | KeyCode::Char('j') => page.scroll += 1,
                KeyCode::PageUp => page.scroll = page.scroll.saturating_sub(10),
                KeyCode::PageDown | KeyCode::Char(' ') => page.scroll += 10,
                KeyCode::Home => page.scroll = 0,
                KeyCode::Tab => {
                    return BrowserOutcome::Insert(format!("/skill {} ", page.entry.id));
                }
                _ => {}
            }
            return BrowserOutcome::Stay;
        }
        let shown = self.filtered(skills);
        match filter_keys(&mut self.query, &mut self.selected, &key, shown.len()) {
            FilterKey::Handled => {}
            FilterKey::Close => return BrowserOutcome::Close,
            FilterKey::Other => match key.code {
                KeyCode::Enter | KeyCode::Right => {
                    if let Some(entry) = shown.get(self.selected).and_then(|i| skills.get(*i)) {
                        self.view = Some(SkillPage::open(entry));
                    }
                }
                KeyCode::Tab => {
                    if let Some(entry) = shown.get(self.selected).and_then(|i| skills.get(*i)) {
                        return BrowserOutcome::Insert(format!("/skill {} ", entry.id));
                    }
                }
                _ => {}
            },
        }
        BrowserOutcome::Stay
    }

    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, skills: &[SkillEntry]) {
        Clear.render(area, buf);
        if let Some(page) = &mut self.view {
            render_page(page, area, buf, theme);
            return;
        }
        let shown = self.filtered(skills);
        self.selected = self.selected.min(shown.len().saturating_sub(1));
        let title = format!(" skills ({} of {}) ", shown.len(), skills.len());
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border())
            .title(Span::styled(title, theme.bold()))
            .title_bottom(Span::styled(
                " type to search · ↑↓ move · enter view · tab insert /skill · esc close ",
                theme.dim(),
            ));
        let inner = block.inner(area);
        block.render(area, buf);
        let [search, body] =
            Layout::vertical([Constraint::Length(2), Constraint::Min(1)]).areas(inner);
        render_query("search: ", &self.query, search, buf, theme);

        let wide = body.width >= 70;
        let (list_area, detail_area) = if wide {
            let [l, d] =
                Layout::horizontal([Constraint::Percentage(45), Constraint::Min(20)]).areas(body);
            (l, Some(d))
        } else {
            (body, None)
        };

        // Rows: a header whenever the top category changes, then the skill.
        let mut rows: Vec<(Option<usize>, Line<'static>)> = Vec::new();
        let mut last_cat: Option<String> = None;
        for (pos, i) in shown.iter().enumerate() {
            let s = &skills[*i];
            let cat = s
                .category
                .clone()
                .unwrap_or_else(|| "(uncategorized)".into());
            if self.query.trim().is_empty() && last_cat.as_ref() != Some(&cat) {
                rows.push((
                    None,
                    Line::from(Span::styled(cat.clone(), theme.heading(2))),
                ));
                last_cat = Some(cat);
            }
            let room = list_area.width as usize;
            let name = truncate(&s.name, room.saturating_sub(2));
            let marker = if pos == self.selected { "› " } else { "  " };
            let mut spans = vec![
                Span::styled(marker, theme.accent()),
                Span::styled(name, theme.bold()),
            ];
            if !wide {
                let used = 2 + unicode_width::UnicodeWidthStr::width(s.name.as_str()) + 2;
                spans.push(Span::raw("  "));
                spans.push(Span::styled(
                    truncate(&s.description, room.saturating_sub(used)),
                    theme.dim(),
                ));
            }
            let mut line = Line::from(spans);
            if pos == self.selected {
                line = line.style(theme.selected());
            }
            rows.push((Some(pos), line));
        }
        if rows.is_empty() {
            let msg = if skills.is_empty() {
                "no skills found; create one with skill_manage or `knack skills install`"
            } else {
                "no skill matches the search"
            };
            rows.push((None, Line::from(Span::styled(msg, theme.dim()))));
        }
        let height = list_area.height as usize;
        let sel_row = rows
            .iter()
            .position(|(p, _)| *p == Some(self.selected))
            .unwrap_or(0);
        let first = (sel_row + 1).saturating_sub(height);
        let lines: Vec<Line<'static>> = rows.into_iter().skip(first).map(|(_, l)| l).collect();
        Paragraph::new(lines).render(list_area, buf);

        if let (Some(d), Some(s)) = (
            detail_area,
            shown.get(self.selected).and_then(|i| skills.get(*i)),
        ) {
            let lines = vec![
                Line::from(Span::styled(s.name.clone(), theme.heading(1))),
                Line::default(),
                Line::from(s.description.clone()),
                Line::default(),
                Line::from(vec![
                    Span::styled("id     ", theme.dim()),
                    Span::raw(s.id.clone()),
                ]),
                Line::from(vec![
                    Span::styled("scope  ", theme.dim()),
                    Span::raw(s.scope.clone()),
                ]),
                Line::from(vec![
                    Span::styled("path   ", theme.dim()),
                    Span::raw(s.skill_dir.display().to_string()),
                ]),
                Line::default(),
                Line::from(Span::styled(
                    format!("/{} [text] runs it", s.name),
                    theme.dim(),
                )),
            ];
            let pane = Block::default()
                .borders(Borders::LEFT)
                .border_style(theme.border());
            let inner = pane.inner(d);
            pane.render(d, buf);
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .render(inner.inner(ratatui::layout::Margin::new(1, 0)), buf);
        }
    }
}

fn render_page(page: &mut SkillPage, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border())
        .title(Span::styled(format!(" {} ", page.entry.id), theme.bold()))
        .title_bottom(Span::styled(
            " ↑↓ pgup/pgdn scroll · tab insert /skill · esc back ",
            theme.dim(),
        ));
    let inner = block.inner(area);
    block.render(area, buf);
    let width = inner.width as usize;
    let mut lines: Vec<Line<'static>> = Vec::new();
    if page.files.is_empty() {
        lines.push(Line::from(Span::styled("linked files: none", theme.dim())));
    } else {
        lines.push(Line::from(Span::styled("linked files:", theme.dim())));
        for f in &page.files {
            lines.push(Line::from(vec![
                Span::raw("  "),
                Span::styled(f.clone(), theme.inline_code()),
            ]));
        }
    }
    lines.push(Line::from(Span::styled(
        "─".repeat(width.min(60)),
        theme.gutter(),
    )));
    let text = skill_core::frontmatter::strip_bom(&page.text);
    let body = match skill_core::frontmatter::split_frontmatter(text) {
        Ok(Some((yaml, body_at))) => {
            for l in yaml.lines() {
                lines.push(Line::from(Span::styled(l.to_owned(), theme.dim())));
            }
            lines.push(Line::from(Span::styled(
                "─".repeat(width.min(60)),
                theme.gutter(),
            )));
            text.get(body_at..).unwrap_or("")
        }
        _ => text,
    };
    lines.extend(markdown::render(body, width, theme));
    let max_scroll = lines.len().saturating_sub(inner.height as usize);
    page.scroll = page.scroll.min(max_scroll);
    let visible: Vec<Line<'static>> = lines.into_iter().skip(page.scroll).collect();
    Paragraph::new(visible).render(inner, buf);
}
