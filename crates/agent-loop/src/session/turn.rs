//! One turn: the user's message (or skill invocation), then model requests and
//! tool dispatch until the model answers without calling a tool.

use std::sync::Mutex;
use std::time::Instant;

use agent_protocol::{Event, SkillActor, SkillLoadVia, TurnAbortReason};
use futures::future::join_all;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Session;
use crate::invocation::{InvocationVia, parse_invocation, render_invocation};
use crate::model::{
    ChatMessage, ChatRequest, Completion, RequestPurpose, StreamUpdate, ToolCall, Usage,
};
use crate::skill_usage::{self, TurnUses, UsageEvent};
use crate::tools::ToolContext;
use crate::{Error, Result};

/// What an interrupted answer is stored with, so the model knows on the next
/// turn and the history keeps one assistant message after each user message.
pub(crate) const INTERRUPTED_MARKER: &str = "[interrupted by the user]";

/// The result every tool call the user interrupted gets, so the history stays
/// usable on resume and front ends can say why the call ended.
pub const INTERRUPTED_TOOL_RESULT: &str =
    r#"{"success": false, "error": "interrupted by the user"}"#;

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnOutcome {
    /// The model answered; the text of its final message.
    Answered(String),
    /// The user interrupted; what was said so far is saved.
    Interrupted,
}

impl Session {
    /// Runs one user turn to its end. Tool errors go back to the model; only a
    /// model or transport failure (after retries) is an `Err`.
    pub async fn run_turn(&mut self, text: &str, cancel: CancellationToken) -> Result<TurnOutcome> {
        self.refresh_redactor();
        let mut turn_uses = TurnUses::default();
        let user_message = self.user_message(text, &mut turn_uses)?;
        self.ctx.cancel = cancel.clone();
        if self.history.is_empty()
            && let Some(title) = crate::session_store::title_from(text)
        {
            let _ = self.store.set_title(&self.id, &title);
        }
        let user_message = ChatMessage::user(user_message);
        self.check_window_holds_the_prefix(&user_message)?;
        self.record(user_message)?;
        self.start_checkpoint(text);

        for iteration in 0..self.max_iterations {
            // Another process may have changed skills between turns; within a
            // turn only this session's own writes can, and those are recorded.
            let changed_here = self.ctx.catalog.take().is_some();
            if iteration == 0 || changed_here {
                self.append_catalog_note()?;
            }
            if let Some(note) = self.mcp_tools_note() {
                self.record(ChatMessage::user(note))?;
            }
            if let Some(note) = self.mode_note() {
                self.record(ChatMessage::user(note))?;
            }
            // What streamed so far survives the request future being dropped.
            let partial = Mutex::new(String::new());
            let result = tokio::select! {
                biased;
                _ = cancel.cancelled() => None,
                result = self.turn_request(&partial) => Some(result),
            };
            let Some(result) = result else {
                let streamed = match partial.into_inner() {
                    Ok(text) => text,
                    Err(poisoned) => poisoned.into_inner(),
                };
                self.record(ChatMessage::assistant(
                    interrupted_answer(&streamed),
                    Vec::new(),
                ))?;
                return Ok(self.interrupted());
            };
            let (completion, sent) = result?;
            self.note_usage(completion.usage.as_ref(), sent);
            self.record(completion.to_message())?;
            if completion.tool_calls.is_empty() {
                self.events.send(Event::AssistantMessage {
                    text: completion.content.clone(),
                });
                return Ok(TurnOutcome::Answered(completion.content));
            }
            if !completion.content.trim().is_empty() {
                self.events.send(Event::AssistantMessage {
                    text: completion.content.clone(),
                });
            }
            let ctx = self.ctx.clone();
            let results = tokio::select! {
                biased;
                _ = cancel.cancelled() => None,
                results = dispatch_calls(self, &completion.tool_calls, &ctx, SkillActor::Agent) => Some(results?),
            };
            let Some(results) = results else {
                // Every call still needs its answer, or the history is unusable on resume.
                for call in &completion.tool_calls {
                    self.record(ChatMessage::tool_result(
                        call.id.clone(),
                        INTERRUPTED_TOOL_RESULT,
                    ))?;
                }
                return Ok(self.interrupted());
            };
            for (call, content) in completion.tool_calls.iter().zip(results) {
                for (id, name) in turn_uses.after_call(&call.function.name, &content) {
                    skill_usage::record(&self.store, &id, &name, UsageEvent::Use);
                }
                self.record(ChatMessage::tool_result(call.id.clone(), content))?;
            }
            self.count_tool_calls(&completion.tool_calls);
        }
        Err(Error::Session(format!(
            "the model was still calling tools after {} iterations (agent.max_iterations); the session is saved, resume it to continue",
            self.max_iterations
        )))
    }

