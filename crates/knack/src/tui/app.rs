//! The TUI's root component: turns terminal input and agent events into state
//! changes and `Op`s, and draws the transcript, input, status line and overlays.
//!
//! Everything here is synchronous and terminal-free, so tests drive it with
//! key events and agent events and read back the ops it sent and the frames it drew.

use agent_protocol::{ApprovalMode, Event as AgentEvent, Op, SkillLoadVia, TurnAbortReason};
use ratatui::Frame;
use ratatui::crossterm::event::{
    Event as TermEvent, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};
use ratatui_textarea::{CursorMove, TextArea, WrapMode};
use tokio::sync::mpsc::UnboundedSender;

use super::approval::{ApprovalKey, ApprovalQueue, PendingApproval};
use super::browser::{BrowserOutcome, SkillsBrowser};
use super::connection::SessionInfo;
use super::help::{HelpOutcome, HelpView};
use super::history::InputHistory;
use super::models::ModelSource;
use super::palette::Palette;
use super::picker::{Picker, PickerOutcome, session_rows};
use super::secret_prompt::{SecretOutcome, SecretPrompt, SecretSetup};
use super::skills::SkillEntry;
use super::status::{self, Activity, TokenTotals};
use super::theme::Theme;
use super::transcript::{Cell, NoteKind, Transcript, WHEEL_LINES};
use super::wrap::wrap_spans;

/// What a tool card shows when its turn ended before the call did.
const TURN_ENDED_RESULT: &str =
    r#"{"success": false, "error": "the turn ended before this call finished"}"#;

/// Most rows the input grows to before it scrolls.
const MAX_INPUT_ROWS: u16 = 8;

/// Where the app reads the time: the real clock, or one a test holds still.
#[derive(Debug, Clone, Copy, Default)]
enum Clock {
    #[default]
    Real,
    #[cfg_attr(not(test), allow(dead_code))]
    Fixed(std::time::Instant),
}

impl Clock {
    fn now(self) -> std::time::Instant {
        match self {
            Self::Real => std::time::Instant::now(),
            Self::Fixed(now) => now,
        }
    }
}

/// Why the TUI stopped; the caller decides what comes next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TuiExit {
    Quit,
    /// `/new`: start a fresh session.
    NewSession,
    /// `/resume ID`: continue a stored session.
    Resume(String),
}

/// The overlay that owns the keyboard, if any (approvals sit above all).
#[derive(Debug, Default)]
enum Overlay {
    #[default]
    None,
    Help(HelpView),
    Skills(Box<SkillsBrowser>),
    /// `/resume` without an id: stored sessions to pick from.
    Sessions(Box<Picker>),
    /// `/model` without a name: provider profiles to pick from.
    Models(Box<Picker>),
    /// A skill's missing secrets, asked for before it is invoked.
    Secret(Box<SecretPrompt>),
}

/// What a key press asks for, applied in `update`.
#[derive(Debug, Clone, PartialEq)]
enum Action {
    Submit(String),
    Interrupt,
    Quit,
    ArmQuit,
    ClearInput,
    SetInput(String),
    HistoryOlder,
    HistoryNewer,
    Scroll(isize),
    ScrollToBottom,
    SelectTool {
        older: bool,
    },
    ToggleToolOutput,
    /// Show the selected tool card's raw JSON, or its text again (ctrl-t).
    ToggleRawOutput,
    Escape,
    NewLine,
    /// Repaint only (the change already happened).
    Refresh,
    /// Clear the terminal and repaint everything (ctrl-l).
    Redraw,
    /// Switch to the next approval mode (shift-tab).
    CycleMode,
    /// Start searching the input history (ctrl-r).
    SearchHistory,
}

/// Finds the full id of a stored session from what the user typed (an id or
/// a unique prefix); the error is a sentence for the transcript.
pub type SessionLookup = Box<dyn Fn(&str) -> Result<String, String>>;

/// The stored sessions, newest first (`/resume` and `/sessions`); the error
/// is a sentence for the transcript.
pub type SessionList = Box<dyn Fn() -> Result<Vec<agent_loop::SessionSummary>, String>>;

/// Where `@path` mentions are looked up: the working directory, and knack's
/// home (whose key files are never attached).
#[derive(Debug, Clone)]
pub struct MentionRoots {
    pub cwd: std::path::PathBuf,
    pub home: std::path::PathBuf,
}

/// Most sessions `/sessions` lists.
const SESSIONS_LISTED: usize = 10;

/// Queued messages shown above the input; more are counted, not listed.
const QUEUED_SHOWN: usize = 3;

/// A message sent while a turn runs. The session runs it after that turn, so
/// it joins the transcript when its own turn starts: shown at once it would
/// sit inside the answer still streaming.
#[derive(Debug, Clone)]
struct QueuedTurn {
    text: String,
    /// The "attached …" lines of its `@path` mentions.
    attached: Vec<String>,
}

pub struct App {
    ops: UnboundedSender<Op>,
    /// Checks `/resume ID` before leaving this session; without it the id is
    /// passed on as typed.
    session_lookup: Option<SessionLookup>,
    /// Lists stored sessions for `/resume` and `/sessions`.
    session_list: Option<SessionList>,
    /// Switches the model for `/model`; without it `/model` only says which is in use.
    models: Option<Box<dyn ModelSource>>,
    /// Without them `@path` is sent as typed.
    mentions: Option<MentionRoots>,
    /// Without it skills are invoked without asking for missing secrets.
    secrets: Option<SecretSetup>,
    info: SessionInfo,
    theme: Theme,
    transcript: Transcript,
    input: TextArea<'static>,
    history: InputHistory,
    palette: Palette,
    skills: Vec<SkillEntry>,
    overlay: Overlay,
    approvals: ApprovalQueue,
    /// The time keys and events are stamped with (a test sets it by hand).
    clock: Clock,
    tokens: TokenTotals,
    turns_running: usize,
    /// Messages waiting for the running turn to end, oldest first.
    queued: std::collections::VecDeque<QueuedTurn>,
    /// Ctrl-R: searching the input history (`None` when not searching).
    search: Option<HistorySearch>,
    review_running: bool,
    quit_armed: bool,
    hint: Option<String>,
    tick: usize,
    exit: Option<TuiExit>,
    reload_skills: bool,
    clear_screen: bool,
    dirty: bool,
    agent_gone: bool,
}

