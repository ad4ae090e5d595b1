//! A conversation with the model: the frozen system prompt and tool specs,
//! the turn loop, skill invocations as user messages, catalog notes, the
//! self-improvement review, and persistence of every message as it happens.

mod approver;
mod compact;
mod events;
mod handle;
mod mcp;
mod review;
mod turn;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use agent_protocol::{Event, SkillLoadVia};
use knack_config::{Config, KnackHome};
use prompt_builder::Platform;
use skill_core::{DiscoveryCache, PreprocessOptions};

use crate::invocation::{Invocation, InvocationVia, render_invocation};
use crate::model::{ChatMessage, FrozenTools, ModelClient, freeze_tools};
use crate::secrets::Redactor;
use crate::session_store::{NewSession, SessionStore, new_session_id};
use crate::tools::{Approver, ToolContext, ToolRegistry};
use crate::{Error, Result};

pub use approver::ChannelApprover;
pub use events::EventSink;
pub use handle::{ModelSwitcher, SessionHandle, spawn_session};
pub use mcp::start_mcp_servers;
pub use turn::{INTERRUPTED_TOOL_RESULT, TurnOutcome};

/// Everything needed to start or resume a session.
pub struct SessionOptions {
    pub home: KnackHome,
    pub config: Config,
    pub cwd: PathBuf,
    pub platform: Platform,
    pub model: String,
    /// Layer 4 of the system prompt (`--system` or `agent.system_message`).
    pub system_message: Option<String>,
    /// Skills preloaded with `-s`; sent as an ephemeral user message.
    pub preload: Vec<String>,
    /// Continue this stored session with its stored system prompt and tools.
    pub resume: Option<String>,
    pub max_iterations: u32,
    /// Run the self-improvement review at the end of qualifying turns.
    pub review: bool,
    pub approver: Arc<dyn Approver>,
    /// The session's MCP servers, already started (`Session::launch` starts
    /// them from `config.mcp_servers`); their tools join the frozen list.
    pub mcp: Option<Arc<mcp_client::McpHub>>,
    /// The model's context window in tokens (provider profile,
    /// `KNACK_CONTEXT_WINDOW`, `model.context_window`); `None` falls back to
    /// the model family's usual window.
    pub context_window: Option<u64>,
    /// How file edits are approved at the start (`--mode`); `Op::SetMode` changes it.
    pub mode: agent_protocol::ApprovalMode,
}

impl SessionOptions {
    /// A new session with the config's defaults: no extra system message, no
    /// preloads, `agent.max_iterations`, the review on, and every flagged
    /// terminal command refused (`AutoDeny`). Change fields with `..` syntax.
    pub fn new(
        home: KnackHome,
        config: Config,
        cwd: PathBuf,
        platform: Platform,
        model: impl Into<String>,
    ) -> Self {
        let system_message = config.agent.system_message.clone();
        let max_iterations = config.agent.max_iterations;
        let context_window = config.model.context_window;
        Self {
            home,
            config,
            cwd,
            platform,
            model: model.into(),
            system_message,
            preload: Vec::new(),
            resume: None,
            max_iterations,
            review: true,
            approver: Arc::new(crate::tools::AutoDeny),
            mcp: None,
            context_window,
            mode: agent_protocol::ApprovalMode::default(),
        }
    }
}

/// Another model for a running session's following requests (`/model`).
pub struct ModelSwitch {
    pub model: String,
    pub client: Arc<dyn ModelClient>,
    /// The new model's window, as [`SessionOptions::context_window`].
    pub context_window: Option<u64>,
}

