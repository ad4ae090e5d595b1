//! Keeping a session inside its model's context window: the estimate before each request,
//! the summarising request (same system prompt and tools, purpose `compact`), the rewrite of
//! the history and its record in the store. The arithmetic lives in `crate::compaction`.

use agent_protocol::Event;

use super::Session;
use crate::compaction::{self, CompactionOutcome, ContextBudget, ProviderCount};
use crate::model::{ChatMessage, ChatRequest, Completion, RequestPurpose, StreamUpdate, Usage};
use crate::session_store::CompactionRecord;
use crate::{Error, Result};

/// The budget for a session: the window it was given (provider profile,
/// `KNACK_CONTEXT_WINDOW`, `model.context_window`), else the model family's
/// usual window, else a conservative default.
pub(crate) fn budget_for(window: Option<u64>, model: &str, compact_at: f64) -> ContextBudget {
    let (window, guessed) = compaction::effective_window(window, model);
    if guessed {
        tracing::info!(
            model,
            "no context window configured for this model; assuming {window} tokens (set model.context_window or KNACK_CONTEXT_WINDOW)"
        );
    }
    ContextBudget {
        window,
        reserve_output: (window / 8).min(8_192),
        compact_at: if compact_at > 0.0 && compact_at <= 1.0 {
            compact_at
        } else {
            0.8
        },
    }
}

impl Session {
    /// How big the next request would be, by the provider's last count plus
    /// an estimate of what came since.
    pub(crate) fn next_request_estimate(&self, extra: &[ChatMessage]) -> usize {
        let messages = self.request_messages(extra);
        compaction::estimate_request(&messages, self.tools_chars(), self.last_count)
    }

    fn tools_chars(&self) -> usize {
        self.tools.as_ref().map_or(0, |t| t.get().len())
    }

    /// Remembers the provider's count for a request of `sent` messages.
    pub(crate) fn note_usage(&mut self, usage: Option<&Usage>, sent: usize) {
        if let Some(usage) = usage
            && usage.prompt_tokens > 0
        {
            self.last_count = Some(ProviderCount {
                prompt_tokens: usize::try_from(usage.prompt_tokens).unwrap_or(usize::MAX),
                messages: sent,
            });
        }
    }

    /// Refuses a turn that cannot fit at all: the window is smaller than the
    /// system prompt, the tools and the new message together.
    pub(crate) fn check_window_holds_the_prefix(&self, message: &ChatMessage) -> Result<()> {
        let mut minimal = vec![ChatMessage::system(self.system_prompt.clone())];
        if let Some(preload) = &self.preload_message {
            minimal.push(preload.clone());
        }
        minimal.push(message.clone());
        let needed = compaction::estimate_request(&minimal, self.tools_chars(), None);
        let usable = self
            .budget
            .window
            .saturating_sub(self.budget.reserve_output);
        if needed > usable {
            return Err(Error::Session(format!(
                "the model's context window ({} tokens, {} kept for the answer) cannot hold the system prompt, the tools and this message (about {needed} tokens); use a model with a larger window, set model.context_window if it is larger than that, or disable toolsets in agent.toolsets",
                self.budget.window, self.budget.reserve_output
            )));
        }
        Ok(())
    }

    /// Compacts when the next request would pass the threshold.
    pub(crate) async fn compact_if_needed(&mut self) -> Result<()> {
        let estimate = self.next_request_estimate(&[]);
        if self.budget.should_compact(estimate) {
            self.compact_history(estimate).await?;
        }
        Ok(())
    }

    /// Summarises the older part of the history (by the same model, with the
    /// same system prompt and tools) and keeps the recent turns. A failed
    /// summary leaves the history untouched.
    pub async fn compact(&mut self) -> Result<CompactionOutcome> {
        let estimate = self.next_request_estimate(&[]);
        self.compact_history(estimate).await
    }

    async fn compact_history(&mut self, before: usize) -> Result<CompactionOutcome> {
        let prefix_tokens = {
            let mut prefix = self.request_messages(&[]);
            prefix.truncate(prefix.len() - self.history.len());
            compaction::estimate_request(&prefix, self.tools_chars(), None)
        };
        let Some(cut) = compaction::choose_cut(
            &self.history,
            self.budget.keep_recent_tokens(prefix_tokens),
            self.head_len.max(1),
        ) else {
            return Ok(CompactionOutcome::NothingToDo);
        };
        // The part to summarise must itself fit: its oldest turns are left
        // out of the summarising request when it would not.
        let head = &self.history[..cut.cut];
        let prefix = self.request_messages(&[]).len() - self.history.len();
        let room = self.budget.threshold();
        let start = compaction::fit_start(head, room, |part| {
            let mut messages = self.request_messages(&[]);
            messages.truncate(prefix);
            messages.extend(compaction::summary_request_messages(part));
            compaction::estimate_request(&messages, self.tools_chars(), None)
        });
        let mut messages = self.request_messages(&[]);
        messages.truncate(prefix);
        messages.extend(compaction::summary_request_messages(&head[start..]));
        let completion = self
            .send(RequestPurpose::Compact, messages)
            .await
            .map_err(|e| {
                Error::Session(format!(
                    "compacting the history failed, so it was left as it was: {e}"
                ))
            })?;
        let summary = completion.content.trim();
        if summary.is_empty() {
            return Err(Error::Session(
                "compacting the history failed: the model's summary was empty; the history was left as it was".to_owned(),
            ));
        }
        let rewritten = compaction::rewrite(&self.history, &cut, summary);
        let kept = self.history.len() - cut.cut;
        let first_kept_seq = self.first_seq
            + i64::try_from(cut.cut.saturating_sub(self.head_len)).unwrap_or(i64::MAX);
        let new_head_len = rewritten.len() - kept;
        let head_messages = rewritten[..new_head_len].to_vec();

        let old = std::mem::replace(&mut self.history, rewritten);
        let old_count = self.last_count.take();
        let after = self.next_request_estimate(&[]);
        let record = CompactionRecord {
            created_at: skill_core::clock::now_rfc3339(),
            before_tokens: before as u64,
            after_tokens: after as u64,
            summary: summary.to_owned(),
            head: head_messages,
            first_kept_seq,
        };
        if let Err(e) = self.store.record_compaction(&self.id, &record) {
            // Nothing is lost: the live history goes back to what is stored.
            self.history = old;
            self.last_count = old_count;
            return Err(e);
        }
        self.head_len = new_head_len;
        self.first_seq = first_kept_seq;
        self.events.send(Event::Compaction {
            before_tokens: before as u64,
            after_tokens: after as u64,
        });
        Ok(CompactionOutcome::Compacted { before, after })
    }

    /// Sends one request with exactly `messages` (the system prompt first)
    /// and the session's tools; retries are reported as events.
    pub(crate) async fn send(
        &self,
        purpose: RequestPurpose,
        messages: Vec<ChatMessage>,
    ) -> Result<Completion> {
        let request = ChatRequest {
            model: self.model.clone(),
            messages,
            tools: self.tools.clone(),
            purpose,
            session_id: self.id.clone(),
        };
        let events = self.events.clone();
        let mut on_update = move |update: StreamUpdate| {
            if let StreamUpdate::Retry {
                attempt,
                delay_ms,
                reason,
            } = update
            {
                events.send(Event::Retry {
                    attempt,
                    delay_ms,
                    reason,
                });
            }
        };
        let completion = self.client.stream_chat(&request, &mut on_update).await?;
        self.record_usage(purpose, completion.usage.as_ref());
        Ok(completion)
    }
}
