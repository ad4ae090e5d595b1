//! Snapshots of how the TUI draws things: Markdown answers (tables, nested
//! lists, links, code blocks, long paragraphs, narrow screens), tool cards
//! read as text, and the status line while the model thinks and costs money.

use agent_protocol::{Event, Op};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

use super::app::App;
use super::test_harness::{ctrl, feed, plain_app, screen};

fn app(context_window: u64) -> (App, UnboundedReceiver<Op>) {
    plain_app("20260101-abc123", context_window)
}

fn answer(app: &mut App, text: &str) {
    feed(
        app,
        vec![
            Event::AssistantMessage { text: text.into() },
            Event::TurnComplete,
        ],
    );
}

/// One finished tool call: begin, the reply's JSON text (as the agent loop
/// sends it), end.
fn tool(id: &str, name: &str, arguments: Value, reply: &str, success: bool) -> Vec<Event> {
    vec![
        Event::tool_call_begin(id, name, &arguments.to_string()),
        Event::ToolCallOutput {
            call_id: id.into(),
            output: reply.into(),
        },
        Event::ToolCallEnd {
            call_id: id.into(),
            name: name.into(),
            success,
            duration_ms: 120,
        },
    ]
}

const SKILL_MD: &str = "---\nname: deploy-k8s\ndescription: Use when shipping a service to Kubernetes\n---\n\
# Deploy to Kubernetes\n\n1. Build the image with `docker build`.\n2. Push it:\n   ```sh\n   \
docker push registry/app:v2\n   ```\n3. Roll out with **kubectl**.\n\n| env | cluster |\n|---|---|\n\
| staging | k8s-stg |\n| prod | k8s-prd |\n";

fn skill_view_reply(content: &str) -> String {
    json!({
        "success": true, "name": "deploy-k8s", "description": "Use when shipping a service to Kubernetes",
        "category": "devops", "id": "devops/deploy-k8s", "qualified_id": "user:devops/deploy-k8s",
        "scope": "user", "path": "/home/u/.knack/skills/devops/deploy-k8s/SKILL.md",
        "skill_dir": "/home/u/.knack/skills/devops/deploy-k8s", "content": content,
        "tags": [], "related_skills": [], "linked_files": {"references": ["references/api.md"]},
        "readiness_status": "available", "missing_required_environment_variables": []
    })
    .to_string()
}

fn tool_turn(app: &mut App) {
    let cargo_output: String = (1..=12).map(|i| format!("test t{i} ... ok\n")).collect();
    let mut events = Vec::new();
    events.extend(tool(
        "c1",
        "terminal",
        json!({"command": "cargo test -p parser"}),
        &json!({"success": true, "output": cargo_output, "exit_code": 0, "duration_ms": 900})
            .to_string(),
        true,
    ));
    events.extend(tool(
        "c2",
        "read_file",
        json!({"path": "src/main.rs", "offset": 10, "limit": 3}),
        &json!({"success": true, "path": "/work/src/main.rs",
                "content": "    10\tfn main() {\n    11\t    run();\n    12\t}\n",
                "start_line": 10, "end_line": 12, "total_lines": 120})
        .to_string(),
        true,
    ));
    events.extend(tool(
        "c3",
        "skill_view",
        json!({"name": "devops/deploy-k8s"}),
        &skill_view_reply(SKILL_MD),
        true,
    ));
    events.extend(tool(
        "c4",
        "search_files",
        json!({"pattern": "TODO", "path": "src"}),
        &json!({"success": true, "count": 12,
                "matches": (1..=12).map(|i| format!("src/lib.rs:{i}: // TODO {i}")).collect::<Vec<_>>()})
        .to_string(),
        true,
    ));
    events.extend(tool(
        "c5",
        "terminal",
        json!({"command": "make deploy"}),
        &json!({"success": false, "output": "make: *** No rule to make target 'deploy'.  Stop.\n",
                "exit_code": 2, "duration_ms": 8,
                "error": "the command exited with status 2."})
        .to_string(),
        false,
    ));
    events.extend(tool(
        "c6",
        "mcp__docs__lookup",
        json!({"query": "rollout"}),
        &json!({"success": true, "output": "kubectl rollout status deploy/app",
                "structured_content": {"hits": 1}})
        .to_string(),
        true,
    ));
    feed(app, events);
}

