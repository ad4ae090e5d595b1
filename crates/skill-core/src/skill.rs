//! A discovered skill: where it lives, what it is called, and what its
//! frontmatter says. Bodies are never kept here; they are read on demand.

use std::cmp::Ordering;
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
    /// A second or later external root (two `external_dirs`) or project
    /// root (`.knack/skills` in the repository and in a sub-folder): the
    /// same label, a namespace of its own (`external-2`, `project-2`), so no
    /// two skills share a qualified id.
    Numbered {
        label: &'static str,
        namespace: String,
    },
}

impl Scope {
    /// The namespace used in qualified ids (`user:devops/deploy`).
    pub fn namespace(&self) -> &str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
            Scope::External => "external",
            Scope::Plugin(ns) => ns,
            Scope::Numbered { namespace, .. } => namespace,
        }
    }

    /// The value of the `scope` field in JSON output.
    pub fn label(&self) -> &str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
            Scope::External => "external",
            Scope::Plugin(_) => "plugin",
            Scope::Numbered { label, .. } => label,
        }
    }

    /// This scope for the `nth` root (counted from 1) that has it: the first
    /// keeps the plain namespace, later external and project roots are
    /// numbered. Both kinds come in several roots that may hold the same
    /// folder names; without a number the later skill would have no id of
    /// its own and could not be reached.
    pub fn nth(&self, nth: usize) -> Scope {
        let label = match self {
            Scope::External => "external",
            Scope::Project => "project",
            other => return other.clone(),
        };
        if nth > 1 {
            Scope::Numbered {
                label,
                namespace: format!("{label}-{nth}"),
            }
        } else {
            self.clone()
        }
    }

    /// Whether `namespace` is or looks like one knack gives its own roots
    /// (`external`, `external-2`), so a plugin may not take it.
    pub fn is_reserved_namespace(namespace: &str) -> bool {
        Self::RESERVED_NAMESPACES.iter().any(|r| {
            namespace == *r
                || namespace
                    .strip_prefix(r)
                    .and_then(|rest| rest.strip_prefix('-'))
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
    }

    /// `plugin` holds the plugin skills the hub installs from marketplaces.
    pub const RESERVED_NAMESPACES: [&'static str; 4] = ["project", "user", "external", "plugin"];
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
        self.qualified().to_string()
    }

    /// The qualified id as borrowed parts, for comparing and writing it
    /// without building a string per skill.
    pub fn qualified(&self) -> QualifiedId<'_> {
        QualifiedId {
            namespace: self.scope.namespace(),
            id: &self.id,
        }
    }

    pub fn top_category(&self) -> Option<&str> {
        self.category.as_deref().and_then(|c| c.split('/').next())
    }

    /// The description as `skills_list` shows it (cut at 1024 chars).
    pub fn list_description(&self) -> String {
        self.listed_description().to_owned()
    }

    /// `list_description` without the copy.
    pub fn listed_description(&self) -> &str {
        clip_chars(&self.description, MAX_DESCRIPTION_CHARS)
    }
}

/// `namespace:id`, the unique name of a skill across roots. Compares, prints
/// and serializes exactly like the joined string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QualifiedId<'a> {
    pub namespace: &'a str,
    pub id: &'a str,
}

impl QualifiedId<'_> {
    fn bytes(&self) -> impl Iterator<Item = u8> + '_ {
        self.namespace
            .bytes()
            .chain(std::iter::once(b':'))
            .chain(self.id.bytes())
    }
}

impl Ord for QualifiedId<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        if self.namespace == other.namespace {
            self.id.cmp(other.id)
        } else {
            self.bytes().cmp(other.bytes())
        }
    }
}

impl PartialOrd for QualifiedId<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq<str> for QualifiedId<'_> {
    fn eq(&self, other: &str) -> bool {
        other
            .strip_prefix(self.namespace)
            .and_then(|rest| rest.strip_prefix(':'))
            == Some(self.id)
    }
}

