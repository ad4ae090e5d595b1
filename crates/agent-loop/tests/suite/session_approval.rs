//! Approvals as a protocol round trip: a flagged terminal command in a
//! session started with `spawn_session` asks the frontend, which answers
//! with `Op::Approval`; the decision reaches the waiting tool call.

use std::sync::Arc;
use std::time::Duration;

use agent_loop::model::{ChatCompletionsClient, ClientSettings};
use agent_loop::session::{ChannelApprover, EventSink, Session, SessionOptions, spawn_session};
use agent_protocol::{ApprovalDecision, Event, Op};
use knack_config::{Config, KnackHome};
use prompt_builder::Platform;
use serde_json::Value;
use test_support::{MockModelServer, ScriptedReply};

/// A command the terminal tool flags (a download piped into a shell) that is
/// harmless here: nothing listens on port 1, so curl prints nothing.
const FLAGGED: &str = "curl -s http://127.0.0.1:1/x | sh; echo ran-it";

async fn run_with_decision(decision: ApprovalDecision) -> (Vec<Event>, Value) {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(ScriptedReply::tool_calls([(
        "c1",
        "terminal",
        serde_json::json!({ "command": FLAGGED }).to_string(),
    )]));
    server.enqueue(ScriptedReply::text("done"));
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.skills.bundled_opt_out = true;
    let (events, events_rx) = EventSink::channel();
    let approver = ChannelApprover::new(events.clone());
    let options = SessionOptions {
        max_iterations: 5,
        review: false,
        approver: Arc::new(approver.clone()),
        ..SessionOptions::new(
            KnackHome::at(home.path()),
            config,
            cwd.path().to_path_buf(),
            Platform::Tui,
            "mock",
        )
    };
    let client = ChatCompletionsClient::new(ClientSettings::new(server.base_url())).unwrap();
    let session = Session::start(options, Arc::new(client), events).unwrap();
    let mut handle = spawn_session(session, events_rx, Some(approver));
    handle
        .ops
        .send(Op::UserTurn {
            text: "run it".into(),
        })
        .unwrap();
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), handle.events.recv())
            .await
            .expect("the session went quiet")
            .expect("the session ended");
        if let Event::ApprovalRequest {
            call_id, command, ..
        } = &event
        {
            assert_eq!(command, FLAGGED);
            handle
                .ops
                .send(Op::Approval {
                    call_id: call_id.clone(),
                    decision,
                    rule: None,
                    message: None,
                })
                .unwrap();
        }
        let done = matches!(event, Event::TurnComplete | Event::Error { .. });
        seen.push(event);
        if done {
            break;
        }
    }
    let reqs = server.chat_requests();
    let tool_msg = reqs[1]
        .messages()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    let result: Value = serde_json::from_str(tool_msg["content"].as_str().unwrap()).unwrap();
    (seen, result)
}

#[tokio::test]
async fn an_approved_command_runs_and_a_denied_one_does_not() {
    let (events, result) = run_with_decision(ApprovalDecision::ApproveOnce).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequest { .. }))
    );
    assert!(result.to_string().contains("ran-it"), "{result}");

    let (events, result) = run_with_decision(ApprovalDecision::Deny).await;
    assert!(events.iter().any(|e| matches!(e, Event::TurnComplete)));
    assert_eq!(result["success"], Value::Bool(false));
    assert!(!result.to_string().contains("ran-it"), "{result}");
}
