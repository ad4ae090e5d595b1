//! The skills the palette and the browser offer: a snapshot of skill-core's
//! visible set, kept current by a file watcher (or a 2 s poll as a fallback).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use skill_core::watch::SkillWatcher;
use skill_core::{DiscoveryCache, DiscoveryOptions, Skill, SkillSet};

/// How often the catalog re-checks the roots when no watcher could start.
const POLL_EVERY: Duration = Duration::from_secs(2);

/// What the TUI needs to know about one skill.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillEntry {
    pub name: String,
    pub id: String,
    pub qualified_id: String,
    pub category: Option<String>,
    pub description: String,
    pub scope: String,
    pub skill_md: PathBuf,
    pub skill_dir: PathBuf,
    /// `user-invocable: false` keeps the skill out of the slash palette.
    pub user_invocable: bool,
}

impl SkillEntry {
    pub fn from_skill(skill: &Skill) -> Self {
        Self {
            name: skill.name.clone(),
            id: skill.id.clone(),
            qualified_id: skill.qualified_id(),
            category: skill.category.clone(),
            description: skill.list_description(),
            scope: skill.scope.label().to_owned(),
            skill_md: skill.path.clone(),
            skill_dir: skill.skill_dir.clone(),
            user_invocable: skill.frontmatter.user_invocable(),
        }
    }

    pub fn entries_of(set: &SkillSet) -> Vec<Self> {
        set.visible().into_iter().map(Self::from_skill).collect()
    }
}

/// The live source of skills for one TUI run.
pub struct SkillCatalog {
    options: DiscoveryOptions,
    cache: DiscoveryCache,
    changed: Arc<AtomicBool>,
    watcher: Option<SkillWatcher>,
    last_poll: Instant,
    last_set: Option<Arc<SkillSet>>,
}

impl SkillCatalog {
    /// Starts watching the roots of `options`; polling takes over if the
    /// watcher cannot start (too many inotify watches, an odd filesystem).
    pub fn new(options: DiscoveryOptions) -> Self {
        let changed = Arc::new(AtomicBool::new(false));
        let roots: Vec<PathBuf> = options.roots.iter().map(|r| r.path.clone()).collect();
        let flag = Arc::clone(&changed);
        let watcher = match SkillWatcher::new(&roots, move |_| flag.store(true, Ordering::SeqCst)) {
            Ok(w) => Some(w),
            Err(err) => {
                tracing::warn!("skill watcher unavailable, polling instead: {err}");
                None
            }
        };
        Self {
            options,
            cache: DiscoveryCache::new(),
            changed,
            watcher,
            last_poll: Instant::now(),
            last_set: None,
        }
    }

    pub fn entries(&mut self) -> Vec<SkillEntry> {
        let set = self.cache.get(&self.options);
        let entries = SkillEntry::entries_of(&set);
        self.last_set = Some(set);
        entries
    }

    /// Forgets the cache, so the next `entries` walks the roots again.
    pub fn reload(&self) {
        self.cache.invalidate();
    }

    /// Fresh entries when the skills on disk changed since the last call.
    pub fn poll_changes(&mut self) -> Option<Vec<SkillEntry>> {
        if self.watcher.is_some() {
            if !self.changed.swap(false, Ordering::SeqCst) {
                return None;
            }
            self.cache.invalidate();
            return Some(self.entries());
        }
        if self.last_poll.elapsed() < POLL_EVERY {
            return None;
        }
        self.last_poll = Instant::now();
        // `get` re-walks only when a stamp moved; a new Arc means it did.
        let now = self.cache.get(&self.options);
        let moved = self
            .last_set
            .as_ref()
            .is_none_or(|last| !Arc::ptr_eq(last, &now));
        let entries = moved.then(|| SkillEntry::entries_of(&now));
        self.last_set = Some(now);
        entries
    }
}
