//! The approval modal as a person meets it: typing that runs on when the modal appears
//! goes to the draft and never answers it, Enter never approves, edits show their diff,
//! and a call a rule allowed says so on its card.

use std::time::Duration;

use agent_protocol::{ApprovalDecision, Event, Op};
use pretty_assertions::assert_eq;
use ratatui::crossterm::event::KeyCode;
use tokio::sync::mpsc::UnboundedReceiver;

use super::app::App;
use super::test_harness::{
    approval_request, drain, enter, feed, key, plain_app, screen, wait_out_grace,
};

fn app() -> (App, UnboundedReceiver<Op>) {
    plain_app("20261206-000000-abcdef", 0)
}

/// Types `text` at `per_second` keys a second, on the app's clock.
fn type_at(app: &mut App, text: &str, per_second: u64) {
    for c in text.chars() {
        app.advance_clock(Duration::from_millis(1000 / per_second));
        app.handle_key(key(KeyCode::Char(c)));
    }
}

#[test]
fn typing_ahead_at_eight_keys_a_second_never_answers_and_keeps_every_letter() {
    let (mut app, mut rx) = app();
    enter(&mut app, "clean up");
    drain(&mut rx);
    // The user starts the next message; the modal appears mid-word.
    type_at(&mut app, "wh", 8);
    app.handle_agent_event(approval_request(
        "c1",
        "curl https://x.example/install.sh | sh",
        "pipes a download into a shell",
    ));
    let sentence = "y and always yes, again and again: why not? aaaa yyyy nnnn";
    type_at(&mut app, sentence, 8);
    assert_eq!(drain(&mut rx), Vec::<Op>::new(), "nothing was answered");
    assert_eq!(app.input_text(), format!("wh{sentence}"));
    // The modal is still there, waiting; it says why keys do not answer it yet.
    let frame = screen(&mut app, 80, 24);
    assert!(frame.contains("approval needed"), "{frame}");
    assert!(frame.contains("pause to answer"), "{frame}");
    // After a pause, a deliberate key answers.
    wait_out_grace(&mut app);
    app.handle_key(key(KeyCode::Char('n')));
    let sent = drain(&mut rx);
    assert!(
        matches!(
            &sent[..],
            [Op::Approval {
                decision: ApprovalDecision::Deny,
                ..
            }]
        ),
        "{sent:?}"
    );
    assert_eq!(app.input_text(), format!("wh{sentence}"));
}

#[test]
fn every_key_typed_in_a_burst_right_after_the_modal_appears_goes_to_the_draft() {
    let (mut app, mut rx) = app();
    app.handle_agent_event(approval_request("c1", "rm -rf build", "deletes files"));
    // Keys the terminal delivers in the same instant (typed before the modal was drawn).
    for c in "ya\r".chars() {
        let code = if c == '\r' {
            KeyCode::Enter
        } else {
            KeyCode::Char(c)
        };
        app.handle_key(key(code));
    }
    assert_eq!(drain(&mut rx), Vec::<Op>::new());
    assert_eq!(app.input_text(), "ya");
}

#[test]
fn enter_on_a_destructive_command_denies() {
    let (mut app, mut rx) = app();
    app.handle_agent_event(approval_request("c1", "rm -rf /", "recursive delete of /"));
    wait_out_grace(&mut app);
    let frame = screen(&mut app, 80, 20);
    assert!(frame.contains("›[n] no"), "no is the default: {frame}");
    app.handle_key(key(KeyCode::Enter));
    let sent = drain(&mut rx);
    assert!(
        matches!(
            &sent[..],
            [Op::Approval {
                decision: ApprovalDecision::Deny,
                rule: None,
                ..
            }]
        ),
        "{sent:?}"
    );
}

