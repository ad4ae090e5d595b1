//! The types that cross the line between knack's agent core and its frontends.
//! Frontends send [`Op`]s in and render [`Event`]s out; `knack run --json` prints the events as JSON lines.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One thing that happened in a session, in the order it happened.
///
/// The JSON form (`{"type": "...", ...}`) is the public `knack run --json`
/// line format fixed by CONTRACT.md; the TUI renders the same stream. The enum
/// is deliberately not `#[non_exhaustive]`: every renderer lives in this
/// workspace and should be forced to decide how to show a new event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    SessionStarted {
        session_id: String,
        model: String,
    },
    SkillLoaded {
        name: String,
        via: SkillLoadVia,
    },
    /// A piece of the assistant's text as it streams.
    AssistantDelta {
        text: String,
    },
    /// A piece of the model's thinking (Anthropic thinking blocks, Responses
    /// reasoning summaries, `reasoning_content` on the chat wire). It is
    /// shown, never part of the answer; a `retry` voids it like the text.
    ReasoningDelta {
        text: String,
    },
    ToolCallBegin {
        call_id: String,
        name: String,
        /// The parsed arguments, or the raw string when the model sent
        /// something that is not JSON (so a renderer can still show it).
        arguments: Value,
    },
    /// A short preview of what a tool produced (TUI only; headless skips it).
    ToolCallOutput {
        call_id: String,
        output: String,
    },
    ToolCallEnd {
        call_id: String,
        name: String,
        success: bool,
        duration_ms: u64,
    },
    /// The model request failed in a retryable way and will be sent again.
    /// Text streamed since the last `assistant_message` is void.
    Retry {
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
    Usage {
        /// Every prompt token, cached ones included.
        prompt_tokens: u64,
        completion_tokens: u64,
        /// Prompt tokens served from the server's cache; 0 when the server
        /// does not report them.
        cached_tokens: u64,
        /// Prompt tokens written to the cache (Anthropic); 0 elsewhere.
        #[serde(default)]
        cache_write_tokens: u64,
        /// What the request cost in USD; only when prices are configured.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
    },
    /// The skill catalog changed mid-session and the model was told so.
    CatalogNote {
        added: Vec<String>,
        removed: Vec<String>,
    },
    /// The history was summarised to fit the model's context window.
    Compaction {
        /// The estimated size of the next request before and after.
        before_tokens: u64,
        after_tokens: u64,
    },
    /// The complete text of one assistant message.
    AssistantMessage {
        text: String,
    },
    /// A tool call needs the user's consent before it runs.
    ApprovalRequest {
        call_id: String,
        /// What will run, as the user should see it (a command, `write PATH`, `fetch URL`).
        command: String,
        reason: String,
        /// The permission rule an "always" answer saves: exactly this action.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exact_rule: Option<String>,
        /// A wider rule to offer for editing ("commands starting with …"); absent where
        /// only the exact rule may be saved (a run outside the sandbox, a compound command).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prefix_rule: Option<String>,
        /// A unified diff of what an edit will change.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<String>,
    },
    /// What a file tool changed, as a unified diff (a new file: all added lines).
    /// Shown on the tool's card; never sent to the model.
    FileDiff {
        call_id: String,
        path: String,
        diff: String,
    },
    /// A tool call ran without asking because a permission rule (from
    /// `permissions.allow` or an earlier "always" answer) allows it.
    AutoApproved {
        call_id: String,
        rule: String,
    },
    ReviewStarted,
    SkillWritten {
        /// The `skill_manage` action (`create`, `patch`, ...) or hub operation.
        action: String,
        name: String,
        actor: SkillActor,
    },
    /// What the self-improvement review used, summed over its requests;
    /// sent just before `review_finished`.
    ReviewUsage {
        requests: u32,
        /// Every prompt token of the review's requests, cached ones included.
        prompt_tokens: u64,
        completion_tokens: u64,
        cached_tokens: u64,
        /// What the review cost in USD; only when prices are configured.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
        /// Why the review stopped early (a cap, an interrupt), if it did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stopped: Option<String>,
    },
    ReviewFinished {
        summary: String,
    },
    Error {
        message: String,
    },
    /// The turn stopped before the model finished (Ctrl-C, shutdown).
    TurnAborted {
        reason: TurnAbortReason,
    },
    TurnComplete,
}

