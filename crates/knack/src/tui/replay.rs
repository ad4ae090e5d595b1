//! A resumed session's stored conversation turned back into transcript cells,
//! so `/resume` and `knack chat --resume` show what was said, not an empty screen.

use agent_loop::compaction::{CARRIED_SKILL_MARKER, SUMMARY_MARKER};
use agent_loop::invocation::{USER_REQUEST_HEADING, is_invocation};
use agent_loop::model::{ChatMessage, Role};
use serde_json::Value;

use super::transcript::{NoteKind, Transcript};

/// Appends `messages` (a session's history after the system prompt) to the
/// transcript: user and assistant messages as cells, tool calls as finished
/// cards with their results; knack's own notes to the model as quiet lines.
pub fn replay(transcript: &mut Transcript, messages: &[ChatMessage]) {
    for message in messages {
        let text = message.content.as_deref().unwrap_or_default();
        match message.role {
            Role::System => {}
            Role::User => replay_user(transcript, text),
            Role::Assistant => {
                if !text.trim().is_empty() {
                    transcript.finish_message(text);
                }
                for call in message.tool_calls.iter().flatten() {
                    let arguments = serde_json::from_str(&call.function.arguments)
                        .unwrap_or_else(|_| Value::String(call.function.arguments.clone()));
                    transcript.begin_tool(&call.id, &call.function.name, &arguments);
                }
            }
            Role::Tool => {
                let Some(id) = message.tool_call_id.as_deref() else {
                    continue;
                };
                // The same preview the live card got from the agent loop.
                transcript.tool_output(id, &agent_loop::tool_preview::preview(text));
                transcript.finish_stored_tool(id, succeeded(text));
            }
        }
    }
    // A call whose result was never stored (the run ended under it) did not finish.
    // A call with no stored result: the session stopped while it ran.
    transcript.abandon_running_tools(
        r#"{"success": false, "error": "the session stopped before this call finished"}"#,
    );
}

fn replay_user(transcript: &mut Transcript, text: &str) {
    if text.starts_with("[Skill catalog update]") || text.starts_with("[MCP tools update]") {
        return;
    }
    if text.starts_with(SUMMARY_MARKER) {
        transcript.push_note(
            NoteKind::Subtle,
            "earlier conversation summarised (compacted); `knack sessions show` has it whole",
        );
        return;
    }
    if text.starts_with(CARRIED_SKILL_MARKER) {
        return;
    }
    if is_invocation(text) {
        // The skill bodies were for the model; the user typed only the request.
        let request = text
            .rsplit_once(USER_REQUEST_HEADING)
            .map(|(_, request)| request.trim())
            .unwrap_or_default();
        transcript.push_note(NoteKind::Subtle, "skill invoked");
        if !request.is_empty() {
            transcript.push(super::transcript::Cell::User {
                text: request.to_owned(),
            });
        }
        return;
    }
    // Files attached with `@path` were for the model; show what was typed.
    let (typed, attached) = agent_loop::mentions::split_attachments(text);
    transcript.push(super::transcript::Cell::User {
        text: typed.to_owned(),
    });
    if !attached.is_empty() {
        let lines: Vec<String> = attached.iter().map(|a| format!("attached {a}")).collect();
        transcript.push_note(NoteKind::Subtle, lines.join("\n"));
    }
}

/// Tools answer with `{"success": false, ...}` on failure; anything else
/// (plain text from an MCP server, say) counts as done.
fn succeeded(output: &str) -> bool {
    serde_json::from_str::<Value>(output)
        .ok()
        .and_then(|v| v.get("success").and_then(Value::as_bool))
        .unwrap_or(true)
}
