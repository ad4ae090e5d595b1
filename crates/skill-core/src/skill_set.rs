//! The result of discovery and the single lookup rule every surface uses:
//! bare names, ids and qualified ids, with one collision rule everywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::skill::{Scope, Skill};

/// Why a skill is hidden from lists and refused on explicit load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    Platform,
    Disabled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryStatus {
    Ok,
    Skipped,
    Gated,
    Ambiguous,
    Truncated,
    Quarantined,
}

/// One line of `knack skills doctor`: a SKILL.md seen and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DoctorEntry {
    pub path: PathBuf,
    pub status: EntryStatus,
    pub name: Option<String>,
    pub qualified_id: Option<String>,
    pub reason: String,
    pub warnings: Vec<String>,
}

impl DoctorEntry {
    pub fn new(path: &Path, status: EntryStatus, reason: String) -> Self {
        Self {
            path: path.to_path_buf(),
            status,
            name: None,
            qualified_id: None,
            reason,
            warnings: Vec::new(),
        }
    }

    pub fn for_skill(skill: &Skill, status: EntryStatus, reason: String) -> Self {
        Self {
            path: skill.path.clone(),
            status,
            name: Some(skill.name.clone()),
            qualified_id: Some(skill.qualified_id()),
            reason,
            warnings: skill.warnings.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RootReport {
    pub path: PathBuf,
    pub scope: Scope,
    pub skills: usize,
    pub truncated: bool,
}

/// How a name given by a user or the model resolved.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolution<'a> {
    Found(&'a Skill),
    /// More than one visible skill answers to the name; never guess.
    Ambiguous(Vec<&'a Skill>),
    /// The skill exists but is hidden (platform or disabled).
    Gated(&'a Skill, Gate),
    NotFound,
}

/// Every skill discovery found, with its gate, plus what it reported.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SkillSet {
    /// All parsed skills in discovery order (roots by precedence, then walk order).
    pub skills: Vec<Skill>,
    /// Parallel to `skills`: why each is hidden, if it is.
    pub gates: Vec<Option<Gate>>,
    /// Category path → (root index, description) from `DESCRIPTION.md`.
    pub category_descriptions: BTreeMap<String, (usize, String)>,
    pub roots: Vec<RootReport>,
    pub entries: Vec<DoctorEntry>,
    pub notices: Vec<String>,
    /// Names carried by more than one visible skill.
    pub ambiguous_names: BTreeSet<String>,
}

impl SkillSet {
    /// Computes collisions and the doctor entries of parsed skills.
    pub(crate) fn finish(&mut self) {
        let mut by_name: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, skill) in self.skills.iter().enumerate() {
            if self.gates[i].is_none() {
                by_name.entry(skill.name.as_str()).or_default().push(i);
            }
        }
        self.ambiguous_names = by_name
            .iter()
            .filter(|(_, v)| v.len() > 1)
            .map(|(k, _)| (*k).to_owned())
            .collect();
        let mut entries = Vec::with_capacity(self.skills.len());
        for (i, skill) in self.skills.iter().enumerate() {
            let entry = match self.gates[i] {
                Some(Gate::Platform) => DoctorEntry::for_skill(
                    skill,
                    EntryStatus::Gated,
                    format!(
                        "platforms {:?} do not include this platform",
                        skill.frontmatter.platforms
                    ),
                ),
                Some(Gate::Disabled) => DoctorEntry::for_skill(
                    skill,
                    EntryStatus::Gated,
                    "listed in skills.disabled".into(),
                ),
                None if self.ambiguous_names.contains(&skill.name) => {
                    let others: Vec<String> = by_name[skill.name.as_str()]
                        .iter()
                        .filter(|&&j| j != i)
                        .map(|&j| self.skills[j].qualified_id())
                        .collect();
                    DoctorEntry::for_skill(
                        skill,
                        EntryStatus::Ambiguous,
                        format!(
                            "the name '{}' is also used by {}; load it by its id {}",
                            skill.name,
                            others.join(", "),
                            skill.qualified_id()
                        ),
                    )
                }
                None => DoctorEntry::for_skill(skill, EntryStatus::Ok, String::new()),
            };
            entries.push(entry);
        }
        entries.append(&mut self.entries);
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        self.entries = entries;
    }

    /// Skills shown on every surface: not gated. Sorted by (category, name, qualified id).
    pub fn visible(&self) -> Vec<&Skill> {
        let mut out: Vec<&Skill> = self
            .skills
            .iter()
            .zip(&self.gates)
            .filter(|(_, g)| g.is_none())
            .map(|(s, _)| s)
            .collect();
        // Qualified ids are only built to break the rare (category, name) ties.
        out.sort_by(|a, b| {
            (a.category.as_deref().unwrap_or(""), &a.name)
                .cmp(&(b.category.as_deref().unwrap_or(""), &b.name))
                .then_with(|| a.qualified_id().cmp(&b.qualified_id()))
        });
        out
    }

    pub fn is_ambiguous(&self, skill: &Skill) -> bool {
        self.ambiguous_names.contains(&skill.name)
    }

    /// Resolves a bare name, an id (`category/dir`) or a qualified id (`scope:id`).
    pub fn resolve(&self, query: &str) -> Resolution<'_> {
        let query = query.trim();
        let visible = |i: &usize| self.gates[*i].is_none();
        let all: Vec<usize> = (0..self.skills.len()).collect();
        let pick = |pred: &dyn Fn(&Skill) -> bool| -> Vec<usize> {
            all.iter()
                .copied()
                .filter(|&i| pred(&self.skills[i]))
                .collect()
        };

        let mut matches = if query.contains(':') {
            pick(&|s| s.qualified_id() == query)
        } else if query.contains('/') {
            pick(&|s| s.id == query)
        } else {
            let by_name = pick(&|s| s.name == query);
            if by_name.is_empty() {
                pick(&|s| s.id == query)
            } else {
                by_name
            }
        };
        let shown: Vec<usize> = matches.iter().copied().filter(visible).collect();
        match shown.len() {
            1 => return Resolution::Found(&self.skills[shown[0]]),
            n if n > 1 => {
                let mut skills: Vec<&Skill> = shown.iter().map(|&i| &self.skills[i]).collect();
                skills.sort_by_key(|s| s.qualified_id());
                return Resolution::Ambiguous(skills);
            }
            _ => {}
        }
        match matches.pop() {
            Some(i) => match self.gates[i] {
                Some(gate) => Resolution::Gated(&self.skills[i], gate),
                None => Resolution::Found(&self.skills[i]),
            },
            None => Resolution::NotFound,
        }
    }

    /// Looks a skill up by its exact qualified id, gated or not.
    pub fn by_qualified_id(&self, qid: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.qualified_id() == qid)
    }

    /// The description of a category from its `DESCRIPTION.md`, if any.
    pub fn category_description(&self, category: &str) -> Option<&str> {
        self.category_descriptions
            .get(category)
            .map(|(_, d)| d.as_str())
    }
}
