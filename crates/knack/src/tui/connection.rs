//! The seam between the TUI and the running agent session: channels of
//! `agent-protocol` ops and events, plus what the status line shows.

use agent_protocol::{Event, Op};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use agent_loop::session::{ChannelApprover, EventSink, Session, SessionOptions, spawn_session};
use agent_loop::setup::ModelFlags;
use prompt_builder::Platform;

use crate::context::Context;

/// What the TUI talks to: the running agent session.
pub struct AgentConnection {
    pub ops: UnboundedSender<Op>,
    pub events: UnboundedReceiver<Event>,
    /// A resumed session's conversation, for the transcript to show.
    pub history: Vec<agent_loop::model::ChatMessage>,
    /// Hands `/model`'s new client to the session (none for stand-ins).
    pub models: Option<agent_loop::session::ModelSwitcher>,
}

/// Shown in the status line; `session_started` events update it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    pub session_id: String,
    pub model: String,
    /// The model's context window in tokens (0 when unknown), for the status
    /// line's fill gauge.
    pub context_window: u64,
    /// One line per configured MCP server: its state and tool count
    /// (`/mcp` shows them; failures are shown when the session starts).
    pub mcp_servers: Vec<McpServerLine>,
    /// How file edits are approved; Shift-Tab cycles it (shown in the status line).
    pub mode: agent_protocol::ApprovalMode,
}

/// An MCP server as the TUI reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerLine {
    pub text: String,
    pub failed: bool,
}

/// The lines `/mcp` shows, from the hub the session was given.
fn mcp_lines(hub: Option<&agent_loop::mcp_client::McpHub>) -> Vec<McpServerLine> {
    use agent_loop::mcp_client::ServerState;
    hub.map(|hub| hub.statuses())
        .unwrap_or_default()
        .into_iter()
        .map(|status| match &status.state {
            ServerState::Ready => McpServerLine {
                text: format!("{}: ready, {} tools", status.name, status.tools),
                failed: false,
            },
            ServerState::Failed(why) => McpServerLine {
                text: format!("{}: did not start ({why})", status.name),
                failed: true,
            },
            ServerState::Disabled => McpServerLine {
                text: format!("{}: disabled", status.name),
                failed: false,
            },
        })
        .collect()
}

/// How `knack chat` asks for a session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatOptions {
    /// Continue this stored session instead of starting a new one.
    pub resume: Option<String>,
    /// Skills preloaded into the first turn (`-s NAME`).
    pub preload: Vec<String>,
    /// `--provider` / `--model` from the command line.
    pub model: ModelFlags,
    /// The approval mode the session starts in (`--mode`, or the last session's).
    pub mode: agent_protocol::ApprovalMode,
}

/// Starts (or resumes) an agent session for the TUI. The session runs in its
/// own task; terminal approvals come back to it through `Op::Approval`.
pub async fn connect_agent(
    ctx: &Context,
    options: &ChatOptions,
) -> anyhow::Result<(AgentConnection, SessionInfo)> {
    let setup = ctx.session_setup(Platform::Tui);
    let choice = ctx.model(&options.model)?;
    let (events, events_rx) = EventSink::channel();
    let channel_approver = ChannelApprover::new(events.clone());
    // Started here rather than inside the session, so the TUI can report them;
    // the screen is still the shell's, so a line says what the wait is for.
    if !ctx.config.mcp_servers.is_empty() {
        let names: Vec<&str> = ctx.config.mcp_servers.keys().map(String::as_str).collect();
        eprintln!("knack: starting MCP servers: {} …", names.join(", "));
    }
    let mcp = setup.start_mcp().await;
    let mcp_servers = mcp_lines(mcp.as_deref());
    let session_options = SessionOptions {
        preload: options.preload.clone(),
        resume: options.resume.clone(),
        approver: setup.approver(Some(&channel_approver)),
        mode: options.mode,
        context_window: choice.context_window,
        mcp,
        ..setup.options(choice.model.clone())
    };
    let session = Session::launch(session_options, choice.client, events)
        .await
        .map_err(|e| crate::exit::failed(e.to_string()))?;
    let (window, _) =
        agent_loop::compaction::effective_window(choice.context_window, &choice.model);
    let info = SessionInfo {
        session_id: session.id().to_owned(),
        model: choice.model,
        context_window: window as u64,
        mcp_servers,
        mode: options.mode,
    };
    let history = if options.resume.is_some() {
        session.history().to_vec()
    } else {
        Vec::new()
    };
    let handle = spawn_session(session, events_rx, Some(channel_approver));
    Ok((
        AgentConnection {
            ops: handle.ops,
            events: handle.events,
            history,
            models: Some(handle.models),
        },
        info,
    ))
}

#[cfg(test)]
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
            context_window: 0,
            mcp_servers: Vec::new(),
            mode: agent_protocol::ApprovalMode::default(),
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
                            cache_write_tokens: 0,
                            cost_usd: None,
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
                    Op::Compact => {
                        let _ = ev_tx.send(Event::Compaction {
                            before_tokens: 5000,
                            after_tokens: 1200,
                        });
                    }
                    Op::Approval { .. } | Op::SetMode { .. } => {}
                    Op::Shutdown => break,
                }
            }
        });
        (
            AgentConnection {
                ops: op_tx,
                events: ev_rx,
                history: Vec::new(),
                models: None,
            },
            info,
        )
    }
}
