//! Merging what several sources found: one result per skill name, the most
//! trusted source winning, most trusted first; and paging for `browse`.

use std::collections::HashMap;

use serde::Serialize;
use skill_guard::TrustLevel;

use crate::source::SkillMeta;

/// Results per `browse` page.
pub const BROWSE_PAGE_SIZE: usize = 20;

/// A source that failed or timed out during a search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceProblem {
    pub source: String,
    pub error: String,
}

/// What a search across sources found.
#[derive(Debug, Clone, Default)]
pub struct SearchOutcome {
    pub results: Vec<SkillMeta>,
    pub problems: Vec<SourceProblem>,
    /// How many sources were asked.
    pub sources: usize,
}

impl SearchOutcome {
    /// Page `page` (1-based) of the results and the number of pages (at least 1).
    pub fn page(&self, page: usize) -> (&[SkillMeta], usize) {
        let pages = self.results.len().div_ceil(BROWSE_PAGE_SIZE).max(1);
        let start = (page.max(1) - 1) * BROWSE_PAGE_SIZE;
        let end = (start + BROWSE_PAGE_SIZE).min(self.results.len());
        let slice = if start < self.results.len() {
            &self.results[start..end]
        } else {
            &[]
        };
        (slice, pages)
    }
}

pub(crate) fn trust_rank(trust: TrustLevel) -> u8 {
    match trust {
        TrustLevel::Builtin => 3,
        TrustLevel::Trusted => 2,
        TrustLevel::AgentCreated => 1,
        TrustLevel::Community => 0,
    }
}

/// One entry per name (on equal trust the source asked first wins), sorted by
/// trust, then by name.
pub(crate) fn merge(per_source: Vec<Vec<SkillMeta>>) -> Vec<SkillMeta> {
    let mut best: HashMap<String, (usize, SkillMeta)> = HashMap::new();
    let mut order = 0usize;
    for metas in per_source {
        for meta in metas {
            order += 1;
            match best.get(&meta.name) {
                Some((_, kept)) if trust_rank(kept.trust) >= trust_rank(meta.trust) => {}
                _ => {
                    best.insert(meta.name.clone(), (order, meta));
                }
            }
        }
    }
    let mut merged: Vec<(usize, SkillMeta)> = best.into_values().collect();
    merged.sort_by(|(oa, a), (ob, b)| {
        trust_rank(b.trust)
            .cmp(&trust_rank(a.trust))
            .then_with(|| a.name.cmp(&b.name))
            .then(oa.cmp(ob))
    });
    merged.into_iter().map(|(_, m)| m).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(name: &str, trust: TrustLevel, id: &str) -> SkillMeta {
        SkillMeta {
            name: name.into(),
            description: String::new(),
            identifier: id.into(),
            source: "x".into(),
            trust,
            tags: vec![],
        }
    }

    #[test]
    fn higher_trust_wins_and_sorts_first() {
        let merged = merge(vec![
            vec![
                meta("b", TrustLevel::Community, "c1"),
                meta("a", TrustLevel::Community, "c2"),
            ],
            vec![meta("b", TrustLevel::Builtin, "o1")],
            vec![
                meta("a", TrustLevel::Community, "c3"),
                meta("z", TrustLevel::Trusted, "t1"),
            ],
        ]);
        let ids: Vec<&str> = merged.iter().map(|m| m.identifier.as_str()).collect();
        assert_eq!(ids, vec!["o1", "t1", "c2"]);
    }

    #[test]
    fn pages_are_twenty_long() {
        let outcome = SearchOutcome {
            results: (0..45)
                .map(|i| meta(&format!("s{i:02}"), TrustLevel::Community, ""))
                .collect(),
            ..SearchOutcome::default()
        };
        assert_eq!(outcome.page(1).0.len(), 20);
        assert_eq!(outcome.page(3).0.len(), 5);
        assert_eq!(outcome.page(3).1, 3);
        assert!(outcome.page(4).0.is_empty());
    }
}
