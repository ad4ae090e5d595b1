//! TUI tests without a terminal: snapshots of a `TestBackend`, and component
//! tests that feed keys and agent events and check the `Op`s that come out.

use std::time::Instant;

use agent_protocol::{ApprovalDecision, Event, Op, SkillLoadVia, TurnAbortReason};
use pretty_assertions::assert_eq;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{
    Event as TermEvent, KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind,
};
use serde_json::json;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use super::app::{App, TuiExit};
use super::connection::{SessionInfo, echo};
use super::history::InputHistory;
use super::skills::SkillEntry;
use super::test_harness::{
    self as harness, ctrl, drain, draw, feed, key, screen, type_text, wait_out_grace,
};
use super::theme::Theme;
use super::transcript::Cell;

fn info() -> SessionInfo {
    harness::session_info("20260101-abc123", 0)
}

fn app_with(theme: Theme) -> (App, UnboundedReceiver<Op>) {
    harness::app_with(info(), theme)
}

fn app() -> (App, UnboundedReceiver<Op>) {
    app_with(Theme::plain())
}

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

fn sample_skills() -> Vec<SkillEntry> {
    vec![
        skill(
            "deploy-k8s",
            "devops",
            "Use when shipping a service to Kubernetes",
        ),
        skill(
            "release-notes",
            "devops",
            "Use when drafting release notes from git",
        ),
        skill("review-pr", "git", "Use when reviewing a pull request"),
        skill("write-skill", "meta", "Use when writing a new knack skill"),
    ]
}

fn deltas(text: &str, size: usize) -> Vec<Event> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(size)
        .map(|c| Event::AssistantDelta {
            text: c.iter().collect(),
        })
        .collect()
}

const ANSWER: &str = "## Plan\n\nRun the **tests** first, then `cargo fmt`:\n\n\
1. build the crate\n2. run *every* test\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\nDone.";

// ----- snapshots --------------------------------------------------------------

#[test]
fn snapshot_empty_session() {
    let (mut app, _rx) = app();
    insta::assert_snapshot!(screen(&mut app, 80, 16));
}

#[test]
fn snapshot_streamed_answer_with_code_block() {
    let (mut app, _rx) = app();
    type_text(&mut app, "How do I check my change?");
    app.handle_key(key(KeyCode::Enter));
    feed(&mut app, deltas(ANSWER, 7));
    feed(
        &mut app,
        vec![Event::Usage {
            prompt_tokens: 2400,
            completion_tokens: 120,
            cached_tokens: 1800,
            cache_write_tokens: 0,
            cost_usd: None,
        }],
    );
    insta::assert_snapshot!(screen(&mut app, 80, 26));
}

