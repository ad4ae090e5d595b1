//! What a tool call may touch: the home, config, working directory, session, skill caches,
//! the approval hook, cancellation, and the shared records the turn loop reads back.

use std::collections::{BTreeSet, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use agent_protocol::ApprovalMode;
use knack_config::{Config, KnackHome};
use skill_core::search::SkillSearch;
use skill_core::{DiscoveryCache, DiscoveryOptions, SkillSet};
use tokio_util::sync::CancellationToken;

use super::approval::{Approver, AutoDeny};
use crate::secrets::Redactor;
use crate::session_store::SessionStore;

/// Who is writing skills in this context. The review may only change files it
/// viewed during the review (see [`ToolContext::viewed_paths`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillWriteMode {
    /// The agent, during a normal turn.
    Foreground,
    /// The self-improvement review fork.
    Review,
    /// A person calling tools by hand (`knack tool call`); history records the user.
    User,
}

/// Skills that appeared or disappeared since the turn loop last looked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CatalogDelta {
    pub added: BTreeSet<String>,
    pub removed: BTreeSet<String>,
}

impl CatalogDelta {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty()
    }
}

/// A shared, cloneable record of catalog changes made by tools. The turn loop
/// calls [`CatalogChanges::take`] before each request and, when something
/// changed, appends one note naming the skills.
#[derive(Debug, Clone, Default)]
pub struct CatalogChanges {
    inner: Arc<Mutex<CatalogDelta>>,
}

impl CatalogChanges {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn record_added(&self, name: impl Into<String>) {
        let name = name.into();
        let mut delta = lock(&self.inner);
        // Removed then re-created within one batch is no change for the model.
        if !delta.removed.remove(&name) {
            delta.added.insert(name);
        }
    }

    pub fn record_removed(&self, name: impl Into<String>) {
        let name = name.into();
        let mut delta = lock(&self.inner);
        if !delta.added.remove(&name) {
            delta.removed.insert(name);
        }
    }

    /// The changes since the last call, or `None` when there were none.
    pub fn take(&self) -> Option<CatalogDelta> {
        let delta = std::mem::take(&mut *lock(&self.inner));
        (!delta.is_empty()).then_some(delta)
    }

    /// The pending changes, without clearing them.
    pub fn peek(&self) -> CatalogDelta {
        lock(&self.inner).clone()
    }
}

/// Everything a tool call can see. Cheap to clone: the shared parts are `Arc`s,
/// so a review fork clones the context and changes only what differs.
#[derive(Clone)]
pub struct ToolContext {
    pub home: KnackHome,
    pub config: Arc<Config>,
    /// Relative paths and the terminal's working directory resolve against this.
    pub cwd: PathBuf,
    pub session_id: String,
    pub discovery: Arc<DiscoveryCache>,
    pub catalog: CatalogChanges,
    pub write_mode: SkillWriteMode,
    /// Names and qualified ids of every skill a successful `skill_view` returned
    /// through this context (a review starts with an empty set).
    pub viewed_skills: Arc<Mutex<BTreeSet<String>>>,
    /// The files (SKILL.md or support files) those views served, canonical;
    /// `skill_manage` in a review may change only these.
    pub viewed_paths: Arc<Mutex<HashSet<PathBuf>>>,
    pub approver: Arc<dyn Approver>,
    /// Permission rules the user answered "always" with, for the rest of the session
    /// (also saved to config.yaml).
    pub approved_rules: Arc<Mutex<BTreeSet<String>>>,
    /// How file edits are approved; the frontend changes it mid-session (`Op::SetMode`).
    pub mode: Arc<Mutex<ApprovalMode>>,
    /// Records what the running turn changes, for undo; `None` outside a session's turn.
    pub checkpoint: Arc<Mutex<Option<crate::checkpoint::TurnRecorder>>>,
    /// Cancelled on interrupt; long-running tools stop early.
    pub cancel: CancellationToken,
    /// When set, only these tools may run (the review's whitelist); any other
    /// call gets a refusal as its result.
    pub allowed: Option<BTreeSet<String>>,
    /// The session store `session_search` queries; opened from the home on demand when absent.
    pub sessions: Option<Arc<SessionStore>>,
    /// Known secret values; the registry redacts every tool result with it
    /// before the result is stored, shown or sent.
    pub redactor: Arc<Redactor>,
    /// The `skills_search` index and the skill set it was built from: built
    /// on the first search, again only when the set changed.
    pub skill_search: Arc<Mutex<Option<BuiltSearch>>>,
}

/// A search index and the skill set it was built from.
pub type BuiltSearch = (Arc<SkillSet>, Arc<SkillSearch>);

impl ToolContext {
    /// A foreground context with a fresh cache, no stored sessions, an
    /// approver that refuses every flagged command, and a redactor for the
    /// secrets of this environment and the home's `.env`.
    pub fn new(
        home: KnackHome,
        config: Config,
        cwd: PathBuf,
        session_id: impl Into<String>,
    ) -> Self {
        let discovery = Arc::new(DiscoveryCache::with_snapshot(home.cache_dir()));
        // Secure by default: every context redacts, even one a test or
        // `knack tool call` builds by hand.
        let redactor = Arc::new(Redactor::from_environment(&home, &config));
        Self {
            home,
            config: Arc::new(config),
            cwd,
            session_id: session_id.into(),
            discovery,
            catalog: CatalogChanges::new(),
            write_mode: SkillWriteMode::Foreground,
            viewed_skills: Arc::new(Mutex::new(BTreeSet::new())),
            viewed_paths: Arc::new(Mutex::new(HashSet::new())),
            approver: Arc::new(AutoDeny),
            approved_rules: Arc::new(Mutex::new(BTreeSet::new())),
            mode: Arc::new(Mutex::new(ApprovalMode::default())),
            checkpoint: Arc::new(Mutex::new(None)),
            cancel: CancellationToken::new(),
            allowed: None,
            sessions: None,
            redactor,
            skill_search: Arc::new(Mutex::new(None)),
        }
    }

