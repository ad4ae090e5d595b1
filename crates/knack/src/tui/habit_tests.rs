//! Keys and flows users bring from other agents, without a terminal: Ctrl-D with a
//! draft, messages queued while an answer streams, Esc, Ctrl-R, `/clear`, and the
//! skills browser's ranking; as `TestBackend` snapshots and the `Op`s sent.

use agent_protocol::{Event, Op, TurnAbortReason};
use pretty_assertions::assert_eq;
use ratatui::crossterm::event::KeyCode;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use super::app::{App, TuiExit};
use super::history::InputHistory;
use super::skills::SkillEntry;
use super::test_harness::{
    ctrl, drain, enter, feed, key, plain_app, screen, session_info, type_text,
};
use super::theme::Theme;
use super::transcript::Cell;

fn app() -> (App, UnboundedReceiver<Op>) {
    plain_app("20260301-000001", 0)
}

fn app_with_history(entries: &[&str]) -> (App, UnboundedReceiver<Op>) {
    let (tx, rx) = unbounded_channel();
    let history = InputHistory::in_memory(entries.iter().map(|e| (*e).to_owned()).collect());
    (
        App::new(
            tx,
            session_info("20260301-000001", 0),
            Theme::plain(),
            history,
        ),
        rx,
    )
}

/// The transcript as (kind, text) pairs, notes left out.
fn conversation(app: &App) -> Vec<(&'static str, String)> {
    app.transcript()
        .cells()
        .filter_map(|cell| match cell {
            Cell::User { text } => Some(("user", text.clone())),
            Cell::Assistant { text, .. } => Some(("assistant", text.clone())),
            _ => None,
        })
        .collect()
}

fn delta(text: &str) -> Event {
    Event::AssistantDelta { text: text.into() }
}

fn message(text: &str) -> Event {
    Event::AssistantMessage { text: text.into() }
}

// ----- Ctrl-D and drafts --------------------------------------------------------

#[test]
fn ctrl_d_with_a_draft_keeps_it_and_quits_only_from_an_empty_input() {
    let (mut app, mut rx) = app();
    type_text(&mut app, "half a thought");
    app.handle_key(ctrl('d'));
    assert_eq!(app.take_exit(), None, "a draft is never quit away");
    assert!(
        app.input_text().starts_with("half a thought"),
        "{}",
        app.input_text()
    );
    let text = screen(&mut app, 80, 10);
    assert!(text.contains("ctrl-d quits from an empty input"), "{text}");
    assert_eq!(drain(&mut rx), vec![]);

    app.handle_key(ctrl('u'));
    assert_eq!(app.input_text(), "");
    app.handle_key(ctrl('d'));
    assert_eq!(app.take_exit(), Some(TuiExit::Quit));
    assert_eq!(drain(&mut rx), vec![Op::Shutdown]);
}

#[test]
fn a_cleared_draft_comes_back_with_up() {
    let (mut app, _rx) = app();
    type_text(&mut app, "do not lose me");
    app.handle_key(ctrl('c'));
    assert_eq!(app.input_text(), "");
    app.handle_key(key(KeyCode::Up));
    assert_eq!(app.input_text(), "do not lose me");
    // A recalled entry cleared again is not recorded twice.
    app.handle_key(ctrl('u'));
    app.handle_key(key(KeyCode::Up));
    app.handle_key(key(KeyCode::Up));
    assert_eq!(app.input_text(), "do not lose me");
}

// ----- messages sent while an answer streams -----------------------------------

