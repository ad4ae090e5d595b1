//! The masked prompt for a skill's missing secrets. Invoking a skill
//! (`/name`, `/skill id`) or preloading it (`-s`) whose declared variables
//! are missing asks for each one before the skill's text is sent: the typed
//! value is shown as `•`, Enter saves it to `$KNACK_HOME/.env` (0600), Esc
//! skips it (the skill then loads with a setup note for the model), Ctrl-C
//! cancels. The value lives only in this widget and in `.env`: never in the
//! input history, the transcript, the session store, the logs or a request.

use std::fmt;
use std::path::PathBuf;

use agent_loop::invocation::invoked_skills;
use knack_config::KnackHome;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::{Margin, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};
use skill_core::setup::{ENV_FILE_DISPLAY, setup_needs};
use skill_core::{DiscoveryCache, DiscoveryOptions};

use super::theme::Theme;

/// Finds what a line or the preloads still need, from the same skills and
/// `.env` the session reads.
pub struct SecretSetup {
    home: KnackHome,
    options: DiscoveryOptions,
    cache: DiscoveryCache,
}

impl SecretSetup {
    pub fn new(home: KnackHome, options: DiscoveryOptions) -> Self {
        Self {
            home,
            options,
            cache: DiscoveryCache::new(),
        }
    }

    /// A prompt for the missing variables of the skills `line` invokes, or
    /// `None` when they have everything (or the line invokes none).
    pub fn prompt_for(&self, line: &str) -> Option<SecretPrompt> {
        self.prompt(line, &[])
    }

    /// The same for the skills `-s` preloads.
    pub fn prompt_for_preloads(&self, names: &[String]) -> Option<SecretPrompt> {
        self.prompt("", names)
    }

    fn prompt(&self, line: &str, preloads: &[String]) -> Option<SecretPrompt> {
        let set = self.cache.get(&self.options);
        let env = self.home.env_file();
        let asks: Vec<SecretAsk> = setup_needs(invoked_skills(&set, line, preloads), &env)
            .iter()
            .flat_map(|need| {
                need.missing.iter().map(|req| SecretAsk {
                    skill: need.skill.name.clone(),
                    name: req.name.clone(),
                    prompt: req.prompt.clone(),
                    help: req.help.clone(),
                })
            })
            .collect();
        (!asks.is_empty()).then(|| SecretPrompt::new(line, self.home.env_path(), asks))
    }
}

/// One variable to ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretAsk {
    /// The skill that declares it.
    pub skill: String,
    pub name: String,
    pub prompt: Option<String>,
    pub help: Option<String>,
}

/// What a key did to the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretOutcome {
    Stay,
    /// Every variable was saved or skipped: send `line`, and show `note`
    /// (names and where they went, never a value).
    Done {
        line: String,
        note: String,
    },
    /// Ctrl-C: nothing is sent; `line` goes back into the input.
    Cancelled {
        line: String,
        note: String,
    },
}

/// Enough room for any API key, so typing does not reallocate and leave
/// copies of a partial value behind in freed memory.
const VALUE_CAPACITY: usize = 512;

pub struct SecretPrompt {
    /// The invocation to send once done (empty for preloads).
    line: String,
    env_path: PathBuf,
    asks: Vec<SecretAsk>,
    current: usize,
    /// What was typed for the current variable; drawn only as `•`.
    value: String,
    saved: Vec<String>,
    skipped: Vec<String>,
    error: Option<String>,
}

impl fmt::Debug for SecretPrompt {
    // Never print the value, only how long it is.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretPrompt")
            .field("line", &self.line)
            .field("asks", &self.asks)
            .field("current", &self.current)
            .field("typed_chars", &self.value.chars().count())
            .finish()
    }
}

impl Drop for SecretPrompt {
    fn drop(&mut self) {
        wipe(&mut self.value);
    }
}

