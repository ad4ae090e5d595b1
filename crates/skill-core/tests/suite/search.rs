//! Retrieval at scale: a query made from each skill's own body must find that
//! skill through `skills_search`, at 50, 200, 1,000 and 10,000 generated skills.

use skill_core::search::{SearchDoc, SearchIndex, SkillSearch, skills_search_json};
use skill_core::{Scope, SkillSet};
use test_support::{Layout, SyntheticSkill, synthetic_skills, write_library};

use super::fixture::{Tree, discover_roots, root};

/// (top-1, top-5) shares of skills found by a query from their own body.
fn recall(skills: &[SyntheticSkill]) -> (f64, f64) {
    let index = SearchIndex::build(skills.iter().map(|s| SearchDoc {
        name: &s.name,
        description: &s.description,
        tags: &s.tags,
        body_head: &s.body,
    }));
    let (mut top1, mut top5) = (0usize, 0usize);
    for (i, skill) in skills.iter().enumerate() {
        let hits = index.search(&skill.query, 5);
        if hits.first().is_some_and(|h| h.doc == i) {
            top1 += 1;
        }
        if hits.iter().any(|h| h.doc == i) {
            top5 += 1;
        }
    }
    let n = skills.len() as f64;
    (top1 as f64 / n, top5 as f64 / n)
}

#[test]
fn a_skill_is_found_from_its_own_body_at_every_size() {
    for size in [50, 200, 1_000, 10_000] {
        let skills = synthetic_skills(size, 29);
        let (top1, top5) = recall(&skills);
        println!("skills_search at {size}: top-1 {top1:.3}, top-5 {top5:.3}");
        assert!(top5 >= 0.90, "{size} skills: top-5 {top5:.3}");
        assert!(top1 >= 0.75, "{size} skills: top-1 {top1:.3}");
    }
}

/// The same, end to end: a real tree on disk, discovery, and the tool's JSON.
#[test]
fn skills_search_answers_from_a_discovered_tree() {
    let tree = Tree::new();
    let skills = synthetic_skills(1_000, 3);
    write_library(tree.dir.path(), &skills, Layout::Nested(40)).unwrap();
    let set: SkillSet = discover_roots(vec![root(tree.dir.path().to_path_buf(), Scope::User)]);
    assert_eq!(set.visible().len(), 1_000);
    let search = SkillSearch::from_skill_set(&set);
    assert_eq!(search.len(), 1_000);
    let mut found = 0;
    for skill in &skills {
        let answer = skills_search_json(&search, &set, &skill.query, Some(5));
        assert_eq!(answer["success"], true, "{answer}");
        let results = answer["results"].as_array().unwrap();
        assert!(results.len() <= 5);
        if results.iter().any(|r| r["name"] == skill.name.as_str()) {
            found += 1;
        }
    }
    assert!(found >= 900, "found {found} of 1000 in the top 5");
    // The result shape is CONTRACT's.
    let answer = skills_search_json(&search, &set, &skills[7].query, None);
    let first = &answer["results"][0];
    assert_eq!(first["name"], skills[7].name.as_str());
    assert_eq!(
        first["qualified_id"],
        format!("user:{}", first["id"].as_str().unwrap()).as_str()
    );
    assert!(first["id"].as_str().unwrap().ends_with(&skills[7].name));
    assert_eq!(first["description"], skills[7].description.as_str());
    assert!(first["score"].as_f64().unwrap() > 0.0);
    // An empty query is the caller's mistake, said as such.
    let empty = skills_search_json(&search, &set, "  ", None);
    assert_eq!(empty["success"], false);
    assert!(empty["hint"].is_string());
}

#[test]
fn manual_only_skills_are_not_searchable() {
    let tree = Tree::new();
    tree.file(
        "deploy-prod/SKILL.md",
        "---\nname: deploy-prod\ndescription: Use when deploying to production\ndisable-model-invocation: true\n---\nDeploy steps.\n",
    );
    tree.skill(
        "deploy-staging",
        "deploy-staging",
        "Use when deploying to staging",
    );
    let set = discover_roots(vec![root(tree.dir.path().to_path_buf(), Scope::User)]);
    let search = SkillSearch::from_skill_set(&set);
    let answer = skills_search_json(&search, &set, "deploying production", None);
    let names: Vec<&str> = answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["deploy-staging"]);
}