#[test]
fn snapshot_running_and_finished_tool_calls() {
    let (mut app, _rx) = app();
    type_text(&mut app, "list the repo");
    app.handle_key(key(KeyCode::Enter));
    feed(
        &mut app,
        vec![
            Event::SkillLoaded {
                name: "repo-tour".into(),
                via: SkillLoadVia::Auto,
            },
            Event::AssistantDelta {
                text: "Looking around.".into(),
            },
            Event::tool_call_begin("c1", "terminal", r#"{"command":"ls -la","timeout":30}"#),
            Event::ToolCallOutput {
                call_id: "c1".into(),
                output: "Cargo.toml\ncrates\ndocs\nskills\ntests".into(),
            },
            Event::ToolCallEnd {
                call_id: "c1".into(),
                name: "terminal".into(),
                success: true,
                duration_ms: 84,
            },
            Event::tool_call_begin("c2", "read_file", r#"{"path":"README.md"}"#),
            Event::ToolCallEnd {
                call_id: "c2".into(),
                name: "read_file".into(),
                success: false,
                duration_ms: 2300,
            },
            Event::tool_call_begin("c3", "search_files", r#"{"pattern":"TODO"}"#),
        ],
    );
    insta::assert_snapshot!(screen(&mut app, 80, 20));
}

fn reasoning(text: &str, size: usize) -> Vec<Event> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(size)
        .map(|c| Event::ReasoningDelta {
            text: c.iter().collect(),
        })
        .collect()
}

const THINKING: &str = "The user wants the failing test.\nFirst look at the test list.\n\
Then run only the one that fails.\nThat keeps the output short.";

#[test]
fn snapshot_thinking_streams_dimmed_then_folds_under_the_answer() {
    let (mut app, _rx) = app();
    type_text(&mut app, "which test fails?");
    app.handle_key(key(KeyCode::Enter));
    feed(&mut app, reasoning(THINKING, 9));
    insta::assert_snapshot!("thinking_streaming", screen(&mut app, 60, 14));
    feed(&mut app, deltas("It is `parser::empty_input`.", 6));
    feed(
        &mut app,
        vec![
            Event::AssistantMessage {
                text: "It is `parser::empty_input`.".into(),
            },
            Event::TurnComplete,
        ],
    );
    insta::assert_snapshot!("thinking_folded", screen(&mut app, 60, 14));
    app.handle_key(ctrl('o'));
    insta::assert_snapshot!("thinking_expanded", screen(&mut app, 60, 14));
}

#[test]
fn thinking_is_never_the_answer_and_a_retry_drops_it() {
    let (mut app, _rx) = app();
    type_text(&mut app, "q");
    app.handle_key(key(KeyCode::Enter));
    feed(&mut app, reasoning("half a thought", 4));
    feed(
        &mut app,
        vec![Event::Retry {
            attempt: 1,
            delay_ms: 10,
            reason: "stream cut".into(),
        }],
    );
    assert!(
        !app.transcript()
            .cells()
            .any(|c| matches!(c, Cell::Thinking { .. })),
        "a retry voids the partial thinking"
    );
    feed(&mut app, reasoning("whole thought", 5));
    feed(&mut app, deltas("answer", 3));
    feed(
        &mut app,
        vec![Event::AssistantMessage {
            text: "answer".into(),
        }],
    );
    let cells: Vec<&Cell> = app.transcript().cells().collect();
    assert!(matches!(
        cells[cells.len() - 2],
        Cell::Thinking { text, streaming: false, expanded: false } if text == "whole thought"
    ));
    assert_eq!(
        cells[cells.len() - 1],
        &Cell::Assistant {
            text: "answer".into(),
            streaming: false
        }
    );
}

#[test]
fn snapshot_slash_palette_filtered() {
    let (mut app, _rx) = app();
    app.set_skills(sample_skills());
    type_text(&mut app, "/re");
    insta::assert_snapshot!(screen(&mut app, 80, 18));
}

#[test]
fn snapshot_skills_browser() {
    let (mut app, _rx) = app();
    app.set_skills(sample_skills());
    type_text(&mut app, "/skills");
    app.handle_key(key(KeyCode::Enter));
    app.handle_key(key(KeyCode::Down));
    insta::assert_snapshot!(screen(&mut app, 100, 22));
}

#[test]
fn snapshot_approval_modal() {
    let (mut app, _rx) = app();
    type_text(&mut app, "clean the build");
    app.handle_key(key(KeyCode::Enter));
    feed(
        &mut app,
        vec![Event::ApprovalRequest {
            call_id: "c9".into(),
            command: "rm -rf target/".into(),
            reason: "recursive delete".into(),
            exact_rule: Some("terminal(rm -rf target/)".into()),
            prefix_rule: Some("terminal(rm -rf target/:*)".into()),
            diff: None,
        }],
    );
    wait_out_grace(&mut app);
    insta::assert_snapshot!(screen(&mut app, 80, 20));
}

#[test]
fn snapshot_error_with_retry() {
    let (mut app, _rx) = app();
    type_text(&mut app, "hello?");
    app.handle_key(key(KeyCode::Enter));
    feed(
        &mut app,
        vec![
            Event::AssistantDelta { text: "Hel".into() },
            Event::Retry {
                attempt: 1,
                delay_ms: 1500,
                reason: "server error (503)".into(),
            },
            Event::Retry {
                attempt: 2,
                delay_ms: 3000,
                reason: "server error (503)".into(),
            },
            Event::Error {
                message: "the model server kept failing after 3 attempts: server error (503)"
                    .into(),
            },
        ],
    );
    insta::assert_snapshot!(screen(&mut app, 80, 14));
}

#[test]
fn snapshot_narrow_60_columns() {
    let (mut app, _rx) = app();
    type_text(
        &mut app,
        "Explain the plan in a few steps, with an example command.",
    );
    app.handle_key(key(KeyCode::Enter));
    feed(&mut app, deltas(ANSWER, 5));
    feed(
        &mut app,
        vec![
            Event::AssistantMessage {
                text: ANSWER.into(),
            },
            Event::tool_call_begin(
                "c1",
                "terminal",
                r#"{"command":"cargo test --workspace --all-targets -- --nocapture"}"#,
            ),
            Event::ToolCallEnd {
                call_id: "c1".into(),
                name: "terminal".into(),
                success: true,
                duration_ms: 65_000,
            },
            Event::ReviewFinished {
                summary: "review: created skill cargo-checks".into(),
            },
            Event::TurnComplete,
        ],
    );
    insta::assert_snapshot!(screen(&mut app, 60, 34));
}

#[test]
fn colours_are_ansi_and_code_blocks_have_their_own_style() {
    let (mut app, _rx) = app_with(Theme::colored());
    feed(&mut app, deltas(ANSWER, 9));
    let terminal = draw(&mut app, 80, 26);
    let buf = terminal.backend().buffer();
    let mut code_cells = 0;
    for cell in buf.content() {
        for color in [cell.fg, cell.bg] {
            assert!(
                !matches!(
                    color,
                    ratatui::style::Color::Rgb(..) | ratatui::style::Color::Indexed(_)
                ),
                "non-ANSI colour {color:?}"
            );
        }
        if cell.symbol() == "p" && cell.fg == ratatui::style::Color::Green {
            code_cells += 1;
        }
    }
    assert!(code_cells >= 1, "println! line is drawn in the code style");
}

#[test]
fn no_color_draws_without_styles() {
    let (mut app, _rx) = app_with(Theme::plain());
    feed(&mut app, deltas(ANSWER, 9));
    let terminal = draw(&mut app, 80, 26);
    let styled = terminal
        .backend()
        .buffer()
        .content()
        .iter()
        .filter(|c| c.fg != ratatui::style::Color::Reset || c.bg != ratatui::style::Color::Reset)
        .count();
    assert_eq!(styled, 0);
}

// ----- ops --------------------------------------------------------------------

#[test]
fn enter_sends_a_user_turn_and_clears_the_input() {
    let (mut app, mut rx) = app();
    type_text(&mut app, "hello there");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        drain(&mut rx),
        vec![Op::UserTurn {
            text: "hello there".into()
        }]
    );
    assert_eq!(app.input_text(), "");
    assert!(app.is_busy());
    assert_eq!(
        app.transcript().cells().next(),
        Some(&Cell::User {
            text: "hello there".into()
        })
    );
}

#[test]
fn shift_or_alt_enter_and_paste_add_lines_without_sending() {
    let (mut app, mut rx) = app();
    type_text(&mut app, "one");
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT));
    type_text(&mut app, "two");
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    app.handle_terminal_event(TermEvent::Paste("three\r\nfour\n".into()));
    assert!(drain(&mut rx).is_empty());
    assert_eq!(app.input_text(), "one\ntwo\nthree\nfour\n");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        drain(&mut rx),
        vec![Op::UserTurn {
            text: "one\ntwo\nthree\nfour\n".into()
        }]
    );
}

