//! What every TUI test module drives the app with: an `App` wired to a
//! channel instead of a session, keys, and the screen a `TestBackend` draws.

use agent_protocol::{Event, Op};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use super::app::App;
use super::connection::SessionInfo;
use super::history::InputHistory;
use super::theme::Theme;

/// A session's facts as the app is told them at start.
pub fn session_info(session_id: &str, context_window: u64) -> SessionInfo {
    SessionInfo {
        session_id: session_id.into(),
        model: "test-model".into(),
        context_window,
        mcp_servers: Vec::new(),
        mode: agent_protocol::ApprovalMode::default(),
    }
}

/// An app for `info` in `theme`, and the ops it sends to the session.
pub fn app_with(info: SessionInfo, theme: Theme) -> (App, UnboundedReceiver<Op>) {
    let (tx, rx) = unbounded_channel();
    let mut app = App::new(tx, info, theme, InputHistory::in_memory(Vec::new()));
    // Time stands still unless a test moves it (the approval modal's grace period).
    app.set_clock(std::time::Instant::now());
    (app, rx)
}

/// An approval request for `command` with no rules to offer.
pub fn approval_request(call_id: &str, command: &str, reason: &str) -> Event {
    Event::ApprovalRequest {
        call_id: call_id.into(),
        command: command.into(),
        reason: reason.into(),
        exact_rule: None,
        prefix_rule: None,
        diff: None,
    }
}

/// Lets the approval modal's grace period pass, so keys answer it.
pub fn wait_out_grace(app: &mut App) {
    app.advance_clock(super::approval::GRACE);
}

/// An app in the plain theme (no colours, stable snapshots).
pub fn plain_app(session_id: &str, context_window: u64) -> (App, UnboundedReceiver<Op>) {
    app_with(session_info(session_id, context_window), Theme::plain())
}

pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

pub fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        app.handle_key(key(KeyCode::Char(c)));
    }
}

/// Types `line` and sends it.
pub fn enter(app: &mut App, line: &str) {
    type_text(app, line);
    app.handle_key(key(KeyCode::Enter));
}

/// The ops sent so far.
pub fn drain(rx: &mut UnboundedReceiver<Op>) -> Vec<Op> {
    let mut out = Vec::new();
    while let Ok(op) = rx.try_recv() {
        out.push(op);
    }
    out
}

pub fn feed(app: &mut App, events: Vec<Event>) {
    for event in events {
        app.handle_agent_event(event);
    }
}

pub fn draw(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| app.render(frame)).unwrap();
    terminal
}

/// The screen as text, one line per row.
pub fn screen(app: &mut App, width: u16, height: u16) -> String {
    draw(app, width, height).backend().to_string()
}
