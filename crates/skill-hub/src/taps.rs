//! `.hub/taps.json`: extra repositories (GitHub, git or well-known sites) whose
//! skills join `search` and `browse`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::identifier::Identifier;
use crate::{Error, Result};

pub const TAPS_FILE: &str = "taps.json";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tap {
    /// A canonical identifier of a collection: `github:o/r[/path]`, `git+…`, `well-known:…`.
    pub repo: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TapsFile {
    taps: Vec<Tap>,
}

/// The taps stored under one hub folder.
pub struct Taps {
    path: PathBuf,
}

impl Taps {
    pub fn new(hub_dir: &Path) -> Self {
        Self {
            path: hub_dir.join(TAPS_FILE),
        }
    }

    /// The taps; a missing file gives none. A damaged one is an error naming
    /// it (a copy is kept as `taps.json.damaged`): read as empty, the next
    /// `tap add` would write a file that forgets every other tap.
    pub fn list(&self) -> Result<Vec<Tap>> {
        knack_config::state_file::read_json::<TapsFile>(
            &self.path,
            "fix it, or delete it to start again with no taps",
        )
        .map(|file| file.map(|f| f.taps).unwrap_or_default())
        .map_err(|e| Error::Damaged(e.to_string()))
    }

    /// Turns what the user typed into a tap: `owner/repo` means GitHub.
    pub fn normalize(text: &str, cwd: &Path) -> Result<String> {
        let text = text.trim();
        let looks_like_github = !text.contains(':')
            && text.split('/').count() == 2
            && !text.starts_with('.')
            && !cwd.join(text).exists();
        let text = if looks_like_github {
            format!("github:{text}")
        } else {
            text.to_owned()
        };
        match Identifier::parse(&text, cwd)? {
            Some(
                id @ (Identifier::GitHub { .. }
                | Identifier::Git { .. }
                | Identifier::WellKnown { name: None, .. }
                | Identifier::Local { .. }),
            ) => Ok(id.to_string()),
            _ => Err(Error::Identifier(format!(
                "'{text}' cannot be a tap; use github:owner/repo, owner/repo, git+<url> or well-known:<site>"
            ))),
        }
    }

    /// Adds a tap; `false` when it was already there.
    pub fn add(&self, repo: &str) -> Result<bool> {
        let mut taps = self.list()?;
        if taps.iter().any(|t| t.repo == repo) {
            return Ok(false);
        }
        taps.push(Tap {
            repo: repo.to_owned(),
        });
        self.save(taps)?;
        Ok(true)
    }

    /// Removes a tap; `false` when it was not there.
    pub fn remove(&self, repo: &str) -> Result<bool> {
        let mut taps = self.list()?;
        let before = taps.len();
        taps.retain(|t| t.repo != repo);
        if taps.len() == before {
            return Ok(false);
        }
        self.save(taps)?;
        Ok(true)
    }

    fn save(&self, taps: Vec<Tap>) -> Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let mut text = serde_json::to_string_pretty(&TapsFile { taps })
            .map_err(|e| Error::io(&self.path, std::io::Error::other(e)))?;
        text.push('\n');
        skill_core::manage::atomic::write(&self.path, text.as_bytes())
            .map_err(|e| Error::io(&self.path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_remove_and_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let taps = Taps::new(dir.path());
        assert!(taps.list().unwrap().is_empty());
        let repo = Taps::normalize("acme/skills", dir.path()).unwrap();
        assert_eq!(repo, "github:acme/skills");
        assert!(taps.add(&repo).unwrap());
        assert!(!taps.add(&repo).unwrap());
        assert!(taps.add("git+file:///srv/r").unwrap());
        assert_eq!(taps.list().unwrap().len(), 2);
        assert!(taps.remove(&repo).unwrap());
        assert!(!taps.remove(&repo).unwrap());
        assert_eq!(
            taps.list().unwrap(),
            vec![Tap {
                repo: "git+file:///srv/r".into()
            }]
        );
        std::fs::write(dir.path().join(TAPS_FILE), "nope").unwrap();
        let err = taps.list().unwrap_err().to_string();
        assert!(err.contains("taps.json is not valid JSON"), "{err}");
        assert!(taps.add("github:other/repo").is_err(), "never overwritten");
        assert_eq!(
            std::fs::read_to_string(dir.path().join(TAPS_FILE)).unwrap(),
            "nope"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("taps.json.damaged")).unwrap(),
            "nope"
        );
        assert!(Taps::normalize("https://x.com/SKILL.md", dir.path()).is_err());
    }
}