#[test]
fn ctrl_c_interrupts_a_running_turn_and_twice_on_idle_quits() {
    let (mut app, mut rx) = app();
    type_text(&mut app, "long task");
    app.handle_key(key(KeyCode::Enter));
    drain(&mut rx);
    app.handle_key(ctrl('c'));
    assert_eq!(drain(&mut rx), vec![Op::Interrupt]);
    app.handle_agent_event(Event::TurnAborted {
        reason: TurnAbortReason::Interrupted,
    });
    assert!(!app.is_busy());

    app.handle_key(ctrl('c'));
    assert!(app.take_exit().is_none(), "the first ctrl-c only warns");
    app.handle_key(ctrl('c'));
    assert_eq!(app.take_exit(), Some(TuiExit::Quit));
    assert_eq!(drain(&mut rx), vec![Op::Shutdown]);
}

#[test]
fn a_tool_card_cut_short_by_an_interrupt_says_so() {
    let (mut app, mut rx) = app();
    type_text(&mut app, "long task");
    app.handle_key(key(KeyCode::Enter));
    drain(&mut rx);
    app.handle_agent_event(Event::tool_call_begin(
        "c1",
        "terminal",
        r#"{"command":"sleep 100"}"#,
    ));
    app.handle_key(ctrl('c'));
    app.handle_agent_event(Event::TurnAborted {
        reason: TurnAbortReason::Interrupted,
    });
    let text = screen(&mut app, 80, 20);
    assert!(text.contains("interrupted by the user"), "{text}");
}