impl App {
    pub fn new(
        ops: UnboundedSender<Op>,
        info: SessionInfo,
        theme: Theme,
        history: InputHistory,
    ) -> Self {
        let mut app = Self {
            ops,
            session_lookup: None,
            session_list: None,
            models: None,
            mentions: None,
            secrets: None,
            info,
            theme,
            transcript: Transcript::default(),
            input: TextArea::default(),
            history,
            palette: Palette::default(),
            skills: Vec::new(),
            overlay: Overlay::None,
            approvals: ApprovalQueue::default(),
            clock: Clock::default(),
            tokens: TokenTotals::default(),
            turns_running: 0,
            queued: std::collections::VecDeque::new(),
            search: None,
            review_running: false,
            quit_armed: false,
            hint: None,
            tick: 0,
            exit: None,
            reload_skills: false,
            clear_screen: false,
            dirty: true,
            agent_gone: false,
        };
        app.set_input("");
        let failed: Vec<String> = app
            .info
            .mcp_servers
            .iter()
            .filter(|line| line.failed)
            .map(|line| line.text.clone())
            .collect();
        if !failed.is_empty() {
            app.note(
                NoteKind::Error,
                format!(
                    "MCP: {}; the session goes on without those tools (/mcp lists every server)",
                    failed.join("; ")
                ),
            );
        }
        app
    }

    pub fn set_skills(&mut self, skills: Vec<SkillEntry>) {
        self.skills = skills;
        let text = self.input_text();
        self.palette.update(&text, &self.skills);
        self.dirty = true;
    }

    #[cfg(test)]
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    #[cfg(test)]
    pub fn transcript_mut(&mut self) -> &mut Transcript {
        &mut self.transcript
    }

    #[cfg(test)]
    pub fn tokens(&self) -> TokenTotals {
        self.tokens
    }

    /// Starts the totals from what the session's earlier requests used (a
    /// resumed session); the events of this run add to them.
    pub fn set_prior_usage(&mut self, totals: TokenTotals) {
        let last_prompt = self.tokens.last_prompt;
        self.tokens = totals;
        self.tokens.last_prompt = last_prompt;
        self.dirty = true;
    }

    /// What is printed once the terminal is restored: the session, what it
    /// used (every request: turns, review, compaction, earlier runs of it
    /// included) and how to come back to it.
    pub fn exit_summary(&self) -> String {
        let t = &self.tokens;
        let mut usage = format!(
            "{} tokens in, {} out",
            status::compact(t.prompt),
            status::compact(t.completion)
        );
        if let Some(p) = t.cache_percent() {
            usage.push_str(&format!(" ({p}% of the input from the cache)"));
        }
        if t.cost_micro_usd > 0 {
            usage.push_str(&format!(", ${:.4}", t.cost_micro_usd as f64 / 1_000_000.0));
        }
        let id = &self.info.session_id;
        format!(
            "session {id}: {usage}\nresume it with: knack chat --resume {id}   (or `knack chat --continue` in this directory)"
        )
    }

    pub fn is_busy(&self) -> bool {
        self.turns_running > 0
    }

    pub fn input_text(&self) -> String {
        self.input.lines().join("\n")
    }

    #[cfg(test)]
    pub fn palette(&self) -> &Palette {
        &self.palette
    }

    pub fn take_exit(&mut self) -> Option<TuiExit> {
        self.exit.take()
    }

    /// True once after `/reload-skills`; the run loop then rescans.
    pub fn take_reload_request(&mut self) -> bool {
        std::mem::take(&mut self.reload_skills)
    }

    pub fn take_clear_request(&mut self) -> bool {
        std::mem::take(&mut self.clear_screen)
    }

    /// True when something changed since the last frame.
    pub fn take_dirty(&mut self) -> bool {
        std::mem::take(&mut self.dirty)
    }

    pub fn note(&mut self, kind: NoteKind, text: impl Into<String>) {
        self.transcript.push_note(kind, text);
        self.dirty = true;
    }

    fn set_input(&mut self, text: &str) {
        let mut area = TextArea::new(text.split('\n').map(str::to_owned).collect());
        area.set_cursor_line_style(ratatui::style::Style::default());
        area.set_cursor_style(self.theme.cursor());
        area.set_placeholder_text("Ask anything · / for commands and skills · ctrl-d quits");
        area.set_placeholder_style(self.theme.dim());
        area.set_wrap_mode(WrapMode::WordOrGlyph);
        area.move_cursor(CursorMove::Bottom);
        area.move_cursor(CursorMove::End);
        self.input = area;
        self.palette.update(text, &self.skills);
    }

    // ----- input -------------------------------------------------------------

    pub fn handle_terminal_event(&mut self, event: TermEvent) {
        match event {
            TermEvent::Key(key) => self.handle_key(key),
            TermEvent::Paste(text) => self.handle_paste(&text),
            TermEvent::Mouse(mouse) => self.handle_mouse(mouse),
            TermEvent::Resize(_, _) => self.dirty = true,
            TermEvent::FocusGained | TermEvent::FocusLost => {}
        }
    }

    /// Pasted text goes into the input as typed text; it never sends.
    pub fn handle_paste(&mut self, text: &str) {
        // A paste never answers the approval modal; it lands in the draft below it.
        if let Overlay::Secret(prompt) = &mut self.overlay {
            prompt.paste(text);
            self.dirty = true;
            return;
        }
        if !matches!(self.overlay, Overlay::None) {
            return;
        }
        let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
        self.input.insert_str(normalized);
        let current = self.input_text();
        self.palette.update(&current, &self.skills);
        self.dirty = true;
    }