// ----- tool cards ---------------------------------------------------------------

#[test]
fn snapshot_tool_cards_read_as_text() {
    let (mut app, _rx) = app(0);
    tool_turn(&mut app);
    let text = screen(&mut app, 80, 40);
    insta::assert_snapshot!(text);
    for escaped in ["\\n", "\\\"", "{\"", "**kubectl"] {
        assert!(!text.contains(escaped), "{escaped} on screen:\n{text}");
    }
}

#[test]
fn snapshot_skill_view_card_expanded_renders_the_skill_as_markdown() {
    let (mut app, _rx) = app(0);
    feed(
        &mut app,
        tool(
            "c1",
            "skill_view",
            json!({"name": "devops/deploy-k8s"}),
            &skill_view_reply(SKILL_MD),
            true,
        ),
    );
    app.handle_key(ctrl('o'));
    insta::assert_snapshot!(screen(&mut app, 70, 28));
}

#[test]
fn snapshot_tool_card_raw_json_on_ctrl_t() {
    let (mut app, _rx) = app(0);
    feed(
        &mut app,
        tool(
            "c1",
            "write_file",
            json!({"path": "notes.txt", "content": "hi"}),
            &json!({"success": true, "path": "/work/notes.txt", "bytes_written": 2, "created": true})
                .to_string(),
            true,
        ),
    );
    app.handle_key(ctrl('o'));
    app.handle_key(ctrl('t'));
    insta::assert_snapshot!(screen(&mut app, 70, 14));
    app.handle_key(ctrl('t'));
    let text = screen(&mut app, 70, 14);
    assert!(
        text.contains("✓ write_file  notes.txt — new file, 2 bytes  120ms"),
        "{text}"
    );
    assert!(!text.contains("bytes_written"), "{text}");
}

#[test]
fn a_skill_cut_by_the_preview_still_reads_as_markdown() {
    let long_body: String = (1..=80)
        .map(|i| format!("- step {i}: check the **rollout** of part {i}\n"))
        .collect();
    let content = format!("{SKILL_MD}\n## Checklist\n\n{long_body}");
    let reply = skill_view_reply(&content);
    assert!(reply.chars().count() > 2000);
    let (mut app, _rx) = app(0);
    feed(
        &mut app,
        tool(
            "c1",
            "skill_view",
            json!({"name": "deploy-k8s"}),
            &agent_loop::tool_preview::preview(&reply),
            true,
        ),
    );
    app.handle_key(ctrl('o'));
    let text = screen(&mut app, 80, 120);
    assert!(
        text.contains("• step 1: check the rollout of part 1"),
        "{text}"
    );
    assert!(text.contains("the rest is not shown here"), "{text}");
    assert!(!text.contains("\\n"), "{text}");
    assert!(!text.contains("**"), "{text}");
    // The marker ends the kept text for the card to read, not to print.
    assert!(!text.contains("more characters]"), "{text}");
    // The fields after the cut one were kept: the reply's shape survives.
    assert!(text.contains("references/api.md"), "{text}");
    // The card's end: where the text stops, the note, the fields after it.
    insta::assert_snapshot!(screen(&mut app, 80, 16));
}

#[test]
fn a_resumed_long_result_is_shortened_as_the_live_one_was() {
    use agent_loop::model::{ChatMessage, ToolCall};
    let long_body: String = (1..=80)
        .map(|i| format!("- step {i}: check the **rollout** of part {i}\n"))
        .collect();
    let reply = skill_view_reply(&format!("{SKILL_MD}\n## Checklist\n\n{long_body}"));
    let live = {
        let (mut app, _rx) = app(0);
        feed(
            &mut app,
            tool(
                "c1",
                "skill_view",
                json!({"name": "deploy-k8s"}),
                &agent_loop::tool_preview::preview(&reply),
                true,
            ),
        );
        app.handle_key(ctrl('o'));
        screen(&mut app, 80, 120)
    };
    let (mut app, _rx) = app(0);
    app.replay_history(&[
        ChatMessage::assistant(
            "",
            vec![ToolCall::function(
                "c1",
                "skill_view",
                r#"{"name": "deploy-k8s"}"#,
            )],
        ),
        ChatMessage::tool_result("c1", reply),
    ]);
    app.handle_key(ctrl('o'));
    let resumed = screen(&mut app, 80, 120);
    assert!(resumed.contains("the rest is not shown here"), "{resumed}");
    // The same card body; only the live one has a duration.
    let body = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains('│') && !l.contains("skill_view"))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(body(&resumed), body(&live));
}