impl Event {
    /// A `tool_call_begin` whose arguments are parsed when they are JSON and
    /// kept as the raw string otherwise.
    pub fn tool_call_begin(
        call_id: impl Into<String>,
        name: impl Into<String>,
        raw_arguments: &str,
    ) -> Self {
        let arguments = serde_json::from_str(raw_arguments)
            .unwrap_or_else(|_| Value::String(raw_arguments.to_owned()));
        Self::ToolCallBegin {
            call_id: call_id.into(),
            name: name.into(),
            arguments,
        }
    }

    /// True for the events that end a headless run's output.
    pub fn ends_turn(&self) -> bool {
        matches!(
            self,
            Self::TurnComplete | Self::Error { .. } | Self::TurnAborted { .. }
        )
    }

    /// The single JSON line `knack run --json` prints for this event.
    pub fn to_json_line(&self) -> serde_json::Result<String> {
        serde_json::to_string(self)
    }
}

/// How a skill's body entered the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillLoadVia {
    /// `/name` or `/skill <id>` typed by the user.
    Slash,
    /// `-s NAME` on the command line.
    Preload,
    /// An activation rule matched.
    Auto,
}

/// Who changed a skill on disk (the same actors the skill history records).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillActor {
    User,
    Agent,
    Review,
    Hub,
    Sync,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnAbortReason {
    /// The user interrupted (Ctrl-C, SIGINT, `Op::Interrupt`).
    Interrupted,
    /// The session is shutting down.
    Shutdown,
}

/// A request from a frontend to the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    UserTurn {
        text: String,
    },
    /// Stop the running turn; the session stays usable.
    Interrupt,
    /// The answer to an `approval_request` event.
    Approval {
        call_id: String,
        decision: ApprovalDecision,
        /// With `approve_always`: the rule to save (the request's `exact_rule`, or its
        /// `prefix_rule` as the user edited it). A rule that does not cover what was
        /// asked is replaced by the exact one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule: Option<String>,
        /// With `deny`: what the user wants the model to know.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// Run the self-improvement review now, whatever the tool-call count.
    RunReview,
    /// Summarise the older history now (`/compact`), whatever its size.
    Compact,
    /// Switch the approval mode (Shift-Tab in the TUI); the next tool call obeys it.
    SetMode {
        mode: ApprovalMode,
    },
    Shutdown,
}

/// How file edits are approved (`--mode`, Shift-Tab in the TUI).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    /// Ask before every file edit.
    AskEdits,
    /// Edits inside the workspace run without asking (the default).
    #[default]
    AutoEdits,
    /// Read-only: no file edits, no commands that change anything; the model is told
    /// to plan instead.
    Plan,
}

impl ApprovalMode {
    pub const ALL: [Self; 3] = [Self::AskEdits, Self::AutoEdits, Self::Plan];