    pub fn handle_mouse(&mut self, mouse: MouseEvent) {
        let lines = WHEEL_LINES as isize;
        match mouse.kind {
            MouseEventKind::ScrollUp => self.update(Action::Scroll(-lines)),
            MouseEventKind::ScrollDown => self.update(Action::Scroll(lines)),
            _ => {}
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        self.dirty = true;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if !(ctrl && key.code == KeyCode::Char('c')) {
            self.quit_armed = false;
            if matches!(self.hint.as_deref(), Some(QUIT_HINT | DRAFT_QUIT_HINT)) {
                self.hint = None;
            }
        }

        if self.approvals.is_active() {
            if ctrl && key.code == KeyCode::Char('c') {
                self.update(Action::Interrupt);
                return;
            }
            match self.approvals.handle_key(key, self.clock.now()) {
                ApprovalKey::Answered(reply) => self.send(Op::Approval {
                    call_id: reply.call_id,
                    decision: reply.decision,
                    rule: reply.rule,
                    message: reply.message,
                }),
                ApprovalKey::Used => {}
                // Typing that began before the modal could be read: it belongs to the
                // draft (text only; Enter and the like wait until the modal is gone).
                ApprovalKey::TypeAhead => self.type_ahead(key),
            }
            return;
        }
        match &mut self.overlay {
            Overlay::Help(help) => {
                if help.handle_key(key) == HelpOutcome::Close {
                    self.overlay = Overlay::None;
                }
                return;
            }
            Overlay::Skills(browser) => {
                if ctrl && key.code == KeyCode::Char('c') {
                    self.overlay = Overlay::None;
                    return;
                }
                match browser.handle_key(key, &self.skills) {
                    BrowserOutcome::Stay => {}
                    BrowserOutcome::Close => self.overlay = Overlay::None,
                    BrowserOutcome::Insert(text) => {
                        self.overlay = Overlay::None;
                        self.set_input(&text);
                    }
                }
                return;
            }
            Overlay::Sessions(picker) => {
                match picker.handle_key(key) {
                    PickerOutcome::Stay => {}
                    PickerOutcome::Close => self.overlay = Overlay::None,
                    PickerOutcome::Chosen(id) if id == self.info.session_id => {
                        self.overlay = Overlay::None;
                        self.note(NoteKind::Info, "that is the session you are in");
                    }
                    PickerOutcome::Chosen(id) => {
                        self.overlay = Overlay::None;
                        self.resume(id);
                    }
                }
                return;
            }
            Overlay::Models(picker) => {
                match picker.handle_key(key) {
                    PickerOutcome::Stay => {}
                    PickerOutcome::Close => self.overlay = Overlay::None,
                    PickerOutcome::Chosen(provider) => {
                        self.overlay = Overlay::None;
                        self.switch_model(&provider);
                    }
                }
                return;
            }
            Overlay::Secret(prompt) => {
                match prompt.handle_key(key) {
                    SecretOutcome::Stay => {}
                    SecretOutcome::Done { line, note } => {
                        self.overlay = Overlay::None;
                        self.note(NoteKind::Info, note);
                        self.send_turn(&line);
                    }
                    SecretOutcome::Cancelled { line, note } => {
                        self.overlay = Overlay::None;
                        self.note(NoteKind::Info, note);
                        self.set_input(&line);
                    }
                }
                return;
            }
            Overlay::None => {}
        }
        if self.search.is_some() {
            self.search_key(key);
            return;
        }
        if let Some(action) = self.action_for(key) {
            self.update(action);
            return;
        }
        // Everything else edits the input.
        if self.history.is_browsing() && !matches!(key.code, KeyCode::Up | KeyCode::Down) {
            self.history.stop_browsing();
        }
        self.input.input(key);
        let text = self.input_text();
        self.palette.update(&text, &self.skills);
    }

    /// A key typed while the approval modal is not yet taking keys: characters and
    /// deletions edit the draft, so nothing typed is lost and nothing answers the modal.
    fn type_ahead(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let edits = match key.code {
            KeyCode::Char(_) => !ctrl,
            KeyCode::Backspace | KeyCode::Delete | KeyCode::Left | KeyCode::Right => true,
            _ => false,
        };
        if edits {
            self.input.input(key);
            let text = self.input_text();
            self.palette.update(&text, &self.skills);
        }
    }

    /// Stamps keys and events with `now` from here on (tests step time by hand).
    #[cfg(test)]
    pub fn set_clock(&mut self, now: std::time::Instant) {
        self.clock = Clock::Fixed(now);
    }

    /// Moves a test's clock on by `by`.
    #[cfg(test)]
    pub fn advance_clock(&mut self, by: std::time::Duration) {
        self.clock = Clock::Fixed(self.clock.now() + by);
    }

    /// Maps a key to an action; `None` lets the text area handle it.
    fn action_for(&mut self, key: KeyEvent) -> Option<Action> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        if key.code == KeyCode::BackTab {
            return Some(Action::CycleMode);
        }
        let text = self.input_text();
        if self.palette.is_open() {
            match key.code {
                KeyCode::Up => {
                    self.palette.move_selection(false);
                    return Some(Action::Refresh);
                }
                KeyCode::Down => {
                    self.palette.move_selection(true);
                    return Some(Action::Refresh);
                }
                KeyCode::Tab => {
                    let completion = self.palette.current()?.completion.clone();
                    return Some(Action::SetInput(completion));
                }
                KeyCode::Esc => {
                    self.palette.dismiss(&text);
                    return Some(Action::Refresh);
                }
                KeyCode::Enter if !shift && !alt => {
                    let item = self.palette.current()?.clone();
                    return Some(if item.runs_on_enter {
                        Action::Submit(item.completion.trim_end().to_owned())
                    } else {
                        Action::SetInput(item.completion)
                    });
                }
                _ => {}
            }
        }
        let action = match key.code {
            KeyCode::Char('c') if ctrl => {
                if self.is_busy() {
                    Action::Interrupt
                } else if !text.is_empty() {
                    Action::ClearInput
                } else if self.quit_armed {
                    Action::Quit
                } else {
                    Action::ArmQuit
                }
            }
            // Ctrl-D quits only from an empty input, so a draft is never
            // lost to it; with text it stays the editor's delete key.
            KeyCode::Char('d') if ctrl && text.is_empty() => Action::Quit,
            KeyCode::Char('d') if ctrl => {
                self.hint = Some(DRAFT_QUIT_HINT.into());
                return None;
            }
            KeyCode::Char('r') if ctrl => Action::SearchHistory,
            KeyCode::Char('u') if ctrl => Action::ClearInput,
            KeyCode::Char('l') if ctrl => Action::Redraw,
            KeyCode::Char('o') if ctrl => Action::ToggleToolOutput,
            KeyCode::Char('t') if ctrl => Action::ToggleRawOutput,
            KeyCode::Char('j') if ctrl => Action::NewLine,
            KeyCode::Enter if shift || alt => Action::NewLine,
            KeyCode::Enter => Action::Submit(text),
            KeyCode::PageUp => Action::Scroll(-self.transcript.page()),
            KeyCode::PageDown => Action::Scroll(self.transcript.page()),
            KeyCode::End if ctrl => Action::ScrollToBottom,
            KeyCode::Up if alt => Action::SelectTool { older: true },
            KeyCode::Down if alt => Action::SelectTool { older: false },
            // In a multi-line draft, Up on the first line stays an edit key.
            KeyCode::Up
                if self.input.cursor().0 == 0
                    && (self.history.is_browsing() || !text.contains('\n')) =>
            {
                Action::HistoryOlder
            }
            KeyCode::Down
                if self.history.is_browsing()
                    && self.input.cursor().0 + 1 >= self.input.lines().len() =>
            {
                Action::HistoryNewer
            }
            KeyCode::Esc => Action::Escape,
            _ => return None,
        };
        Some(action)
    }