/// A live session. Not shared between tasks: the handle owns it.
pub struct Session {
    pub(crate) id: String,
    pub(crate) model: String,
    pub(crate) client: Arc<dyn ModelClient>,
    pub(crate) registry: Arc<ToolRegistry>,
    /// `messages[0]` of every request, byte for byte.
    pub(crate) system_prompt: String,
    pub(crate) tools: Option<FrozenTools>,
    /// The stored conversation after the system prompt.
    pub(crate) history: Vec<ChatMessage>,
    /// Preloaded skills, inserted after the system prompt at request time only.
    pub(crate) preload_message: Option<ChatMessage>,
    pub(crate) store: Arc<SessionStore>,
    pub(crate) ctx: ToolContext,
    /// The visible skills the model was last told about.
    pub(crate) catalog_baseline: BTreeSet<String>,
    /// The approval mode the model was last told about (it starts knowing none:
    /// auto-edits, the default, needs no note).
    pub(crate) told_mode: agent_protocol::ApprovalMode,
    /// Turns started in this process, for checkpoint ids.
    pub(crate) turns_started: u64,
    /// Tool calls since the last `skill_manage` call (drives the review).
    pub(crate) calls_since_skill_write: u32,
    pub(crate) max_iterations: u32,
    pub(crate) review_enabled: bool,
    pub(crate) review_threshold: u32,
    /// Longest a review may run (`agent.review_timeout_secs`).
    pub(crate) review_timeout: std::time::Duration,
    pub(crate) preprocess: PreprocessOptions,
    pub(crate) events: EventSink,
    /// The window and when to compact.
    pub(crate) budget: crate::compaction::ContextBudget,
    /// The provider's token count of the last request, with its message count.
    pub(crate) last_count: Option<crate::compaction::ProviderCount>,
    /// Provider tokens per estimated token, from the last count (kept across
    /// a compaction, which drops the count itself).
    pub(crate) calibration: f64,
    /// `history[..head_len]` is a compaction's head (summary and carried
    /// skills), not stored as messages; `history[head_len + k]` is the stored
    /// message `first_seq + k`.
    pub(crate) head_len: usize,
    pub(crate) first_seq: i64,
}

