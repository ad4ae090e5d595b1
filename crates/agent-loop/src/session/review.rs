//! The self-improvement review: after a turn that needed many tool calls, a
//! fork of the conversation (same system prompt, same tools, purpose `review`)
//! is asked to save what it learned as a skill, with only skill, file-reading
//! and memory tools allowed.

use std::collections::BTreeSet;

use agent_protocol::{Event, SkillActor};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Session;
use super::turn::dispatch_calls;
use crate::Result;
use crate::model::{ChatMessage, RequestPurpose};
use crate::tools::REVIEW_TOOLS;

/// Most model requests one review may make.
pub const MAX_REVIEW_ITERATIONS: u32 = 16;

const REVIEW_REQUEST: &str = "\
[Self-improvement review] Look back over the work in this conversation. If it \
worked out a procedure worth repeating, ran into a pitfall, or showed that a \
skill you loaded was wrong or incomplete, save that knowledge now with \
skill_manage: create a skill (prefer one umbrella skill per topic over many \
small ones; its description is one line that says what it does and ends with \
\"Use when ...\", since the skills index shows about 160 characters of it), \
patch the skill you used, or add a file under its references/. You may only \
change skills the agent created and the user has not pinned, and you must view \
a skill with skill_view before changing it.\n\n\
Keep the library tidy as you go. When two or more agent-created skills in the \
same category overlap (similar names or descriptions, the same procedure told \
twice), merge them into one umbrella skill: view each of them, patch the one \
that should remain (or create a new umbrella) so it holds everything useful \
from the others, then delete each absorbed skill with absorbed_into set to the \
umbrella's name. A delete of yours archives the skill (the user can restore \
it), and it is refused without absorbed_into. Never delete a skill only \
because it looks old or unused: stale skills are the user's to retire.\n\n\
If nothing here is worth keeping, make no calls and reply \"Nothing worth \
saving.\" Finish with one short sentence on what you saved or merged.";

impl Session {
    /// Whether the last turn earned a review (enough tool calls since the
    /// last skill write, and reviews enabled).
    pub fn review_due(&self) -> bool {
        self.review_enabled && self.calls_since_skill_write >= self.review_threshold
    }

    /// What follows an answered turn, in the one order every frontend sees:
    /// the review when one is due (stopped after `agent.review_timeout_secs`,
    /// or by `cancel`), then `TurnComplete`, so a turn's last event is always
    /// the same one and a headless run's last line is `turn_complete`.
    pub async fn finish_turn(&mut self, cancel: CancellationToken) {
        if self.review_due() && !cancel.is_cancelled() {
            let limit = self.review_timeout;
            match tokio::time::timeout(limit, self.run_review(cancel)).await {
                Ok(Ok(_)) => {}
                // The conversation is untouched; the answer still stands.
                Ok(Err(e)) => tracing::warn!(error = %e, "the review failed"),
                Err(_) => self.events.send(Event::ReviewFinished {
                    summary: format!(
                        "review: stopped after {}s (agent.review_timeout_secs)",
                        limit.as_secs()
                    ),
                }),
            }
        }
        self.events.send(Event::TurnComplete);
    }

    /// Runs the review and returns its one-line summary. Failures end the
    /// review quietly (an `error` in the summary); the conversation is untouched.
    pub async fn run_review(&mut self, cancel: CancellationToken) -> Result<String> {
        self.events.send(Event::ReviewStarted);
        self.calls_since_skill_write = 0;
        let allowed: BTreeSet<String> = REVIEW_TOOLS.iter().map(|s| s.to_string()).collect();
        let mut ctx = self.ctx.for_review(allowed);
        ctx.cancel = cancel.clone();
        let mut fork = vec![ChatMessage::user(REVIEW_REQUEST)];
        let mut written: Vec<(String, String)> = Vec::new();
        let mut outcome = String::new();
        for _ in 0..MAX_REVIEW_ITERATIONS {
            let completion = tokio::select! {
                biased;
                _ = cancel.cancelled() => { outcome = "interrupted".into(); break; }
                result = self.request(RequestPurpose::Review, &fork) => match result {
                    Ok(c) => c,
                    Err(e) => { outcome = format!("stopped: {e}"); break; }
                },
            };
            fork.push(completion.to_message());
            if completion.tool_calls.is_empty() {
                break;
            }
            let results =
                dispatch_calls(self, &completion.tool_calls, &ctx, SkillActor::Review).await?;
            for (call, content) in completion.tool_calls.iter().zip(results) {
                if call.function.name == "skill_manage"
                    && serde_json::from_str::<Value>(&content)
                        .ok()
                        .and_then(|v| v["success"].as_bool())
                        == Some(true)
                {
                    let args: Value =
                        serde_json::from_str(&call.function.arguments).unwrap_or(Value::Null);
                    written.push((
                        args["action"].as_str().unwrap_or("write").to_owned(),
                        args["name"].as_str().unwrap_or("?").to_owned(),
                    ));
                }
                fork.push(ChatMessage::tool_result(call.id.clone(), content));
            }
        }
        let summary = summarize(&written, &outcome);
        self.events.send(Event::ReviewFinished {
            summary: summary.clone(),
        });
        Ok(summary)
    }
}

fn summarize(written: &[(String, String)], outcome: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    for (action, name) in written {
        let verb = match action.as_str() {
            "create" => "created skill",
            "patch" | "edit" => "updated skill",
            "write_file" => "added a file to",
            "remove_file" => "removed a file from",
            "delete" => "archived skill",
            _ => "changed skill",
        };
        let part = format!("{verb} {name}");
        if !parts.contains(&part) {
            parts.push(part);
        }
    }
    let mut summary = if parts.is_empty() {
        "review: nothing saved".to_owned()
    } else {
        format!("review: {}", parts.join(", "))
    };
    if !outcome.is_empty() {
        summary.push_str(&format!(" ({outcome})"));
    }
    summary
}

#[cfg(test)]
mod tests {
    #[test]
    fn summaries_name_each_write_once() {
        let w = vec![
            ("create".to_owned(), "a".to_owned()),
            ("patch".to_owned(), "b".to_owned()),
            ("patch".to_owned(), "b".to_owned()),
        ];
        assert_eq!(
            super::summarize(&w, ""),
            "review: created skill a, updated skill b"
        );
        assert_eq!(
            super::summarize(&[], "interrupted"),
            "review: nothing saved (interrupted)"
        );
    }
}
