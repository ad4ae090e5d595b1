//! Approvals as a round trip through the protocol: the session emits an
//! `approval_request` event and waits for the frontend's `Op::Approval`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use agent_protocol::Event;
use tokio::sync::oneshot;

use super::EventSink;
use crate::tools::{ApprovalAnswer, ApprovalAsk, ApprovalDecision, ApprovalFuture, Approver};

/// Asks the frontend; a dropped frontend counts as a denial.
#[derive(Clone)]
pub struct ChannelApprover {
    events: EventSink,
    pending: Arc<Mutex<HashMap<String, oneshot::Sender<ApprovalAnswer>>>>,
    next: Arc<AtomicU64>,
}

impl ChannelApprover {
    pub fn new(events: EventSink) -> Self {
        Self {
            events,
            pending: Arc::default(),
            next: Arc::default(),
        }
    }

    /// Delivers the frontend's answer to the waiting tool call.
    pub fn answer(&self, call_id: &str, answer: ApprovalAnswer) {
        let sender = match self.pending.lock() {
            Ok(mut map) => map.remove(call_id),
            Err(poisoned) => poisoned.into_inner().remove(call_id),
        };
        if let Some(sender) = sender {
            let _ = sender.send(answer);
        }
    }
}

impl Approver for ChannelApprover {
    fn approve<'a>(&'a self, ask: &'a ApprovalAsk) -> ApprovalFuture<'a> {
        Box::pin(async move {
            let call_id = format!("approval-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
            let (tx, rx) = oneshot::channel();
            match self.pending.lock() {
                Ok(mut map) => map.insert(call_id.clone(), tx),
                Err(poisoned) => poisoned.into_inner().insert(call_id.clone(), tx),
            };
            self.events.send(Event::ApprovalRequest {
                call_id,
                command: ask.subject.clone(),
                reason: ask.reason.clone(),
                exact_rule: ask.exact_rule.clone(),
                prefix_rule: ask.prefix_rule.clone(),
                diff: ask.diff.clone(),
            });
            rx.await
                .unwrap_or_else(|_| ApprovalAnswer::of(ApprovalDecision::Deny))
        })
    }
}
