//! The interactive terminal UI (`knack chat`): a renderer of the session's
//! `agent-protocol` events that sends the user's `Op`s back.
//!
//! `run_tui` owns the terminal (raw mode, alternate screen, mouse, bracketed
//! paste) and restores it on every exit path, panics included.

mod app;
mod approval;
mod browser;
pub mod connection;
mod help;
mod history;
mod markdown;
mod models;
mod palette;
mod picker;
mod replay;
pub mod secret_prompt;
pub mod skills;
mod status;
mod theme;
mod transcript;
mod wrap;

#[cfg(test)]
mod acceptance_tests;
#[cfg(test)]
mod approval_tests;
#[cfg(test)]
mod daily_tests;
#[cfg(test)]
mod escape_tests;
#[cfg(test)]
mod habit_tests;
#[cfg(test)]
mod render_tests;
#[cfg(test)]
mod test_harness;
#[cfg(test)]
mod tests;

use std::io::stdout;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt as _;
use knack_config::KnackHome;

use crate::context::Context;
use agent_loop::setup::ModelFlags;
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    EventStream, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::supports_keyboard_enhancement;
use ratatui::layout::Rect;

pub use app::{App, TuiExit};
pub use connection::{AgentConnection, ChatOptions, SessionInfo, connect_agent};
pub use history::InputHistory;
pub use skills::SkillCatalog;
pub use theme::Theme;

/// Spinner frame rate; also how often the skill catalog is checked.
const TICK: Duration = Duration::from_millis(100);

/// A `width` × `height` box in the middle of `area` (for dialogs drawn over
/// the transcript); `width` must not exceed the area's.
pub(crate) fn centered(area: Rect, width: u16, height: u16) -> Rect {
    Rect {
        x: area.x + area.width.saturating_sub(width) / 2,
        y: area.y + area.height.saturating_sub(height) / 2,
        width,
        height,
    }
}

/// Where the input history lives.
pub fn history_path(home: &KnackHome) -> std::path::PathBuf {
    home.root().join("history")
}

/// Undoes what `run_tui` turned on, in reverse order; runs on drop so an
/// early `?` return restores the terminal too.
struct TerminalGuard {
    keyboard_enhanced: bool,
}

impl TerminalGuard {
    fn restore(keyboard_enhanced: bool) {
        if keyboard_enhanced {
            let _ = execute!(stdout(), PopKeyboardEnhancementFlags);
        }
        let _ = execute!(stdout(), DisableMouseCapture, DisableBracketedPaste);
        ratatui::restore();
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        Self::restore(self.keyboard_enhanced);
    }
}

/// How a TUI run ended, and the lines to print once the terminal is back.
pub struct TuiEnd {
    pub exit: TuiExit,
    /// The session's id, totals and resume command.
    pub summary: String,
}

/// Runs the chat UI on the current terminal until the user quits, starts a
/// new session or resumes another one. `model_flags` are the provider and
/// model in use; `/model` changes them, and the caller's next session keeps them.
pub async fn run_tui(
    conn: AgentConnection,
    info: SessionInfo,
    skills: &mut SkillCatalog,
    ctx: &Arc<Context>,
    model_flags: &Arc<Mutex<ModelFlags>>,
) -> anyhow::Result<TuiEnd> {
    let session_id = info.session_id.clone();
    let home = &ctx.home;
    let AgentConnection {
        ops,
        mut events,
        history,
        models,
    } = conn;
    let mut app = App::new(
        ops,
        info,
        Theme::from_env(),
        InputHistory::load(&history_path(home)),
    );
    app.set_skills(skills.entries());
    app.replay_history(&history);
    // `/resume ID` is checked against the store before this session is left.
    match agent_loop::SessionStore::open(home) {
        Ok(store) => {
            // A resumed session's earlier requests count too (zero for a new one).
            match store.usage_totals(&session_id) {
                Ok(stored) => app.set_prior_usage(status::TokenTotals::from_stored(&stored)),
                Err(e) => tracing::warn!(error = %e, "cannot read the session's stored usage"),
            }
            let store = Arc::new(store);
            let lookup = Arc::clone(&store);
            app.set_session_lookup(Box::new(move |id| {
                lookup.resolve_id(id).map_err(|e| e.to_string())
            }));
            app.set_session_list(Box::new(move || store.list().map_err(|e| e.to_string())));
        }
        Err(e) => tracing::warn!(error = %e, "cannot open the session store for /resume"),
    }
    app.set_secret_setup(secret_prompt::SecretSetup::new(
        home.clone(),
        ctx.discovery_options(),
    ));
    app.set_mentions(app::MentionRoots {
        cwd: ctx.cwd.clone(),
        home: home.root().to_path_buf(),
    });
    if let Some(switcher) = models {
        app.set_model_source(Box::new(models::ConfiguredModels {
            ctx: Arc::clone(ctx),
            flags: Arc::clone(model_flags),
            switcher,
        }));
    }

    // ratatui::init installs a panic hook that leaves raw mode and the
    // alternate screen; ours runs first and turns off what we added.
    let mut terminal = ratatui::init();
    let keyboard_enhanced = matches!(supports_keyboard_enhancement(), Ok(true))
        && execute!(
            stdout(),
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )
        .is_ok();
    let _guard = TerminalGuard { keyboard_enhanced };
    execute!(stdout(), EnableBracketedPaste, EnableMouseCapture)?;
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |panic| {
        if keyboard_enhanced {
            let _ = execute!(stdout(), PopKeyboardEnhancementFlags);
        }
        let _ = execute!(stdout(), DisableMouseCapture, DisableBracketedPaste);
        previous_hook(panic);
    }));

    let mut input = EventStream::new();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut agent_open = true;
    loop {
        if app.take_clear_request() {
            terminal.clear()?;
        }
        if app.take_dirty() {
            terminal.draw(|frame| app.render(frame))?;
        }
        if let Some(exit) = app.take_exit() {
            return Ok(TuiEnd {
                exit,
                summary: app.exit_summary(),
            });
        }
        if app.take_reload_request() {
            skills.reload();
            let fresh = skills.entries();
            let n = fresh.len();
            app.set_skills(fresh);
            let skills = if n == 1 { "skill" } else { "skills" };
            app.note(
                transcript::NoteKind::Info,
                format!("{n} {skills} available"),
            );
        }
        tokio::select! {
            event = input.next() => match event {
                Some(Ok(event)) => app.handle_terminal_event(event),
                Some(Err(err)) => return Err(anyhow::anyhow!("cannot read the terminal: {err}")),
                None => {
                    return Ok(TuiEnd {
                        exit: TuiExit::Quit,
                        summary: app.exit_summary(),
                    });
                }
            },
            event = events.recv(), if agent_open => match event {
                Some(event) => {
                    app.handle_agent_event(event);
                    // Take whatever else is queued so a burst of deltas is one frame.
                    while let Ok(more) = events.try_recv() {
                        app.handle_agent_event(more);
                    }
                }
                None => {
                    agent_open = false;
                    app.agent_disconnected();
                }
            },
            _ = tick.tick() => {
                app.on_tick();
                if let Some(fresh) = skills.poll_changes() {
                    app.set_skills(fresh);
                }
            }
        }
    }
}