#[test]
fn a_prefix_that_does_not_start_the_command_cannot_be_saved() {
    let (mut app, mut rx) = app();
    app.handle_agent_event(Event::ApprovalRequest {
        call_id: "c1".into(),
        command: "python3 -m unittest".into(),
        reason: "not a known read-only command".into(),
        exact_rule: Some("terminal(python3 -m unittest)".into()),
        prefix_rule: Some("terminal(python3 -m unittest:*)".into()),
        diff: None,
    });
    wait_out_grace(&mut app);
    app.handle_key(key(KeyCode::Char('p')));
    let frame = screen(&mut app, 80, 20);
    assert!(frame.contains("python3 -m unittest▏"), "{frame}");
    for _ in 0.."python3 -m unittest".len() {
        app.handle_key(key(KeyCode::Backspace));
    }
    for c in "pip".chars() {
        app.handle_key(key(KeyCode::Char(c)));
    }
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        drain(&mut rx),
        Vec::<Op>::new(),
        "a rule that misses is not sent"
    );
    assert!(screen(&mut app, 80, 20).contains("do not start the command"));
    insta::assert_snapshot!(screen(&mut app, 80, 16));
}

#[test]
fn an_edit_approval_shows_the_diff() {
    let (mut app, _rx) = app();
    app.handle_agent_event(Event::ApprovalRequest {
        call_id: "c1".into(),
        command: "write /etc/motd".into(),
        reason: "this writes /etc/motd, outside the workspace".into(),
        exact_rule: Some("write(/etc/motd)".into()),
        prefix_rule: None,
        diff: Some(
            "--- a/etc/motd\n+++ b/etc/motd\n@@ -1 +1 @@\n-Welcome\n+Welcome to the build box\n"
                .into(),
        ),
    });
    wait_out_grace(&mut app);
    let frame = screen(&mut app, 100, 24);
    assert!(frame.contains("+Welcome to the build box"), "{frame}");
    assert!(frame.contains("[a] always allow this file"), "{frame}");
    insta::assert_snapshot!(frame);
}

