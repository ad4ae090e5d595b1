//! The skills index at scale: sized to the context window, never empty, honest
//! about what it leaves out, and how well a model could pick a skill from it.

use std::collections::BTreeMap;

use prompt_builder::{
    IndexCoverage, IndexOptions, Platform, clear_index_cache, render_skills_index,
};
use skill_core::search::{SearchDoc, SearchIndex};
use test_support::{Layout, SyntheticSkill, synthetic_skills, write_library};

use super::fixture::Fixture;

/// A fixture whose user root holds `skills` in `layout`, with skills_search
/// among the tools.
fn library(skills: &[SyntheticSkill], layout: Layout) -> Fixture {
    let mut fx = Fixture::new();
    write_library(&fx.home().join("skills"), skills, layout).unwrap();
    // The walk limit of a default config is below the largest trees here.
    fx.config.skills.scan_max_dirs = 100_000;
    fx
}

fn options(fx: &Fixture, window: Option<u64>) -> IndexOptions {
    IndexOptions {
        disk_cache: None,
        ..IndexOptions::from_inputs(&fx.inputs(Platform::Cli))
    }
    .with_context_window(window, fx.config.skills.index_budget_share)
}

/// The listed lines of a block: (name, shown description).
fn listed(block: &str) -> Vec<(String, String)> {
    let start = block.find("<available_skills>").unwrap();
    let end = block.find("</available_skills>").unwrap();
    block[start..end]
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .map(|l| match l.split_once(": ") {
            Some((name, description)) => (name.to_owned(), description.to_owned()),
            None => (l.to_owned(), String::new()),
        })
        .collect()
}

#[test]
fn the_budget_is_a_share_of_the_window_with_a_fixed_floor_for_unknown_windows() {
    let fx = Fixture::new();
    assert_eq!(fx.config.skills.index_budget_share, 0.02);
    let unknown = options(&fx, None);
    assert_eq!(unknown.budget_chars, fx.config.skills.index_budget_chars);
    // 2 % of 200,000 tokens, at four characters a token.
    assert_eq!(options(&fx, Some(200_000)).budget_chars, 16_000);
    assert_eq!(options(&fx, Some(32_768)).budget_chars, 2_621);
    let mut wide = Fixture::new();
    wide.config.skills.index_budget_share = 0.05;
    assert_eq!(options(&wide, Some(100_000)).budget_chars, 20_000);
}

#[test]
fn collapse_cases_are_never_empty_and_state_what_is_left_out() {
    for layout in [Layout::Flat, Layout::Nested(25)] {
        for size in [200, 700, 1_000] {
            let skills = synthetic_skills(size, 11);
            let fx = library(&skills, layout);
            let set = fx.skill_set();
            assert_eq!(set.visible().len(), size);
            for window in [Some(8_192), Some(32_768), Some(200_000), None] {
                clear_index_cache();
                let opts = options(&fx, window);
                let block = render_skills_index(&set, &opts);
                let what = format!("{layout:?} {size} skills, window {window:?}");
                let shown = listed(&block);
                assert!(!shown.is_empty(), "{what}: empty index\n{block}");
                let coverage = IndexCoverage::of_block(&block).unwrap();
                assert_eq!(coverage.total, size, "{what}");
                assert_eq!(coverage.listed, shown.len(), "{what}");
                let bare = shown.iter().filter(|(_, d)| d.is_empty()).count();
                assert_eq!(coverage.without_description, bare, "{what}");
                if shown.len() < size {
                    assert!(
                        block.contains(&format!(
                            "{} of {size} skills are not listed here",
                            size - shown.len()
                        )),
                        "{what}\n{block}"
                    );
                    assert!(block.contains("skills_search(query)"), "{what}");
                    // What cannot be met is only the one line that is always kept.
                    assert!(
                        block.chars().count() <= opts.budget_chars || shown.len() == 1,
                        "{what}: {} chars over {}",
                        block.chars().count(),
                        opts.budget_chars
                    );
                } else {
                    assert!(block.chars().count() <= opts.budget_chars, "{what}");
                }
                // Names go only after every description went.
                if shown.len() < size {
                    assert_eq!(bare, shown.len(), "{what}");
                }
                println!(
                    "{what}: {} chars of {}, {} listed, {} without description",
                    block.chars().count(),
                    opts.budget_chars,
                    shown.len(),
                    bare
                );
            }
        }
    }
}