#[test]
fn ctrl_c_on_typed_text_clears_it_and_ctrl_d_quits() {
    let (mut app, mut rx) = app();
    type_text(&mut app, "draft");
    app.handle_key(ctrl('c'));
    assert_eq!(app.input_text(), "");
    assert!(app.take_exit().is_none());
    app.handle_key(ctrl('d'));
    assert_eq!(app.take_exit(), Some(TuiExit::Quit));
    assert_eq!(drain(&mut rx), vec![Op::Shutdown]);
}

#[test]
fn approval_keys_send_the_matching_decision() {
    let (mut app, mut rx) = app();
    let request = |id: &str| Event::ApprovalRequest {
        call_id: id.into(),
        command: "rm -rf build".into(),
        reason: "deletes files".into(),
        exact_rule: Some("terminal(rm -rf build)".into()),
        prefix_rule: Some("terminal(rm -rf build:*)".into()),
        diff: None,
    };
    for id in ["a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"] {
        app.handle_agent_event(request(id));
    }
    // Each answer shows the next request: a new modal with its own grace period.
    let press = |app: &mut App, code: KeyCode| {
        wait_out_grace(app);
        app.handle_key(key(code));
    };
    press(&mut app, KeyCode::Char('y'));
    press(&mut app, KeyCode::Char('a'));
    press(&mut app, KeyCode::Char('n'));
    // Enter picks the safe default: no.
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Up);
    app.handle_key(key(KeyCode::Enter));
    app.handle_key(key(KeyCode::Enter));
    press(&mut app, KeyCode::Esc);
    // "Always" for a prefix the user edits: `rm -rf build` → `rm -rf`.
    press(&mut app, KeyCode::Char('p'));
    for _ in 0.." build".len() {
        app.handle_key(key(KeyCode::Backspace));
    }
    app.handle_key(key(KeyCode::Enter));
    // "No", with a reason for the model.
    press(&mut app, KeyCode::Char('t'));
    type_text(&mut app, "use make clean");
    app.handle_key(key(KeyCode::Enter));
    let decision = |id: &str, decision, rule: Option<&str>, message: Option<&str>| Op::Approval {
        call_id: id.into(),
        decision,
        rule: rule.map(str::to_owned),
        message: message.map(str::to_owned),
    };
    assert_eq!(
        drain(&mut rx),
        vec![
            decision("a1", ApprovalDecision::ApproveOnce, None, None),
            decision(
                "a2",
                ApprovalDecision::ApproveAlways,
                Some("terminal(rm -rf build)"),
                None
            ),
            decision("a3", ApprovalDecision::Deny, None, None),
            decision("a4", ApprovalDecision::Deny, None, None),
            // One up from "no" is the prefix choice, which opens its field; Enter saves it.
            decision(
                "a5",
                ApprovalDecision::ApproveAlways,
                Some("terminal(rm -rf build:*)"),
                None
            ),
            decision("a6", ApprovalDecision::Deny, None, None),
            decision(
                "a7",
                ApprovalDecision::ApproveAlways,
                Some("terminal(rm -rf:*)"),
                None
            ),
            decision("a8", ApprovalDecision::Deny, None, Some("use make clean")),
        ]
    );
    // With no request open, keys type again.
    type_text(&mut app, "y");
    assert_eq!(app.input_text(), "y");
}

