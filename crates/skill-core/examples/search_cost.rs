//! What `skills_search` costs at 10,000 generated skills: building the index and one
//! query (median), and how often a query made from a skill's own body finds it (top-1,
//! top-5) at 1,000 and 10,000 skills. Prints `BENCH` lines that `cargo xtask bench search` reads.

use std::time::{Duration, Instant};

use skill_core::search::{SearchDoc, SearchIndex};
use test_support::{SyntheticSkill, print_bench, synthetic_skills};

const QUERIES: usize = 500;
const BUILDS: usize = 5;

fn index_of(skills: &[SyntheticSkill]) -> SearchIndex {
    SearchIndex::build(skills.iter().map(|s| SearchDoc {
        name: &s.name,
        description: &s.description,
        tags: &s.tags,
        body_head: &s.body,
    }))
}

fn recall(skills: &[SyntheticSkill], index: &SearchIndex) -> (f64, f64) {
    let (mut top1, mut top5) = (0usize, 0usize);
    for (i, skill) in skills.iter().enumerate() {
        let hits = index.search(&skill.query, 5);
        top1 += usize::from(hits.first().is_some_and(|h| h.doc == i));
        top5 += usize::from(hits.iter().any(|h| h.doc == i));
    }
    let n = skills.len() as f64;
    (top1 as f64 / n, top5 as f64 / n)
}

fn main() {
    let skills = synthetic_skills(10_000, 29);
    let mut builds: Vec<Duration> = Vec::with_capacity(BUILDS);
    let mut index = SearchIndex::default();
    for _ in 0..BUILDS {
        let started = Instant::now();
        index = index_of(&skills);
        builds.push(started.elapsed());
    }
    print_bench("search_build_10000", builds);

    let mut queries: Vec<Duration> = Vec::with_capacity(QUERIES);
    let mut found = 0usize;
    for skill in skills.iter().step_by(skills.len() / QUERIES) {
        let started = Instant::now();
        let hits = index.search(&skill.query, 10);
        queries.push(started.elapsed());
        found += hits.len();
    }
    print_bench("search_query_10000", queries);
    assert!(found > 0);

    for size in [1_000usize, 10_000] {
        let subset = if size == skills.len() {
            skills.clone()
        } else {
            synthetic_skills(size, 29)
        };
        let built = index_of(&subset);
        let (top1, top5) = recall(&subset, &built);
        println!("BENCH search_top1_{size}={:.1} % n={size}", top1 * 100.0);
        println!("BENCH search_top5_{size}={:.1} % n={size}", top5 * 100.0);
    }
}