    fn update(&mut self, action: Action) {
        self.dirty = true;
        match action {
            Action::Submit(text) => self.submit(&text),
            Action::Interrupt => {
                if self.approvals.is_active() {
                    self.approvals.clear();
                }
                self.send(Op::Interrupt);
                self.hint = Some("interrupting…".into());
            }
            Action::Quit => {
                self.keep_draft();
                let _ = self.ops.send(Op::Shutdown);
                self.exit = Some(TuiExit::Quit);
            }
            Action::ArmQuit => {
                self.quit_armed = true;
                self.hint = Some(QUIT_HINT.into());
            }
            Action::ClearInput => {
                self.keep_draft();
                self.history.stop_browsing();
                self.set_input("");
            }
            Action::SetInput(text) => self.set_input(&text),
            Action::HistoryOlder => {
                let current = self.input_text();
                if let Some(entry) = self.history.older(&current).map(str::to_owned) {
                    self.set_input(&entry);
                    // History entries are not commands being typed.
                    let entry = self.input_text();
                    self.palette.dismiss(&entry);
                }
            }
            Action::HistoryNewer => {
                if let Some(entry) = self.history.newer() {
                    self.set_input(&entry);
                    let entry = self.input_text();
                    self.palette.dismiss(&entry);
                }
            }
            Action::Scroll(lines) => self.transcript.scroll(lines),
            Action::ScrollToBottom => self.transcript.scroll_to_bottom(),
            Action::SelectTool { older } => self.transcript.select_tool(older),
            Action::ToggleToolOutput => self.transcript.toggle_selected_output(),
            Action::ToggleRawOutput => self.transcript.toggle_selected_raw(),
            // Esc first lets go of a selected card; otherwise it interrupts.
            Action::Escape if self.transcript.has_selection() => {
                self.transcript.clear_selection();
            }
            Action::Escape if self.is_busy() => self.update(Action::Interrupt),
            Action::Escape => {}
            Action::SearchHistory => {
                self.search = Some(HistorySearch {
                    query: String::new(),
                    draft: self.input_text(),
                    skip: 0,
                    found: None,
                });
            }
            Action::NewLine => {
                self.input.insert_newline();
                let text = self.input_text();
                self.palette.update(&text, &self.skills);
            }
            Action::Refresh => {}
            Action::Redraw => self.clear_screen = true,
            Action::CycleMode => {
                let mode = self.info.mode.next();
                self.info.mode = mode;
                self.send(Op::SetMode { mode });
                let what = match mode {
                    ApprovalMode::AskEdits => "ask-edits: every file edit waits for your approval",
                    ApprovalMode::AutoEdits => {
                        "auto-edits: edits inside the workspace run without asking"
                    }
                    ApprovalMode::Plan => {
                        "plan: read-only; the model plans and changes nothing until you switch back"
                    }
                };
                self.note(
                    NoteKind::Info,
                    format!("approval mode {what} (shift-tab switches)"),
                );
            }
        }
    }

    /// A draft about to leave the input (cleared, or the TUI quits) goes
    /// into the history, where Up brings it back. An entry recalled from the
    /// history is already there.
    fn keep_draft(&mut self) {
        let text = self.input_text();
        if !self.history.is_browsing() && !text.trim().is_empty() {
            self.history.record(&text);
        }
    }

    /// A key while searching the history: typing narrows the search,
    /// ctrl-r goes to the next older match, enter takes the match into the
    /// input, esc (or ctrl-c, ctrl-g) goes back to the draft.
    fn search_key(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let Some(search) = self.search.as_mut() else {
            return;
        };
        match key.code {
            KeyCode::Char('r') if ctrl => search.skip += 1,
            KeyCode::Esc | KeyCode::Char('c' | 'g') if key.code == KeyCode::Esc || ctrl => {
                let draft = std::mem::take(&mut search.draft);
                self.search = None;
                self.set_input(&draft);
                return;
            }
            KeyCode::Enter | KeyCode::Tab | KeyCode::Left | KeyCode::Right => {
                let chosen = search.found.clone().unwrap_or_else(|| search.draft.clone());
                self.search = None;
                self.set_input(&chosen);
                // A recalled entry is not a command being typed.
                let chosen = self.input_text();
                self.palette.dismiss(&chosen);
                return;
            }
            KeyCode::Backspace => {
                search.query.pop();
                search.skip = 0;
            }
            KeyCode::Char(c) if !ctrl => {
                search.query.push(c);
                search.skip = 0;
            }
            _ => return,
        }
        let query = search.query.clone();
        let mut skip = search.skip;
        let found = self.history.search(&query, skip);
        // Past the oldest match, stay on it.
        let found = match found {
            Some(entry) => Some(entry.to_owned()),
            None if skip > 0 => {
                skip -= 1;
                self.history.search(&query, skip).map(str::to_owned)
            }
            None => None,
        };
        if let Some(search) = self.search.as_mut() {
            search.skip = skip;
            search.found = found;
        }
    }

    fn send(&mut self, op: Op) {
        if self.ops.send(op).is_err() && !self.agent_gone {
            self.agent_disconnected();
        }
    }