impl Session {
    /// Builds (or reloads) the frozen prompt and tools and records the session.
    pub fn start(
        options: SessionOptions,
        client: Arc<dyn ModelClient>,
        events: EventSink,
    ) -> Result<Self> {
        let store = Arc::new(SessionStore::open(&options.home)?);
        let discovery = Arc::new(DiscoveryCache::new());
        let registry = Arc::new(crate::setup::registry(
            &options.config.agent.toolsets,
            options.mcp.as_ref(),
        ));
        let review_threshold = options.config.skills.review_after_tool_calls;
        let preprocess = PreprocessOptions::from_config(&options.home, &options.config);
        // The secrets this session must never store or send. It is rebuilt before
        // each turn (`refresh_redactor`), which adds values saved since and the
        // variables the skills declare.
        let redactor = Arc::new(Redactor::from_environment(&options.home, &options.config));

        let (id, system_prompt, tools, history, stored_catalog, head_len, first_seq) =
            match &options.resume {
                Some(resume_id) => {
                    let stored = store.load_session(resume_id)?;
                    let tools = match &stored.meta.tools_json {
                        Some(json) => Some(Arc::from(
                            serde_json::value::RawValue::from_string(json.clone()).map_err(
                                |e| {
                                    Error::Session(format!(
                                        "stored tools of {resume_id} are not JSON: {e}"
                                    ))
                                },
                            )?,
                        )),
                        None => None,
                    };
                    if stored.meta.model != options.model {
                        record_model(&store, &stored.meta.id, &options.model);
                    }
                    let history = stored.chat_messages();
                    let (head, first_seq) = stored.resume_point();
                    let head_len = head.len();
                    (
                        stored.meta.id,
                        stored.meta.system_prompt,
                        tools,
                        history,
                        stored.meta.catalog,
                        head_len,
                        first_seq,
                    )
                }
                None => {
                    let id = new_session_id();
                    let ctx_options = skill_core::DiscoveryOptions::resolve(
                        &options.home,
                        &options.config,
                        &options.cwd,
                    );
                    let skills = discovery.get(&ctx_options);
                    let inputs = options.prompt_inputs(id.clone(), &registry);
                    // The usage records are read once, here: the index they
                    // order stays as it is for the whole session.
                    let index_options = prompt_builder::IndexOptions::from_inputs(&inputs)
                        .with_context_window(
                            crate::compaction::known_context_window(
                                options.context_window,
                                &options.model,
                            ),
                            options.config.skills.index_budget_share,
                        )
                        .with_uses(
                            crate::skill_usage::use_counts(&store)
                                .inspect_err(|e| tracing::debug!(error = %e, "skill usage not read for the index"))
                                .unwrap_or_default(),
                        );
                    let index = prompt_builder::render_skills_index(&skills, &index_options);
                    let (prompt, warnings) =
                        prompt_builder::build_system_prompt_with_index(&inputs, index);
                    for warning in warnings {
                        tracing::warn!(%warning, "system prompt");
                    }
                    let tools = freeze_tools(registry.specs())?;
                    // The memory provider's output, memory files and context files
                    // are all in the prompt; a secret among them is stored and sent.
                    let prompt_text = redactor.redact(&prompt.text()).into_owned();
                    store.create_session(&NewSession {
                        id: Some(id.clone()),
                        model: options.model.clone(),
                        system_prompt: prompt_text.clone(),
                        tools_json: tools.as_ref().map(|t| t.get().to_owned()),
                        platform: options.platform.as_str().to_owned(),
                        cwd: options.cwd.to_string_lossy().into_owned(),
                    })?;
                    (id, prompt_text, tools, Vec::new(), None, 0, 0)
                }
            };

        let ctx = ToolContext::new(
            options.home.clone(),
            options.config.clone(),
            options.cwd.clone(),
            id.clone(),
        )
        .with_approver(Arc::clone(&options.approver))
        .with_mode(options.mode)
        .with_sessions(Arc::clone(&store))
        .with_discovery(Arc::clone(&discovery))
        .with_redactor(redactor);
        let budget = compact::budget_for(
            options.context_window,
            &options.model,
            options.config.context.compact_at,
        );
        let mut session = Self {
            id,
            model: options.model,
            client,
            registry,
            system_prompt,
            tools,
            history,
            preload_message: None,
            store,
            catalog_baseline: BTreeSet::new(),
            told_mode: agent_protocol::ApprovalMode::default(),
            turns_started: 0,
            ctx,
            calls_since_skill_write: 0,
            max_iterations: options.max_iterations.max(1),
            review_enabled: options.review && review_threshold > 0,
            review_threshold,
            review_timeout: std::time::Duration::from_secs(
                options.config.agent.review_timeout_secs,
            ),
            preprocess,
            events,
            budget,
            last_count: None,
            calibration: 1.0,
            head_len,
            first_seq,
        };
        session.catalog_baseline = match stored_catalog {
            Some(ids) => ids.into_iter().collect(),
            None => {
                let current = session.visible_catalog();
                let ids: Vec<String> = current.iter().cloned().collect();
                session.store.set_catalog(&session.id, &ids)?;
                current
            }
        };
        session.events.send(Event::SessionStarted {
            session_id: session.id.clone(),
            model: session.model.clone(),
        });
        session.preload(&options.preload)?;
        Ok(session)
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn history(&self) -> &[ChatMessage] {
        &self.history
    }

    pub fn tool_context(&self) -> &ToolContext {
        &self.ctx
    }

    /// The model name the next request sends.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Sends the following requests (turns, compactions, reviews) to another
    /// model. The system prompt and the tool list stay byte for byte what
    /// they were: the conversation goes on, only the model that continues it
    /// changes (the prompt still names the model the session started with).
    /// The provider's prompt cache belongs to the old model, so the next
    /// request pays for the whole prefix again.
    ///
    /// The context budget is recomputed for the new model's window: a smaller
    /// window means the next turn's check may compact the history at once
    /// (with the new model writing the summary), and a larger one simply
    /// leaves more room. The provider's last token count and its calibration
    /// are dropped, since another model's tokenizer counts differently; the
    /// next estimate starts from characters again until a usage report
    /// arrives.
    ///
    /// The stored session records the new model too, so `knack sessions
    /// list` and the resume picker name the model in use.
    pub fn switch_model(&mut self, switch: ModelSwitch) {
        record_model(&self.store, &self.id, &switch.model);
        self.budget =
            compact::budget_for(switch.context_window, &switch.model, self.budget.compact_at);
        self.model = switch.model;
        self.client = switch.client;
        self.last_count = None;
        self.calibration = 1.0;
    }

    /// Qualified ids of the skills every surface shows right now.
    pub(crate) fn visible_catalog(&self) -> BTreeSet<String> {
        self.ctx
            .skills()
            .visible()
            .iter()
            .map(|s| s.qualified_id())
            .collect()
    }

    fn preload(&mut self, names: &[String]) -> Result<()> {
        if names.is_empty() {
            return Ok(());
        }
        let set = self.ctx.skills();
        let mut skills = Vec::new();
        for name in names {
            let skill = crate::invocation::resolve_preload(&set, name)
                .map_err(|e| Error::Session(e.to_string()))?;
            skills.push(skill);
        }
        for skill in &skills {
            self.events.send(Event::SkillLoaded {
                name: skill.name.clone(),
                via: SkillLoadVia::Preload,
            });
            crate::skill_usage::record(
                &self.store,
                &skill.qualified_id(),
                &skill.name,
                crate::skill_usage::UsageEvent::Use,
            );
        }
        let invocation = Invocation {
            skills,
            text: String::new(),
        };
        let text = render_invocation(
            &invocation,
            InvocationVia::Preload,
            &self.id,
            &self.preprocess,
            &self.ctx.home.env_file(),
        );
        let text = self.ctx.redactor.redact(&text).into_owned();
        self.preload_message = Some(ChatMessage::user(text));
        Ok(())
    }

    /// Appends a message to the conversation and to `state.db` at once.
    /// Its text and tool-call arguments are redacted first: tool results
    /// already are (the registry does it), but a skill invocation's
    /// inline-shell output, pasted text or the model's own words may carry a
    /// known secret too, and neither the file nor the model gets it.
    pub(crate) fn record(&mut self, mut message: ChatMessage) -> Result<()> {
        if let Some(content) = &mut message.content {
            self.ctx.redactor.redact_string(content);
        }
        // The model's own tool-call arguments too: what it typed out is kept
        // from the store and the next request like everything else (the call
        // itself already ran, or runs, with the arguments as sent).
        for call in message.tool_calls.iter_mut().flatten() {
            self.ctx
                .redactor
                .redact_string(&mut call.function.arguments);
        }
        self.store.append_message(&self.id, &message)?;
        self.history.push(message);
        Ok(())
    }

    /// The messages of the next request: system, preload, history.
    pub(crate) fn request_messages(&self, extra: &[ChatMessage]) -> Vec<ChatMessage> {
        let mut messages = Vec::with_capacity(self.history.len() + extra.len() + 2);
        messages.push(ChatMessage::system(self.system_prompt.clone()));
        if let Some(preload) = &self.preload_message {
            messages.push(preload.clone());
        }
        messages.extend(self.history.iter().cloned());
        messages.extend(extra.iter().cloned());
        messages
    }
}

/// Stores the model a session now uses. A failed write only leaves the
/// listings naming the older model, so it is logged rather than stopping the
/// switch or the resume.
fn record_model(store: &SessionStore, session_id: &str, model: &str) {
    if let Err(e) = store.set_model(session_id, model) {
        tracing::warn!(error = %e, session = %session_id, %model, "could not store the session's model");
    }
}
