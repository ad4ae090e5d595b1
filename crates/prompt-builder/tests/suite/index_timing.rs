//! Rendering cost of the skills index for 10,000 skills, printed as `BENCH` lines
//! for `cargo xtask bench prompt` (ignored: a measurement, not a check).

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use knack_config::{Config, KnackHome};

use super::default_tools;
use prompt_builder::{
    IndexOptions, Platform, PromptInputs, SessionFacts, build_system_prompt, clear_index_cache,
    render_skills_index,
};
use skill_core::{DiscoveryOptions, Scope, SkillRoot, SkillSet, discover};
use test_support::print_bench;

/// The xtask points this at a `gen-tree` output; without it a plain tree is written here.
const TREE_ENV: &str = "KNACK_BENCH_SKILLS_ROOT";
const SKILLS: usize = 10_000;

#[test]
#[ignore = "measurement: run in release via `cargo xtask bench prompt`"]
fn bench_skills_index_10k() {
    let dir = tempfile::tempdir().unwrap();
    let root = match std::env::var_os(TREE_ENV) {
        Some(path) => path.into(),
        None => {
            let root = dir.path().join("skills");
            write_plain_tree(&root, SKILLS);
            root
        }
    };
    let set = load(&root);
    let visible = set.visible().len();
    assert!(visible >= SKILLS * 9 / 10, "only {visible} visible skills");
    println!("BENCH index_visible_skills={visible} skills");

    let config = Config::default();
    let toolsets = config.agent.toolsets.clone();
    let inputs = PromptInputs {
        home: KnackHome::at(dir.path().join("home")),
        config,
        cwd: dir.path().to_path_buf(),
        session: SessionFacts {
            session_id: "bench".into(),
            started: "2025-06-01".into(),
            model: "bench-model".into(),
        },
        platform: Platform::Cli,
        tools: default_tools(),
        toolsets,
        system_message: None,
    };
    // The figures are for rendering: blocks kept on disk are not read.
    let options = IndexOptions {
        disk_cache: None,
        ..IndexOptions::from_inputs(&inputs)
    };
    let disk_cache = inputs.home.cache_dir().join("skills-index");
    let clear_all = || {
        clear_index_cache();
        let _ = std::fs::remove_dir_all(&disk_cache);
    };

    clear_index_cache();
    let block = render_skills_index(&set, &options);
    assert!(block.contains("## Skills"), "{block}");
    println!("BENCH index_chars={} chars", block.chars().count());

    let uncached = time_each(40, clear_index_cache, || {
        std::hint::black_box(render_skills_index(&set, &options));
    });
    print_bench("index_render_uncached", uncached);

    let cached = time_each(
        200,
        || {},
        || {
            std::hint::black_box(render_skills_index(&set, &options));
        },
    );
    print_bench("index_render_cached", cached);

    let whole = time_each(40, clear_all, || {
        std::hint::black_box(build_system_prompt(&inputs, &set));
    });
    print_bench("system_prompt_uncached", whole);
}

fn load(root: &Path) -> SkillSet {
    let mut options = DiscoveryOptions::with_roots(vec![SkillRoot {
        path: root.to_path_buf(),
        scope: Scope::User,
    }]);
    // The default walk limit is below a 10,000-skill tree.
    options.max_dirs = 100_000;
    discover(&options).0
}

/// `count` skills over 40 categories, each with a one-line description.
fn write_plain_tree(root: &Path, count: usize) {
    for i in 0..count {
        let dir = root
            .join(format!("cat-{:02}", i % 40))
            .join(format!("skill-{i:05}"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: skill-{i:05}\ndescription: Use when task number {i} needs the usual steps done in order\n---\n# Skill {i}\n\nStep one.\n"
            ),
        )
        .unwrap();
    }
}

/// Times `work` `rounds` times; `before` runs untimed ahead of each round.
fn time_each(rounds: usize, mut before: impl FnMut(), mut work: impl FnMut()) -> Vec<Duration> {
    (0..rounds)
        .map(|_| {
            before();
            let start = Instant::now();
            work();
            start.elapsed()
        })
        .collect()
}