impl fmt::Display for QualifiedId<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.namespace)?;
        f.write_str(":")?;
        f.write_str(self.id)
    }
}

impl Serialize for QualifiedId<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Cuts `text` to at most `max` characters without splitting a character.
pub fn cut_chars(text: &str, max: usize) -> String {
    clip_chars(text, max).to_owned()
}

/// `cut_chars` as a borrowed slice of `text`.
pub fn clip_chars(text: &str, max: usize) -> &str {
    // A string of at most `max` bytes has at most `max` characters.
    if text.len() <= max {
        return text;
    }
    match text.char_indices().nth(max) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(scope: Scope, id: &str) -> Skill {
        Skill {
            name: id.rsplit('/').next().unwrap_or(id).to_owned(),
            description: String::new(),
            category: None,
            id: id.to_owned(),
            scope,
            path: PathBuf::from(format!("/r/{id}/SKILL.md")),
            skill_dir: PathBuf::from(format!("/r/{id}")),
            root_index: 0,
            frontmatter: Frontmatter::default(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn qualified_id_parts_compare_and_print_like_the_joined_string() {
        let skills = [
            skill(Scope::User, "devops/deploy"),
            skill(Scope::User, "devops"),
            skill(Scope::User, "devops-x/a"),
            skill(Scope::Project, "devops/deploy"),
            skill(Scope::External, "a"),
            skill(Scope::Plugin("user2".into()), "a"),
            skill(Scope::Plugin("use".into()), "r:a"),
            skill(Scope::Plugin("u".into()), "ser:a"),
        ];
        for a in &skills {
            let joined = a.qualified_id();
            assert_eq!(a.qualified().to_string(), joined);
            assert_eq!(serde_json::to_value(a.qualified()).unwrap(), joined);
            assert!(a.qualified() == *joined.as_str());
            for b in &skills {
                let other = b.qualified_id();
                assert_eq!(
                    a.qualified().cmp(&b.qualified()),
                    joined.cmp(&other),
                    "{joined} vs {other}"
                );
                assert_eq!(a.qualified() == *other.as_str(), joined == other);
            }
        }
        assert!(skills[0].qualified() != *"user:devops");
        assert!(skills[0].qualified() != *"user");
    }

    #[test]
    fn clip_chars_counts_characters_not_bytes() {
        assert_eq!(clip_chars("abc", 3), "abc");
        assert_eq!(clip_chars("abcd", 3), "abc");
        assert_eq!(clip_chars("", 0), "");
        assert_eq!(clip_chars("ééé", 2), "éé");
        assert_eq!(clip_chars("ééé", 3), "ééé");
        assert_eq!(clip_chars("日本語テキスト", 4), "日本語テ");
        assert_eq!(cut_chars("日本語", 1), "日");
        let long = "é".repeat(MAX_DESCRIPTION_CHARS + 5);
        assert_eq!(
            clip_chars(&long, MAX_DESCRIPTION_CHARS).chars().count(),
            MAX_DESCRIPTION_CHARS
        );
    }

    #[test]
    fn later_external_and_project_roots_are_numbered_and_their_namespaces_reserved() {
        assert_eq!(Scope::External.nth(1), Scope::External);
        let second = Scope::External.nth(2);
        assert_eq!(
            (second.namespace(), second.label()),
            ("external-2", "external")
        );
        let nested = Scope::Project.nth(3);
        assert_eq!(
            (nested.namespace(), nested.label()),
            ("project-3", "project")
        );
        assert_eq!(Scope::Project.nth(1), Scope::Project);
        assert_eq!(Scope::User.nth(2), Scope::User);
        for reserved in ["external", "external-2", "project-10", "user"] {
            assert!(Scope::is_reserved_namespace(reserved), "{reserved}");
        }
        for free in ["external-x", "externals", "acme", "external-"] {
            assert!(!Scope::is_reserved_namespace(free), "{free}");
        }
    }
}