#[test]
fn snapshot_a_message_queued_while_the_answer_streams_waits_for_its_turn() {
    let (mut app, mut rx) = app();
    enter(&mut app, "first question");
    feed(&mut app, vec![delta("The answer "), delta("begins")]);
    enter(&mut app, "second question");
    assert_eq!(app.input_text(), "", "the queued message left the input");
    insta::assert_snapshot!("queued_while_streaming", screen(&mut app, 60, 12));
    assert_eq!(
        conversation(&app),
        [
            ("user", "first question".to_owned()),
            ("assistant", "The answer begins".to_owned()),
        ]
    );

    feed(
        &mut app,
        vec![
            delta(" and ends."),
            message("The answer begins and ends."),
            Event::TurnComplete,
            delta("Second "),
            delta("answer."),
            message("Second answer."),
            Event::TurnComplete,
        ],
    );
    assert_eq!(
        conversation(&app),
        [
            ("user", "first question".to_owned()),
            ("assistant", "The answer begins and ends.".to_owned()),
            ("user", "second question".to_owned()),
            ("assistant", "Second answer.".to_owned()),
        ],
        "in order, each answer once, nothing partial left"
    );
    assert!(!app.is_busy());
    let sent: Vec<Op> = drain(&mut rx);
    assert_eq!(
        sent,
        vec![
            Op::UserTurn {
                text: "first question".into()
            },
            Op::UserTurn {
                text: "second question".into()
            },
        ]
    );
    let text = screen(&mut app, 60, 12);
    assert!(!text.contains("queued"), "{text}");
}

#[test]
fn a_note_in_the_middle_of_an_answer_does_not_split_it() {
    let (mut app, _rx) = app();
    enter(&mut app, "go");
    feed(&mut app, vec![delta("Part one, ")]);
    enter(&mut app, "/sessions");
    feed(
        &mut app,
        vec![
            delta("part two."),
            message("Part one, part two."),
            Event::TurnComplete,
        ],
    );
    assert_eq!(
        conversation(&app),
        [
            ("user", "go".to_owned()),
            ("assistant", "Part one, part two.".to_owned()),
        ]
    );
}

#[test]
fn an_interrupted_turn_lets_the_queued_message_start() {
    let (mut app, _rx) = app();
    enter(&mut app, "long one");
    feed(&mut app, vec![delta("partial")]);
    enter(&mut app, "next one");
    feed(
        &mut app,
        vec![Event::TurnAborted {
            reason: TurnAbortReason::Interrupted,
        }],
    );
    assert!(app.is_busy(), "the queued message runs now");
    assert_eq!(
        conversation(&app),
        [
            ("user", "long one".to_owned()),
            ("assistant", "partial".to_owned()),
            ("user", "next one".to_owned()),
        ]
    );
}

// ----- Esc, /clear --------------------------------------------------------------

#[test]
fn esc_interrupts_a_running_turn_and_does_nothing_when_idle() {
    let (mut app, mut rx) = app();
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(drain(&mut rx), vec![]);
    enter(&mut app, "long task");
    drain(&mut rx);
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(drain(&mut rx), vec![Op::Interrupt]);
}

#[test]
fn esc_first_lets_go_of_a_selected_card() {
    let (mut app, mut rx) = app();
    enter(&mut app, "run it");
    drain(&mut rx);
    app.handle_agent_event(Event::tool_call_begin(
        "c1",
        "terminal",
        r#"{"command":"make"}"#,
    ));
    app.handle_key(ratatui::crossterm::event::KeyEvent::new(
        KeyCode::Up,
        ratatui::crossterm::event::KeyModifiers::ALT,
    ));
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(drain(&mut rx), vec![], "the first esc clears the selection");
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(drain(&mut rx), vec![Op::Interrupt]);
}

#[test]
fn clear_starts_a_new_session_like_new() {
    let (mut app, mut rx) = app();
    enter(&mut app, "/clear");
    assert_eq!(app.take_exit(), Some(TuiExit::NewSession));
    assert_eq!(drain(&mut rx), vec![Op::Shutdown]);
}

// ----- Ctrl-R -------------------------------------------------------------------