    /// One request of the turn, compacted first when it would not fit; a
    /// provider that still says it is too long gets one compaction and one
    /// retry. Returns the completion and how many messages were sent.
    async fn turn_request(&mut self, partial: &Mutex<String>) -> Result<(Completion, usize)> {
        self.compact_if_needed().await?;
        let sent = self.request_len();
        match self
            .request_into(RequestPurpose::Turn, &[], Some(partial))
            .await
        {
            Err(e) if crate::compaction::is_context_overflow(&e.to_string()) => {
                match self.compact().await? {
                    crate::compaction::CompactionOutcome::Compacted { .. } => {
                        let sent = self.request_len();
                        let completion = self
                            .request_into(RequestPurpose::Turn, &[], Some(partial))
                            .await?;
                        Ok((completion, sent))
                    }
                    crate::compaction::CompactionOutcome::NothingToDo => Err(e),
                }
            }
            other => Ok((other?, sent)),
        }
    }

    /// How many messages the next request carries (system, preload, history).
    fn request_len(&self) -> usize {
        1 + usize::from(self.preload_message.is_some()) + self.history.len()
    }

    fn interrupted(&self) -> TurnOutcome {
        self.events.send(Event::TurnAborted {
            reason: TurnAbortReason::Interrupted,
        });
        TurnOutcome::Interrupted
    }

    /// The text the user typed, or the invocation message for `/skill` lines
    /// (each invoked skill counts as used).
    fn user_message(&self, text: &str, uses: &mut TurnUses) -> Result<String> {
        let set = self.ctx.skills();
        match parse_invocation(text, &set) {
            Ok(None) => Ok(text.to_owned()),
            Ok(Some(invocation)) => {
                for skill in &invocation.skills {
                    self.events.send(Event::SkillLoaded {
                        name: skill.name.clone(),
                        via: SkillLoadVia::Slash,
                    });
                    let id = skill.qualified_id();
                    if uses.invoked(&id) {
                        skill_usage::record(&self.store, &id, &skill.name, UsageEvent::Use);
                    }
                }
                Ok(render_invocation(
                    &invocation,
                    InvocationVia::Slash,
                    &self.id,
                    &self.preprocess,
                    &self.ctx.home.env_file(),
                ))
            }
            Err(e) => Err(Error::Session(e.to_string())),
        }
    }

    /// A secret saved since the last turn (the TUI's masked prompt writes
    /// `.env`) is redacted from this turn on; rebuilding costs a small file
    /// read, nothing next to a model request.
    fn refresh_redactor(&mut self) {
        let skills = self.ctx.skills();
        self.ctx.redactor = std::sync::Arc::new(crate::secrets::Redactor::for_session(
            &self.ctx.home,
            &self.ctx.config,
            &skills,
        ));
    }

    pub(crate) fn count_tool_calls(&mut self, calls: &[ToolCall]) {
        for call in calls {
            if call.function.name == "skill_manage" {
                self.calls_since_skill_write = 0;
            } else {
                self.calls_since_skill_write += 1;
            }
        }
    }

    /// A fresh record of what this turn changes (for `/undo`); the previous turn's
    /// checkpoints are pruned to their size cap first.
    fn start_checkpoint(&mut self, text: &str) {
        let checkpoints = self.ctx.home.checkpoints_dir();
        crate::checkpoint::prune(&checkpoints, crate::checkpoint::MAX_TOTAL_BYTES);
        self.turns_started += 1;
        let recorder = crate::checkpoint::TurnRecorder::new(
            &checkpoints,
            &self.id,
            crate::checkpoint::turn_id(self.turns_started),
            &self.ctx.cwd,
            text,
        );
        *crate::tools::lock(&self.ctx.checkpoint) = Some(recorder);
    }

