//! An in-process discovery cache for long-running processes, validated by the
//! modification times of every root, folder and SKILL.md discovery read.

use std::sync::{Arc, Mutex};

use crate::discovery::discover;
use crate::roots::DiscoveryOptions;
use crate::skill_set::SkillSet;
use crate::stamp::Fingerprint;

struct Cached {
    options: DiscoveryOptions,
    set: Arc<SkillSet>,
    fingerprint: Fingerprint,
}

/// Holds the last discovery result; `get` re-walks only when something changed.
#[derive(Default)]
pub struct DiscoveryCache {
    slot: Mutex<Option<Cached>>,
    /// Where the disk snapshot lives; with it, a miss here loads the snapshot
    /// before it walks.
    snapshot_dir: Option<std::path::PathBuf>,
}

impl DiscoveryCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// A cache backed by the disk snapshot in `cache_dir` (`$KNACK_HOME/cache`).
    pub fn with_snapshot(cache_dir: std::path::PathBuf) -> Self {
        Self {
            slot: Mutex::default(),
            snapshot_dir: Some(cache_dir),
        }
    }

    /// The skill set for `options`, from cache when every stamp still matches.
    pub fn get(&self, options: &DiscoveryOptions) -> Arc<SkillSet> {
        let mut slot = match self.slot.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(cached) = slot.as_ref()
            && cached.options == *options
            && cached.fingerprint.is_current()
        {
            return Arc::clone(&cached.set);
        }
        let (set, fingerprint) = match &self.snapshot_dir {
            Some(dir) => {
                let (set, fingerprint, _) = crate::snapshot::load_with_fingerprint(options, dir);
                (set, fingerprint)
            }
            None => discover(options),
        };
        let set = Arc::new(set);
        *slot = Some(Cached {
            options: options.clone(),
            set: Arc::clone(&set),
            fingerprint,
        });
        set
    }

    /// Forgets the cached result; the next `get` walks again.
    pub fn invalidate(&self) {
        let mut slot = match self.slot.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        *slot = None;
    }
}
