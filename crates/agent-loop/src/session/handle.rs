//! A session running in its own task, driven by `Op`s and answering with
//! `Event`s: how the TUI talks to the agent. Interrupts and approvals are
//! routed at once, even while a turn is running.

use std::sync::{Arc, Mutex};

use agent_protocol::{Event, Op};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{ChannelApprover, EventSink, ModelSwitch, Session, TurnOutcome};

/// The frontend's side of a running session.
pub struct SessionHandle {
    pub ops: UnboundedSender<Op>,
    pub events: UnboundedReceiver<Event>,
    pub session_id: String,
    /// Changes the model of the following requests (`/model`).
    pub models: ModelSwitcher,
    /// The session back once its work is done: after `Op::Shutdown`, or once
    /// every op sender and `models` are dropped and the queued work has run.
    pub finished: JoinHandle<Session>,
}

/// What the work loop runs, in the order it was asked.
enum Work {
    Op(Op),
    /// A model client is not an `Op` (ops are plain data a frontend could
    /// send as JSON), so a switch takes this side door into the same queue.
    SwitchModel(ModelSwitch),
}

/// Hands a new model to a running session. The switch waits behind work
/// already queued (a running turn finishes with the model it started with)
/// and applies to everything after it.
#[derive(Clone)]
pub struct ModelSwitcher {
    work: UnboundedSender<Work>,
}

impl ModelSwitcher {
    /// False when the session has ended.
    pub fn switch(&self, switch: ModelSwitch) -> bool {
        self.work.send(Work::SwitchModel(switch)).is_ok()
    }
}

/// Runs `session` until `Op::Shutdown` or until every op sender (and the
/// model switcher) is dropped.
/// `approver` must be the one the session's tool context uses, so approval
/// answers reach the waiting terminal call.
pub fn spawn_session(
    session: Session,
    events_rx: UnboundedReceiver<Event>,
    approver: Option<ChannelApprover>,
) -> SessionHandle {
    let session_id = session.id().to_owned();
    let events = session.events.clone();
    let (ops_tx, mut ops_rx) = unbounded_channel::<Op>();
    let (work_tx, work_rx) = unbounded_channel::<Work>();
    let models = ModelSwitcher {
        work: work_tx.clone(),
    };
    let current: Arc<Mutex<CancellationToken>> = Arc::new(Mutex::new(CancellationToken::new()));

    let router_current = Arc::clone(&current);
    // The mode is read by tool calls as they run, so a switch takes effect mid-turn.
    let mode = Arc::clone(&session.ctx.mode);
    tokio::spawn(async move {
        while let Some(op) = ops_rx.recv().await {
            match op {
                Op::Interrupt => lock(&router_current).cancel(),
                Op::SetMode { mode: new } => *crate::tools::lock(&mode) = new,
                Op::Approval {
                    call_id,
                    decision,
                    rule,
                    message,
                } => {
                    if let Some(approver) = &approver {
                        let answer = crate::tools::ApprovalAnswer {
                            decision,
                            rule,
                            message,
                        };
                        approver.answer(&call_id, answer);
                    }
                }
                Op::Shutdown => {
                    lock(&router_current).cancel();
                    let _ = work_tx.send(Work::Op(Op::Shutdown));
                    break;
                }
                other => {
                    let _ = work_tx.send(Work::Op(other));
                }
            }
        }
    });
    let finished = tokio::spawn(work_loop(session, work_rx, current, events));
    SessionHandle {
        ops: ops_tx,
        events: events_rx,
        session_id,
        models,
        finished,
    }
}

async fn work_loop(
    mut session: Session,
    mut work: UnboundedReceiver<Work>,
    current: Arc<Mutex<CancellationToken>>,
    events: EventSink,
) -> Session {
    while let Some(item) = work.recv().await {
        let op = match item {
            Work::Op(op) => op,
            Work::SwitchModel(switch) => {
                session.switch_model(switch);
                continue;
            }
        };
        let token = CancellationToken::new();
        *lock(&current) = token.clone();
        match op {
            Op::UserTurn { text } => match session.run_turn(&text, token.clone()).await {
                Ok(TurnOutcome::Answered(_)) => session.finish_turn(token).await,
                Ok(TurnOutcome::Interrupted) => {}
                Err(e) => events.send(Event::Error {
                    message: e.to_string(),
                }),
            },
            Op::RunReview => {
                if let Err(e) = session.run_review(token).await {
                    events.send(Event::Error {
                        message: e.to_string(),
                    });
                }
            }
            Op::Compact => match session.compact().await {
                Ok(crate::compaction::CompactionOutcome::Compacted { .. }) => {}
                Ok(crate::compaction::CompactionOutcome::NothingToDo) => {
                    events.send(Event::Error {
                        message: "nothing to compact yet: the conversation is one turn or less"
                            .to_owned(),
                    });
                }
                Err(e) => events.send(Event::Error {
                    message: e.to_string(),
                }),
            },
            Op::Shutdown => break,
            Op::Interrupt | Op::Approval { .. } | Op::SetMode { .. } => {}
        }
    }
    session
}

fn lock(token: &Mutex<CancellationToken>) -> std::sync::MutexGuard<'_, CancellationToken> {
    match token.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}
