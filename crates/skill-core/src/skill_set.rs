//! The result of discovery and the single lookup rule every surface uses:
//! bare names, ids and qualified ids, with one collision rule everywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::skill::{QualifiedId, Scope, Skill};

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

/// What a lookup needs to know of one skill.
pub(crate) struct LookupKey<'a> {
    pub(crate) name: &'a str,
    pub(crate) id: &'a str,
    pub(crate) qualified: QualifiedId<'a>,
    pub(crate) gate: Option<Gate>,
}

/// `Resolution` by position, before the skills are looked at.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    Found(usize),
    /// Unsorted: callers sort the skills by qualified id.
    Ambiguous(Vec<usize>),
    Gated(usize, Gate),
    NotFound,
}

/// The one lookup rule, over `len` skills described by `key`: shared by
/// `SkillSet::resolve` and the snapshot's lookup, which answers from the
/// stored names without decoding the skills.
pub(crate) fn resolve_among<'a>(
    query: &str,
    len: usize,
    key: impl Fn(usize) -> LookupKey<'a>,
) -> Lookup {
    let query = query.trim();
    let pick = |pred: &dyn Fn(&LookupKey<'a>) -> bool| -> Vec<usize> {
        (0..len).filter(|&i| pred(&key(i))).collect()
    };
    let mut matches = if let Some((plugin, skill)) = query.split_once(':') {
        let exact = pick(&|k| k.qualified == *query);
        // `<plugin>:<skill>` names an installed plugin skill, whose
        // qualified id is `plugin:<plugin>/<skill>`.
        if exact.is_empty() && !plugin.is_empty() && !skill.is_empty() && !skill.contains(':') {
            let full = format!("{}:{plugin}/{skill}", crate::roots::PLUGIN_NAMESPACE);
            let in_plugin = pick(&|k| k.qualified == *full.as_str());
            if in_plugin.is_empty() {
                // By name inside the plugin, when its folder is named otherwise.
                pick(&|k| {
                    k.name == skill
                        && k.qualified.namespace == crate::roots::PLUGIN_NAMESPACE
                        && k.qualified.id.split_once('/').map(|(p, _)| p) == Some(plugin)
                })
            } else {
                in_plugin
            }
        } else {
            exact
        }
    } else if query.contains('/') {
        pick(&|k| k.id == query)
    } else {
        let by_name = pick(&|k| k.name == query);
        if by_name.is_empty() {
            pick(&|k| k.id == query)
        } else {
            by_name
        }
    };
    let shown: Vec<usize> = matches
        .iter()
        .copied()
        .filter(|&i| key(i).gate.is_none())
        .collect();
    match shown.len() {
        1 => return Lookup::Found(shown[0]),
        n if n > 1 => return Lookup::Ambiguous(shown),
        _ => {}
    }
    match matches.pop() {
        Some(i) => match key(i).gate {
            Some(gate) => Lookup::Gated(i, gate),
            None => Lookup::Found(i),
        },
        None => Lookup::NotFound,
    }
}

/// Every skill discovery found, with its gate, plus what it reported.
#[derive(Debug, Clone, Default)]
pub struct SkillSet {
    /// All parsed skills in discovery order (roots by precedence, then walk order).
    pub skills: Vec<Skill>,
    /// Parallel to `skills`: why each is hidden, if it is.
    pub gates: Vec<Option<Gate>>,
    /// Category path → (root index, description) from `DESCRIPTION.md`.
    pub category_descriptions: BTreeMap<String, (usize, String)>,
    pub roots: Vec<RootReport>,
    /// Doctor entries for SKILL.md files that did not become a skill of
    /// `skills` (skipped, truncated, decoys), sorted by path after `finish`.
    /// The `ok`, `gated` and `ambiguous` entries of the skills themselves
    /// follow from `skills`, `gates` and `ambiguous_names`, so they are only
    /// built when asked for: see `doctor_entries`. Such entries found here
    /// anyway are ignored by it.
    pub entries: Vec<DoctorEntry>,
    pub notices: Vec<String>,
    /// Names carried by more than one visible skill.
    pub ambiguous_names: BTreeSet<String>,
}