    /// The name `--mode` and the status line use.
    pub fn name(self) -> &'static str {
        match self {
            Self::AskEdits => "ask-edits",
            Self::AutoEdits => "auto-edits",
            Self::Plan => "plan",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|mode| mode.name() == name.trim())
    }

    /// The mode Shift-Tab switches to.
    pub fn next(self) -> Self {
        match self {
            Self::AutoEdits => Self::AskEdits,
            Self::AskEdits => Self::Plan,
            Self::Plan => Self::AutoEdits,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    ApproveOnce,
    /// Approve it and save a permission rule so it is not asked again (the
    /// `rule` of `Op::Approval`, else exactly what was asked).
    ApproveAlways,
    Deny,
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    /// Each event next to the exact JSON line it must print.
    fn pinned_events() -> Vec<(Event, Value)> {
        vec![
            (
                Event::SessionStarted {
                    session_id: "s1".into(),
                    model: "m".into(),
                },
                json!({"type": "session_started", "session_id": "s1", "model": "m"}),
            ),
            (
                Event::SkillLoaded {
                    name: "deploy".into(),
                    via: SkillLoadVia::Preload,
                },
                json!({"type": "skill_loaded", "name": "deploy", "via": "preload"}),
            ),
            (
                Event::AssistantDelta { text: "he".into() },
                json!({"type": "assistant_delta", "text": "he"}),
            ),
            (
                Event::ReasoningDelta { text: "hmm".into() },
                json!({"type": "reasoning_delta", "text": "hmm"}),
            ),
            (
                Event::tool_call_begin("c1", "skills_list", r#"{"category":"devops"}"#),
                json!({"type": "tool_call_begin", "call_id": "c1", "name": "skills_list",
                       "arguments": {"category": "devops"}}),
            ),
            (
                Event::ToolCallOutput {
                    call_id: "c1".into(),
                    output: "ok".into(),
                },
                json!({"type": "tool_call_output", "call_id": "c1", "output": "ok"}),
            ),
            (
                Event::ToolCallEnd {
                    call_id: "c1".into(),
                    name: "skills_list".into(),
                    success: true,
                    duration_ms: 12,
                },
                json!({"type": "tool_call_end", "call_id": "c1", "name": "skills_list",
                       "success": true, "duration_ms": 12}),
            ),
            (
                Event::Retry {
                    attempt: 2,
                    delay_ms: 1500,
                    reason: "server error (503)".into(),
                },
                json!({"type": "retry", "attempt": 2, "delay_ms": 1500,
                       "reason": "server error (503)"}),
            ),
            (
                Event::Usage {
                    prompt_tokens: 100,
                    completion_tokens: 20,
                    cached_tokens: 64,
                    cache_write_tokens: 0,
                    cost_usd: None,
                },
                json!({"type": "usage", "prompt_tokens": 100, "completion_tokens": 20,
                       "cached_tokens": 64, "cache_write_tokens": 0}),
            ),
            (
                Event::Usage {
                    prompt_tokens: 1000,
                    completion_tokens: 10,
                    cached_tokens: 800,
                    cache_write_tokens: 150,
                    cost_usd: Some(0.5),
                },
                json!({"type": "usage", "prompt_tokens": 1000, "completion_tokens": 10,
                       "cached_tokens": 800, "cache_write_tokens": 150, "cost_usd": 0.5}),
            ),
            (
                Event::CatalogNote {
                    added: vec!["a".into()],
                    removed: vec![],
                },
                json!({"type": "catalog_note", "added": ["a"], "removed": []}),
            ),
            (
                Event::AssistantMessage {
                    text: "done".into(),
                },
                json!({"type": "assistant_message", "text": "done"}),
            ),
            (
                Event::ApprovalRequest {
                    call_id: "c2".into(),
                    command: "rm -rf build".into(),
                    reason: "deletes files".into(),
                    exact_rule: None,
                    prefix_rule: None,
                    diff: None,
                },
                json!({"type": "approval_request", "call_id": "c2", "command": "rm -rf build",
                       "reason": "deletes files"}),
            ),
            (
                Event::ApprovalRequest {
                    call_id: "c3".into(),
                    command: "cargo test -q".into(),
                    reason: "not read-only".into(),
                    exact_rule: Some("terminal(cargo test -q)".into()),
                    prefix_rule: Some("terminal(cargo test -q:*)".into()),
                    diff: None,
                },
                json!({"type": "approval_request", "call_id": "c3", "command": "cargo test -q",
                       "reason": "not read-only", "exact_rule": "terminal(cargo test -q)",
                       "prefix_rule": "terminal(cargo test -q:*)"}),
            ),
            (
                Event::FileDiff {
                    call_id: "c5".into(),
                    path: "/w/a.txt".into(),
                    diff: "--- a/w/a.txt\n+++ b/w/a.txt\n".into(),
                },
                json!({"type": "file_diff", "call_id": "c5", "path": "/w/a.txt",
                       "diff": "--- a/w/a.txt\n+++ b/w/a.txt\n"}),
            ),
            (
                Event::AutoApproved {
                    call_id: "c4".into(),
                    rule: "terminal(cargo test:*)".into(),
                },
                json!({"type": "auto_approved", "call_id": "c4",
                       "rule": "terminal(cargo test:*)"}),
            ),
            (Event::ReviewStarted, json!({"type": "review_started"})),
            (
                Event::SkillWritten {
                    action: "create".into(),
                    name: "k8s".into(),
                    actor: SkillActor::Review,
                },
                json!({"type": "skill_written", "action": "create", "name": "k8s",
                       "actor": "review"}),
            ),
            (
                Event::ReviewUsage {
                    requests: 3,
                    prompt_tokens: 9000,
                    completion_tokens: 300,
                    cached_tokens: 8000,
                    cost_usd: Some(0.01),
                    stopped: Some("input-token cap".into()),
                },
                json!({"type": "review_usage", "requests": 3, "prompt_tokens": 9000,
                       "completion_tokens": 300, "cached_tokens": 8000, "cost_usd": 0.01,
                       "stopped": "input-token cap"}),
            ),
            (
                Event::ReviewFinished {
                    summary: "review: created skill k8s".into(),
                },
                json!({"type": "review_finished", "summary": "review: created skill k8s"}),
            ),
            (
                Event::Error {
                    message: "boom".into(),
                },
                json!({"type": "error", "message": "boom"}),
            ),
            (
                Event::TurnAborted {
                    reason: TurnAbortReason::Interrupted,
                },
                json!({"type": "turn_aborted", "reason": "interrupted"}),
            ),
            (Event::TurnComplete, json!({"type": "turn_complete"})),
        ]
    }

    #[test]
    fn every_event_prints_its_pinned_json() {
        for (event, expected) in pinned_events() {
            let line = event.to_json_line().unwrap();
            assert!(!line.contains('\n'), "one line per event: {line}");
            let printed: Value = serde_json::from_str(&line).unwrap();
            assert_eq!(printed, expected);
        }
    }

    #[test]
    fn field_order_is_type_first_then_declaration_order() {
        let line = Event::ToolCallEnd {
            call_id: "c".into(),
            name: "n".into(),
            success: false,
            duration_ms: 3,
        }
        .to_json_line()
        .unwrap();
        assert_eq!(
            line,
            r#"{"type":"tool_call_end","call_id":"c","name":"n","success":false,"duration_ms":3}"#
        );
        assert_eq!(
            Event::ReviewStarted.to_json_line().unwrap(),
            r#"{"type":"review_started"}"#
        );
    }

    #[test]
    fn events_round_trip() {
        for (event, expected) in pinned_events() {
            let back: Event = serde_json::from_value(expected).unwrap();
            assert_eq!(back, event);
        }
    }

    #[test]
    fn fieldless_events_print_only_their_type() {
        // CONTRACT.md writes them as `turn_complete {}`: an object with no other key.
        let printed = serde_json::to_value(Event::TurnComplete).unwrap();
        assert_eq!(printed.as_object().map(|o| o.len()), Some(1));
        let back: Event = serde_json::from_str(r#"{"type":"turn_complete"}"#).unwrap();
        assert_eq!(back, Event::TurnComplete);
    }

    #[test]
    fn unparsable_tool_arguments_are_kept_as_the_raw_string() {
        let event = Event::tool_call_begin("c", "terminal", "{\"command\": \"ls");
        let Event::ToolCallBegin { arguments, .. } = event else {
            panic!("wrong variant");
        };
        assert_eq!(arguments, Value::String("{\"command\": \"ls".into()));
    }

    #[test]
    fn only_final_events_end_a_turn() {
        let enders: Vec<bool> = pinned_events()
            .into_iter()
            .map(|(event, _)| event.ends_turn())
            .collect();
        assert_eq!(enders.iter().filter(|ended| **ended).count(), 3);
        assert!(Event::TurnComplete.ends_turn());
        assert!(
            !Event::ReviewFinished {
                summary: String::new()
            }
            .ends_turn()
        );
    }

    #[test]
    fn ops_have_their_pinned_json_and_round_trip() {
        let cases = vec![
            (
                Op::UserTurn { text: "hi".into() },
                json!({"type": "user_turn", "text": "hi"}),
            ),
            (Op::Interrupt, json!({"type": "interrupt"})),
            (
                Op::Approval {
                    call_id: "c1".into(),
                    decision: ApprovalDecision::ApproveAlways,
                    rule: Some("terminal(ls)".into()),
                    message: None,
                },
                json!({"type": "approval", "call_id": "c1", "decision": "approve_always",
                       "rule": "terminal(ls)"}),
            ),
            (
                Op::Approval {
                    call_id: "c2".into(),
                    decision: ApprovalDecision::ApproveOnce,
                    rule: None,
                    message: None,
                },
                json!({"type": "approval", "call_id": "c2", "decision": "approve_once"}),
            ),
            (
                Op::Approval {
                    call_id: "c3".into(),
                    decision: ApprovalDecision::Deny,
                    rule: None,
                    message: Some("use the staging host".into()),
                },
                json!({"type": "approval", "call_id": "c3", "decision": "deny",
                       "message": "use the staging host"}),
            ),
            (Op::RunReview, json!({"type": "run_review"})),
            (
                Op::SetMode {
                    mode: ApprovalMode::Plan,
                },
                json!({"type": "set_mode", "mode": "plan"}),
            ),
            (
                Op::SetMode {
                    mode: ApprovalMode::AskEdits,
                },
                json!({"type": "set_mode", "mode": "ask-edits"}),
            ),
            (Op::Shutdown, json!({"type": "shutdown"})),
        ];
        for (op, expected) in cases {
            assert_eq!(serde_json::to_value(&op).unwrap(), expected);
            let back: Op = serde_json::from_value(expected).unwrap();
            assert_eq!(back, op);
        }
    }

    #[test]
    fn unknown_types_are_rejected() {
        let err = serde_json::from_str::<Op>(r#"{"type":"explode"}"#).unwrap_err();
        assert!(err.to_string().contains("explode"), "{err}");
    }
}