    /// When the user switched the approval mode since the model last heard, one short
    /// user-role note says what the new mode allows (the system prompt stays frozen).
    fn mode_note(&mut self) -> Option<String> {
        use agent_protocol::ApprovalMode;
        let mode = self.ctx.approval_mode();
        if mode == self.told_mode {
            return None;
        }
        self.told_mode = mode;
        Some(match mode {
            ApprovalMode::Plan => "[Approval mode: plan] The user wants a plan, not changes: \
                 this session is read-only now. Read and search freely, run only commands \
                 that change nothing, and answer with the plan (what you would change, where \
                 and why). File edits and other commands are refused until the user leaves \
                 plan mode."
                .to_owned(),
            ApprovalMode::AskEdits => "[Approval mode: ask-edits] You may change files again; \
                 the user approves each edit before it is made."
                .to_owned(),
            ApprovalMode::AutoEdits => "[Approval mode: auto-edits] You may change files in \
                 the workspace again without the user approving each edit."
                .to_owned(),
        })
    }

    /// When skills appeared or disappeared since the model last heard, one
    /// short user-role note tells it; the system prompt stays as it was.
    fn append_catalog_note(&mut self) -> Result<()> {
        let current = self.visible_catalog();
        if current == self.catalog_baseline {
            return Ok(());
        }
        let added: Vec<String> = current
            .difference(&self.catalog_baseline)
            .cloned()
            .collect();
        let removed: Vec<String> = self
            .catalog_baseline
            .difference(&current)
            .cloned()
            .collect();
        let ids: Vec<String> = current.iter().cloned().collect();
        self.store.set_catalog(&self.id, &ids)?;
        self.catalog_baseline = current;
        let mut note = String::from("[Skill catalog update]");
        if !added.is_empty() {
            note.push_str(&format!(
                " New skills you can load with skill_view: {}.",
                added.join(", ")
            ));
        }
        if !removed.is_empty() {
            note.push_str(&format!(" No longer available: {}.", removed.join(", ")));
        }
        self.record(ChatMessage::user(note))?;
        self.events.send(Event::CatalogNote { added, removed });
        Ok(())
    }

    /// Sends one request and streams its events; `extra` messages follow the
    /// stored history (the review's fork uses this).
    pub(crate) async fn request(
        &self,
        purpose: RequestPurpose,
        extra: &[ChatMessage],
    ) -> Result<Completion> {
        self.request_into(purpose, extra, None).await
    }

    /// [`Self::request`], also collecting the answer's text into `partial` as
    /// it streams (a retry empties it), for an interruption to keep.
    async fn request_into(
        &self,
        purpose: RequestPurpose,
        extra: &[ChatMessage],
        partial: Option<&Mutex<String>>,
    ) -> Result<Completion> {
        let request = ChatRequest {
            model: self.model.clone(),
            messages: self.request_messages(extra),
            tools: self.tools.clone(),
            purpose,
            session_id: self.id.clone(),
        };
        let events = self.events.clone();
        let stream_text = purpose == RequestPurpose::Turn;
        let keep = |update: &StreamUpdate| {
            let Some(partial) = partial else { return };
            let mut text = match partial.lock() {
                Ok(guard) => guard,
                Err(poisoned) => poisoned.into_inner(),
            };
            match update {
                StreamUpdate::TextDelta(delta) => text.push_str(delta),
                StreamUpdate::Reset => text.clear(),
                _ => {}
            }
        };
        let forward = move |update: StreamUpdate| match update {
            StreamUpdate::TextDelta(text) if stream_text => {
                events.send(Event::AssistantDelta { text })
            }
            // Shown as it streams; the completion's content never includes it.
            StreamUpdate::ReasoningDelta(text) if stream_text => {
                events.send(Event::ReasoningDelta { text })
            }
            StreamUpdate::Retry {
                attempt,
                delay_ms,
                reason,
            } => events.send(Event::Retry {
                attempt,
                delay_ms,
                reason,
            }),
            StreamUpdate::TextDelta(_)
            | StreamUpdate::ReasoningDelta(_)
            | StreamUpdate::ToolCallStarted { .. }
            | StreamUpdate::Reset => {}
        };
        let mut on_update = move |update: StreamUpdate| {
            keep(&update);
            forward(update)
        };
        let completion = self.client.stream_chat(&request, &mut on_update).await?;
        self.report_usage(purpose, completion.usage.as_ref());
        Ok(completion)
    }