    /// The session's event stream closed: say so once and stay usable for quitting.
    pub fn agent_disconnected(&mut self) {
        if !self.agent_gone {
            self.agent_gone = true;
            self.turns_running = 0;
            // Messages that never ran go back into the input, not away.
            if !self.queued.is_empty() {
                let mut texts: Vec<String> = self.queued.drain(..).map(|t| t.text).collect();
                let draft = self.input_text();
                if !draft.trim().is_empty() {
                    texts.push(draft);
                }
                self.set_input(&texts.join("\n\n"));
            }
            self.note(
                NoteKind::Error,
                "the agent session has ended; /new starts another, ctrl-d quits",
            );
        }
    }

    pub fn set_session_lookup(&mut self, lookup: SessionLookup) {
        self.session_lookup = Some(lookup);
    }

    pub fn set_session_list(&mut self, list: SessionList) {
        self.session_list = Some(list);
    }

    pub fn set_model_source(&mut self, models: Box<dyn ModelSource>) {
        self.models = Some(models);
    }

    /// Turns on `@path` mentions and their completion.
    pub fn set_mentions(&mut self, roots: MentionRoots) {
        self.palette.set_file_root(Some(roots.cwd.clone()));
        self.mentions = Some(roots);
    }

    /// Turns on the masked prompt for skills' missing secrets.
    pub fn set_secret_setup(&mut self, setup: SecretSetup) {
        self.secrets = Some(setup);
    }

    /// `/name` or `/skill id`: the masked prompt first when the skill misses
    /// declared secrets; the line is sent once each is saved or skipped.
    fn invoke_skill(&mut self, line: &str) -> bool {
        match self.secrets.as_ref().and_then(|s| s.prompt_for(line)) {
            Some(prompt) => {
                self.overlay = Overlay::Secret(Box::new(prompt));
                true
            }
            None => self.send_turn(line),
        }
    }

    /// Shows a resumed session's stored conversation in the transcript.
    pub fn replay_history(&mut self, messages: &[agent_loop::model::ChatMessage]) {
        if messages.is_empty() {
            return;
        }
        // What was stored is shown as it would have been live: escaped.
        let messages: Vec<_> = messages
            .iter()
            .map(|m| crate::terminal_text::escape_message(m).into_owned())
            .collect();
        super::replay::replay(&mut self.transcript, &messages);
        self.note(
            NoteKind::Info,
            format!("resumed session {}", self.info.session_id),
        );
        self.transcript.scroll_to_bottom();
    }

    fn submit(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        // Whatever the line does, its answer (a note, an error, the turn)
        // lands at the bottom: show it even when the transcript was scrolled up.
        self.transcript.scroll_to_bottom();
        let consumed = match text.strip_prefix('/') {
            Some(rest) => self.slash_command(text, rest),
            None => self.send_turn(text),
        };
        if consumed {
            self.history.record(text);
            self.set_input("");
        }
    }

    /// This session's turns that changed files and can be undone, newest first.
    fn undoable_turns(&self) -> Option<Vec<agent_loop::checkpoint::StoredTurn>> {
        let roots = self.mentions.as_ref()?;
        Some(agent_loop::checkpoint::turns(
            &knack_config::KnackHome::at(&roots.home).checkpoints_dir(),
            &roots.cwd,
            Some(&self.info.session_id),
        ))
    }

    /// `/rewind`: the turns that can be undone.
    fn list_turns(&mut self) {
        let turns = self.undoable_turns().unwrap_or_default();
        if turns.is_empty() {
            self.note(
                NoteKind::Info,
                "no turn of this session changed files that can be undone",
            );
            return;
        }
        let mut text = String::from("turns that changed files, newest first:");
        for (i, turn) in turns.iter().enumerate() {
            let n = turn.manifest.files.len();
            let files = if n == 1 { "file" } else { "files" };
            text.push_str(&format!(
                "\n  {}. \"{}\" — {n} {files}",
                i + 1,
                turn.manifest.title
            ));
        }
        text.push_str(
            "\n/rewind N puts back the files of the newest N turns; /undo the newest one",
        );
        self.note(NoteKind::Info, text);
    }

    /// `/undo` and `/rewind N`: puts back the files of the newest `n` turns, newest first.
    fn undo_turns(&mut self, n: usize) {
        if self.is_busy() {
            self.note(
                NoteKind::Error,
                "a turn is running; wait for it to end (or interrupt it) before undoing",
            );
            return;
        }
        let turns = self.undoable_turns().unwrap_or_default();
        if turns.is_empty() {
            self.note(
                NoteKind::Info,
                "nothing to undo: no turn of this session changed files",
            );
            return;
        }
        for turn in turns.iter().take(n) {
            let restored = agent_loop::checkpoint::undo(turn);
            let text = agent_loop::checkpoint::describe_undo(&turn.manifest.title, &restored);
            self.note(NoteKind::Info, text);
        }
    }

    /// Runs a `/…` line; false keeps it in the input (usage error).
    fn slash_command(&mut self, line: &str, rest: &str) -> bool {
        let (name, arg) = rest
            .split_once(char::is_whitespace)
            .map(|(n, a)| (n, a.trim()))
            .unwrap_or((rest, ""));
        match name {
            "help" => self.overlay = Overlay::Help(HelpView::default()),
            "skills" => self.overlay = Overlay::Skills(Box::default()),
            "skill" if arg.is_empty() => {
                self.note(NoteKind::Error, "usage: /skill <name or id> [text]");
                return false;
            }
            "skill" => return self.invoke_skill(line),
            "new" | "clear" => {
                let _ = self.ops.send(Op::Shutdown);
                self.exit = Some(TuiExit::NewSession);
            }
            "resume" if arg.is_empty() => return self.open_session_picker(),
            "resume" => {
                let id = match &self.session_lookup {
                    Some(lookup) => lookup(arg),
                    None => Ok(arg.to_owned()),
                };
                match id {
                    Ok(id) => self.resume(id),
                    // This session goes on; the line stays in the input to fix.
                    Err(message) => {
                        self.note(NoteKind::Error, message);
                        return false;
                    }
                }
            }
            "sessions" => self.list_sessions(),
            "model" if arg.is_empty() => self.open_model_picker(),
            "model" => return self.switch_model(arg),
            "reload-skills" => {
                self.reload_skills = true;
                self.note(NoteKind::Info, "rescanning the skill folders");
            }
            "review" => {
                self.send(Op::RunReview);
                self.note(
                    NoteKind::Info,
                    "review requested; it runs in the background",
                );
            }
            "mcp" => {
                let text = if self.info.mcp_servers.is_empty() {
                    "no MCP servers are configured (mcp_servers in config.yaml; see docs/mcp.md)"
                        .to_owned()
                } else {
                    let lines: Vec<&str> = self
                        .info
                        .mcp_servers
                        .iter()
                        .map(|line| line.text.as_str())
                        .collect();
                    format!("MCP servers: {}", lines.join("; "))
                };
                self.note(NoteKind::Info, text);
            }
            "compact" => {
                self.send(Op::Compact);
                self.note(
                    NoteKind::Info,
                    "compacting: the older history is being summarised",
                );
            }
            "undo" => self.undo_turns(1),
            "rewind" if arg.is_empty() => self.list_turns(),
            "rewind" => match arg.parse::<usize>() {
                Ok(n) if n >= 1 => self.undo_turns(n),
                _ => {
                    self.note(
                        NoteKind::Error,
                        "usage: /rewind lists the turns; /rewind N undoes the newest N",
                    );
                    return false;
                }
            },
            "quit" | "exit" => self.update(Action::Quit),
            _ if self.skills.iter().any(|s| s.name == name) => return self.invoke_skill(line),
            // `/usr/bin/env is odd` is a message, not a command.
            _ if name.contains('/') => return self.send_turn(line),
            _ => {
                self.note(
                    NoteKind::Error,
                    format!("no command or skill named /{name}; type / to see them"),
                );
                return false;
            }
        }
        true
    }

