//! The quarantine: a private folder per fetch under `.hub/quarantine/`, removed
//! when its guard drops, so no error path can leave a half-fetched skill behind.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::{Error, Result};

/// Leftovers older than this come from a process that was killed mid-install.
const STALE_AFTER: Duration = Duration::from_secs(6 * 3600);

/// One quarantine folder; dropping it deletes the folder and everything in it.
pub(crate) struct Quarantine {
    dir: tempfile::TempDir,
}

impl Quarantine {
    /// `<hub>/quarantine/<slug>-<random>`.
    pub(crate) fn new(hub_dir: &Path, slug: &str) -> Result<Self> {
        let root = hub_dir.join("quarantine");
        std::fs::create_dir_all(&root).map_err(|e| Error::io(&root, e))?;
        sweep_stale(&root);
        let dir = tempfile::Builder::new()
            .prefix(&format!("{slug}-"))
            .tempdir_in(&root)
            .map_err(|e| Error::io(&root, e))?;
        Ok(Self { dir })
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A fresh empty sub-folder.
    pub(crate) fn sub(&self, name: &str) -> Result<PathBuf> {
        let path = self.dir.path().join(name);
        std::fs::create_dir_all(&path).map_err(|e| Error::io(&path, e))?;
        Ok(path)
    }
}

impl Drop for Quarantine {
    fn drop(&mut self) {
        // TempDir removes the tree; an entry with its write bit cleared would
        // survive, so open the permissions first.
        make_removable(self.dir.path());
    }
}

fn make_removable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for entry in walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .flatten()
    {
        if entry.file_type().is_dir() {
            let _ = std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o755));
        }
    }
}

/// Removes quarantine folders left by killed processes.
fn sweep_stale(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > STALE_AFTER);
        if old {
            make_removable(&entry.path());
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropping_the_guard_removes_everything() {
        let hub = tempfile::tempdir().unwrap();
        let q = Quarantine::new(hub.path(), "demo").unwrap();
        let inner = q.sub("fetch/deep").unwrap();
        std::fs::write(inner.join("f"), "x").unwrap();
        assert!(
            q.path()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("demo-")
        );
        drop(q);
        let left: Vec<_> = std::fs::read_dir(hub.path().join("quarantine"))
            .unwrap()
            .collect();
        assert!(left.is_empty());
    }
}