/// Statuses only ever given to a skill of `SkillSet::skills`, and so rebuilt
/// from the skills rather than stored.
fn describes_kept_skill(status: EntryStatus) -> bool {
    matches!(
        status,
        EntryStatus::Ok | EntryStatus::Gated | EntryStatus::Ambiguous
    )
}

/// Two sets are equal when they would answer every question the same way:
/// per-skill doctor entries a set happens to carry do not count, because
/// `doctor_entries` rebuilds them from the skills.
impl PartialEq for SkillSet {
    fn eq(&self, other: &Self) -> bool {
        fn stored(set: &SkillSet) -> impl Iterator<Item = &DoctorEntry> {
            set.entries
                .iter()
                .filter(|e| !describes_kept_skill(e.status))
        }
        self.skills == other.skills
            && self.gates == other.gates
            && self.category_descriptions == other.category_descriptions
            && self.roots == other.roots
            && self.notices == other.notices
            && self.ambiguous_names == other.ambiguous_names
            && stored(self).eq(stored(other))
    }
}

impl SkillSet {
    /// Computes the names shared by visible skills and puts the doctor
    /// entries of the walk in path order. Per-skill entries are left to
    /// `doctor_entries`: only `knack skills doctor` reads them.
    pub(crate) fn finish(&mut self) {
        let mut names: Vec<&str> = self
            .skills
            .iter()
            .zip(&self.gates)
            .filter(|(_, g)| g.is_none())
            .map(|(s, _)| s.name.as_str())
            .collect();
        names.sort_unstable();
        self.ambiguous_names = names
            .windows(2)
            .filter(|pair| pair[0] == pair[1])
            .map(|pair| pair[0].to_owned())
            .collect();
        self.entries.retain(|e| !describes_kept_skill(e.status));
        self.entries.sort_by(|a, b| a.path.cmp(&b.path));
    }