    /// Sends a user turn with its `@path` mentions attached; false (the
    /// line stays in the input) when a mention cannot be attached.
    fn send_turn(&mut self, text: &str) -> bool {
        let (sent, attached) = match &self.mentions {
            Some(roots) => match agent_loop::mentions::expand(text, &roots.cwd, &roots.home) {
                Ok(expanded) => (expanded.text, expanded.attachments),
                Err(e) => {
                    self.note(NoteKind::Error, format!("not sent: {e}"));
                    return false;
                }
            },
            None => (text.to_owned(), Vec::new()),
        };
        let turn = QueuedTurn {
            text: text.to_owned(),
            attached: attached
                .iter()
                .map(|a| format!("attached {}", a.header()))
                .collect(),
        };
        if self.is_busy() {
            self.queued.push_back(turn);
        } else {
            self.show_user_turn(turn);
        }
        self.turns_running += 1;
        self.send(Op::UserTurn { text: sent });
        true
    }

    /// A user message joins the transcript as its turn starts.
    fn show_user_turn(&mut self, turn: QueuedTurn) {
        self.transcript.push(Cell::User { text: turn.text });
        if !turn.attached.is_empty() {
            self.transcript
                .push_note(NoteKind::Subtle, turn.attached.join("\n"));
        }
        self.transcript.scroll_to_bottom();
    }

    /// Leaves this session for the stored one `id` (a full id).
    fn resume(&mut self, id: String) {
        let _ = self.ops.send(Op::Shutdown);
        self.exit = Some(TuiExit::Resume(id));
    }

    fn stored_sessions(&mut self) -> Option<Vec<agent_loop::SessionSummary>> {
        let list = self.session_list.as_ref()?;
        match list() {
            Ok(sessions) => Some(sessions),
            Err(message) => {
                self.note(
                    NoteKind::Error,
                    format!("cannot list the stored sessions: {message}"),
                );
                None
            }
        }
    }

    /// `/resume` alone; false keeps the line when there is nothing to pick.
    fn open_session_picker(&mut self) -> bool {
        if self.session_list.is_none() {
            self.note(
                NoteKind::Error,
                "usage: /resume <session-id> (`knack sessions list` shows them)",
            );
            return false;
        }
        let Some(sessions) = self.stored_sessions() else {
            return false;
        };
        let rows = session_rows(
            &sessions,
            &self.info.session_id,
            std::time::SystemTime::now(),
        );
        self.overlay = Overlay::Sessions(Box::new(Picker::new("resume a session", "resume", rows)));
        true
    }

    /// `/sessions`: the most recent stored sessions as a note.
    fn list_sessions(&mut self) {
        let Some(sessions) = self.stored_sessions() else {
            if self.session_list.is_none() {
                self.note(
                    NoteKind::Info,
                    format!(
                        "this session: {}. `knack sessions list` lists the stored ones.",
                        self.info.session_id
                    ),
                );
            }
            return;
        };
        let rows = session_rows(
            &sessions,
            &self.info.session_id,
            std::time::SystemTime::now(),
        );
        let mut lines: Vec<String> = rows
            .iter()
            .take(SESSIONS_LISTED)
            .map(|row| {
                let here = if row.current { " (this session)" } else { "" };
                format!("{} · {}{here}", row.title, row.detail)
            })
            .collect();
        if lines.is_empty() {
            lines.push("no stored sessions yet".into());
        }
        let more = rows.len().saturating_sub(SESSIONS_LISTED);
        if more > 0 {
            lines.push(format!(
                "… and {more} older (`knack sessions list` shows all)"
            ));
        }
        lines.push(
            "/resume ID (or the start of it) continues one; /resume alone picks from a list".into(),
        );
        self.note(NoteKind::Info, lines.join("\n"));
    }

    /// `/model` alone: the provider profiles to pick from, or which model is in use.
    fn open_model_picker(&mut self) {
        let choices = self
            .models
            .as_ref()
            .map(|models| models.choices())
            .unwrap_or_default();
        if choices.is_empty() {
            let how = if self.models.is_some() {
                "/model NAME sends another model name to the same server; provider \
                 profiles in config.yaml (`knack model list`) can be picked here."
            } else {
                "Change it with `knack config set model.name NAME`, then /new."
            };
            self.note(
                NoteKind::Info,
                format!("model in use: {}. {how}", self.info.model),
            );
            return;
        }
        self.overlay =
            Overlay::Models(Box::new(Picker::new("switch the model", "switch", choices)));
    }