    /// Tells the frontends what a request used (a `usage` event) and stores
    /// it. Every request reports: turns, the review and compaction alike, so
    /// the totals a frontend sums match what the store totals.
    pub(crate) fn report_usage(&self, purpose: RequestPurpose, usage: Option<&Usage>) {
        if let Some(usage) = usage {
            self.events.send(Event::Usage {
                prompt_tokens: usage.prompt_tokens,
                completion_tokens: usage.completion_tokens,
                cached_tokens: usage.cached_tokens.unwrap_or(0),
                cache_write_tokens: usage.cache_write_tokens.unwrap_or(0),
                cost_usd: usage.cost_usd,
            });
        }
        self.record_usage(purpose, usage);
    }

    /// Stores what a request used, for `knack sessions show`. A failed write
    /// only loses the statistic, so it is logged rather than ending the turn.
    fn record_usage(&self, purpose: RequestPurpose, usage: Option<&Usage>) {
        if let Some(usage) = usage
            && let Err(e) = self.store.record_usage(&self.id, purpose, usage)
        {
            tracing::warn!(error = %e, session = %self.id, "could not store the request's usage");
        }
    }
}

/// Runs a batch of tool calls: read-only ones concurrently, mutating ones one
/// at a time in the order the model gave; results come back in call order.
pub(crate) async fn dispatch_calls(
    session: &Session,
    calls: &[ToolCall],
    ctx: &ToolContext,
    actor: SkillActor,
) -> Result<Vec<String>> {
    let mut results: Vec<Option<String>> = vec![None; calls.len()];
    let mut start = 0;
    while start < calls.len() {
        if session.registry.is_mutating(&calls[start].function.name) {
            results[start] = Some(run_call(session, &calls[start], ctx, actor).await?);
            start += 1;
            continue;
        }
        let mut end = start;
        while end < calls.len() && !session.registry.is_mutating(&calls[end].function.name) {
            end += 1;
        }
        let batch = join_all(
            calls[start..end]
                .iter()
                .map(|c| run_call(session, c, ctx, actor)),
        )
        .await;
        for (offset, result) in batch.into_iter().enumerate() {
            results[start + offset] = Some(result?);
        }
        start = end;
    }
    Ok(results.into_iter().map(Option::unwrap_or_default).collect())
}

async fn run_call(
    session: &Session,
    call: &ToolCall,
    ctx: &ToolContext,
    actor: SkillActor,
) -> Result<String> {
    let name = &call.function.name;
    session.events.send(Event::tool_call_begin(
        call.id.clone(),
        name.clone(),
        &call.function.arguments,
    ));
    let started = Instant::now();
    let (reply, record) = crate::tools::recording(session.registry.dispatch(
        name,
        &call.function.arguments,
        ctx,
    ))
    .await;
    let reply = reply?;
    if let Some(rule) = record.approved_by {
        session.events.send(Event::AutoApproved {
            call_id: call.id.clone(),
            rule,
        });
    }
    for change in record.diffs {
        session.events.send(Event::FileDiff {
            call_id: call.id.clone(),
            path: change.path.display().to_string(),
            diff: change.diff,
        });
    }
    let success = reply.success();
    let content = reply.content();
    session.events.send(Event::ToolCallOutput {
        call_id: call.id.clone(),
        output: crate::tool_preview::preview(&content),
    });
    session.events.send(Event::ToolCallEnd {
        call_id: call.id.clone(),
        name: name.clone(),
        success,
        duration_ms: started.elapsed().as_millis() as u64,
    });
    if success && name == "skill_manage" {
        let args: Value = serde_json::from_str(&call.function.arguments).unwrap_or(Value::Null);
        session.events.send(Event::SkillWritten {
            action: args["action"].as_str().unwrap_or("write").to_owned(),
            name: args["name"].as_str().unwrap_or("?").to_owned(),
            actor,
        });
    }
    Ok(content)
}

/// The stored text of an answer cut short: what streamed, then the marker.
fn interrupted_answer(streamed: &str) -> String {
    let streamed = streamed.trim_end();
    if streamed.is_empty() {
        INTERRUPTED_MARKER.to_owned()
    } else {
        format!("{streamed}\n\n{INTERRUPTED_MARKER}")
    }
}
