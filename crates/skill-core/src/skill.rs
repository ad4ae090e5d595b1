//! A discovered skill: where it lives, what it is called, and what its
//! frontmatter says. Bodies are never kept here; they are read on demand.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

use crate::frontmatter::Frontmatter;

/// Names are cut to this many characters on read (never rejected).
pub const MAX_NAME_CHARS: usize = 64;
/// Descriptions are cut to this many characters in `skills_list`.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Folders inside a skill that hold its material, never sub-skills.
pub const SUPPORT_DIRS: [&str; 4] = ["references", "templates", "scripts", "assets"];

/// Where a root sits in the precedence order, and the namespace of its
/// qualified ids.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    Project,
    User,
    External,
    Plugin(String),
}

impl Scope {
    /// The namespace used in qualified ids (`user:devops/deploy`).
    pub fn namespace(&self) -> &str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
            Scope::External => "external",
            Scope::Plugin(ns) => ns,
        }
    }

    /// The value of the `scope` field in JSON output.
    pub fn label(&self) -> &str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
            Scope::External => "external",
            Scope::Plugin(_) => "plugin",
        }
    }

    pub const RESERVED_NAMESPACES: [&'static str; 3] = ["project", "user", "external"];
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.namespace())
    }
}

impl Serialize for Scope {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.label())
    }
}

/// One skill as discovery found it.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// Frontmatter name, else the directory name; at most 64 chars.
    pub name: String,
    pub description: String,
    /// Folders between the root and the skill directory, `/`-joined.
    pub category: Option<String>,
    /// `category/dirname`, or `dirname` at the root.
    pub id: String,
    pub scope: Scope,
    /// Path of SKILL.md as reached from the root (symlinks not resolved).
    pub path: PathBuf,
    pub skill_dir: PathBuf,
    /// Index of the root this skill came from in the discovery's root list.
    pub root_index: usize,
    pub frontmatter: Frontmatter,
    pub warnings: Vec<String>,
}

impl Skill {
    pub fn qualified_id(&self) -> String {
        format!("{}:{}", self.scope.namespace(), self.id)
    }

    pub fn top_category(&self) -> Option<&str> {
        self.category.as_deref().and_then(|c| c.split('/').next())
    }

    /// The description as `skills_list` shows it (cut at 1024 chars).
    pub fn list_description(&self) -> String {
        cut_chars(&self.description, MAX_DESCRIPTION_CHARS)
    }
}

/// Cuts `text` to at most `max` characters without splitting a character.
pub fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => text[..at].to_owned(),
        None => text.to_owned(),
    }
}