#[test]
fn at_a_large_window_every_skill_keeps_its_whole_description() {
    let skills = synthetic_skills(200, 5);
    let fx = library(&skills, Layout::Flat);
    let block = render_skills_index(&fx.skill_set(), &options(&fx, Some(1_000_000)));
    let shown = listed(&block);
    assert_eq!(shown.len(), 200);
    for skill in &skills {
        let line = shown.iter().find(|(n, _)| *n == skill.name).unwrap();
        assert_eq!(line.1, skill.description);
    }
    assert!(IndexCoverage::of_block(&block).unwrap().is_complete());
    assert!(IndexCoverage::of_block(&block).unwrap().notice().is_none());
    assert!(block.contains("skills_search(query) before improvising"));
}

#[test]
fn the_most_used_skills_keep_their_descriptions_and_lines_longest() {
    let skills = synthetic_skills(300, 9);
    let fx = library(&skills, Layout::Flat);
    let set = fx.skill_set();
    let favourite = &skills[250].name;
    let uses: BTreeMap<String, u64> = [(format!("user:{favourite}"), 9)].into();
    // Room for names only, not for every description.
    for window in [Some(40_000), Some(16_000)] {
        clear_index_cache();
        let block = render_skills_index(&set, &options(&fx, window).with_uses(uses.clone()));
        let shown = listed(&block);
        let mine = shown.iter().find(|(n, _)| n == favourite);
        let mine = mine.unwrap_or_else(|| panic!("{favourite} left out at {window:?}\n{block}"));
        let others_with = shown.iter().filter(|(_, d)| !d.is_empty()).count();
        assert!(
            others_with < shown.len() || shown.len() < 300,
            "{window:?}: nothing shortened"
        );
        if others_with > 0 {
            assert!(
                !mine.1.is_empty(),
                "{window:?}: the favourite lost its description first"
            );
        }
    }
}

#[test]
fn a_trigger_clause_survives_shortening() {
    let mut fx = Fixture::new();
    let long = "Comprehensive document creation, editing and analysis with support for tracked changes, comments, formatting preservation and text extraction across many document kinds and versions. Use this skill whenever the user mentions a .docx file or a Word document.";
    fx.skill("docx", long, "");
    for i in 0..60 {
        fx.skill(&format!("other-{i:02}"), long, "");
    }
    fx.config.skills.index_budget_chars = 9_000;
    let block = render_skills_index(&fx.skill_set(), &options(&fx, None));
    let shown = listed(&block);
    let docx = &shown.iter().find(|(n, _)| n == "docx").unwrap().1;
    assert!(
        docx.starts_with("Use this skill whenever the user mentions"),
        "{docx}"
    );
}

#[test]
fn manual_only_skills_stay_out_of_the_index() {
    let fx = Fixture::new();
    fx.skill(
        "deploy-prod",
        "Use when shipping to production",
        "disable-model-invocation: true\n",
    );
    fx.skill("lint", "Use when linting", "");
    let block = render_skills_index(&fx.skill_set(), &options(&fx, None));
    assert!(!block.contains("deploy-prod"), "{block}");
    assert!(block.contains("- lint: Use when linting"), "{block}");
}

/// Top-1 and top-5 of a lexical match between each skill's body query and
/// what the index shows of every skill (a skill not listed cannot be found).
fn index_recall(skills: &[SyntheticSkill], block: &str) -> (f64, f64) {
    let shown = listed(block);
    let index = SearchIndex::build(shown.iter().map(|(name, description)| SearchDoc {
        name,
        description,
        tags: &[],
        body_head: "",
    }));
    let (mut top1, mut top5) = (0, 0);
    for skill in skills {
        let hits = index.search(&skill.query, 5);
        let found = |h: &skill_core::search::SearchHit| shown[h.doc].0 == skill.name;
        top1 += usize::from(hits.first().is_some_and(found));
        top5 += usize::from(hits.iter().any(found));
    }
    let n = skills.len() as f64;
    (top1 as f64 / n, top5 as f64 / n)
}

#[test]
fn retrieval_from_what_the_index_shows() {
    // At 200,000 tokens the default budget is 16,000 characters.
    let mut figures = Vec::new();
    for size in [50, 200, 1_000] {
        let skills = synthetic_skills(size, 29);
        let fx = library(&skills, Layout::Flat);
        clear_index_cache();
        let block = render_skills_index(&fx.skill_set(), &options(&fx, Some(200_000)));
        let (top1, top5) = index_recall(&skills, &block);
        println!("index at {size} skills: top-1 {top1:.3}, top-5 {top5:.3}");
        figures.push((size, top1, top5));
    }
    // Small libraries fit whole: the body query shares the skill's own words
    // with its description.
    assert!(figures[0].2 >= 0.9, "{figures:?}");
    assert!(figures[1].2 >= 0.9, "{figures:?}");
    // A large one cannot fit; this is what skills_search is for.
    assert!(figures[2].2 < figures[1].2, "{figures:?}");
}