/// Overwrites the bytes of `value` in place before clearing it, so the
/// secret does not linger in memory that is freed later.
fn wipe(value: &mut String) {
    let len = value.len();
    value.clear();
    value.extend(std::iter::repeat_n('\0', len));
    value.clear();
}

impl SecretPrompt {
    pub fn new(line: &str, env_path: PathBuf, asks: Vec<SecretAsk>) -> Self {
        Self {
            line: line.to_owned(),
            env_path,
            asks,
            current: 0,
            value: String::with_capacity(VALUE_CAPACITY),
            saved: Vec::new(),
            skipped: Vec::new(),
            error: None,
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> SecretOutcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('c') if ctrl => {
                wipe(&mut self.value);
                let mut note = "skill not invoked".to_owned();
                if !self.saved.is_empty() {
                    note = format!("{note}; {}", self.summary());
                }
                return SecretOutcome::Cancelled {
                    line: std::mem::take(&mut self.line),
                    note,
                };
            }
            KeyCode::Char('u') if ctrl => wipe(&mut self.value),
            KeyCode::Char(c) if !ctrl && !key.modifiers.contains(KeyModifiers::ALT) => {
                self.value.push(c);
            }
            KeyCode::Backspace => {
                self.value.pop();
            }
            KeyCode::Esc => {
                let name = self.asks[self.current].name.clone();
                self.skipped.push(name);
                return self.next();
            }
            KeyCode::Enter => return self.save(),
            _ => {}
        }
        SecretOutcome::Stay
    }

    /// Pasted text joins the value; line breaks (a key copied with its
    /// newline) are dropped rather than taken for Enter.
    pub fn paste(&mut self, text: &str) {
        self.value
            .extend(text.chars().filter(|c| !matches!(c, '\n' | '\r')));
    }

    fn save(&mut self) -> SecretOutcome {
        let ask = &self.asks[self.current];
        let value = self.value.trim();
        if value.is_empty() {
            self.error = Some("type or paste a value, or press esc to skip it".into());
            return SecretOutcome::Stay;
        }
        match knack_config::save_env_value(&self.env_path, &ask.name, value) {
            Ok(()) => {
                tracing::info!(variable = %ask.name, skill = %ask.skill, "saved a skill's variable to .env");
                let name = ask.name.clone();
                self.saved.push(name);
                self.next()
            }
            Err(e) => {
                self.error = Some(format!("not saved: {e}"));
                SecretOutcome::Stay
            }
        }
    }

    fn next(&mut self) -> SecretOutcome {
        wipe(&mut self.value);
        self.error = None;
        self.current += 1;
        if self.current < self.asks.len() {
            return SecretOutcome::Stay;
        }
        SecretOutcome::Done {
            line: std::mem::take(&mut self.line),
            note: self.summary(),
        }
    }

    /// What happened, for the transcript: names and the file, never values.
    fn summary(&self) -> String {
        let mut parts = Vec::new();
        if !self.saved.is_empty() {
            parts.push(format!(
                "saved {} to {}",
                self.saved.join(", "),
                self.env_path.display()
            ));
        }
        if !self.skipped.is_empty() {
            parts.push(format!(
                "skipped {}: the skill loads without {} and the model is told what is missing",
                self.skipped.join(", "),
                if self.skipped.len() == 1 {
                    "it"
                } else {
                    "them"
                }
            ));
        }
        parts.join("; ")
    }