    /// `/model NAME`: the following requests go to another model; false keeps
    /// the line in the input when it cannot switch.
    fn switch_model(&mut self, arg: &str) -> bool {
        if self.is_busy() {
            self.note(
                NoteKind::Error,
                "a turn is running; switch the model once it ends (or interrupt it with ctrl-c)",
            );
            return false;
        }
        let Some(models) = self.models.as_mut() else {
            self.note(
                NoteKind::Error,
                "the model cannot be switched here; `knack chat --model NAME` starts with another",
            );
            return false;
        };
        match models.switch(arg) {
            Ok(switched) => {
                let provider = switched
                    .provider
                    .map(|p| format!(" (provider {p})"))
                    .unwrap_or_default();
                self.info.model = switched.model.clone();
                self.info.context_window = switched.context_window;
                self.note(
                    NoteKind::Info,
                    format!(
                        "model switched to {}{provider} for the following messages. The \
                         conversation goes on as it is, but the new model starts a new prompt \
                         cache, so its first request reads the whole conversation afresh.",
                        switched.model
                    ),
                );
                true
            }
            Err(message) => {
                self.note(NoteKind::Error, format!("model not switched: {message}"));
                false
            }
        }
    }

    // ----- agent events ------------------------------------------------------

    pub fn handle_agent_event(&mut self, event: AgentEvent) {
        self.dirty = true;
        // Model and tool text never reaches the terminal with its control sequences.
        let event = crate::terminal_text::escaped_event(event);
        match event {
            AgentEvent::SessionStarted { session_id, model } => {
                // The window came with the connection; the event names the rest.
                self.info.session_id = session_id;
                self.info.model = model;
            }
            AgentEvent::SkillLoaded { name, via } => {
                let how = match via {
                    SkillLoadVia::Slash => "you invoked it",
                    SkillLoadVia::Preload => "preloaded",
                    SkillLoadVia::Auto => "activated automatically",
                };
                self.note(NoteKind::Subtle, format!("skill loaded: {name} ({how})"));
            }
            AgentEvent::AssistantDelta { text } => self.transcript.append_delta(&text),
            AgentEvent::ReasoningDelta { text } => self.transcript.append_reasoning(&text),
            AgentEvent::ToolCallBegin {
                call_id,
                name,
                arguments,
            } => self.transcript.begin_tool(&call_id, &name, &arguments),
            AgentEvent::ToolCallOutput { call_id, output } => {
                self.transcript.tool_output(&call_id, &output);
            }
            AgentEvent::ToolCallEnd {
                call_id,
                success,
                duration_ms,
                ..
            } => self.transcript.end_tool(&call_id, success, duration_ms),
            AgentEvent::Retry {
                attempt,
                delay_ms,
                reason,
            } => {
                self.transcript.discard_stream();
                self.note(
                    NoteKind::Retry,
                    format!(
                        "{reason}; retrying in {} (attempt {attempt})",
                        super::transcript::format_duration(delay_ms)
                    ),
                );
            }
            AgentEvent::Usage {
                prompt_tokens,
                completion_tokens,
                cached_tokens,
                cost_usd,
                ..
            } => {
                self.tokens
                    .add(prompt_tokens, completion_tokens, cached_tokens);
                self.tokens.add_cost(cost_usd);
            }
            AgentEvent::CatalogNote { added, removed } => {
                let mut parts = Vec::new();
                if !added.is_empty() {
                    parts.push(format!("added {}", added.join(", ")));
                }
                if !removed.is_empty() {
                    parts.push(format!("removed {}", removed.join(", ")));
                }
                self.note(
                    NoteKind::Subtle,
                    format!("skill catalog changed: {}", parts.join("; ")),
                );
            }
            AgentEvent::Compaction {
                before_tokens,
                after_tokens,
            } => {
                self.tokens.last_prompt = after_tokens;
                self.note(
                NoteKind::Subtle,
                format!(
                    "history compacted to fit the context window: about {before_tokens} → {after_tokens} tokens"
                ),
            );
            }
            AgentEvent::AssistantMessage { text } => self.transcript.finish_message(&text),
            AgentEvent::ApprovalRequest {
                call_id,
                command,
                reason,
                exact_rule,
                prefix_rule,
                diff,
            } => self.approvals.push(
                PendingApproval {
                    call_id,
                    command,
                    reason,
                    exact_rule,
                    prefix_rule,
                    diff,
                },
                self.clock.now(),
            ),
            AgentEvent::AutoApproved { call_id, rule } => {
                self.transcript.approved_by_rule(&call_id, &rule);
            }
            AgentEvent::FileDiff { call_id, diff, .. } => {
                self.transcript.file_diff(&call_id, &diff);
            }
            AgentEvent::ReviewStarted => self.review_running = true,
            AgentEvent::SkillWritten {
                action,
                name,
                actor,
            } => {
                let actor = serde_json::to_value(actor)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                self.note(
                    NoteKind::Subtle,
                    format!("skill {name}: {action} (by {actor})"),
                );
            }
            AgentEvent::ReviewUsage {
                prompt_tokens,
                completion_tokens,
                ..
            } => self.tokens.add_review(prompt_tokens, completion_tokens),
            AgentEvent::ReviewFinished { summary } => {
                self.review_running = false;
                self.note(NoteKind::Review, summary);
            }
            AgentEvent::Error { message } => {
                self.transcript.settle_stream();
                self.note(NoteKind::Error, message);
                self.end_turn();
            }
            AgentEvent::TurnAborted { reason } => {
                self.transcript.settle_stream();
                if reason == TurnAbortReason::Interrupted {
                    // The same result the model was given for those calls.
                    self.transcript
                        .abandon_running_tools(agent_loop::session::INTERRUPTED_TOOL_RESULT);
                }
                let text = match reason {
                    TurnAbortReason::Interrupted => "turn interrupted",
                    TurnAbortReason::Shutdown => "turn stopped: the session is shutting down",
                };
                self.note(NoteKind::Info, text);
                self.end_turn();
            }
            AgentEvent::TurnComplete => self.end_turn(),
        }
    }

    fn end_turn(&mut self) {
        self.turns_running = self.turns_running.saturating_sub(1);
        // The session starts the next queued message now.
        if let Some(next) = self.queued.pop_front() {
            self.transcript.settle_stream();
            self.show_user_turn(next);
        }
        if self.turns_running == 0 {
            self.transcript.settle_stream();
            self.transcript.abandon_running_tools(TURN_ENDED_RESULT);
            self.approvals.clear();
            if self.hint.as_deref() == Some("interrupting…") {
                self.hint = None;
            }
        }
    }