// ----- status line --------------------------------------------------------------

#[test]
fn snapshot_status_line_while_thinking_with_cost_and_context() {
    let (mut app, _rx) = app(200_000);
    app.handle_key(KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE));
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    feed(
        &mut app,
        vec![
            Event::Usage {
                prompt_tokens: 24_000,
                completion_tokens: 800,
                cached_tokens: 18_000,
                cache_write_tokens: 0,
                cost_usd: Some(0.0123),
            },
            Event::ReasoningDelta {
                text: "Which file holds the parser?".into(),
            },
        ],
    );
    insta::assert_snapshot!("status_thinking", screen(&mut app, 100, 10));
    feed(
        &mut app,
        vec![Event::AssistantDelta {
            text: "It is in".into(),
        }],
    );
    let working = screen(&mut app, 100, 10);
    let status = working.lines().last().unwrap_or_default();
    assert!(status.contains("working"), "{status}");
    assert!(status.contains("$0.0123"), "{status}");
    assert!(status.contains("context 12%"), "{status}");
}

#[test]
fn snapshot_status_line_shows_the_reviews_share() {
    let (mut app, _rx) = app(200_000);
    app.handle_key(KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE));
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let usage = |prompt_tokens, completion_tokens| Event::Usage {
        prompt_tokens,
        completion_tokens,
        cached_tokens: 0,
        cache_write_tokens: 0,
        cost_usd: None,
    };
    feed(
        &mut app,
        vec![
            usage(30_000, 1_000),
            Event::AssistantMessage {
                text: "Done.".into(),
            },
            Event::TurnComplete,
            Event::ReviewStarted,
            usage(8_000, 400),
            usage(8_500, 100),
            Event::ReviewUsage {
                requests: 2,
                prompt_tokens: 16_500,
                completion_tokens: 500,
                cached_tokens: 0,
                cost_usd: None,
                stopped: None,
            },
            Event::ReviewFinished {
                summary: "review: nothing saved".into(),
            },
        ],
    );
    let shown = screen(&mut app, 100, 10);
    // 17,000 of the session's 48,000 tokens went to the review.
    let status = shown.lines().last().unwrap_or_default();
    assert!(status.contains("review 35%"), "{status}");
    insta::assert_snapshot!("status_review_share", shown);
}

// ----- Markdown answers ---------------------------------------------------------

const MARKDOWN: &str = "## Results\n\n\
| crate | tests | status |\n|:--|--:|:-:|\n| parser | 120 | ok |\n| knack-config | 7 | **failed** |\n\n\
Steps, nested:\n\n\
1. Fix the config\n   - read [the docs](https://example.com/docs) first\n   - see <https://example.com>\n     1. inner step\n2. Re-run\n\n\
```rust\nfn check(input: &str) -> bool { input.split_whitespace().all(|w| w.len() < 12) }\n```\n\n\
A long paragraph that has to wrap over several lines of the terminal, with *emphasis*, \
~~a strike~~ and `inline code` inside it, so wrapping keeps every style and leaves no markup behind.";

#[test]
fn snapshot_markdown_answer() {
    let (mut app, _rx) = app(0);
    answer(&mut app, MARKDOWN);
    insta::assert_snapshot!(screen(&mut app, 80, 34));
}

#[test]
fn snapshot_markdown_answer_narrow() {
    let (mut app, _rx) = app(0);
    answer(&mut app, MARKDOWN);
    let text = screen(&mut app, 36, 34);
    insta::assert_snapshot!(text);
    for marker in ["**", "~~", "](", "```", "|:-"] {
        assert!(!text.contains(marker), "{marker} on screen:\n{text}");
    }
}