#[test]
fn snapshot_ctrl_r_finds_older_messages_and_esc_returns_to_the_draft() {
    let (mut app, mut rx) = app_with_history(&[
        "deploy to staging",
        "fix the flaky test",
        "deploy to production",
    ]);
    type_text(&mut app, "my draft");
    app.handle_key(ctrl('r'));
    type_text(&mut app, "deploy");
    insta::assert_snapshot!("history_search", screen(&mut app, 60, 8));
    app.handle_key(ctrl('r'));
    let text = screen(&mut app, 60, 8);
    assert!(text.contains("deploy to staging"), "{text}");
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(app.input_text(), "my draft");

    app.handle_key(ctrl('r'));
    type_text(&mut app, "flaky");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(app.input_text(), "fix the flaky test");
    assert_eq!(
        drain(&mut rx),
        vec![],
        "enter takes the match, it does not send"
    );
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        drain(&mut rx),
        vec![Op::UserTurn {
            text: "fix the flaky test".into()
        }]
    );
}

#[test]
fn ctrl_r_without_a_match_says_so_and_keeps_the_draft() {
    let (mut app, _rx) = app_with_history(&["one"]);
    type_text(&mut app, "draft");
    app.handle_key(ctrl('r'));
    type_text(&mut app, "zzz");
    let text = screen(&mut app, 60, 8);
    assert!(text.contains("no match"), "{text}");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(app.input_text(), "draft");
}

// ----- the skills browser ranks like the palette -------------------------------

fn skill(name: &str, category: &str, description: &str) -> SkillEntry {
    SkillEntry {
        name: name.into(),
        id: format!("{category}/{name}"),
        qualified_id: format!("user:{category}/{name}"),
        category: Some(category.into()),
        description: description.into(),
        scope: "user".into(),
        skill_md: format!("skills/{category}/{name}/SKILL.md").into(),
        skill_dir: format!("skills/{category}/{name}").into(),
        user_invocable: true,
    }
}

#[test]
fn snapshot_typing_a_skill_name_in_the_browser_puts_it_first() {
    let (mut app, _rx) = app();
    app.set_skills(vec![
        skill(
            "decision-record",
            "docs",
            "Use when recording a decision and whether the weather changed it",
        ),
        skill("forecast-weather-map", "maps", "Use when drawing maps"),
        skill("weather", "weather", "Use when asked about the weather"),
        skill(
            "weekly-report",
            "work",
            "Use when writing the weekly report",
        ),
    ]);
    enter(&mut app, "/skills");
    type_text(&mut app, "weather");
    insta::assert_snapshot!("browser_ranked", screen(&mut app, 100, 14));
    // Enter opens the top match: the skill named exactly so.
    app.handle_key(key(KeyCode::Enter));
    app.handle_key(key(KeyCode::Tab));
    assert_eq!(app.input_text(), "/skill weather/weather ");
}

// ----- totals carried over, and the summary at exit ----------------------------

#[test]
fn a_resumed_sessions_totals_count_on_and_the_exit_summary_says_how_to_come_back() {
    let (mut app, _rx) = app();
    let stored = agent_loop::UsageTotals {
        requests: 3,
        fresh_input_tokens: 600,
        cache_read_tokens: 1_000,
        cache_write_tokens: 400,
        output_tokens: 300,
        cost_usd: Some(0.01),
        priced_requests: 3,
        ..Default::default()
    };
    app.set_prior_usage(super::status::TokenTotals::from_stored(&stored));
    // A compaction's request reports its usage like any other.
    feed(
        &mut app,
        vec![
            Event::Usage {
                prompt_tokens: 2_000,
                completion_tokens: 200,
                cached_tokens: 1_000,
                cache_write_tokens: 0,
                cost_usd: Some(0.005),
            },
            Event::Compaction {
                before_tokens: 2_000,
                after_tokens: 500,
            },
        ],
    );
    let status = screen(&mut app, 100, 6);
    assert!(status.contains("4.0k in / 500 out"), "{status}");
    assert!(status.contains("$0.0150"), "{status}");
    let summary = app.exit_summary();
    for part in [
        "session 20260301-000001",
        "4.0k tokens in, 500 out",
        "50% of the input from the cache",
        "$0.0150",
        "knack chat --resume 20260301-000001",
    ] {
        assert!(summary.contains(part), "{part:?} missing: {summary}");
    }
}