    /// Every line of `knack skills doctor`: one entry per skill (ok, gated or
    /// ambiguous, with the reason) and the stored entries, sorted by path.
    pub fn doctor_entries(&self) -> Vec<DoctorEntry> {
        // Visible skills sharing an ambiguous name, in discovery order.
        let mut sharing: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, skill) in self.skills.iter().enumerate() {
            if self.gates[i].is_none() && self.ambiguous_names.contains(&skill.name) {
                sharing.entry(skill.name.as_str()).or_default().push(i);
            }
        }
        let mut entries = Vec::with_capacity(self.skills.len() + self.entries.len());
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
                None => match sharing.get(skill.name.as_str()) {
                    Some(same_name) => {
                        let others: Vec<String> = same_name
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
                                skill.qualified()
                            ),
                        )
                    }
                    None => DoctorEntry::for_skill(skill, EntryStatus::Ok, String::new()),
                },
            };
            entries.push(entry);
        }
        entries.extend(
            self.entries
                .iter()
                .filter(|e| !describes_kept_skill(e.status))
                .cloned(),
        );
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        entries
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
        out.sort_by(|a, b| {
            (a.category.as_deref().unwrap_or(""), &a.name)
                .cmp(&(b.category.as_deref().unwrap_or(""), &b.name))
                .then_with(|| a.qualified().cmp(&b.qualified()))
        });
        out
    }

    pub fn is_ambiguous(&self, skill: &Skill) -> bool {
        self.ambiguous_names.contains(&skill.name)
    }

    /// Resolves a bare name, an id (`category/dir`) or a qualified id (`scope:id`).
    pub fn resolve(&self, query: &str) -> Resolution<'_> {
        let key = |i: usize| {
            let s = &self.skills[i];
            LookupKey {
                name: &s.name,
                id: &s.id,
                qualified: s.qualified(),
                gate: self.gates[i],
            }
        };
        match resolve_among(query, self.skills.len(), key) {
            Lookup::Found(i) => Resolution::Found(&self.skills[i]),
            Lookup::Gated(i, gate) => Resolution::Gated(&self.skills[i], gate),
            Lookup::Ambiguous(list) => {
                let mut skills: Vec<&Skill> = list.into_iter().map(|i| &self.skills[i]).collect();
                skills.sort_by(|a, b| a.qualified().cmp(&b.qualified()));
                Resolution::Ambiguous(skills)
            }
            Lookup::NotFound => Resolution::NotFound,
        }
    }

    /// Looks a skill up by its exact qualified id, gated or not.
    pub fn by_qualified_id(&self, qid: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.qualified() == *qid)
    }

    /// The description of a category from its `DESCRIPTION.md`, if any.
    pub fn category_description(&self, category: &str) -> Option<&str> {
        self.category_descriptions
            .get(category)
            .map(|(_, d)| d.as_str())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::frontmatter::Frontmatter;

    pub(crate) fn skill(scope: Scope, category: Option<&str>, dir: &str, name: &str) -> Skill {
        let id = match category {
            Some(c) => format!("{c}/{dir}"),
            None => dir.to_owned(),
        };
        let root = format!("/roots/{}", scope.namespace());
        Skill {
            name: name.to_owned(),
            description: format!("Use when {name} \"quoted\"\tand\\escaped"),
            category: category.map(str::to_owned),
            scope,
            path: PathBuf::from(format!("{root}/{id}/SKILL.md")),
            skill_dir: PathBuf::from(format!("{root}/{id}")),
            id,
            root_index: 0,
            frontmatter: Frontmatter::default(),
            warnings: Vec::new(),
        }
    }

    /// The visible skills of `sample_set`, by qualified id, in the order
    /// every listing shows them: category, name, then qualified id.
    pub(crate) const SAMPLE_ORDER: [&str; 9] = [
        "external:aaa",
        "user:solo",
        "user:data/csv",
        "project:devops/deploy",
        "user:devops/deploy",
        "user:devops/long",
        "acme:devops/ship",
        // '-' sorts before '/'.
        "user:devops-tools/lint",
        "user:devops/k8s/deploy",
    ];

    /// Categories, nesting, shared names, both gates, a plugin scope, long and
    /// non-ASCII descriptions, and walk entries around the skills' paths.
    pub(crate) fn sample_set() -> SkillSet {
        let mut long = skill(Scope::User, Some("devops"), "long", "long");
        long.description = "é日".repeat(700);
        long.warnings = vec!["a warning".into()];
        let mut win = skill(Scope::User, Some("os"), "win", "win-only");
        win.frontmatter.platforms = vec!["windows".into()];
        let rows: Vec<(Skill, Option<Gate>)> = vec![
            (
                skill(Scope::User, Some("devops/k8s"), "deploy", "deploy"),
                None,
            ),
            (skill(Scope::User, Some("devops"), "deploy", "deploy"), None),
            (
                skill(Scope::Project, Some("devops"), "deploy", "deploy"),
                None,
            ),
            (long, None),
            (skill(Scope::User, None, "solo", "solo"), None),
            (skill(Scope::External, None, "aaa", "aaa"), None),
            (
                skill(Scope::User, Some("devops-tools"), "lint", "lint"),
                None,
            ),
            (
                skill(Scope::Plugin("acme".into()), Some("devops"), "ship", "ship"),
                None,
            ),
            (win, Some(Gate::Platform)),
            (
                skill(Scope::User, Some("os"), "off", "solo"),
                Some(Gate::Disabled),
            ),
            (skill(Scope::User, Some("data"), "csv", "csv"), None),
            (
                skill(Scope::User, Some("data"), "csv2", "csv"),
                Some(Gate::Disabled),
            ),
        ];
        let (skills, gates) = rows.into_iter().unzip();
        let mut set = SkillSet {
            skills,
            gates,
            entries: vec![
                DoctorEntry::new(
                    Path::new("/roots/user/zz/SKILL.md"),
                    EntryStatus::Skipped,
                    "no frontmatter".into(),
                ),
                DoctorEntry::new(
                    Path::new("/roots/user/devops/a/b/SKILL.md"),
                    EntryStatus::Truncated,
                    "too deep".into(),
                ),
                DoctorEntry::new(
                    Path::new("/roots/user/devops.x/SKILL.md"),
                    EntryStatus::Skipped,
                    "unreadable".into(),
                ),
            ],
            ..SkillSet::default()
        };
        set.finish();
        set
    }

    #[test]
    fn finish_finds_names_shared_by_visible_skills_only() {
        let set = sample_set();
        // `solo` is shared with a disabled skill and `csv` with a disabled one: not ambiguous.
        assert_eq!(
            set.ambiguous_names.iter().collect::<Vec<_>>(),
            vec!["deploy"]
        );
        assert_eq!(set.entries.len(), 3);
        assert!(set.entries.windows(2).all(|w| w[0].path <= w[1].path));
    }

    #[test]
    fn doctor_entries_give_every_skill_md_its_status_and_reason() {
        let set = sample_set();
        let deploy_reason = |others: &str, own: &str| {
            format!("the name 'deploy' is also used by {others}; load it by its id {own}")
        };
        let expected: Vec<(&str, EntryStatus, String)> = vec![
            (
                "/roots/acme/devops/ship/SKILL.md",
                EntryStatus::Ok,
                String::new(),
            ),
            (
                "/roots/external/aaa/SKILL.md",
                EntryStatus::Ok,
                String::new(),
            ),
            (
                "/roots/project/devops/deploy/SKILL.md",
                EntryStatus::Ambiguous,
                deploy_reason(
                    "user:devops/k8s/deploy, user:devops/deploy",
                    "project:devops/deploy",
                ),
            ),
            (
                "/roots/user/data/csv/SKILL.md",
                EntryStatus::Ok,
                String::new(),
            ),
            (
                "/roots/user/data/csv2/SKILL.md",
                EntryStatus::Gated,
                "listed in skills.disabled".into(),
            ),
            (
                "/roots/user/devops/a/b/SKILL.md",
                EntryStatus::Truncated,
                "too deep".into(),
            ),
            (
                "/roots/user/devops/deploy/SKILL.md",
                EntryStatus::Ambiguous,
                deploy_reason(
                    "user:devops/k8s/deploy, project:devops/deploy",
                    "user:devops/deploy",
                ),
            ),
            (
                "/roots/user/devops/k8s/deploy/SKILL.md",
                EntryStatus::Ambiguous,
                deploy_reason(
                    "user:devops/deploy, project:devops/deploy",
                    "user:devops/k8s/deploy",
                ),
            ),
            (
                "/roots/user/devops/long/SKILL.md",
                EntryStatus::Ok,
                String::new(),
            ),
            (
                "/roots/user/devops-tools/lint/SKILL.md",
                EntryStatus::Ok,
                String::new(),
            ),
            (
                "/roots/user/devops.x/SKILL.md",
                EntryStatus::Skipped,
                "unreadable".into(),
            ),
            (
                "/roots/user/os/off/SKILL.md",
                EntryStatus::Gated,
                "listed in skills.disabled".into(),
            ),
            (
                "/roots/user/os/win/SKILL.md",
                EntryStatus::Gated,
                "platforms [\"windows\"] do not include this platform".into(),
            ),
            ("/roots/user/solo/SKILL.md", EntryStatus::Ok, String::new()),
            (
                "/roots/user/zz/SKILL.md",
                EntryStatus::Skipped,
                "no frontmatter".into(),
            ),
        ];
        let entries = set.doctor_entries();
        let got: Vec<(&str, EntryStatus, String)> = entries
            .iter()
            .map(|e| (e.path.to_str().unwrap(), e.status, e.reason.clone()))
            .collect();
        assert_eq!(got, expected);
        // Entries for skills carry the skill's name, qualified id and warnings.
        for skill in &set.skills {
            let entry = entries.iter().find(|e| e.path == skill.path).unwrap();
            assert_eq!(entry.name.as_deref(), Some(skill.name.as_str()));
            assert_eq!(entry.qualified_id, Some(skill.qualified_id()));
            assert_eq!(entry.warnings, skill.warnings);
        }
        let long = entries
            .iter()
            .find(|e| e.name.as_deref() == Some("long"))
            .unwrap();
        assert_eq!(long.warnings, ["a warning"]);
        // Entries that are not skills carry no name.
        let zz = entries
            .iter()
            .find(|e| e.path.ends_with("zz/SKILL.md"))
            .unwrap();
        assert_eq!((zz.name.as_ref(), zz.qualified_id.as_ref()), (None, None));
    }

    #[test]
    fn per_skill_entries_carried_by_a_set_are_rebuilt_not_repeated() {
        let set = sample_set();
        // What a loader that stores every entry (as the snapshot once did) hands over.
        let mut carrying = set.clone();
        carrying.entries = set.doctor_entries();
        assert_eq!(carrying.doctor_entries(), set.doctor_entries());
        assert_eq!(carrying, set);
        let mut fewer = set.clone();
        fewer.entries.pop();
        assert_ne!(fewer, set);
        // `finish` drops them again.
        carrying.finish();
        assert_eq!(carrying.entries, set.entries);
    }

    #[test]
    fn visible_and_lookups_order_by_category_name_then_qualified_id() {
        let set = sample_set();
        let order: Vec<String> = set.visible().iter().map(|s| s.qualified_id()).collect();
        assert_eq!(order, SAMPLE_ORDER);
        match set.resolve("deploy") {
            Resolution::Ambiguous(found) => assert_eq!(
                found.iter().map(|s| s.qualified_id()).collect::<Vec<_>>(),
                vec![
                    "project:devops/deploy",
                    "user:devops/deploy",
                    "user:devops/k8s/deploy"
                ]
            ),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            set.resolve("acme:devops/ship"),
            Resolution::Found(s) if s.name == "ship"
        ));
        assert!(matches!(set.resolve("acme:devops"), Resolution::NotFound));
        assert!(matches!(
            set.resolve("user:os/win"),
            Resolution::Gated(_, Gate::Platform)
        ));
        assert_eq!(
            set.by_qualified_id("user:os/off").map(|s| s.name.as_str()),
            Some("solo")
        );
        assert!(set.by_qualified_id("user:os/of").is_none());
    }

    #[test]
    fn a_plugin_skill_is_named_plugin_colon_skill_and_a_shared_bare_name_is_ambiguous() {
        let plugin = || Scope::Plugin(crate::roots::PLUGIN_NAMESPACE.to_owned());
        let mut set = SkillSet {
            skills: vec![
                skill(plugin(), Some("alpha"), "lint", "lint"),
                skill(plugin(), Some("beta"), "lint", "lint"),
                skill(plugin(), Some("beta"), "fmt-folder", "fmt"),
            ],
            gates: vec![None, None, None],
            ..SkillSet::default()
        };
        set.finish();
        match set.resolve("lint") {
            Resolution::Ambiguous(found) => assert_eq!(
                found.iter().map(|s| s.qualified_id()).collect::<Vec<_>>(),
                ["plugin:alpha/lint", "plugin:beta/lint"]
            ),
            other => panic!("{other:?}"),
        }
        for (query, expected) in [
            ("alpha:lint", "plugin:alpha/lint"),
            ("beta:lint", "plugin:beta/lint"),
            ("plugin:beta/lint", "plugin:beta/lint"),
            ("beta:fmt", "plugin:beta/fmt-folder"),
        ] {
            match set.resolve(query) {
                Resolution::Found(s) => assert_eq!(s.qualified_id(), expected, "{query}"),
                other => panic!("{query}: {other:?}"),
            }
        }
        assert!(matches!(set.resolve("gamma:lint"), Resolution::NotFound));
        assert!(matches!(set.resolve("alpha:fmt"), Resolution::NotFound));
    }
}
