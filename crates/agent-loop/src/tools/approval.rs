//! Asking before a tool call runs: the `Approver` seam the frontends implement, plus the
//! two fixed answers (deny for unattended runs, approve for `--yolo`).

use std::future::Future;
use std::pin::Pin;

/// The answers are the protocol's, so a frontend's `Op::Approval` needs no translation.
pub use agent_protocol::ApprovalDecision;

/// Whether `decision` lets the call run.
pub fn allows(decision: ApprovalDecision) -> bool {
    matches!(
        decision,
        ApprovalDecision::ApproveOnce | ApprovalDecision::ApproveAlways
    )
}

/// One question put to the user.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovalAsk {
    /// What will run, as the user should see it.
    pub subject: String,
    /// Which rule flagged it, in words a person understands.
    pub reason: String,
    /// The rule an "always" answer saves by default (exactly this action).
    pub exact_rule: Option<String>,
    /// A wider rule offered for editing, where one may be saved at all.
    pub prefix_rule: Option<String>,
    /// What an edit will change, as a unified diff.
    pub diff: Option<String>,
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalAnswer {
    pub decision: ApprovalDecision,
    /// With `ApproveAlways`: the rule the user chose to save.
    pub rule: Option<String>,
    /// With `Deny`: what the user wants the model to know.
    pub message: Option<String>,
}

impl ApprovalAnswer {
    pub fn of(decision: ApprovalDecision) -> Self {
        Self {
            decision,
            rule: None,
            message: None,
        }
    }
}

pub type ApprovalFuture<'a> = Pin<Box<dyn Future<Output = ApprovalAnswer> + Send + 'a>>;

/// Decides whether a call the boundary flagged may run.
pub trait Approver: Send + Sync {
    fn approve<'a>(&'a self, ask: &'a ApprovalAsk) -> ApprovalFuture<'a>;
}

/// Refuses every flagged call: the safe answer when nobody is there to ask.
#[derive(Debug, Clone, Copy, Default)]
pub struct AutoDeny;

impl Approver for AutoDeny {
    fn approve<'a>(&'a self, _ask: &'a ApprovalAsk) -> ApprovalFuture<'a> {
        Box::pin(async { ApprovalAnswer::of(ApprovalDecision::Deny) })
    }
}

/// Allows every flagged call (`--yolo`, config `agent.yolo`); saves no rule.
#[derive(Debug, Clone, Copy, Default)]
pub struct AutoApprove;

impl Approver for AutoApprove {
    fn approve<'a>(&'a self, _ask: &'a ApprovalAsk) -> ApprovalFuture<'a> {
        Box::pin(async { ApprovalAnswer::of(ApprovalDecision::ApproveOnce) })
    }
}