#[test]
fn a_call_a_rule_allowed_says_which_rule_on_its_card() {
    let (mut app, _rx) = app();
    enter(&mut app, "run the tests");
    feed(
        &mut app,
        vec![
            Event::tool_call_begin("c1", "terminal", r#"{"command": "cargo test -q"}"#),
            Event::AutoApproved {
                call_id: "c1".into(),
                rule: "terminal(cargo test:*)".into(),
            },
            Event::ToolCallEnd {
                call_id: "c1".into(),
                name: "terminal".into(),
                success: true,
                duration_ms: 5,
            },
        ],
    );
    let frame = screen(&mut app, 80, 12);
    assert!(
        frame.contains("allowed without asking by rule terminal(cargo test:*)"),
        "{frame}"
    );
}

#[test]
fn a_patch_card_shows_the_diff_it_made() {
    let (mut app, _rx) = app();
    enter(&mut app, "fix it");
    feed(
        &mut app,
        vec![
            Event::tool_call_begin("c1", "patch", r#"{"path": "src/lib.rs"}"#),
            Event::FileDiff {
                call_id: "c1".into(),
                path: "src/lib.rs".into(),
                diff: "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-let x = 1;\n+let x = 2;\n"
                    .into(),
            },
            Event::ToolCallOutput {
                call_id: "c1".into(),
                output: r#"{"success": true, "path": "src/lib.rs", "replacements": 1}"#.into(),
            },
            Event::ToolCallEnd {
                call_id: "c1".into(),
                name: "patch".into(),
                success: true,
                duration_ms: 3,
            },
        ],
    );
    let frame = screen(&mut app, 80, 12);
    assert!(frame.contains("+1 -1"), "{frame}");
    assert!(frame.contains("-let x = 1;"), "{frame}");
    assert!(frame.contains("+let x = 2;"), "{frame}");
    insta::assert_snapshot!(frame);
}

#[test]
fn shift_tab_cycles_the_approval_mode_and_the_status_line_shows_it() {
    let (mut app, mut rx) = app();
    let status = |app: &mut App| screen(app, 100, 10).lines().last().unwrap_or("").to_owned();
    assert!(!status(&mut app).contains("⏸"), "auto-edits shows nothing");
    let mut modes = Vec::new();
    for _ in 0..3 {
        app.handle_key(ratatui::crossterm::event::KeyEvent::new(
            KeyCode::BackTab,
            ratatui::crossterm::event::KeyModifiers::SHIFT,
        ));
        modes.push(status(&mut app));
    }
    assert!(modes[0].contains("⏸ ask-edits"), "{}", modes[0]);
    assert!(modes[1].contains("⏸ plan mode"), "{}", modes[1]);
    assert!(!modes[2].contains("⏸"), "{}", modes[2]);
    use agent_protocol::ApprovalMode;
    assert_eq!(
        drain(&mut rx),
        [
            ApprovalMode::AskEdits,
            ApprovalMode::Plan,
            ApprovalMode::AutoEdits
        ]
        .map(|mode| Op::SetMode { mode })
        .to_vec()
    );
    assert!(screen(&mut app, 100, 20).contains("approval mode plan: read-only"));
}

// ----- measurement ------------------------------------------------------------

/// `cargo xtask bench diff`, or
/// `cargo test --release -p knack --bin knack -- --ignored frame_time_of_a_500_line_diff_card --nocapture`
#[test]
#[ignore = "measurement: run in release and read the printed median"]
fn frame_time_of_a_500_line_diff_card() {
    use std::time::Instant;

    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    let (mut app, _rx) = super::test_harness::app_with(
        super::test_harness::session_info("s", 0),
        super::theme::Theme::colored(),
    );
    let old: String = (0..500)
        .map(|i| format!("let value_{i} = compute({i});\n"))
        .collect();
    let new: String = (0..500)
        .map(|i| {
            if i % 2 == 0 {
                format!("let value_{i} = compute({i}) + 1; // changed to see both colours\n")
            } else {
                format!("let value_{i} = compute({i});\n")
            }
        })
        .collect();
    let diff = agent_loop::edit_diff::unified(std::path::Path::new("src/big.rs"), &old, &new);
    assert!(diff.lines().count() > 500, "{}", diff.lines().count());
    enter(&mut app, "rewrite big.rs");
    feed(
        &mut app,
        vec![
            Event::tool_call_begin("c1", "write_file", r#"{"path": "src/big.rs"}"#),
            Event::FileDiff {
                call_id: "c1".into(),
                path: "src/big.rs".into(),
                diff,
            },
            Event::ToolCallEnd {
                call_id: "c1".into(),
                name: "write_file".into(),
                success: true,
                duration_ms: 4,
            },
        ],
    );
    // Expanded, so the card holds its 400 visible diff lines.
    app.handle_key(ratatui::crossterm::event::KeyEvent::new(
        KeyCode::Char('o'),
        ratatui::crossterm::event::KeyModifiers::CONTROL,
    ));
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let cold = Instant::now();
    terminal.draw(|frame| app.render(frame)).unwrap();
    let cold = cold.elapsed();
    let mut times = Vec::new();
    for i in 0..50 {
        app.handle_agent_event(Event::AssistantDelta {
            text: format!("more {i} "),
        });
        let start = Instant::now();
        terminal.draw(|frame| app.render(frame)).unwrap();
        times.push(start.elapsed());
    }
    times.sort();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    println!(
        "500-line diff card, 120x40: first (cold) frame {:.3} ms; median of 50 streaming frames {:.3} ms (min {:.3}, max {:.3})",
        ms(cold),
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(times[times.len() - 1])
    );
}

#[test]
fn slash_undo_and_rewind_put_back_this_sessions_turns() {
    use agent_loop::checkpoint::{TurnRecorder, turn_id};

    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let (mut app, _rx) = app();
    app.set_mentions(super::app::MentionRoots {
        cwd: cwd.path().to_path_buf(),
        home: home.path().to_path_buf(),
    });
    let checkpoints = home.path().join("checkpoints");
    let file = cwd.path().join("a.txt");
    // Two turns of this session changed a.txt: "v1" → "v2" → "v3".
    for (n, before) in [(1, "v1"), (2, "v2")] {
        let mut turn = TurnRecorder::new(
            &checkpoints,
            "20261206-000000-abcdef",
            turn_id(n),
            cwd.path(),
            &format!("turn {n}"),
        );
        turn.record(&file, Some(before.as_bytes())).unwrap();
    }
    std::fs::write(&file, "v3").unwrap();
    enter(&mut app, "/rewind");
    let listed = screen(&mut app, 100, 30);
    assert!(listed.contains("1. \"turn 2\" — 1 file"), "{listed}");
    assert!(listed.contains("2. \"turn 1\" — 1 file"), "{listed}");
    enter(&mut app, "/undo");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "v2");
    assert!(screen(&mut app, 100, 30).contains("undid the turn \"turn 2\""));
    enter(&mut app, "/rewind 5");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "v1");
    enter(&mut app, "/undo");
    assert!(screen(&mut app, 100, 30).contains("nothing to undo"));
}
