//! The temp homes and workspaces runs happen in. A home template is built
//! once per eval (config, keys, library); every run gets its own copy, so no
//! run sees another's sessions, memories or skills unless the plan says so.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::{Error, Result};

/// Which skills a temp home starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Library {
    /// A copy of the user's `$KNACK_HOME/skills`.
    User,
    /// No skills at all: no bundled seeding, no external or plugin folders.
    Empty,
}

/// A prepared home that runs copy.
#[derive(Debug)]
pub struct HomeTemplate {
    dir: TempDir,
}

impl HomeTemplate {
    /// Builds a home from the user's config.yaml and .env (when there is a user
    /// home) and the chosen library. Bundled skills are never seeded into it:
    /// the library is exactly what the eval put there.
    pub fn build(user_home: Option<&Path>, library: Library) -> Result<Self> {
        let dir = temp_dir("knack-eval-home-")?;
        let root = dir.path();
        let config = root.join("config.yaml");
        if let Some(user) = user_home {
            for name in ["config.yaml", ".env"] {
                let from = user.join(name);
                if from.is_file() {
                    std::fs::copy(&from, root.join(name)).map_err(|e| Error::io(&from, e))?;
                }
            }
        }
        let skills = root.join("skills");
        std::fs::create_dir_all(&skills).map_err(|e| Error::io(&skills, e))?;
        if library == Library::User
            && let Some(user) = user_home
            && user.join("skills").is_dir()
        {
            copy_tree(&user.join("skills"), &skills)?;
        }
        knack_config::set_dotted(&config, "skills.bundled_opt_out", "true")?;
        if library == Library::Empty {
            knack_config::set_dotted(&config, "skills.external_dirs", "[]")?;
            knack_config::set_dotted(&config, "skills.plugins", "{}")?;
        }
        Ok(Self { dir })
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn skills_dir(&self) -> PathBuf {
        self.dir.path().join("skills")
    }

    /// Sets a config key of the template (dotted, the value read as YAML).
    pub fn set(&self, key: &str, value: &str) -> Result<()> {
        knack_config::set_dotted(&self.dir.path().join("config.yaml"), key, value)?;
        Ok(())
    }

    /// Copies a skill folder into the template's library, under its folder name.
    pub fn add_skill(&self, skill_dir: &Path) -> Result<()> {
        let name = skill_dir
            .file_name()
            .ok_or_else(|| Error::spec(skill_dir, "a skill folder needs a name"))?;
        copy_tree(skill_dir, &self.skills_dir().join(name))
    }

    /// A fresh home for one run: a copy of the template, with `library` (when
    /// given) replacing its skills folder.
    pub fn instantiate(&self, library: Option<&Path>) -> Result<TempDir> {
        let home = temp_dir("knack-eval-run-home-")?;
        for name in ["config.yaml", ".env"] {
            let from = self.dir.path().join(name);
            if from.is_file() {
                std::fs::copy(&from, home.path().join(name)).map_err(|e| Error::io(&from, e))?;
            }
        }
        let skills_from = library.map_or_else(|| self.skills_dir(), Path::to_path_buf);
        let skills_to = home.path().join("skills");
        std::fs::create_dir_all(&skills_to).map_err(|e| Error::io(&skills_to, e))?;
        copy_tree(&skills_from, &skills_to)?;
        Ok(home)
    }
}

/// A fresh workspace: a copy of `fixture`, or empty.
pub fn workspace(fixture: Option<&Path>) -> Result<TempDir> {
    let dir = temp_dir("knack-eval-ws-")?;
    if let Some(fixture) = fixture {
        copy_tree(fixture, dir.path())?;
    }
    Ok(dir)
}

/// Copies the contents of `from` into `to` (created when missing), keeping
/// file modes; symlinks are copied as links.
pub fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    for entry in walkdir::WalkDir::new(from).follow_links(false) {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(from).to_path_buf();
            Error::io(path, std::io::Error::other(e.to_string()))
        })?;
        let relative = entry.path().strip_prefix(from).unwrap_or(entry.path());
        let target = to.join(relative);
        let kind = entry.file_type();
        if kind.is_dir() {
            std::fs::create_dir_all(&target).map_err(|e| Error::io(&target, e))?;
        } else if kind.is_symlink() {
            let link = std::fs::read_link(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
            std::os::unix::fs::symlink(&link, &target).map_err(|e| Error::io(&target, e))?;
        } else {
            std::fs::copy(entry.path(), &target).map_err(|e| Error::io(entry.path(), e))?;
        }
    }
    Ok(())
}

/// Replaces the contents of `to` with a copy of `from`.
pub fn replace_tree(from: &Path, to: &Path) -> Result<()> {
    if to.exists() {
        std::fs::remove_dir_all(to).map_err(|e| Error::io(to, e))?;
    }
    std::fs::create_dir_all(to).map_err(|e| Error::io(to, e))?;
    copy_tree(from, to)
}

pub(crate) fn temp_dir(prefix: &str) -> Result<TempDir> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_library_home_has_no_skills_and_no_seeding() {
        let user = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(user.path().join("skills/mine")).unwrap();
        std::fs::write(user.path().join("skills/mine/SKILL.md"), "x").unwrap();
        std::fs::write(
            user.path().join("config.yaml"),
            "agent:\n  max_iterations: 7\n",
        )
        .unwrap();
        let template = HomeTemplate::build(Some(user.path()), Library::Empty).unwrap();
        let home = template.instantiate(None).unwrap();
        assert!(!home.path().join("skills/mine").exists());
        let config = knack_config::Config::load_file(&home.path().join("config.yaml")).unwrap();
        assert!(config.skills.bundled_opt_out);
        assert_eq!(config.agent.max_iterations, 7);

        let with_user = HomeTemplate::build(Some(user.path()), Library::User).unwrap();
        let home = with_user.instantiate(None).unwrap();
        assert!(home.path().join("skills/mine/SKILL.md").is_file());
    }

    #[test]
    fn instantiate_takes_the_given_library() {
        let template = HomeTemplate::build(None, Library::Empty).unwrap();
        let learned = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(learned.path().join("learned")).unwrap();
        std::fs::write(learned.path().join("learned/SKILL.md"), "y").unwrap();
        let home = template.instantiate(Some(learned.path())).unwrap();
        assert!(home.path().join("skills/learned/SKILL.md").is_file());
    }
}
