//! Test-only helpers for knack: a scripted mock model server for every wire,
//! its reply builders, request invariants, and a static-file server for hub tests.

mod bench;
mod git;
mod invariants;
mod listener;
mod reply;
mod server;
mod static_server;
mod synthetic;

pub use bench::print_bench;
pub use git::{git, git_repo};
pub use invariants::{InvariantChecker, check_invariants};
pub use reply::{ScriptedReply, ScriptedToolCall, ScriptedUsage};
pub use server::{
    CapturedRequest, INVARIANT_VIOLATED, MOCK_HEADER, MockModelServer, ModelWire, NO_REPLY_LEFT,
    Purpose, ReplyPolicy,
};
pub use static_server::{StaticRequest, StaticRoute, StaticServer};
pub use synthetic::{Layout, SyntheticSkill, synthetic_skills, write_library};

use serde::{Deserialize, Serialize};

/// One entry of a JSON script file: a reply and the queue it goes to.
///
/// A script is a JSON array of these, e.g.
/// `[{"text": "hi", "usage": {"prompt_tokens": 9, "completion_tokens": 1, "cached_tokens": 0}},
///   {"purpose": "review", "tool_calls": [{"id": "c1", "name": "skills_list", "arguments": "{}"}]}]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptEntry {
    #[serde(default)]
    pub purpose: Purpose,
    #[serde(flatten)]
    pub reply: ScriptedReply,
}

/// Parses a JSON script (an array of [`ScriptEntry`]).
pub fn parse_script(json: &str) -> serde_json::Result<Vec<ScriptEntry>> {
    serde_json::from_str(json)
}

impl MockModelServer {
    /// Queues every entry of a script, each on its purpose's queue.
    pub fn enqueue_script(&self, entries: impl IntoIterator<Item = ScriptEntry>) {
        for entry in entries {
            self.enqueue_for(entry.purpose, entry.reply);
        }
    }
}
