//! The daily-driver commands without a terminal: the `/resume` picker,
//! `/sessions`, `/model` switching and `@path` mentions, as snapshots of a
//! `TestBackend` and as the `Op`s the app sends.

use std::sync::{Arc, Mutex};

use agent_loop::SessionSummary;
use agent_protocol::Op;
use pretty_assertions::assert_eq;
use ratatui::crossterm::event::KeyCode;
use tokio::sync::mpsc::UnboundedReceiver;

use super::app::{App, MentionRoots, TuiExit};
use super::models::{ModelSource, Switched};
use super::picker::PickerRow;
use super::test_harness::{drain, enter, key, plain_app, screen, type_text};
use super::transcript::Cell;

const CURRENT: &str = "20250301-000003";

fn app() -> (App, UnboundedReceiver<Op>) {
    plain_app(CURRENT, 0)
}

fn notes(app: &App) -> Vec<String> {
    app.transcript()
        .cells()
        .filter_map(|cell| match cell {
            Cell::Note { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// Dates far in the past, so the ages show as dates and the snapshots hold.
fn stored() -> Vec<SessionSummary> {
    let session = |id: &str, title: Option<&str>, model: &str, count: u64| SessionSummary {
        id: id.into(),
        started_at: format!("2025-03-0{}T10:00:00Z", id.chars().last().unwrap_or('1')),
        title: title.map(str::to_owned),
        model: model.into(),
        message_count: count,
    };
    vec![
        session(CURRENT, Some("Plan the release"), "test-model", 4),
        session(
            "20250302-000002",
            Some("Fix the flaky build"),
            "gpt-4.1-mini",
            12,
        ),
        session("20250301-000001", None, "qwen3-coder", 1),
    ]
}

fn with_sessions(app: &mut App) {
    app.set_session_list(Box::new(|| Ok(stored())));
}

// ----- /resume picker, /sessions -----------------------------------------------

#[test]
fn snapshot_resume_picker_lists_sessions_and_filters_as_you_type() {
    let (mut app, mut rx) = app();
    with_sessions(&mut app);
    enter(&mut app, "/resume");
    assert_eq!(app.input_text(), "", "the command ran");
    insta::assert_snapshot!("resume_picker", screen(&mut app, 100, 14));

    type_text(&mut app, "flaky");
    insta::assert_snapshot!("resume_picker_filtered", screen(&mut app, 100, 14));
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        app.take_exit(),
        Some(TuiExit::Resume("20250302-000002".into()))
    );
    assert_eq!(drain(&mut rx), vec![Op::Shutdown]);
}

#[test]
fn the_picker_closes_with_esc_and_picking_this_session_stays() {
    let (mut app, mut rx) = app();
    with_sessions(&mut app);
    enter(&mut app, "/resume");
    app.handle_key(key(KeyCode::Esc));
    assert!(!screen(&mut app, 100, 14).contains("resume a session"));

    enter(&mut app, "/resume");
    app.handle_key(key(KeyCode::Enter)); // the first row: this session
    assert_eq!(app.take_exit(), None);
    assert!(drain(&mut rx).is_empty());
    assert!(
        notes(&app)
            .iter()
            .any(|n| n == "that is the session you are in")
    );
}

#[test]
fn a_store_that_fails_is_an_error_line_and_the_ui_stays() {
    let (mut app, _rx) = app();
    app.set_session_list(Box::new(|| Err("state.db is locked".into())));
    enter(&mut app, "/resume");
    assert_eq!(app.take_exit(), None);
    assert_eq!(app.input_text(), "/resume", "kept to try again");
    assert!(
        notes(&app)
            .iter()
            .any(|n| n == "cannot list the stored sessions: state.db is locked")
    );
}

#[test]
fn slash_sessions_lists_the_recent_ones_and_marks_this_one() {
    let (mut app, _rx) = app();
    with_sessions(&mut app);
    enter(&mut app, "/sessions");
    let listed = notes(&app).pop().unwrap();
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 4, "{listed}");
    assert_eq!(
        lines[0],
        "Plan the release · test-model · 2025-03-03 · 4 messages · 20250301-000003 (this session)"
    );
    assert!(
        lines[2].starts_with("(no title yet) · qwen3-coder"),
        "{listed}"
    );
    assert!(lines[3].contains("/resume alone picks"), "{listed}");
}

// ----- /model --------------------------------------------------------------------

/// Records what it was asked and answers as a resolver would.
struct FakeModels {
    asked: Arc<Mutex<Vec<String>>>,
}

impl ModelSource for FakeModels {
    fn choices(&self) -> Vec<PickerRow> {
        vec![
            PickerRow {
                value: "local".into(),
                title: "local".into(),
                detail: "qwen3-coder · chat · http://127.0.0.1:8080/v1".into(),
                current: true,
            },
            PickerRow {
                value: "claude".into(),
                title: "claude".into(),
                detail: "claude-sonnet-4-5 · anthropic · https://api.anthropic.com/v1".into(),
                current: false,
            },
        ]
    }

    fn switch(&mut self, arg: &str) -> Result<Switched, String> {
        self.asked.lock().unwrap().push(arg.to_owned());
        match arg {
            "nope" => Err("unknown provider 'nope'".into()),
            "claude" => Ok(Switched {
                model: "claude-sonnet-4-5".into(),
                provider: Some("claude".into()),
                context_window: 200_000,
            }),
            other => Ok(Switched {
                model: other.into(),
                provider: None,
                context_window: 32_768,
            }),
        }
    }
}

fn with_models(app: &mut App) -> Arc<Mutex<Vec<String>>> {
    let asked = Arc::new(Mutex::new(Vec::new()));
    app.set_model_source(Box::new(FakeModels {
        asked: Arc::clone(&asked),
    }));
    asked
}

#[test]
fn slash_model_name_switches_and_the_status_line_follows() {
    let (mut app, _rx) = app();
    let asked = with_models(&mut app);
    enter(&mut app, "/model big-model");
    assert_eq!(*asked.lock().unwrap(), ["big-model"]);
    assert_eq!(app.input_text(), "");
    let text = screen(&mut app, 100, 12);
    assert!(text.contains(" big-model │"), "status line: {text}");
    let note = notes(&app).pop().unwrap();
    assert!(
        note.starts_with("model switched to big-model for the following messages")
            && note.contains("new prompt cache"),
        "{note}"
    );

    enter(&mut app, "/model nope");
    assert_eq!(app.input_text(), "/model nope", "kept to fix");
    assert_eq!(
        notes(&app).pop().unwrap(),
        "model not switched: unknown provider 'nope'"
    );
    assert!(screen(&mut app, 100, 12).contains(" big-model │"));
}

#[test]
fn snapshot_model_picker_and_the_choice_switches() {
    let (mut app, _rx) = app();
    let asked = with_models(&mut app);
    enter(&mut app, "/model");
    insta::assert_snapshot!("model_picker", screen(&mut app, 100, 12));
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(*asked.lock().unwrap(), ["claude"]);
    assert!(
        notes(&app)
            .pop()
            .unwrap()
            .starts_with("model switched to claude-sonnet-4-5 (provider claude)")
    );
}

#[test]
fn the_model_is_not_switched_under_a_running_turn() {
    let (mut app, mut rx) = app();
    let asked = with_models(&mut app);
    enter(&mut app, "hello");
    drain(&mut rx);
    enter(&mut app, "/model big-model");
    assert!(asked.lock().unwrap().is_empty());
    assert!(notes(&app).pop().unwrap().starts_with("a turn is running"));
}

// ----- @path mentions -------------------------------------------------------------

fn project() -> (tempfile::TempDir, MentionRoots) {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("work");
    let home = dir.path().join("home");
    std::fs::create_dir_all(cwd.join("src")).unwrap();
    std::fs::create_dir_all(cwd.join("target")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(cwd.join("src/main.rs"), "fn main() {}\n// end\n").unwrap();
    std::fs::write(cwd.join("src/lib.rs"), "pub fn lib() {}\n").unwrap();
    std::fs::write(cwd.join("README.md"), "# demo\n").unwrap();
    std::fs::write(cwd.join(".gitignore"), "target/\n").unwrap();
    std::fs::write(cwd.join("target/build.log"), "ignored\n").unwrap();
    (dir, MentionRoots { cwd, home })
}

#[test]
fn snapshot_at_completes_files_from_the_working_directory() {
    let (_dir, roots) = project();
    let (mut app, _rx) = app();
    app.set_mentions(roots);
    type_text(&mut app, "explain @");
    let labels: Vec<String> = app
        .palette()
        .items
        .iter()
        .map(|i| i.label.clone())
        .collect();
    assert_eq!(
        labels,
        ["README.md", "src/lib.rs", "src/main.rs"],
        "gitignored and hidden files are not offered"
    );
    type_text(&mut app, "ma");
    insta::assert_snapshot!("mention_completion", screen(&mut app, 80, 12));
    app.handle_key(key(KeyCode::Tab));
    assert_eq!(app.input_text(), "explain @src/main.rs ");
    assert!(!app.palette().is_open(), "a space ends the mention");
}

#[test]
fn a_mentioned_file_goes_out_with_the_message_and_shows_as_a_note() {
    let (_dir, roots) = project();
    let (mut app, mut rx) = app();
    app.set_mentions(roots);
    type_text(&mut app, "explain @src/main.rs please");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        drain(&mut rx),
        vec![Op::UserTurn {
            text: "explain @src/main.rs please\n\n[Attached file: src/main.rs · 2 lines]\n\
                   <file path=\"src/main.rs\">\nfn main() {}\n// end\n</file>"
                .into()
        }]
    );
    let cells: Vec<Cell> = app.transcript().cells().cloned().collect();
    assert_eq!(
        cells[cells.len() - 2],
        Cell::User {
            text: "explain @src/main.rs please".into()
        },
        "the transcript shows what was typed"
    );
    assert_eq!(notes(&app), ["attached src/main.rs · 2 lines"]);
}

#[test]
fn a_missing_file_is_an_error_before_sending() {
    let (_dir, roots) = project();
    let (mut app, mut rx) = app();
    app.set_mentions(roots);
    enter(&mut app, "explain @src/mian.rs");
    assert!(drain(&mut rx).is_empty(), "nothing was sent");
    assert!(!app.is_busy());
    assert_eq!(app.input_text(), "explain @src/mian.rs", "kept to fix");
    let note = notes(&app).pop().unwrap();
    assert!(
        note.starts_with("not sent: @src/mian.rs: no such file"),
        "{note}"
    );
}

#[test]
fn a_resumed_message_shows_its_text_and_what_was_attached() {
    let (_dir, roots) = project();
    let expanded =
        agent_loop::mentions::expand("what is @README.md?", &roots.cwd, &roots.home).unwrap();
    let (mut app, _rx) = app();
    app.replay_history(&[agent_loop::model::ChatMessage::user(expanded.text)]);
    let cells: Vec<Cell> = app.transcript().cells().cloned().collect();
    assert_eq!(
        cells[0],
        Cell::User {
            text: "what is @README.md?".into()
        }
    );
    assert_eq!(notes(&app)[0], "attached README.md · 1 line");
}
