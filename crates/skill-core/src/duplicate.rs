//! The near-duplicate check a new skill passes before it is written: the
//! library's search index finds the closest few skills, and a word-overlap
//! score over name, description and body (rare words weigh more) decides.
//!
//! A library that grows a second copy of a procedure instead of patching the
//! first ends up with skills that are never chosen; the check names the skill
//! to patch instead.

use std::collections::HashSet;

use crate::frontmatter::{split_frontmatter, strip_bom};
use crate::search::{BODY_HEAD_CHARS, SearchIndex, SkillSearch, body_head, tokens};
use crate::skill::Skill;
use crate::skill_set::SkillSet;

/// At or above this similarity a new skill counts as a near-duplicate.
/// Calibrated on the pairs in this module's tests: a reworded copy scores
/// well above it, two different tasks of one domain well below.
pub const DUPLICATE_THRESHOLD: f32 = 0.5;
/// A skill whose words (weighted by rarity) are at least this much in a new
/// skill counts as covered by it; a new skill that covers two or more is an
/// umbrella over them, not a copy of one.
pub const COVER_THRESHOLD: f32 = 0.8;
/// Skills the search index proposes for the exact comparison.
const CANDIDATES: usize = 5;
/// How much each part counts: the description says what a skill is for,
/// the name and the body confirm it.
const NAME_SHARE: f32 = 0.3;
const DESCRIPTION_SHARE: f32 = 0.4;
const BODY_SHARE: f32 = 0.3;

/// A skill about to be written, as the check reads it.
#[derive(Debug, Clone, Copy)]
pub struct Draft<'a> {
    pub name: &'a str,
    pub description: &'a str,
    /// The body's start (at most [`BODY_HEAD_CHARS`] characters are read).
    pub body: &'a str,
}

impl<'a> Draft<'a> {
    /// The draft a whole SKILL.md stands for, given its validated name and
    /// description.
    pub fn of_skill_md(name: &'a str, description: &'a str, skill_md: &'a str) -> Self {
        let text = strip_bom(skill_md);
        let body = match split_frontmatter(text) {
            Ok(Some((_, offset))) => &text[offset..],
            _ => text,
        };
        Self {
            name,
            description,
            body,
        }
    }
}

/// The existing skill a draft repeats.
#[derive(Debug, Clone, PartialEq)]
pub struct NearDuplicate {
    pub name: String,
    pub qualified_id: String,
    /// 0 (nothing shared) to 1 (the same words everywhere).
    pub similarity: f32,
    /// How much of the existing skill's words the new one holds, 0 to 1.
    pub covered: f32,
}

impl NearDuplicate {
    pub fn is_duplicate(&self) -> bool {
        self.similarity >= DUPLICATE_THRESHOLD
    }

    pub fn is_covered(&self) -> bool {
        self.covered >= COVER_THRESHOLD
    }
}

/// The skills of `set` (indexed by `search`) that `draft` repeats (at least
/// [`DUPLICATE_THRESHOLD`] alike) or covers (holds [`COVER_THRESHOLD`] of
/// their words), most alike first.
pub fn near_duplicates(
    search: &SkillSearch,
    set: &SkillSet,
    draft: &Draft<'_>,
) -> Vec<NearDuplicate> {
    let body: String = draft.body.chars().take(BODY_HEAD_CHARS).collect();
    let query = format!("{} {} {}", draft.name, draft.description, body);
    let mine = Words::of(draft.name, draft.description, &body);
    let index = search.index();
    let mut near: Vec<NearDuplicate> = search
        .skills(set, &query, CANDIDATES)
        .into_iter()
        .map(|(skill, _)| {
            let theirs = Words::of_skill(skill);
            let round = |x: f32| (x * 100.0).round() / 100.0;
            NearDuplicate {
                name: skill.name.clone(),
                qualified_id: skill.qualified_id(),
                similarity: round(mine.similarity(&theirs, index)),
                covered: round(mine.holds(&theirs, index)),
            }
        })
        .filter(|n| n.is_duplicate() || n.is_covered())
        .collect();
    near.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
    near
}

/// The one skill of `set` `draft` repeats most, if any.
pub fn nearest_duplicate(
    search: &SkillSearch,
    set: &SkillSet,
    draft: &Draft<'_>,
) -> Option<NearDuplicate> {
    near_duplicates(search, set, draft)
        .into_iter()
        .find(NearDuplicate::is_duplicate)
}

/// The distinct words of each part of a skill.
struct Words {
    name: HashSet<String>,
    description: HashSet<String>,
    body: HashSet<String>,
}

impl Words {
    fn of(name: &str, description: &str, body: &str) -> Self {
        Self {
            name: tokens(name).collect(),
            description: tokens(description).collect(),
            body: tokens(body).collect(),
        }
    }

    fn of_skill(skill: &Skill) -> Self {
        Self::of(&skill.name, &skill.description, &body_head(skill))
    }

