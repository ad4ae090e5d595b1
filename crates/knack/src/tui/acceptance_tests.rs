//! What a first session in a real terminal ran into, pinned down without one:
//! dialogs that cut off their own keys on small screens, a help page taller
//! than the terminal, text that ran off the edge, answers drawn out of view.

use agent_loop::SessionSummary;
use agent_protocol::{Event, Op};
use pretty_assertions::assert_eq;
use ratatui::crossterm::event::KeyCode;
use tokio::sync::mpsc::UnboundedReceiver;

use super::app::App;
use super::test_harness::{enter, key, plain_app, screen, wait_out_grace};

/// A real id: the part after the time is what tells sessions apart.
const SESSION: &str = "20261202-021137-a6cd51";

fn app() -> (App, UnboundedReceiver<Op>) {
    plain_app(SESSION, 0)
}

/// The request a model makes when a command must leave the sandbox: the
/// terminal tool puts the justification on a line of its own.
fn outside_sandbox_request() -> Event {
    Event::ApprovalRequest {
        call_id: "c1".into(),
        command: "apt-get install -y libssl-dev\n(outside the sandbox: the build needs the \
                  system's OpenSSL headers, which the sandbox cannot install)"
            .into(),
        reason: "the command asks to run outside the sandbox, with the user's full rights".into(),
        exact_rule: Some("outside_sandbox(apt-get install -y libssl-dev)".into()),
        prefix_rule: None,
        diff: None,
    }
}

#[test]
fn the_approval_dialog_shows_every_choice_when_its_text_wraps() {
    let (mut app, _rx) = app();
    enter(&mut app, "install the headers");
    app.handle_agent_event(outside_sandbox_request());
    wait_out_grace(&mut app);
    let frame = screen(&mut app, 60, 20);
    assert!(frame.contains("[n] no"), "{frame}");
    assert!(frame.contains("[t] no, and tell the model why"), "{frame}");
    assert!(
        !frame.contains("[p]"),
        "a run outside the sandbox is never offered a prefix: {frame}"
    );
    assert!(
        !frame.contains("libssl-dev("),
        "the justification runs into the command: {frame}"
    );
    insta::assert_snapshot!(frame);
}

#[test]
fn an_approval_too_tall_for_the_screen_cuts_the_command_not_the_choices() {
    let (mut app, _rx) = app();
    let script: String = (1..=30).map(|i| format!("echo step {i}\n")).collect();
    app.handle_agent_event(Event::ApprovalRequest {
        call_id: "c1".into(),
        command: script.trim_end().into(),
        reason: "matches the destructive-command list".into(),
        exact_rule: Some("terminal(x)".into()),
        prefix_rule: None,
        diff: None,
    });
    let frame = screen(&mut app, 80, 16);
    assert!(frame.contains("$ echo step 1 "), "{frame}");
    assert!(frame.contains('…'), "the cut is marked: {frame}");
    for choice in ["[y] yes", "[a] always", "[n] no", "[t] no, and tell"] {
        assert!(frame.contains(choice), "{choice} is cut off: {frame}");
    }
}

#[test]
fn help_scrolls_to_the_commands_on_an_80_by_24_terminal() {
    let (mut app, _rx) = app();
    enter(&mut app, "/help");
    let top = screen(&mut app, 80, 24);
    assert!(
        !top.contains("/quit"),
        "the page should not fit here, or this test proves nothing"
    );
    assert!(top.contains("scroll"), "the frame says it scrolls: {top}");
    app.handle_key(key(KeyCode::End));
    let bottom = screen(&mut app, 80, 24);
    assert!(bottom.contains("/quit"), "{bottom}");
    insta::assert_snapshot!(bottom);
    app.handle_key(key(KeyCode::Home));
    assert_eq!(screen(&mut app, 80, 24), top);
    app.handle_key(key(KeyCode::Esc));
    assert!(!screen(&mut app, 80, 24).contains("┌ help"));
}

#[test]
fn help_wraps_its_descriptions_on_a_narrow_terminal() {
    let (mut app, _rx) = app();
    enter(&mut app, "/help");
    // Far enough down that the wrapped descriptions of the keys show.
    for _ in 0..8 {
        app.handle_key(key(KeyCode::Down));
    }
    let frame = screen(&mut app, 60, 20);
    // The end of a description that used to be cut at the frame.
    assert!(frame.contains("  thinking "), "{frame}");
    insta::assert_snapshot!(frame);
}

#[test]
fn the_welcome_text_wraps_on_a_narrow_terminal() {
    let (mut app, _rx) = app();
    let frame = screen(&mut app, 40, 12);
    for words in ["lists commands and skills,", "every key."] {
        assert!(frame.contains(words), "{words} cut off: {frame}");
    }
    insta::assert_snapshot!(frame);
}

#[test]
fn the_status_line_shows_the_whole_session_id() {
    let (mut app, _rx) = app();
    let frame = screen(&mut app, 120, 8);
    assert!(frame.contains(&format!("session {SESSION} │")), "{frame}");
}

#[test]
fn a_command_run_while_scrolled_up_shows_its_answer() {
    let (mut app, _rx) = app();
    for i in 0..40 {
        app.handle_agent_event(Event::AssistantDelta {
            text: format!("old line {i}\n\n"),
        });
    }
    app.handle_agent_event(Event::TurnComplete);
    // A page is as tall as the last frame drew it.
    assert!(screen(&mut app, 60, 16).contains("old line 39"));
    app.handle_key(key(KeyCode::PageUp));
    app.handle_key(key(KeyCode::PageUp));
    assert!(!screen(&mut app, 60, 16).contains("old line 39"));
    enter(&mut app, "/nosuch");
    let frame = screen(&mut app, 60, 16);
    assert!(
        frame.contains("no command or skill named /nosuch"),
        "{frame}"
    );
}

#[test]
fn a_card_with_one_more_line_says_line() {
    let (mut app, _rx) = app();
    for event in [
        Event::tool_call_begin("c1", "terminal", r#"{"command":"seq 4"}"#),
        Event::ToolCallOutput {
            call_id: "c1".into(),
            output: "1\n2\n3\n4\n".into(),
        },
        Event::ToolCallEnd {
            call_id: "c1".into(),
            name: "terminal".into(),
            success: true,
            duration_ms: 5,
        },
    ] {
        app.handle_agent_event(event);
    }
    let frame = screen(&mut app, 60, 16);
    assert!(frame.contains("… 1 more line (ctrl-o expands)"), "{frame}");
}

#[test]
fn the_session_picker_keeps_in_use_visible_on_a_narrow_terminal() {
    let (mut app, _rx) = app();
    let session = |id: &str, title: &str| SessionSummary {
        id: id.into(),
        started_at: "2026-12-02T02:11:37Z".into(),
        title: Some(title.into()),
        model: "a-model-with-a-long-name".into(),
        message_count: 12,
    };
    let sessions = vec![
        session(SESSION, "Plan the release of the new parser"),
        session("20261202-021000-0b1c2d", "Fix the flaky build"),
    ];
    app.set_session_list(Box::new(move || Ok(sessions.clone())));
    enter(&mut app, "/resume");
    let frame = screen(&mut app, 60, 12);
    let current = frame
        .lines()
        .find(|l| l.contains("Plan the"))
        .unwrap_or_default();
    assert!(current.contains("in use"), "{frame}");
}
