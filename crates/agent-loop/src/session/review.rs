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
use crate::model::{ChatMessage, RequestPurpose, Usage};
use crate::tools::REVIEW_TOOLS;

const REVIEW_REQUEST: &str = "\
[Self-improvement review] Look back over the work in this conversation. If it \
worked out a procedure worth repeating, ran into a pitfall, or showed that a \
skill was wrong or incomplete, save that knowledge now with skill_manage. \
Choose the first of these that fits:\n\
1. You loaded a skill for this work: patch that skill.\n\
2. An existing skill covers the wider topic (an umbrella): patch it, adding a \
section for this case.\n\
3. The knowledge is detail for an existing skill (a long example, a table, a \
script): add it as a file under that skill's references/ or scripts/ with \
write_file.\n\
4. No skill covers the topic: create one. Its description is one line of the \
form \"What it does. Use when ...\", with a short \"Use when\" clause: a \
crowded skills index shows about 160 characters of a description.\n\
skills_list shows what exists. A create that repeats an existing skill is \
refused with that skill's name; patch that one instead. You may only change \
skills the agent created and the user has not pinned, and you must view a \
skill with skill_view before changing it.\n\n\
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

/// What a review used so far, and the caps it runs under.
#[derive(Debug, Default)]
struct ReviewBill {
    requests: u32,
    prompt_tokens: u64,
    completion_tokens: u64,
    cached_tokens: u64,
    cost_usd: Option<f64>,
}

impl ReviewBill {
    fn add(&mut self, usage: Option<&Usage>, estimated_prompt: u64) {
        self.requests += 1;
        // A server that reports no usage is billed by the estimate, so the
        // cap still holds.
        match usage {
            Some(u) => {
                self.prompt_tokens += u.prompt_tokens;
                self.completion_tokens += u.completion_tokens;
                self.cached_tokens += u.cached_tokens.unwrap_or(0);
                if let Some(cost) = u.cost_usd {
                    *self.cost_usd.get_or_insert(0.0) += cost;
                }
            }
            None => self.prompt_tokens += estimated_prompt,
        }
    }

    fn event(&self, stopped: Option<String>) -> Event {
        Event::ReviewUsage {
            requests: self.requests,
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            cached_tokens: self.cached_tokens,
            cost_usd: self.cost_usd,
            stopped,
        }
    }
}

/// Why a review stops before the model is done, if the next request of
/// about `next_prompt` tokens would pass a cap.
fn cap_reached(
    bill: &ReviewBill,
    next_prompt: u64,
    max_input: u64,
    max_requests: u32,
) -> Option<String> {
    if bill.requests >= max_requests {
        return Some(format!(
            "stopped after {} requests (skills.review_max_iterations)",
            bill.requests
        ));
    }
    if bill.prompt_tokens.saturating_add(next_prompt) > max_input {
        return Some(format!(
            "stopped at the input-token cap: {} sent, the next request needs about {next_prompt} more, the cap is {max_input} (skills.review_max_input_tokens)",
            bill.prompt_tokens
        ));
    }
    None
}

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
    /// It stops cleanly, before sending, at `skills.review_max_input_tokens`
    /// (summed over its requests) and `skills.review_max_iterations`.
    pub async fn run_review(&mut self, cancel: CancellationToken) -> Result<String> {
        self.events.send(Event::ReviewStarted);
        self.calls_since_skill_write = 0;
        let max_input = self.ctx.config.skills.review_max_input_tokens;
        let max_requests = self.ctx.config.skills.review_max_iterations;
        let allowed: BTreeSet<String> = REVIEW_TOOLS.iter().map(|s| s.to_string()).collect();
        let mut ctx = self.ctx.for_review(allowed);
        ctx.cancel = cancel.clone();
        let mut fork = vec![ChatMessage::user(REVIEW_REQUEST)];
        let mut written: Vec<(String, String)> = Vec::new();
        let mut outcome = String::new();
        let mut bill = ReviewBill::default();
        let mut stopped: Option<String> = None;
        loop {
            let next_prompt = self.next_request_estimate(&fork) as u64;
            if let Some(reason) = cap_reached(&bill, next_prompt, max_input, max_requests) {
                stopped = Some(reason);
                break;
            }
            let completion = tokio::select! {
                biased;
                _ = cancel.cancelled() => { stopped = Some("interrupted".into()); break; }
                result = self.request(RequestPurpose::Review, &fork) => match result {
                    Ok(c) => c,
                    Err(e) => { outcome = format!("stopped: {e}"); break; }
                },
            };
            bill.add(completion.usage.as_ref(), next_prompt);
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
        if let Some(reason) = &stopped {
            outcome = reason.clone();
        }
        self.events.send(bill.event(stopped));
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
    use super::{ReviewBill, cap_reached};
    use crate::model::Usage;

    #[test]
    fn caps_stop_before_the_request_that_would_pass_them() {
        let mut bill = ReviewBill::default();
        assert_eq!(cap_reached(&bill, 900, 1000, 4), None);
        bill.add(
            Some(&Usage {
                prompt_tokens: 900,
                completion_tokens: 10,
                ..Usage::default()
            }),
            0,
        );
        let why = cap_reached(&bill, 900, 1000, 4).expect("the input cap");
        assert!(why.contains("review_max_input_tokens"), "{why}");
        assert_eq!(
            cap_reached(&bill, 100, 1000, 4),
            None,
            "exactly at the cap is allowed"
        );
        let why = cap_reached(&bill, 0, 1000, 1).expect("the request cap");
        assert!(why.contains("review_max_iterations"), "{why}");
        // No usage reported: the estimate is billed.
        bill.add(None, 50);
        assert_eq!(bill.prompt_tokens, 950);
        assert_eq!(bill.requests, 2);
    }

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