#[test]
fn mcp_servers_that_failed_are_shown_at_start_and_slash_mcp_lists_all() {
    use super::connection::McpServerLine;
    let (ops, _rx) = unbounded_channel();
    let mut info = info();
    info.mcp_servers = vec![
        McpServerLine {
            text: "files: ready, 14 tools".into(),
            failed: false,
        },
        McpServerLine {
            text: "search: did not start (exited with status 1)".into(),
            failed: true,
        },
    ];
    let mut app = App::new(
        ops,
        info,
        Theme::plain(),
        InputHistory::in_memory(Vec::new()),
    );
    let start = format!("{:?}", app.transcript().cells().collect::<Vec<_>>());
    assert!(start.contains("search: did not start"), "{start}");
    assert!(!start.contains("files: ready"), "{start}");
    type_text(&mut app, "/mcp");
    app.handle_key(key(KeyCode::Enter));
    let text = format!("{:?}", app.transcript().cells().collect::<Vec<_>>());
    assert!(text.contains("files: ready, 14 tools"), "{text}");
}

#[test]
fn slash_compact_sends_compact_and_shows_the_result() {
    let (mut app, mut rx) = app();
    type_text(&mut app, "/compact");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(drain(&mut rx), vec![Op::Compact]);
    app.handle_agent_event(Event::Compaction {
        before_tokens: 6000,
        after_tokens: 1500,
    });
    let text = format!("{:?}", app.transcript().cells().collect::<Vec<_>>());
    assert!(text.contains("6000 → 1500"), "{text}");
}

#[test]
fn slash_review_sends_run_review() {
    let (mut app, mut rx) = app();
    type_text(&mut app, "/review");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(drain(&mut rx), vec![Op::RunReview]);
    app.handle_agent_event(Event::ReviewStarted);
    app.handle_agent_event(Event::ReviewFinished {
        summary: "review: patched skill deploy-k8s".into(),
    });
    let last = app.transcript().cells().last().cloned();
    assert!(
        matches!(last, Some(Cell::Note { ref text, .. }) if text == "review: patched skill deploy-k8s"),
        "{last:?}"
    );
}

#[test]
fn palette_tab_completes_and_skill_lines_go_out_unchanged() {
    let (mut app, mut rx) = app();
    app.set_skills(sample_skills());
    type_text(&mut app, "/dep");
    assert!(app.palette().is_open());
    app.handle_key(key(KeyCode::Tab));
    assert_eq!(app.input_text(), "/deploy-k8s ");
    assert!(!app.palette().is_open(), "a space ends the command word");
    type_text(&mut app, "to staging");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        drain(&mut rx),
        vec![Op::UserTurn {
            text: "/deploy-k8s to staging".into()
        }]
    );
}

#[test]
fn palette_moves_with_arrows_and_enter_runs_the_choice() {
    let (mut app, mut rx) = app();
    app.set_skills(sample_skills());
    type_text(&mut app, "/re");
    let labels: Vec<String> = app
        .palette()
        .items
        .iter()
        .map(|i| i.label.clone())
        .collect();
    let pick = labels.iter().position(|l| l == "review").unwrap();
    for _ in 0..pick {
        app.handle_key(key(KeyCode::Down));
    }
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(drain(&mut rx), vec![Op::RunReview]);
}

#[test]
fn slash_skill_completes_ids_and_sends_the_line() {
    let (mut app, mut rx) = app();
    app.set_skills(sample_skills());
    type_text(&mut app, "/skill rev");
    app.handle_key(key(KeyCode::Tab));
    assert_eq!(app.input_text(), "/skill git/review-pr ");
    type_text(&mut app, "#42");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        drain(&mut rx),
        vec![Op::UserTurn {
            text: "/skill git/review-pr #42".into()
        }]
    );
}

#[test]
fn unknown_commands_stay_in_the_input_and_paths_are_messages() {
    let (mut app, mut rx) = app();
    type_text(&mut app, "/nosuch thing");
    app.handle_key(key(KeyCode::Enter));
    assert!(drain(&mut rx).is_empty());
    assert_eq!(app.input_text(), "/nosuch thing");
    app.handle_key(ctrl('u'));
    type_text(&mut app, "/usr/bin/env is odd");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        drain(&mut rx),
        vec![Op::UserTurn {
            text: "/usr/bin/env is odd".into()
        }]
    );
}

