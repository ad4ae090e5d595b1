//! Control sequences in the model's answer and in tool output are shown, escaped, in the
//! transcript: nothing a model writes can set the clipboard or clear the user's screen.

use agent_protocol::Event;
use serde_json::json;

use super::test_harness::{self as harness, enter, feed, screen};

#[test]
fn snapshot_escape_sequences_are_shown_not_obeyed() {
    let (mut app, _rx) = harness::plain_app("20260101-esc", 0);
    enter(&mut app, "show me");
    feed(
        &mut app,
        vec![
            Event::AssistantDelta {
                text: "Copied\x1b]52;c;ZXZpbA==\x07 and cleared\x1b[2J\x1b[H the screen.".into(),
            },
            Event::AssistantMessage {
                text: "Copied\x1b]52;c;ZXZpbA==\x07 and cleared\x1b[2J\x1b[H the screen.".into(),
            },
            Event::ToolCallBegin {
                call_id: "c1".into(),
                name: "terminal".into(),
                arguments: json!({"command": "printf '\\033]0;owned\\007'"}),
            },
            Event::ToolCallOutput {
                call_id: "c1".into(),
                // As the agent loop sends it: JSON text, the sequences \u-escaped in it.
                output: json!({"success": true, "output": "\u{1b}]0;owned\u{7}"}).to_string(),
            },
            Event::ToolCallEnd {
                call_id: "c1".into(),
                name: "terminal".into(),
                success: true,
                duration_ms: 3,
            },
            Event::AssistantDelta {
                text: "Retitled\x1b]0;pwned\x07 the window.".into(),
            },
            Event::AssistantMessage {
                text: "Retitled\x1b]0;pwned\x07 the window.".into(),
            },
            Event::TurnComplete,
        ],
    );
    let shown = screen(&mut app, 80, 16);
    assert!(
        !shown.contains('\x1b') && !shown.contains('\x07'),
        "{shown}"
    );
    assert!(shown.contains("^[]52;c;ZXZpbA==^G"), "{shown}");
    insta::assert_snapshot!(shown);
}
