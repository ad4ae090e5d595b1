//! The masked prompt: its frame, its keys, and a whole turn through a real
//! session against the mock model, checking where the secret went and where not.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use agent_protocol::{Event, Op};
use knack_config::{Config, KnackHome};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use skill_core::DiscoveryOptions;
use tokio::sync::mpsc::UnboundedReceiver;

use super::SecretSetup;
use crate::tui::app::App;
use crate::tui::connection::SessionInfo;
use crate::tui::history::InputHistory;
use crate::tui::skills::SkillEntry;
use crate::tui::theme::Theme;

/// Long enough to be redacted (8 characters or more), and unlike anything
/// else a test could print.
const SECRET: &str = "wx-7Qp9-secret-value";
const VAR: &str = "SKILL_TEST_WEATHER_TOKEN";

/// A home with one skill that declares `VAR` (surely unset in the test
/// process) and a `.env` holding a comment and another key.
fn home_with_skill() -> (tempfile::TempDir, KnackHome, DiscoveryOptions) {
    let dir = tempfile::tempdir().unwrap();
    let home = KnackHome::at(dir.path().join("home"));
    home.ensure_private().unwrap();
    let skill = home.skills_dir().join("weather/weather-report");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        format!(
            "---\nname: weather-report\ndescription: Use when asked for a forecast\n\
             required_environment_variables:\n  - name: {VAR}\n    prompt: Paste your weather service token\n    \
             help: Create one under Settings > API on the weather service.\n  - name: SKILL_TEST_WEATHER_UNITS\n    optional: true\n---\n\
             # Weather report\nCall the forecast API with the token.\n"
        ),
    )
    .unwrap();
    std::fs::write(home.env_path(), "# my keys\nOTHER_SETTING=1\n").unwrap();
    let cwd = dir.path().join("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    let options = DiscoveryOptions::resolve(&home, &Config::default(), &cwd);
    (dir, home, options)
}

fn info() -> SessionInfo {
    SessionInfo {
        session_id: "20260101-abc123".into(),
        model: "test-model".into(),
        context_window: 0,
        mcp_servers: Vec::new(),
        mode: agent_protocol::ApprovalMode::default(),
    }
}

fn app_for(
    home: &KnackHome,
    options: &DiscoveryOptions,
    ops: tokio::sync::mpsc::UnboundedSender<Op>,
    history: InputHistory,
) -> App {
    let mut app = App::new(ops, info(), Theme::plain(), history);
    let set = skill_core::discover(options).0;
    app.set_skills(SkillEntry::entries_of(&set));
    app.set_secret_setup(SecretSetup::new(home.clone(), options.clone()));
    app
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        app.handle_key(key(KeyCode::Char(c)));
    }
}

fn screen(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| app.render(frame)).unwrap();
    terminal.backend().to_string()
}

