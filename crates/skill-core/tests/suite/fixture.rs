//! A small builder for skill trees in temp dirs.

use std::path::{Path, PathBuf};

use skill_core::{DiscoveryOptions, Scope, SkillRoot, SkillSet};

pub struct Tree {
    pub dir: tempfile::TempDir,
}

impl Tree {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Writes `rel` (creating parents) with `text`.
    pub fn file(&self, rel: &str, text: &str) -> &Self {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    /// Writes a minimal valid skill at `rel` (a folder path).
    pub fn skill(&self, rel: &str, name: &str, description: &str) -> &Self {
        self.file(
            &format!("{rel}/SKILL.md"),
            &format!(
                "---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nBody of {name}.\n"
            ),
        )
    }

    pub fn symlink(&self, target: &Path, rel: &str) -> &Self {
        let link = self.path(rel);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, link).unwrap();
        self
    }
}

pub fn root(path: PathBuf, scope: Scope) -> SkillRoot {
    SkillRoot { path, scope }
}

pub fn discover_roots(roots: Vec<SkillRoot>) -> SkillSet {
    skill_core::discover(&DiscoveryOptions::with_roots(roots)).0
}

pub fn names(set: &SkillSet) -> Vec<String> {
    set.visible().iter().map(|s| s.qualified_id()).collect()
}
