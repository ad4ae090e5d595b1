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

    /// The taps; a missing or damaged file gives none.
    pub fn list(&self) -> Vec<Tap> {
        std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|t| serde_json::from_str::<TapsFile>(&t).ok())
            .map(|f| f.taps)
            .unwrap_or_default()
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
        let mut taps = self.list();
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
        let mut taps = self.list();
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
        assert!(taps.list().is_empty());
        let repo = Taps::normalize("acme/skills", dir.path()).unwrap();
        assert_eq!(repo, "github:acme/skills");
        assert!(taps.add(&repo).unwrap());
        assert!(!taps.add(&repo).unwrap());
        assert!(taps.add("git+file:///srv/r").unwrap());
        assert_eq!(taps.list().len(), 2);
        assert!(taps.remove(&repo).unwrap());
        assert!(!taps.remove(&repo).unwrap());
        assert_eq!(
            taps.list(),
            vec![Tap {
                repo: "git+file:///srv/r".into()
            }]
        );
        std::fs::write(dir.path().join(TAPS_FILE), "nope").unwrap();
        assert!(taps.list().is_empty());
        assert!(Taps::normalize("https://x.com/SKILL.md", dir.path()).is_err());
    }
}
