//! Asking before a risky terminal command runs: the `Approver` seam the frontends
//! implement, plus the two fixed answers (deny for unattended runs, approve for `--yolo`).

use std::future::Future;
use std::pin::Pin;

/// The answers are the protocol's, so a frontend's `Op::Approval` needs no translation.
pub use agent_protocol::ApprovalDecision;

/// Whether `decision` lets the command run.
pub fn allows(decision: ApprovalDecision) -> bool {
    matches!(
        decision,
        ApprovalDecision::ApproveOnce | ApprovalDecision::ApproveAlways
    )
}

pub type ApprovalFuture<'a> = Pin<Box<dyn Future<Output = ApprovalDecision> + Send + 'a>>;

/// Decides whether a command the terminal tool flagged may run.
pub trait Approver: Send + Sync {
    /// `reason` says which rule flagged `command`, in words a person understands.
    fn approve<'a>(&'a self, command: &'a str, reason: &'a str) -> ApprovalFuture<'a>;
}

/// Refuses every flagged command: the safe answer when nobody is there to ask.
#[derive(Debug, Clone, Copy, Default)]
pub struct AutoDeny;

impl Approver for AutoDeny {
    fn approve<'a>(&'a self, _command: &'a str, _reason: &'a str) -> ApprovalFuture<'a> {
        Box::pin(async { ApprovalDecision::Deny })
    }
}

/// Allows every flagged command (`--yolo`, config `agent.yolo`).
#[derive(Debug, Clone, Copy, Default)]
pub struct AutoApprove;

impl Approver for AutoApprove {
    fn approve<'a>(&'a self, _command: &'a str, _reason: &'a str) -> ApprovalFuture<'a> {
        Box::pin(async { ApprovalDecision::ApproveOnce })
    }
}
