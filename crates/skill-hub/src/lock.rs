//! `.hub/lock.json`: what the hub installed, from where, under which trust and
//! verdict, with the content hash that `check` compares against upstream.

use std::collections::BTreeMap;
use std::path::{Component, Path};

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

pub const LOCK_FILE: &str = "lock.json";

/// One installed skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockEntry {
    /// `official`, `local`, `git`, `well-known`, `url` or `github`.
    pub source: String,
    /// The canonical identifier it was installed from.
    pub identifier: String,
    pub trust_level: String,
    pub scan_verdict: String,
    /// `sha256:<64 hex>` of the package as fetched (see `tree_hash`).
    pub content_hash: String,
    /// Relative to `skills/`: `<category>/<name>` or `<name>`.
    pub install_path: String,
    pub files: Vec<String>,
    pub installed_at: String,
    pub updated_at: String,
}

impl LockEntry {
    /// The category the skill was installed under, if any.
    pub fn category(&self) -> Option<&str> {
        self.install_path.rsplit_once('/').map(|(c, _)| c)
    }
}

/// The whole lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HubLock {
    pub version: u32,
    pub installed: BTreeMap<String, LockEntry>,
}

impl Default for HubLock {
    fn default() -> Self {
        Self {
            version: 1,
            installed: BTreeMap::new(),
        }
    }
}

impl HubLock {
    /// Reads the lock; a missing file is an empty lock. A damaged one is an
    /// error naming it (a copy is kept as `lock.json.damaged`), never an
    /// empty lock: that would make every hub skill look hand-made, and the
    /// next install would write a lock that forgets them.
    pub fn load(hub_dir: &Path) -> Result<HubLock> {
        let path = hub_dir.join(LOCK_FILE);
        knack_config::state_file::read_json::<HubLock>(
            &path,
            "restore it from a backup, or move it away to start a new lock (hub skills then count as hand-made)",
        )
        .map(Option::unwrap_or_default)
        .map_err(|e| Error::Damaged(e.to_string()))
    }

    /// Writes the lock atomically.
    pub fn save(&self, hub_dir: &Path) -> Result<()> {
        std::fs::create_dir_all(hub_dir).map_err(|e| Error::io(hub_dir, e))?;
        let path = hub_dir.join(LOCK_FILE);
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|e| Error::io(&path, std::io::Error::other(e)))?;
        text.push('\n');
        skill_core::manage::atomic::write(&path, text.as_bytes()).map_err(|e| Error::io(&path, e))
    }
}

/// An install path the lock may point at: relative, plain segments, last one the name.
pub(crate) fn check_install_path(name: &str, install_path: &str) -> Result<()> {
    // A marketplace plugin's skill: locked as `<plugin>:<skill>`, kept at
    // exactly `.plugins/<plugin>/<skill>`.
    if let Some((plugin, skill)) = name.split_once(':') {
        let expected = format!("{}/{plugin}/{skill}", skill_core::INSTALLED_PLUGINS_DIR);
        let parts_ok = [plugin, skill]
            .iter()
            .all(|p| skill_core::validate::validate_name(p).is_ok());
        if parts_ok && install_path == expected {
            return Ok(());
        }
        return Err(Error::Unsafe(format!(
            "the lock's install path '{install_path}' for the plugin skill '{name}' is not {expected}"
        )));
    }
    let path = Path::new(install_path);
    let plain = !install_path.is_empty()
        && !install_path.contains('\\')
        && !install_path.contains(':')
        && install_path
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..")
        && path.components().all(|c| matches!(c, Component::Normal(_)));
    let last = path.file_name().and_then(|n| n.to_str());
    if !plain || last != Some(name) {
        return Err(Error::Unsafe(format!(
            "the lock's install path '{install_path}' for '{name}' is not a plain path ending in the skill's name"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_lock_is_empty_and_a_damaged_one_is_an_error_never_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(HubLock::load(dir.path()).unwrap(), HubLock::default());
        let random: Vec<u8> = (0..200u32).map(|i| (i * 73 + 11) as u8).collect();
        for bytes in [&b"{broken"[..], &random[..]] {
            std::fs::write(dir.path().join(LOCK_FILE), bytes).unwrap();
            let err = HubLock::load(dir.path()).unwrap_err().to_string();
            assert!(err.contains("lock.json"), "{err}");
            assert_eq!(
                std::fs::read(dir.path().join("lock.json.damaged")).unwrap(),
                bytes
            );
        }
    }

    #[test]
    fn round_trip_and_path_rules() {
        let dir = tempfile::tempdir().unwrap();
        let mut lock = HubLock::default();
        lock.installed.insert(
            "x".into(),
            LockEntry {
                source: "git".into(),
                identifier: "git+file:///r".into(),
                trust_level: "community".into(),
                scan_verdict: "safe".into(),
                content_hash: "sha256:0".into(),
                install_path: "tools/x".into(),
                files: vec!["SKILL.md".into()],
                installed_at: "t".into(),
                updated_at: "t".into(),
            },
        );
        lock.save(dir.path()).unwrap();
        assert_eq!(HubLock::load(dir.path()).unwrap(), lock);
        assert_eq!(lock.installed["x"].category(), Some("tools"));
        assert!(check_install_path("x", "tools/x").is_ok());
        for bad in ["", "x/..", "../x", "/x", "tools/y", "a/./x"] {
            assert!(check_install_path("x", bad).is_err(), "{bad}");
        }
    }
}
