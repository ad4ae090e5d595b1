//! File-system watching of the skill roots for long-running processes (the TUI):
//! any change under a root calls back at once so caches can be dropped.
//!
//! Events are coalesced: a burst (an editor's save, a hub install writing many
//! files) produces one callback listing the changed paths. A root that does not
//! exist yet is watched through its nearest existing parent and gets its own
//! recursive watch as soon as it appears.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use crate::{Error, Result};

/// Events closer together than this are delivered as one callback.
const COALESCE: Duration = Duration::from_millis(50);

/// Watches skill roots until dropped.
pub struct SkillWatcher {
    // Kept alive for the life of the watch; the worker thread only holds a weak handle.
    _watcher: Arc<Mutex<RecommendedWatcher>>,
}

impl SkillWatcher {
    /// Starts watching `roots` (recursively). `on_change` runs on a background
    /// thread with the paths that changed, after each burst of events.
    pub fn new<F>(roots: &[PathBuf], on_change: F) -> Result<Self>
    where
        F: FnMut(&[PathBuf]) + Send + 'static,
    {
        let (tx, rx) = mpsc::channel::<notify::Event>();
        let watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            if let Ok(event) = res
                && !matches!(event.kind, EventKind::Access(_))
            {
                let _ = tx.send(event);
            }
        })
        .map_err(watch_error)?;
        let watcher = Arc::new(Mutex::new(watcher));

        let mut pending = Vec::new();
        {
            let mut guard = lock(&watcher);
            for root in roots {
                if root.is_dir() {
                    guard
                        .watch(root, RecursiveMode::Recursive)
                        .map_err(watch_error)?;
                } else if let Some(parent) = nearest_existing_ancestor(root) {
                    guard
                        .watch(&parent, RecursiveMode::NonRecursive)
                        .map_err(watch_error)?;
                    pending.push(root.clone());
                }
            }
        }

        let weak = Arc::downgrade(&watcher);
        std::thread::Builder::new()
            .name("skill-watch".into())
            .spawn(move || deliver(rx, weak, pending, on_change))
            .map_err(|e| Error::Io {
                path: PathBuf::from("<skill watcher thread>"),
                source: e,
            })?;
        Ok(Self { _watcher: watcher })
    }
}

/// Runs on the worker thread until the watcher (and with it the sender) is dropped.
/// Adding watches happens here, never inside notify's handler, whose event loop
/// would deadlock waiting for itself.
fn deliver<F>(
    rx: mpsc::Receiver<notify::Event>,
    watcher: Weak<Mutex<RecommendedWatcher>>,
    mut pending: Vec<PathBuf>,
    mut on_change: F,
) where
    F: FnMut(&[PathBuf]),
{
    while let Ok(first) = rx.recv() {
        let mut paths = first.paths;
        loop {
            match rx.recv_timeout(COALESCE) {
                Ok(event) => paths.extend(event.paths),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        paths.sort();
        paths.dedup();
        let appeared: Vec<PathBuf> = pending.iter().filter(|p| p.is_dir()).cloned().collect();
        if !appeared.is_empty() {
            let Some(strong) = watcher.upgrade() else {
                return;
            };
            let mut guard = lock(&strong);
            for root in &appeared {
                if guard.watch(root, RecursiveMode::Recursive).is_ok() {
                    pending.retain(|p| p != root);
                }
            }
        }
        // A parent watched for a missing root also reports unrelated siblings.
        let relevant = !appeared.is_empty()
            || paths.is_empty()
            || paths
                .iter()
                .any(|p| !pending.iter().any(|root| is_unrelated_sibling(p, root)));
        if relevant {
            on_change(&paths);
        }
    }
}

/// True when `changed` sits in the parent watched for the missing `root` but
/// neither leads to it nor lies inside it.
fn is_unrelated_sibling(changed: &Path, root: &Path) -> bool {
    !root.starts_with(changed) && !changed.starts_with(root)
}

fn nearest_existing_ancestor(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|p| p.is_dir())
        .map(Path::to_path_buf)
}

fn lock(watcher: &Mutex<RecommendedWatcher>) -> std::sync::MutexGuard<'_, RecommendedWatcher> {
    match watcher.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

fn watch_error(e: notify::Error) -> Error {
    Error::Watch(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn wait_for(rx: &mpsc::Receiver<Vec<PathBuf>>, want: impl Fn(&[PathBuf]) -> bool) -> bool {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            match rx.recv_timeout(left) {
                Ok(paths) if want(&paths) => return true,
                Ok(_) => continue,
                Err(_) => return false,
            }
        }
        false
    }

    #[test]
    fn nested_edit_calls_back() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("skills");
        let nested = root.join("a/b/c");
        fs::create_dir_all(&nested).unwrap();
        fs::write(nested.join("SKILL.md"), "---\ndescription: x\n---\n").unwrap();
        let (tx, rx) = mpsc::channel();
        let _w = SkillWatcher::new(std::slice::from_ref(&root), move |paths| {
            let _ = tx.send(paths.to_vec());
        })
        .unwrap();
        fs::write(nested.join("SKILL.md"), "---\ndescription: y\n---\n").unwrap();
        let target = nested.join("SKILL.md");
        assert!(wait_for(&rx, |p| p.contains(&target)));
    }

    #[test]
    fn missing_root_is_picked_up_when_created() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("skills");
        let (tx, rx) = mpsc::channel();
        let _w = SkillWatcher::new(std::slice::from_ref(&root), move |paths| {
            let _ = tx.send(paths.to_vec());
        })
        .unwrap();
        fs::create_dir_all(&root).unwrap();
        assert!(wait_for(&rx, |p| p.iter().any(|x| x.starts_with(&root))));
        // Give the worker a moment to add the recursive watch, then edit inside.
        std::thread::sleep(Duration::from_millis(200));
        let skill = root.join("new");
        fs::create_dir_all(&skill).unwrap();
        fs::write(skill.join("SKILL.md"), "---\ndescription: x\n---\n").unwrap();
        assert!(wait_for(&rx, |p| p.iter().any(|x| x.starts_with(&skill))));
    }
}