    /// Advances spinners; redraws only when something animates.
    pub fn on_tick(&mut self) {
        self.tick = self.tick.wrapping_add(1);
        if self.is_busy() || self.review_running || self.transcript.has_running_tool() {
            self.dirty = true;
        }
    }

    // ----- drawing -----------------------------------------------------------

    /// The lines above the input naming the messages waiting for the
    /// running turn, in the order they will run.
    fn queued_lines(&self, width: u16) -> Vec<Line<'static>> {
        let theme = self.theme;
        let mut lines: Vec<Line<'static>> = self
            .queued
            .iter()
            .take(QUEUED_SHOWN)
            .map(|turn| {
                let first = turn.text.lines().next().unwrap_or_default();
                let text = super::wrap::truncate(
                    &format!("queued · {first}"),
                    usize::from(width.saturating_sub(2)),
                );
                Line::from(vec![Span::raw(" "), Span::styled(text, theme.dim())])
            })
            .collect();
        let more = self.queued.len().saturating_sub(QUEUED_SHOWN);
        if more > 0 {
            lines.push(Line::styled(
                format!(" … and {more} more queued"),
                theme.dim(),
            ));
        }
        lines
    }

    fn input_height(&self, width: u16) -> u16 {
        let inner = width.saturating_sub(2).max(1) as usize;
        let rows: usize = self
            .input
            .lines()
            .iter()
            .map(|l| {
                unicode_width::UnicodeWidthStr::width(l.as_str())
                    .max(1)
                    .div_ceil(inner)
            })
            .sum();
        (rows as u16).clamp(1, MAX_INPUT_ROWS) + 2
    }

    pub fn render(&mut self, frame: &mut Frame<'_>) {
        let area = frame.area();
        let input_h = self
            .input_height(area.width)
            .min(area.height.saturating_sub(2).max(3));
        let queued_h = self.queued_lines(area.width).len() as u16;
        let [body, queued_area, input_area, status_area] = Layout::vertical([
            Constraint::Min(1),
            Constraint::Length(queued_h),
            Constraint::Length(input_h),
            Constraint::Length(1),
        ])
        .areas(area);
        let theme = self.theme;
        if self.transcript.len() == 0 {
            welcome(&self.info, &theme, body.width).render(body, frame.buffer_mut());
        }
        self.transcript
            .render(body, frame.buffer_mut(), &theme, self.tick);

        Paragraph::new(self.queued_lines(area.width)).render(queued_area, frame.buffer_mut());
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border())
            .title(Span::styled(
                if self.is_busy() {
                    " message · ctrl-c interrupts "
                } else {
                    " message "
                },
                theme.dim(),
            ));
        match &self.search {
            Some(search) => {
                let block = Block::default()
                    .borders(Borders::ALL)
                    .border_style(theme.border())
                    .title(Span::styled(
                        format!(" history search: {}▏ ", search.query),
                        theme.heading(3),
                    ));
                let shown = match &search.found {
                    Some(entry) => Line::raw(entry.replace('\n', " ⏎ ")),
                    None if search.query.is_empty() => Line::styled(
                        "type to search the sent messages · ctrl-r older · enter takes · esc back",
                        theme.dim(),
                    ),
                    None => Line::styled("no match", theme.dim()),
                };
                Paragraph::new(shown)
                    .block(block)
                    .render(input_area, frame.buffer_mut());
            }
            None => {
                self.input.set_block(block);
                frame.render_widget(&self.input, input_area);
            }
        }

        let activity = Activity {
            turn_running: self.is_busy(),
            thinking: self.transcript.is_thinking(),
            review_running: self.review_running,
            hint: self.hint.as_deref(),
            tick: self.tick,
            mode: self.info.mode,
        };
        status::render(
            status_area,
            frame.buffer_mut(),
            &theme,
            &self.info,
            &self.tokens,
            &activity,
        );

        if self.palette.is_open() && matches!(self.overlay, Overlay::None) {
            let h = self.palette.height().min(body.height);
            let rect = Rect {
                x: input_area.x,
                y: input_area.y.saturating_sub(h),
                width: input_area.width,
                height: h,
            };
            self.palette.render(rect, frame.buffer_mut(), &theme);
        }
        // Overlays take everything above the status line.
        let page = Rect {
            height: area.height.saturating_sub(1),
            ..area
        };
        match &mut self.overlay {
            Overlay::None => {}
            Overlay::Help(help) => help.render(page, frame.buffer_mut(), &theme),
            Overlay::Skills(browser) => {
                browser.render(page, frame.buffer_mut(), &theme, &self.skills);
            }
            Overlay::Sessions(picker) | Overlay::Models(picker) => {
                picker.render(page, frame.buffer_mut(), &theme);
            }
            Overlay::Secret(prompt) => prompt.render(page, frame.buffer_mut(), &theme),
        }
        if self.approvals.is_active() {
            let now = self.clock.now();
            self.approvals.render(body, frame.buffer_mut(), &theme, now);
        }
    }
}

const QUIT_HINT: &str = "press ctrl-c again to quit";
const DRAFT_QUIT_HINT: &str = "ctrl-d quits from an empty input; ctrl-u clears it";

/// Ctrl-R's state: what is typed, which match (0 = newest) and the draft to
/// go back to.
#[derive(Debug, Clone)]
struct HistorySearch {
    query: String,
    draft: String,
    skip: usize,
    found: Option<String>,
}

/// What an empty transcript shows: where you are and how to start, wrapped
/// to `width` so a narrow terminal shows all of it.
fn welcome(info: &SessionInfo, theme: &Theme, width: u16) -> Paragraph<'static> {
    let indent = [Span::raw("  ")];
    let mut lines = vec![Line::default()];
    lines.extend(wrap_spans(
        &[
            Span::styled("knack", theme.heading(2)),
            Span::styled(format!(" · {}", info.model), theme.dim()),
        ],
        width as usize,
        &indent,
        &indent,
    ));
    lines.push(Line::default());
    for text in [
        "Type a message and press enter. / lists commands and skills,",
        "/skills browses them, /help shows every key.",
    ] {
        lines.extend(wrap_spans(
            &[Span::styled(text, theme.dim())],
            width as usize,
            &indent,
            &indent,
        ));
    }
    Paragraph::new(lines)
}
