//! The seam between the TUI and the running agent session: channels of
//! `agent-protocol` ops and events, plus what the status line shows.

use agent_protocol::{Event, Op};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use crate::context::Context;

/// What the TUI talks to: the running agent session.
pub struct AgentConnection {
    pub ops: UnboundedSender<Op>,
    pub events: UnboundedReceiver<Event>,
}

/// Shown in the status line; `session_started` events update it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    pub session_id: String,
    pub model: String,
}

/// How `knack chat` asks for a session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatOptions {
    /// Continue this stored session instead of starting a new one.
    pub resume: Option<String>,
    /// Skills preloaded into the first turn (`-s NAME`).
    pub preload: Vec<String>,
}

/// Starts (or resumes) an agent session for the TUI.
///
/// The agent loop is wired in separately; until then this refuses with a
/// clear message so `knack chat` fails cleanly instead of pretending.
pub async fn connect_agent(
    ctx: &Context,
    options: &ChatOptions,
) -> anyhow::Result<(AgentConnection, SessionInfo)> {
    let _ = (ctx, options);
    Ok(echo::spawn())
}

pub mod echo {
    //! A stand-in agent for tests: it answers each user turn by streaming the
    //! text back in small deltas, then the whole message and usage.

    use agent_protocol::{Event, Op, TurnAbortReason};
    use tokio::sync::mpsc;

    use super::{AgentConnection, SessionInfo};

    pub fn spawn() -> (AgentConnection, SessionInfo) {
        let (op_tx, mut op_rx) = mpsc::unbounded_channel::<Op>();
        let (ev_tx, ev_rx) = mpsc::unbounded_channel::<Event>();
        let info = SessionInfo {
            session_id: "echo-session".into(),
            model: "echo".into(),
        };
        let started = Event::SessionStarted {
            session_id: info.session_id.clone(),
            model: info.model.clone(),
        };
        tokio::spawn(async move {
            let _ = ev_tx.send(started);
            while let Some(op) = op_rx.recv().await {
                match op {
                    Op::UserTurn { text } => {
                        let _ = ev_tx.send(Event::tool_call_begin("c1", "terminal", r#"{"command":"sleep 1"}"#));
                        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
                        let _ = ev_tx.send(Event::ToolCallOutput { call_id: "c1".into(), output: "a\nb\nc\nd\ne".into() });
                        let _ = ev_tx.send(Event::ToolCallEnd { call_id: "c1".into(), name: "terminal".into(), success: true, duration_ms: 1500 });
                        if text.contains("approve") { let _ = ev_tx.send(Event::ApprovalRequest { call_id: "c2".into(), command: "rm -rf x".into(), reason: "deletes".into() }); }
                        let reply = format!("echo: {text}");
                        let chars: Vec<char> = reply.chars().collect();
                        for chunk in chars.chunks(4) {
                            let _ = ev_tx.send(Event::AssistantDelta {
                                text: chunk.iter().collect(),
                            });
                        }
                        let _ = ev_tx.send(Event::AssistantMessage { text: reply });
                        let _ = ev_tx.send(Event::Usage {
                            prompt_tokens: 100,
                            completion_tokens: chars.len() as u64,
                            cached_tokens: 50,
                        });
                        let _ = ev_tx.send(Event::TurnComplete);
                    }
                    Op::Interrupt => {
                        let _ = ev_tx.send(Event::TurnAborted {
                            reason: TurnAbortReason::Interrupted,
                        });
                    }
                    Op::RunReview => {
                        let _ = ev_tx.send(Event::ReviewStarted);
                        let _ = ev_tx.send(Event::ReviewFinished {
                            summary: "review: nothing worth saving".into(),
                        });
                    }
                    Op::Approval { .. } => {}
                    Op::Shutdown => break,
                }
            }
        });
        (
            AgentConnection {
                ops: op_tx,
                events: ev_rx,
            },
            info,
        )
    }
}