    /// The parts' overlaps, weighted by their shares; a part empty on both
    /// sides is left out rather than counted as different.
    fn similarity(&self, other: &Words, index: &SearchIndex) -> f32 {
        let parts = [
            (NAME_SHARE, &self.name, &other.name),
            (DESCRIPTION_SHARE, &self.description, &other.description),
            (BODY_SHARE, &self.body, &other.body),
        ];
        let mut score = 0.0;
        let mut shares = 0.0;
        for (share, a, b) in parts {
            if a.is_empty() && b.is_empty() {
                continue;
            }
            score += share * overlap(a, b, index);
            shares += share;
        }
        if shares == 0.0 { 0.0 } else { score / shares }
    }
}

impl Words {
    fn all(&self) -> HashSet<&String> {
        self.name
            .iter()
            .chain(&self.description)
            .chain(&self.body)
            .collect()
    }

    /// How much of `other`'s words (all parts together, weighted by rarity)
    /// this one holds.
    fn holds(&self, other: &Words, index: &SearchIndex) -> f32 {
        let mine = self.all();
        let (mut held, mut all) = (0.0, 0.0);
        for word in other.all() {
            let weight = index.idf(word);
            all += weight;
            if mine.contains(word) {
                held += weight;
            }
        }
        if all == 0.0 { 0.0 } else { held / all }
    }
}

/// Weighted Jaccard overlap of two word sets: the rarity of the shared words
/// over the rarity of all of them, so sharing "kubernetes" says more than
/// sharing "file".
fn overlap(a: &HashSet<String>, b: &HashSet<String>, index: &SearchIndex) -> f32 {
    let mut shared = 0.0;
    let mut all = 0.0;
    for word in a.union(b) {
        let weight = index.idf(word);
        all += weight;
        if a.contains(word) && b.contains(word) {
            shared += weight;
        }
    }
    if all == 0.0 { 0.0 } else { shared / all }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::SearchDoc;

    fn words(name: &str, description: &str, body: &str) -> Words {
        Words::of(name, description, body)
    }

    /// An index of a few unrelated skills, so word rarity means something.
    fn library() -> SearchIndex {
        let docs = [
            (
                "git-rebase",
                "Rebase a branch onto main. Use when a branch is behind.",
                "Run git fetch, then git rebase origin/main and fix conflicts.",
            ),
            (
                "pdf-to-text",
                "Extract text from PDF files. Use when a PDF must be read.",
                "Run pdftotext on the file and check the output encoding.",
            ),
            (
                "docker-compose-debug",
                "Debug a failing docker compose stack. Use when a service will not start.",
                "Read the logs of each service, check the ports and the volumes.",
            ),
            (
                "postgres-backup",
                "Back up a Postgres database. Use when a dump is needed.",
                "Run pg_dump with the custom format and store the file.",
            ),
            (
                "release-notes",
                "Write release notes from the commit log. Use when tagging a release.",
                "List the merged pull requests, group them by kind and summarise.",
            ),
        ];
        SearchIndex::build(docs.iter().map(|(name, description, body)| SearchDoc {
            name,
            description,
            tags: &[],
            body_head: body,
        }))
    }

    #[test]
    fn a_reworded_copy_is_a_duplicate() {
        let index = library();
        let existing = words(
            "deploy-k8s",
            "Deploy an application to a Kubernetes cluster with kubectl. Use when shipping a service to k8s.",
            "Build the image, push it to the registry, kubectl apply the manifests, then watch the rollout status.",
        );
        let copy = words(
            "k8s-deploy",
            "Deploys applications to Kubernetes clusters using kubectl. Use when a service must ship to k8s.",
            "Build and push the image to the registry, apply the manifests with kubectl and watch the rollout.",
        );
        let s = existing.similarity(&copy, &index);
        assert!(s >= DUPLICATE_THRESHOLD, "{s}");
        assert!((existing.similarity(&existing, &index) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn different_tasks_of_one_domain_are_not() {
        let index = library();
        let deploy = words(
            "deploy-k8s",
            "Deploy an application to a Kubernetes cluster with kubectl. Use when shipping a service to k8s.",
            "Build the image, push it to the registry, kubectl apply the manifests, then watch the rollout status.",
        );
        let debug = words(
            "k8s-crashloop",
            "Find why a Kubernetes pod keeps restarting. Use when a pod is in CrashLoopBackOff.",
            "Describe the pod, read the previous container's logs, check the probes and the memory limits.",
        );
        let s = deploy.similarity(&debug, &index);
        assert!(s < DUPLICATE_THRESHOLD, "{s}");
        let unrelated = words(
            "pdf-to-text",
            "Extract text from PDF files.",
            "Run pdftotext.",
        );
        assert!(deploy.similarity(&unrelated, &index) < 0.1);
    }

    #[test]
    fn empty_parts_are_left_out() {
        let index = library();
        let a = words(
            "notes",
            "Take meeting notes. Use when a meeting starts.",
            "",
        );
        let b = words(
            "notes",
            "Take meeting notes. Use when a meeting starts.",
            "",
        );
        assert!((a.similarity(&b, &index) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn a_draft_reads_the_body_after_the_frontmatter() {
        let md = "---\nname: a\ndescription: d\n---\nThe body.\n";
        let draft = Draft::of_skill_md("a", "d", md);
        assert_eq!(draft.body.trim(), "The body.");
    }
}