fn drain(rx: &mut UnboundedReceiver<Op>) -> Vec<Op> {
    let mut out = Vec::new();
    while let Ok(op) = rx.try_recv() {
        out.push(op);
    }
    out
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn snapshot_masked_prompt_with_typed_characters() {
    let (_dir, home, options) = home_with_skill();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = app_for(&home, &options, tx, InputHistory::in_memory(Vec::new()));
    type_text(&mut app, "/weather-report for Oslo");
    app.handle_key(key(KeyCode::Enter));
    assert!(
        drain(&mut rx).is_empty(),
        "nothing is sent before the prompt is answered"
    );
    type_text(&mut app, "hunter22");
    let frame = screen(&mut app, 80, 20);
    assert!(!frame.contains("hunter22"), "{frame}");
    assert!(frame.contains("••••••••"), "{frame}");
    insta::assert_snapshot!(frame);
}

#[test]
fn a_long_pasted_value_keeps_the_keys_in_view() {
    let (_dir, home, options) = home_with_skill();
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = app_for(&home, &options, tx, InputHistory::in_memory(Vec::new()));
    type_text(&mut app, "/weather-report");
    app.handle_key(key(KeyCode::Enter));
    // Service-account tokens run to thousands of characters.
    app.handle_paste(&"t".repeat(3000));
    let frame = screen(&mut app, 60, 20);
    assert!(frame.contains("3000 characters"), "{frame}");
    assert!(
        frame.contains("esc skips"),
        "the keys are pushed out: {frame}"
    );
    insta::assert_snapshot!(frame);
}

#[test]
fn esc_skips_and_the_skill_is_invoked_without_saving() {
    let (_dir, home, options) = home_with_skill();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = app_for(&home, &options, tx, InputHistory::in_memory(Vec::new()));
    type_text(&mut app, "/weather-report");
    app.handle_key(key(KeyCode::Enter));
    type_text(&mut app, "half-typed");
    app.handle_key(key(KeyCode::Esc));
    match drain(&mut rx).as_slice() {
        [Op::UserTurn { text }] => assert_eq!(text, "/weather-report"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        std::fs::read_to_string(home.env_path()).unwrap(),
        "# my keys\nOTHER_SETTING=1\n"
    );
    let frame = screen(&mut app, 100, 20);
    assert!(frame.contains(&format!("skipped {VAR}")), "{frame}");
    assert!(!frame.contains("half-typed"), "{frame}");
}

#[test]
fn ctrl_c_cancels_and_gives_the_line_back() {
    let (_dir, home, options) = home_with_skill();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = app_for(&home, &options, tx, InputHistory::in_memory(Vec::new()));
    type_text(&mut app, "/skill weather/weather-report now");
    app.handle_key(key(KeyCode::Enter));
    type_text(&mut app, "abc");
    app.handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(drain(&mut rx).is_empty());
    assert_eq!(app.input_text(), "/skill weather/weather-report now");
    assert!(
        !std::fs::read_to_string(home.env_path())
            .unwrap()
            .contains(VAR)
    );
}

#[test]
fn an_empty_value_is_not_saved_and_a_ready_skill_opens_no_prompt() {
    let (_dir, home, options) = home_with_skill();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = app_for(&home, &options, tx, InputHistory::in_memory(Vec::new()));
    type_text(&mut app, "/weather-report");
    app.handle_key(key(KeyCode::Enter));
    app.handle_key(key(KeyCode::Enter));
    assert!(screen(&mut app, 80, 20).contains("type or paste a value"));
    // A pasted key keeps its characters and loses its line break.
    app.handle_paste(&format!("{SECRET}\n"));
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(drain(&mut rx).len(), 1);
    assert!(
        std::fs::read_to_string(home.env_path())
            .unwrap()
            .ends_with(&format!("OTHER_SETTING=1\n{VAR}={SECRET}\n"))
    );
    // Set now: the next invocation goes straight out.
    type_text(&mut app, "/weather-report again");
    app.handle_key(key(KeyCode::Enter));
    match drain(&mut rx).as_slice() {
        [Op::UserTurn { text }] => assert_eq!(text, "/weather-report again"),
        other => panic!("{other:?}"),
    }
}

/// Collects every log line emitted on this thread, at every level.
#[derive(Clone, Default)]
struct LogBuffer(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for LogBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogBuffer {
    type Writer = LogBuffer;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

/// Everything under `dir` whose name starts with `state.db` (the database
/// and its WAL), as bytes.
fn store_bytes(dir: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        if entry.file_name().to_string_lossy().starts_with("state.db") {
            bytes.extend(std::fs::read(entry.path()).unwrap());
        }
    }
    assert!(!bytes.is_empty(), "no state.db under {}", dir.display());
    bytes
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// The whole path through a real session: the skill is invoked in the TUI,
/// the masked prompt takes the value, the turn runs against the mock model
/// (which reads a file holding the value, as a leak would), and the value is
/// in `.env` (0600) and nowhere else: not in a request, the store, the log,
/// the input history or the screen.
#[tokio::test(flavor = "current_thread")]
async fn a_captured_secret_reaches_env_and_nothing_else() {
    let logs = LogBuffer::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(logs.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let (dir, home, options) = home_with_skill();
    let cwd = dir.path().join("cwd");
    std::fs::write(cwd.join("leak.txt"), format!("token={SECRET}\n")).unwrap();
    let server = test_support::MockModelServer::start().await.unwrap();
    server.enqueue(test_support::ScriptedReply::tool_calls([(
        "call-1",
        "read_file",
        r#"{"path": "leak.txt"}"#,
    )]));
    server.enqueue(test_support::ScriptedReply::text("The forecast is sunny."));

    let config = Config::default();
    let client: Arc<dyn agent_loop::model::ModelClient> = Arc::new(
        agent_loop::model::ChatCompletionsClient::new(agent_loop::model::ClientSettings::new(
            server.base_url(),
        ))
        .unwrap(),
    );
    let (events, events_rx) = agent_loop::session::EventSink::channel();
    let session_options = agent_loop::session::SessionOptions {
        review: false,
        ..agent_loop::session::SessionOptions::new(
            home.clone(),
            config,
            cwd.clone(),
            prompt_builder::Platform::Tui,
            "mock-model",
        )
    };
    let session = agent_loop::session::Session::launch(session_options, client, events)
        .await
        .unwrap();
    let mut handle = agent_loop::session::spawn_session(session, events_rx, None);

    let history_path = dir.path().join("history");
    let mut app = app_for(
        &home,
        &options,
        handle.ops.clone(),
        InputHistory::load(&history_path),
    );
    type_text(&mut app, "/weather-report for Oslo");
    app.handle_key(key(KeyCode::Enter));
    let frame = screen(&mut app, 100, 24);
    assert!(frame.contains(VAR), "{frame}");
    assert!(
        frame.contains("Paste your weather service token"),
        "{frame}"
    );
    assert!(frame.contains("Settings > API"), "{frame}");
    type_text(&mut app, SECRET);
    assert!(!screen(&mut app, 100, 24).contains(SECRET));
    app.handle_key(key(KeyCode::Enter));

    // Bounded by the session: it answers once, then the turn completes.
    loop {
        let event = handle.events.recv().await.expect("the session ended early");
        let done = matches!(event, Event::TurnComplete | Event::Error { .. });
        app.handle_agent_event(event);
        if done {
            break;
        }
    }
    let _ = handle.ops.send(Op::Shutdown);

    // .env: the value, owner-only, the other lines kept.
    let env = std::fs::read_to_string(home.env_path()).unwrap();
    assert_eq!(env, format!("# my keys\nOTHER_SETTING=1\n{VAR}={SECRET}\n"));
    assert_eq!(mode(&home.env_path()), 0o600);

    // The requests: the skill went out without a setup note, the file read
    // came back redacted, and the value is in none of them.
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2, "one turn, one tool call");
    let first = &requests[0].raw_body;
    assert!(
        first.contains("Call the forecast API with the token."),
        "{first}"
    );
    assert!(
        !first.contains("Setup needed"),
        "the variable was set: {first}"
    );
    assert!(
        requests[1]
            .raw_body
            .contains(&format!("token=[REDACTED:{VAR}]")),
        "{}",
        requests[1].raw_body
    );
    for request in &requests {
        assert!(
            !request.raw_body.contains(SECRET),
            "sent: {}",
            request.raw_body
        );
    }
    assert!(server.take_violations().is_empty());

    // The store, the log, the input history and the screen.
    assert!(!contains(&store_bytes(home.root()), SECRET), "in state.db");
    let log = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    // Only the absence is asserted: which callsites reach a thread-scoped
    // subscriber depends on tracing's global interest cache, which tests on
    // other threads share. The log file itself is checked end to end
    // (tests/cli/skill_secrets.rs, tests/tui/tmux_e2e.sh).
    assert!(!log.contains(SECRET), "{log}");
    let history = std::fs::read_to_string(&history_path).unwrap_or_default();
    assert!(history.contains("/weather-report for Oslo"), "{history}");
    assert!(!history.contains(SECRET), "{history}");
    let frame = screen(&mut app, 100, 30);
    assert!(frame.contains("The forecast is sunny."), "{frame}");
    assert!(frame.contains(&format!("saved {VAR} to")), "{frame}");
    assert!(!frame.contains(SECRET), "{frame}");
}