#[test]
fn new_and_resume_end_the_ui_with_their_request() {
    let (mut app, _rx) = app();
    type_text(&mut app, "/resume 2026-abc");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(app.take_exit(), Some(TuiExit::Resume("2026-abc".into())));
    let (mut app, _rx) = app_with(Theme::plain());
    type_text(&mut app, "/new");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(app.take_exit(), Some(TuiExit::NewSession));
}

#[test]
fn resume_with_an_unknown_id_keeps_the_ui_and_says_why() {
    let (mut app, mut rx) = app();
    app.set_session_lookup(Box::new(|id| match id {
        "2026" => Ok("20260101-abc123".to_owned()),
        other => Err(format!("no session with id '{other}'")),
    }));
    type_text(&mut app, "/resume nope");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(app.take_exit(), None, "the UI stays open");
    assert!(drain(&mut rx).is_empty(), "the session is not shut down");
    assert_eq!(app.input_text(), "/resume nope", "kept to fix");
    let text = screen(&mut app, 80, 12);
    assert!(text.contains("no session with id 'nope'"), "{text}");

    // A unique prefix resumes the full id.
    app.handle_key(ctrl('u'));
    type_text(&mut app, "/resume 2026");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        app.take_exit(),
        Some(TuiExit::Resume("20260101-abc123".into()))
    );
    assert_eq!(drain(&mut rx), vec![Op::Shutdown]);
}

#[test]
fn snapshot_resumed_transcript() {
    use agent_loop::model::{ChatMessage, ToolCall};
    let (mut app, _rx) = app();
    let history = vec![
        ChatMessage::user("what is in the readme?"),
        ChatMessage::assistant(
            "Let me look.",
            vec![ToolCall::function(
                "c1",
                "read_file",
                r#"{"path": "README.md"}"#,
            )],
        ),
        ChatMessage::tool_result("c1", "# knack\nAn agent runtime."),
        ChatMessage::assistant("It describes **knack**, an agent runtime.", Vec::new()),
        ChatMessage::user("[Skill catalog update] New skills you can load with skill_view: x."),
        ChatMessage::user("and run the tests"),
        ChatMessage::assistant(
            "",
            vec![ToolCall::function(
                "c2",
                "terminal",
                r#"{"command": "cargo test"}"#,
            )],
        ),
        ChatMessage::tool_result("c2", r#"{"success": false, "error": "refused"}"#),
        ChatMessage::assistant("Partial answ\n\n[interrupted by the user]", Vec::new()),
    ];
    app.replay_history(&history);
    insta::assert_snapshot!(screen(&mut app, 80, 24));
}

#[test]
fn up_and_down_walk_the_history() {
    let (tx, _rx) = unbounded_channel();
    let history = InputHistory::in_memory(vec!["first".into(), "second".into()]);
    let mut app = App::new(tx, info(), Theme::plain(), history);
    type_text(&mut app, "dra");
    app.handle_key(key(KeyCode::Up));
    assert_eq!(app.input_text(), "second");
    app.handle_key(key(KeyCode::Up));
    assert_eq!(app.input_text(), "first");
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Down));
    assert_eq!(app.input_text(), "dra");
}

#[test]
fn usage_events_feed_the_status_line() {
    let (mut app, _rx) = app();
    feed(
        &mut app,
        vec![
            Event::Usage {
                prompt_tokens: 1000,
                completion_tokens: 50,
                cached_tokens: 750,
                cache_write_tokens: 0,
                cost_usd: None,
            },
            Event::SessionStarted {
                session_id: "resumed-77".into(),
                model: "other-model".into(),
            },
        ],
    );
    let text = screen(&mut app, 100, 8);
    assert!(text.contains("other-model"), "{text}");
    assert!(text.contains("session resumed-77"), "{text}");
    assert!(text.contains("1.0k in / 50 out"), "{text}");
    assert!(text.contains("cache 75%"), "{text}");
}