    /// Shares a session's redactor (built once) instead of this context's own.
    pub fn with_redactor(mut self, redactor: Arc<Redactor>) -> Self {
        self.redactor = redactor;
        self
    }

    /// The approval mode in force now.
    pub fn approval_mode(&self) -> ApprovalMode {
        *lock(&self.mode)
    }

    pub fn with_mode(self, mode: ApprovalMode) -> Self {
        *lock(&self.mode) = mode;
        self
    }

    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    pub fn with_sessions(mut self, store: Arc<SessionStore>) -> Self {
        self.sessions = Some(store);
        self
    }

    pub fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    pub fn with_write_mode(mut self, mode: SkillWriteMode) -> Self {
        self.write_mode = mode;
        self
    }

    pub fn with_discovery(mut self, cache: Arc<DiscoveryCache>) -> Self {
        self.discovery = cache;
        self
    }

    /// The context for a self-improvement review forked from this one: same
    /// caches, catalog record and approvals, skill writes marked as the
    /// review's, fresh viewed sets, and dispatch limited to `allowed`.
    pub fn for_review(&self, allowed: BTreeSet<String>) -> Self {
        let mut review = self.clone();
        review.write_mode = SkillWriteMode::Review;
        review.viewed_skills = Arc::new(Mutex::new(BTreeSet::new()));
        review.viewed_paths = Arc::new(Mutex::new(HashSet::new()));
        review.allowed = Some(allowed);
        review
    }

    pub fn discovery_options(&self) -> DiscoveryOptions {
        DiscoveryOptions::resolve(&self.home, &self.config, &self.cwd)
    }

    /// The current skill set (re-walked only when something on disk changed).
    pub fn skills(&self) -> Arc<SkillSet> {
        self.discovery.get(&self.discovery_options())
    }

    /// The search index over `set`, built once per skill set.
    pub fn skill_search_for(&self, set: &Arc<SkillSet>) -> Arc<SkillSearch> {
        if let Some((built_from, search)) = lock(&self.skill_search).as_ref()
            && Arc::ptr_eq(built_from, set)
        {
            return Arc::clone(search);
        }
        let search = Arc::new(SkillSearch::from_skill_set(set));
        *lock(&self.skill_search) = Some((Arc::clone(set), Arc::clone(&search)));
        search
    }

    pub fn mark_viewed(&self, names: impl IntoIterator<Item = String>) {
        lock(&self.viewed_skills).extend(names);
    }

    pub fn mark_viewed_path(&self, path: PathBuf) {
        lock(&self.viewed_paths).insert(path);
    }

    pub fn viewed(&self) -> BTreeSet<String> {
        lock(&self.viewed_skills).clone()
    }

    pub fn is_allowed(&self, tool: &str) -> bool {
        self.allowed.as_ref().is_none_or(|set| set.contains(tool))
    }

    /// Resolves a path argument: `~/` is the user's home, relative paths are under `cwd`.
    pub fn resolve_path(&self, raw: &str) -> PathBuf {
        let raw = raw.trim();
        if (raw == "~" || raw.starts_with("~/"))
            && let Some(home) = std::env::var_os("HOME")
        {
            return PathBuf::from(home).join(raw.trim_start_matches('~').trim_start_matches('/'));
        }
        let path = PathBuf::from(raw);
        if path.is_absolute() {
            path
        } else {
            self.cwd.join(path)
        }
    }
}

/// Locks a mutex even if a panicking holder poisoned it: the data are plain sets.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_changes_cancel_out_and_drain() {
        let changes = CatalogChanges::new();
        assert!(changes.take().is_none());
        changes.record_added("a");
        changes.record_added("b");
        changes.record_removed("b");
        changes.record_removed("c");
        let delta = changes.take().unwrap();
        assert_eq!(delta.added, BTreeSet::from(["a".to_owned()]));
        assert_eq!(delta.removed, BTreeSet::from(["c".to_owned()]));
        assert!(changes.take().is_none(), "take drains");
    }

    #[test]
    fn review_context_has_its_own_viewed_set_and_whitelist() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(
            KnackHome::at(dir.path()),
            Config::default(),
            dir.path().to_path_buf(),
            "s1",
        );
        ctx.mark_viewed(["x".to_owned()]);
        let review = ctx.for_review(BTreeSet::from(["skill_view".to_owned()]));
        assert_eq!(review.write_mode, SkillWriteMode::Review);
        assert!(review.viewed().is_empty());
        assert!(review.is_allowed("skill_view") && !review.is_allowed("terminal"));
        assert!(ctx.is_allowed("terminal"));
        review.catalog.record_added("new");
        assert_eq!(
            ctx.catalog.peek().added.len(),
            1,
            "catalog record is shared"
        );
    }
}