    /// Draws the prompt centred in `area`.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let Some(ask) = self.asks.get(self.current) else {
            return;
        };
        let width = area.width.min(76);
        let inner_width = width.saturating_sub(4).max(1) as usize;
        let mut lines = vec![
            Line::from(Span::styled(ask.name.clone(), theme.bold())),
            Line::default(),
            Line::from(Span::raw(
                ask.prompt
                    .clone()
                    .unwrap_or_else(|| format!("Enter the value of {}", ask.name)),
            )),
        ];
        if let Some(help) = ask.help.as_deref().filter(|h| !h.trim().is_empty()) {
            lines.push(Line::from(Span::styled(
                help.trim().to_owned(),
                theme.dim(),
            )));
        }
        lines.push(Line::default());
        lines.push(Line::from(vec![
            Span::styled("› ", theme.accent()),
            Span::raw(masked(
                self.value.chars().count(),
                inner_width.saturating_sub(3),
            )),
            Span::styled(" ", theme.cursor()),
        ]));
        lines.push(Line::default());
        if let Some(error) = &self.error {
            lines.push(Line::from(Span::styled(error.clone(), theme.failure())));
        }
        lines.push(Line::from(Span::styled(
            format!("enter saves it to {ENV_FILE_DISPLAY} · esc skips · ctrl-c cancels"),
            theme.dim(),
        )));
        let rows: usize = lines
            .iter()
            .map(|l| l.width().max(1).div_ceil(inner_width))
            .sum();
        let height = (rows as u16 + 2).min(area.height);
        let rect = super::centered(area, width, height);
        Clear.render(rect, buf);
        let count = if self.asks.len() > 1 {
            format!(" ({} of {})", self.current + 1, self.asks.len())
        } else {
            String::new()
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.warning())
            .title(Span::styled(
                format!(" the skill {} needs a secret{count} ", ask.skill),
                theme.warning(),
            ));
        let inner = block.inner(rect);
        block.render(rect, buf);
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .render(inner.inner(Margin::new(1, 0)), buf);
    }
}

/// A typed value of `count` characters as dots on one line of `room`
/// columns: a long token (some are thousands of characters) would otherwise
/// push the keys out of the dialog, so past the room it shows its length.
fn masked(count: usize, room: usize) -> String {
    if count <= room {
        return "•".repeat(count);
    }
    let length = format!(" {count} characters");
    let dots = room.saturating_sub(length.chars().count()).max(1);
    format!("{}{length}", "•".repeat(dots))
}

/// Before the session of `knack chat -s NAME` starts (its preload message is
/// built once, with the session), asks for what the preloaded skills miss,
/// on a screen of its own. Returns false when the user cancelled.
pub async fn ask_for_preloads(
    home: &KnackHome,
    options: DiscoveryOptions,
    preloads: &[String],
) -> anyhow::Result<bool> {
    use futures::StreamExt as _;
    use ratatui::crossterm::event::{
        DisableBracketedPaste, EnableBracketedPaste, Event, EventStream,
    };
    use ratatui::crossterm::execute;

    let setup = SecretSetup::new(home.clone(), options);
    let Some(mut prompt) = setup.prompt_for_preloads(preloads) else {
        return Ok(true);
    };
    /// Gives the terminal back on every way out.
    struct Restore;
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = execute!(std::io::stdout(), DisableBracketedPaste);
            ratatui::restore();
        }
    }
    let mut terminal = ratatui::init();
    let restore = Restore;
    // Pasting a key is the usual way in; without this, its newline would be Enter.
    execute!(std::io::stdout(), EnableBracketedPaste)?;
    let theme = Theme::from_env();
    let mut input = EventStream::new();
    loop {
        terminal.draw(|frame| {
            let area = frame.area();
            prompt.render(area, frame.buffer_mut(), &theme);
        })?;
        match input.next().await {
            Some(Ok(Event::Key(key)))
                if key.kind != ratatui::crossterm::event::KeyEventKind::Release =>
            {
                match prompt.handle_key(key) {
                    SecretOutcome::Stay => {}
                    SecretOutcome::Done { note, .. } => {
                        drop(restore);
                        eprintln!("knack: {note}");
                        return Ok(true);
                    }
                    SecretOutcome::Cancelled { .. } => return Ok(false),
                }
            }
            Some(Ok(Event::Paste(text))) => prompt.paste(&text),
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(anyhow::anyhow!("cannot read the terminal: {e}")),
            None => return Ok(false),
        }
    }
}

#[cfg(test)]
mod tests;