#[test]
fn mouse_wheel_and_page_keys_scroll_and_new_output_sticks_only_at_the_bottom() {
    let (mut app, _rx) = app();
    for i in 0..60 {
        app.transcript_mut()
            .push_note(super::transcript::NoteKind::Info, format!("note {i}"));
    }
    let bottom = screen(&mut app, 40, 12);
    assert!(bottom.contains("note 59"));
    app.handle_mouse(MouseEvent {
        kind: MouseEventKind::ScrollUp,
        column: 0,
        row: 0,
        modifiers: KeyModifiers::NONE,
    });
    app.handle_key(key(KeyCode::PageUp));
    let scrolled = screen(&mut app, 40, 12);
    assert!(!scrolled.contains("note 59"));
    feed(&mut app, deltas("fresh text", 3));
    assert_eq!(
        screen(&mut app, 40, 12),
        scrolled,
        "a scrolled view holds still"
    );
    app.handle_key(KeyEvent::new(KeyCode::End, KeyModifiers::CONTROL));
    assert!(screen(&mut app, 40, 12).contains("fresh text"));
}

#[test]
fn tool_output_expands_on_the_selected_card() {
    let (mut app, _rx) = app();
    let output: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    feed(
        &mut app,
        vec![
            Event::tool_call_begin("c1", "terminal", r#"{"command":"seq 10"}"#),
            Event::ToolCallOutput {
                call_id: "c1".into(),
                output,
            },
            Event::ToolCallEnd {
                call_id: "c1".into(),
                name: "terminal".into(),
                success: true,
                duration_ms: 5,
            },
        ],
    );
    assert!(!screen(&mut app, 60, 20).contains("line 9"));
    app.handle_key(KeyEvent::new(KeyCode::Up, KeyModifiers::ALT));
    app.handle_key(ctrl('o'));
    let expanded = screen(&mut app, 60, 20);
    assert!(expanded.contains("line 9"), "{expanded}");
    assert!(expanded.contains("▶"), "the selected card is marked");
}

#[test]
fn an_error_event_ends_the_turn_without_crashing() {
    let (mut app, _rx) = app();
    type_text(&mut app, "q");
    app.handle_key(key(KeyCode::Enter));
    feed(
        &mut app,
        vec![
            Event::tool_call_begin("c1", "terminal", "{}"),
            Event::Error {
                message: "connection refused".into(),
            },
        ],
    );
    assert!(!app.is_busy());
    assert!(!app.transcript().has_running_tool());
}

#[tokio::test]
async fn a_turn_round_trips_through_the_echo_agent() {
    let (conn, session) = echo::spawn();
    let mut events = conn.events;
    let mut app = App::new(
        conn.ops,
        session,
        Theme::plain(),
        InputHistory::in_memory(Vec::new()),
    );
    type_text(&mut app, "ping");
    app.handle_key(key(KeyCode::Enter));
    let deadline = tokio::time::Duration::from_secs(5);
    tokio::time::timeout(deadline, async {
        while let Some(event) = events.recv().await {
            let done = event == Event::TurnComplete;
            app.handle_agent_event(event);
            if done {
                break;
            }
        }
    })
    .await
    .unwrap();
    assert!(!app.is_busy());
    let last = app.transcript().cells().last().cloned();
    assert_eq!(
        last,
        Some(Cell::Assistant {
            text: "echo: ping".into(),
            streaming: false
        })
    );
    assert_eq!(app.tokens().cache_percent(), Some(50));
}

#[test]
fn resize_reflows_the_transcript() {
    let (mut app, _rx) = app();
    feed(
        &mut app,
        vec![Event::AssistantMessage {
            text: "word ".repeat(30),
        }],
    );
    let wide = screen(&mut app, 100, 12);
    let narrow = screen(&mut app, 30, 12);
    let rows_with_words = |s: &str| s.lines().filter(|l| l.contains("word")).count();
    assert!(rows_with_words(&narrow) > rows_with_words(&wide));
}

fn write_skill(root: &std::path::Path, rel: &str, name: &str) {
    let dir = root.join(rel);
    std::fs::create_dir_all(dir.join("references")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: Use when testing {name}\n---\n# {name}\n\n- step one\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("references/api.md"), "# API\n").unwrap();
}

fn catalog_for(root: &std::path::Path) -> super::skills::SkillCatalog {
    super::skills::SkillCatalog::new(skill_core::DiscoveryOptions::with_roots(vec![
        skill_core::SkillRoot {
            path: root.to_owned(),
            scope: skill_core::Scope::User,
        },
    ]))
}

#[test]
fn the_catalog_notices_a_new_skill_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    write_skill(dir.path(), "devops/deploy", "deploy");
    let mut catalog = catalog_for(dir.path());
    assert_eq!(catalog.entries().len(), 1);
    write_skill(dir.path(), "git/review-pr", "review-pr");
    // Waits for the watcher's event; the deadline only bounds a failure, so
    // it is far above what a loaded machine needs.
    let deadline = Instant::now() + std::time::Duration::from_secs(60);
    let fresh = loop {
        if let Some(fresh) = catalog.poll_changes() {
            break fresh;
        }
        assert!(Instant::now() < deadline, "no change reported");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let names: Vec<&str> = fresh.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["deploy", "review-pr"]);
}

#[test]
fn the_browser_shows_a_skill_text_and_its_linked_files() {
    let dir = tempfile::tempdir().unwrap();
    write_skill(dir.path(), "devops/deploy", "deploy");
    let mut catalog = catalog_for(dir.path());
    let (mut app, mut rx) = app();
    app.set_skills(catalog.entries());
    type_text(&mut app, "/skills");
    app.handle_key(key(KeyCode::Enter));
    type_text(&mut app, "depl");
    app.handle_key(key(KeyCode::Enter));
    let text = screen(&mut app, 80, 20);
    assert!(text.contains("devops/deploy"), "{text}");
    assert!(text.contains("references/api.md"), "{text}");
    assert!(text.contains("• step one"), "{text}");
    // Tab hands the skill to the input; nothing is sent yet.
    app.handle_key(key(KeyCode::Tab));
    assert_eq!(app.input_text(), "/skill devops/deploy ");
    assert!(drain(&mut rx).is_empty());
}

// ----- measurement ------------------------------------------------------------

/// `cargo test -p knack --release -- --ignored frame_time --nocapture`
#[test]
#[ignore = "measurement: run in release and read the printed median"]
fn frame_time_of_a_1000_message_transcript() {
    let (mut app, _rx) = app_with(Theme::colored());
    for i in 0..250 {
        app.transcript_mut().push(Cell::User {
            text: format!("question {i}: how does the skill cache stay current?"),
        });
        app.transcript_mut().append_delta(ANSWER);
        app.transcript_mut().finish_message(ANSWER);
        let id = format!("c{i}");
        app.transcript_mut()
            .begin_tool(&id, "terminal", &json!({"command": "cargo test"}));
        app.transcript_mut().tool_output(&id, "ok\nok\nok\nok");
        app.transcript_mut().end_tool(&id, true, 1200);
        app.transcript_mut()
            .push_note(super::transcript::NoteKind::Subtle, "skill loaded: x");
    }
    assert_eq!(app.transcript().len(), 1000);
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let mut times = Vec::new();
    let cold = Instant::now();
    terminal.draw(|frame| app.render(frame)).unwrap();
    let cold = cold.elapsed();
    for i in 0..50 {
        // Streaming into the newest message each frame, as during a turn.
        app.handle_agent_event(Event::AssistantDelta {
            text: format!("more {i} "),
        });
        let start = Instant::now();
        terminal.draw(|frame| app.render(frame)).unwrap();
        times.push(start.elapsed());
    }
    // The first scroll up measures every entry once at this width.
    let scrolled = Instant::now();
    app.handle_key(key(KeyCode::PageUp));
    terminal.draw(|frame| app.render(frame)).unwrap();
    let scrolled = scrolled.elapsed();
    println!(
        "first PageUp (wraps all 1000 entries at this width): {:.3} ms",
        scrolled.as_secs_f64() * 1000.0
    );
    times.sort();
    let median = times[times.len() / 2];
    println!(
        "1000-message transcript, 120x40: first (cold) frame {:.3} ms; \
         median of 50 streaming frames {:.3} ms (min {:.3}, max {:.3})",
        cold.as_secs_f64() * 1000.0,
        median.as_secs_f64() * 1000.0,
        times[0].as_secs_f64() * 1000.0,
        times[times.len() - 1].as_secs_f64() * 1000.0
    );
}
