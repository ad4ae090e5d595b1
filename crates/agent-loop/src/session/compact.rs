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
    ContextBudget::for_window(window, compact_at)
}

impl Session {
    /// How big the next request would be, by the provider's last count plus
    /// an estimate of what came since.
    pub(crate) fn next_request_estimate(&self, extra: &[ChatMessage]) -> usize {
        let messages = self.request_messages(extra);
        match self.last_count {
            Some(_) => compaction::estimate_request(&messages, self.tools_chars(), self.last_count),
            None => self.estimate_fresh(&messages),
        }
    }

    fn tools_chars(&self) -> usize {
        self.tools.as_ref().map_or(0, |t| t.get().len())
    }

    /// Remembers the provider's count for a request of `sent` messages (the
    /// history as it is now) and how it compares with the estimate.
    pub(crate) fn note_usage(&mut self, usage: Option<&Usage>, sent: usize) {
        if let Some(usage) = usage
            && usage.prompt_tokens > 0
        {
            let mut messages = self.request_messages(&[]);
            messages.truncate(sent);
            let estimated = compaction::estimate_request(&messages, self.tools_chars(), None);
            let count = ProviderCount::new(
                usize::try_from(usage.prompt_tokens).unwrap_or(usize::MAX),
                sent,
                estimated,
            );
            self.calibration = count.ratio;
            self.last_count = Some(count);
        }
    }

    /// An estimate made without a provider count, scaled by how the last
    /// count compared (the model's tokenizer may count more than four
    /// characters a token: numbers, code, other languages).
    fn estimate_fresh(&self, messages: &[ChatMessage]) -> usize {
        compaction::scaled(
            compaction::estimate_request(messages, self.tools_chars(), None),
            self.calibration,
        )
    }

    /// Refuses a turn that cannot fit at all: the window is smaller than the
    /// system prompt, the tools and the new message together.
    pub(crate) fn check_window_holds_the_prefix(&self, message: &ChatMessage) -> Result<()> {
        let mut minimal = vec![ChatMessage::system(self.system_prompt.clone())];
        if let Some(preload) = &self.preload_message {
            minimal.push(preload.clone());
        }
        minimal.push(message.clone());
        let needed = self.estimate_fresh(&minimal);
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
            self.estimate_fresh(&prefix)
        };
        // The cut counts unscaled estimates; the room it may keep is scaled back.
        let keep =
            (self.budget.keep_recent_tokens(prefix_tokens) as f64 / self.calibration) as usize;
        let Some(cut) = compaction::choose_cut(&self.history, keep, self.head_len.max(1)) else {
            return Ok(CompactionOutcome::NothingToDo);
        };
        // The part to summarise must itself fit: its oldest turns are left
        // out of the summarising request when it would not. A server that
        // still finds it too long gets one more try with half the room.
        let head = &self.history[..cut.cut];
        let prefix = self.request_messages(&[]).len() - self.history.len();
        let mut room = self.budget.threshold();
        let mut cap: Option<usize> = None;
        let mut attempt = 0;
        let completion = loop {
            let start = compaction::fit_start(head, room, |part| {
                let mut messages = self.request_messages(&[]);
                messages.truncate(prefix);
                messages.extend(compaction::summary_request_messages(part, cap));
                self.estimate_fresh(&messages)
            });
            let mut messages = self.request_messages(&[]);
            messages.truncate(prefix);
            messages.extend(compaction::summary_request_messages(&head[start..], cap));
            match self.send(RequestPurpose::Compact, messages).await {
                Ok(completion) => break completion,
                Err(e) if attempt == 0 && compaction::is_context_overflow(&e.to_string()) => {
                    attempt += 1;
                    room /= 2;
                    // Long messages (a pasted log, a big tool result) are cut
                    // to their ends for the summary, so even one turn fits.
                    cap = Some(2_000);
                }
                Err(e) => {
                    return Err(Error::Session(format!(
                        "compacting the history failed, so it was left as it was: {e}"
                    )));
                }
            }
        };
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
        self.report_usage(purpose, completion.usage.as_ref());
        Ok(completion)
    }
}
