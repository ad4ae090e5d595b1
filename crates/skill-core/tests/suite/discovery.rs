//! Discovery on real fixture trees: categories, decoys, collisions, links,
//! gates, limits, bad input, project trust and cache invalidation.

use pretty_assertions::assert_eq;
use skill_core::{
    DiscoveryCache, DiscoveryOptions, EntryStatus, Gate, Resolution, Scope, SkillSet,
};

use super::fixture::{Tree, discover_roots, names, root};

fn entry_status(set: &SkillSet, path_suffix: &str) -> (EntryStatus, String) {
    let entries = skill_core::doctor_report(set);
    let e = entries
        .iter()
        .find(|e| e.path.to_string_lossy().ends_with(path_suffix))
        .unwrap_or_else(|| panic!("no doctor entry for {path_suffix}: {entries:#?}"));
    (e.status, e.reason.clone())
}

#[test]
fn nested_categories_give_category_id_and_qualified_id() {
    let t = Tree::new();
    t.skill("mlops/training/axolotl", "axolotl", "Use when fine-tuning")
        .skill("solo", "solo", "Use when alone");
    let set = discover_roots(vec![root(t.path(""), Scope::User)]);
    let ax = set.skills.iter().find(|s| s.name == "axolotl").unwrap();
    assert_eq!(ax.category.as_deref(), Some("mlops/training"));
    assert_eq!(ax.top_category(), Some("mlops"));
    assert_eq!(ax.id, "mlops/training/axolotl");
    assert_eq!(ax.qualified_id(), "user:mlops/training/axolotl");
    let solo = set.skills.iter().find(|s| s.name == "solo").unwrap();
    assert_eq!(solo.category, None);
    assert_eq!(solo.id, "solo");
    // Sorted by (category, name): uncategorized first.
    assert_eq!(
        names(&set),
        vec!["user:solo", "user:mlops/training/axolotl"]
    );
}

#[test]
fn decoy_skill_md_under_support_dirs_is_never_a_skill() {
    let t = Tree::new();
    t.skill("dev/tool", "tool", "Use when tooling")
        .skill(
            "dev/tool/references/old-package",
            "old-package",
            "an old copy",
        )
        .skill("dev/tool/scripts/nested/deeper", "deeper", "another")
        // A category that happens to be called `scripts` is still walked.
        .skill("scripts/bash-helper", "bash-helper", "Use when bashing");
    let set = discover_roots(vec![root(t.path(""), Scope::User)]);
    assert_eq!(
        names(&set),
        vec!["user:dev/tool", "user:scripts/bash-helper"]
    );
    let (status, reason) = entry_status(&set, "references/old-package/SKILL.md");
    assert_eq!(status, EntryStatus::Skipped);
    assert!(reason.contains("support folder"), "{reason}");
    assert_eq!(
        entry_status(&set, "scripts/nested/deeper/SKILL.md").0,
        EntryStatus::Skipped
    );
}

#[test]
fn umbrella_skills_may_hold_sub_skills() {
    let t = Tree::new();
    t.skill("cloud", "cloud", "Use when in the cloud")
        .skill("cloud/aws", "aws", "Use when on AWS");
    let set = discover_roots(vec![root(t.path(""), Scope::User)]);
    assert_eq!(names(&set), vec!["user:cloud", "user:cloud/aws"]);
}

#[test]
fn collisions_across_roots_and_categories_are_ambiguous_everywhere() {
    let user = Tree::new();
    let ext = Tree::new();
    let project = Tree::new();
    user.skill("devops/deploy", "deploy", "Use when deploying (user)")
        .skill("web/deploy", "deploy", "Use when deploying web");
    ext.skill("tools/deploy", "deploy", "Use when deploying (ext)");
    project.skill("deploy", "deploy", "Use when deploying (project)");
    let set = discover_roots(vec![
        root(project.path(""), Scope::Project),
        root(user.path(""), Scope::User),
        root(ext.path(""), Scope::External),
    ]);
    assert!(set.ambiguous_names.contains("deploy"));
    match set.resolve("deploy") {
        Resolution::Ambiguous(c) => {
            let ids: Vec<String> = c.iter().map(|s| s.qualified_id()).collect();
            assert_eq!(
                ids,
                vec![
                    "external:tools/deploy",
                    "project:deploy",
                    "user:devops/deploy",
                    "user:web/deploy"
                ]
            );
        }
        other => panic!("expected ambiguity, got {other:?}"),
    }
    // Ids and qualified ids always resolve.
    for q in [
        "user:devops/deploy",
        "external:tools/deploy",
        "project:deploy",
        "web/deploy",
    ] {
        assert!(matches!(set.resolve(q), Resolution::Found(_)), "{q}");
    }
    // `devops/deploy` is one id; `deploy` as an id exists only in the project root.
    let entries = skill_core::doctor_report(&set);
    let ambiguous: Vec<_> = entries
        .iter()
        .filter(|e| e.status == EntryStatus::Ambiguous)
        .collect();
    assert_eq!(ambiguous.len(), 4);
    assert!(ambiguous[0].reason.contains("also used by"));
}

#[test]
fn two_external_roots_with_the_same_skill_get_distinct_qualified_ids() {
    let user = Tree::new();
    let first = Tree::new();
    let second = Tree::new();
    first.skill(
        "skill-creator",
        "skill-creator",
        "Use when creating skills (first)",
    );
    second
        .skill(
            "skill-creator",
            "skill-creator",
            "Use when creating skills (second)",
        )
        .skill("only-here", "only-here", "Use when only here");
    let set = discover_roots(vec![
        root(user.path(""), Scope::User),
        root(first.path(""), Scope::External),
        root(second.path(""), Scope::External),
    ]);
    assert_eq!(
        names(&set),
        vec![
            "external-2:only-here",
            "external-2:skill-creator",
            "external:skill-creator"
        ]
    );
    // Both reachable by qualified id; the bare name stays ambiguous.
    for (qid, marker) in [
        ("external:skill-creator", "(first)"),
        ("external-2:skill-creator", "(second)"),
    ] {
        match set.resolve(qid) {
            Resolution::Found(s) => assert!(s.description.contains(marker), "{qid}"),
            other => panic!("{qid}: {other:?}"),
        }
    }
    assert!(matches!(set.resolve("skill-creator"), Resolution::Ambiguous(c) if c.len() == 2));
    assert_eq!(set.roots[2].scope.label(), "external");
    let report = skill_core::doctor_report(&set);
    assert!(
        !report.iter().any(|e| e.status == EntryStatus::Skipped),
        "{report:?}"
    );
}

#[test]
fn the_same_folder_reached_from_two_roots_counts_once() {
    let user = Tree::new();
    user.skill("a/one", "one", "Use when one");
    let set = discover_roots(vec![
        root(user.path(""), Scope::User),
        root(user.path("a"), Scope::External),
    ]);
    assert_eq!(names(&set), vec!["user:a/one"]);
    assert_eq!(entry_status(&set, "a/one/SKILL.md").0, EntryStatus::Ok);
    assert!(
        skill_core::doctor_report(&set)
            .iter()
            .any(|e| e.status == EntryStatus::Skipped && e.reason.contains("already found"))
    );
}

#[test]
fn symlinked_folders_inside_the_root_are_followed_and_links_out_of_it_are_not() {
    let user = Tree::new();
    let elsewhere = Tree::new();
    elsewhere
        .skill("cat/linked-skill", "linked-skill", "Use when linked")
        .skill("whole-cat/inner", "inner", "Use when inner");
    user.skill(".store/kept", "kept", "Use when kept").skill(
        ".store/cat/inside",
        "inside",
        "Use when inside",
    );
    user.symlink(&elsewhere.path("cat/linked-skill"), "mine/linked-skill")
        .symlink(&elsewhere.path("whole-cat"), "aliased")
        .symlink(&user.path(".store/kept"), "mine/kept")
        .symlink(&user.path(".store/cat"), "linked-cat");
    let set = discover_roots(vec![root(user.path(""), Scope::User)]);
    assert_eq!(
        names(&set),
        vec!["user:linked-cat/inside", "user:mine/kept"]
    );
    let kept = set.skills.iter().find(|s| s.name == "kept").unwrap();
    assert!(
        kept.path.starts_with(user.path("mine")),
        "path must go through the link: {}",
        kept.path.display()
    );
    for link in ["aliased", "mine/linked-skill"] {
        assert!(
            set.notices.iter().any(|n| n.contains(link)
                && n.contains("leads outside its root")
                && n.contains("not followed")),
            "{link}: {:?}",
            set.notices
        );
    }
}

#[test]
fn symlink_loops_terminate() {
    let t = Tree::new();
    t.skill("a/s", "s", "Use when looping");
    t.symlink(&t.path("a"), "a/s2/back");
    t.symlink(&t.path(""), "a/up");
    let set = discover_roots(vec![root(t.path(""), Scope::User)]);
    assert_eq!(names(&set), vec!["user:a/s"]);
    assert!(
        set.notices.iter().any(|n| n.contains("loop")),
        "{:?}",
        set.notices
    );
}

#[test]
fn platform_and_disabled_gates_hide_and_refuse() {
    let t = Tree::new();
    t.file(
        "win-only/SKILL.md",
        "---\nname: win-only\ndescription: Use when on Windows\nplatforms: [windows]\n---\nbody\n",
    )
    .file(
        "linux-ok/SKILL.md",
        "---\nname: linux-ok\ndescription: Use when on Linux\nplatforms: linux\n---\nbody\n",
    )
    .skill("off", "off", "Use when disabled");
    let mut options = DiscoveryOptions::with_roots(vec![root(t.path(""), Scope::User)]);
    options.platform = "linux".into();
    options.disabled = vec!["off".into()];
    let set = skill_core::discover(&options).0;
    assert_eq!(names(&set), vec!["user:linux-ok"]);
    assert!(matches!(
        set.resolve("win-only"),
        Resolution::Gated(_, Gate::Platform)
    ));
    assert!(matches!(
        set.resolve("off"),
        Resolution::Gated(_, Gate::Disabled)
    ));
    assert_eq!(
        entry_status(&set, "win-only/SKILL.md").0,
        EntryStatus::Gated
    );
    // A hidden skill does not make a visible one ambiguous.
    assert!(set.ambiguous_names.is_empty());
}

#[test]
fn skipped_folders_are_not_walked() {
    let t = Tree::new();
    for dir in [
        "node_modules",
        ".git",
        "venv",
        ".venv",
        "__pycache__",
        "site-packages",
        ".hidden",
    ] {
        t.skill(&format!("{dir}/x"), "x", "Use when never");
    }
    let set = discover_roots(vec![root(t.path(""), Scope::User)]);
    assert!(set.skills.is_empty(), "{:?}", names(&set));
}

#[test]
fn walk_limits_truncate_and_report() {
    let t = Tree::new();
    t.skill("a/b/c/d/deep", "deep", "Use when deep")
        .skill("top", "top", "Use when top");
    let mut options = DiscoveryOptions::with_roots(vec![root(t.path(""), Scope::User)]);
    options.max_depth = 3;
    let set = skill_core::discover(&options).0;
    assert_eq!(names(&set), vec!["user:top"]);
    assert!(set.roots[0].truncated);
    assert_eq!(
        entry_status(&set, "a/b/c/d/deep/SKILL.md").0,
        EntryStatus::Truncated
    );

    let t = Tree::new();
    for i in 0..20 {
        t.skill(&format!("s{i:02}"), &format!("s{i:02}"), "Use when many");
    }
    let mut options = DiscoveryOptions::with_roots(vec![root(t.path(""), Scope::User)]);
    options.max_dirs = 6;
    let set = skill_core::discover(&options).0;
    assert_eq!(set.skills.len(), 5, "root plus five skill folders");
    assert!(set.roots[0].truncated);
    let truncated = skill_core::doctor_report(&set)
        .iter()
        .filter(|e| e.status == EntryStatus::Truncated)
        .count();
    assert_eq!(truncated, 15);
    let notice = set
        .notices
        .iter()
        .find(|n| n.contains("skills.scan_max_dirs"))
        .expect("the cut is a notice, not silent");
    assert!(notice.contains("after 6 folders"), "{notice}");
    assert!(
        notice.contains(&t.path("").display().to_string()),
        "{notice}"
    );
}

#[test]
fn bad_input_never_panics_and_is_reported() {
    let t = Tree::new();
    t.file(
        "bad-yaml/SKILL.md",
        "---\nname: bad-yaml\ndescription: [unclosed\n---\nbody line\n",
    )
    .file("unclosed/SKILL.md", "---\nname: unclosed\ndescription: x\n")
    .file(
        "no-desc/SKILL.md",
        "---\nname: no-desc\n---\n# Only a heading\n",
    )
    .file(
        "dotdot/SKILL.md",
        "---\nname: ../../etc\ndescription: Use when sneaky\n---\nb\n",
    )
    .file(
        "abs/SKILL.md",
        "---\nname: /etc/passwd\ndescription: Use when sneaky\n---\nb\n",
    );
    std::fs::create_dir_all(t.path("latin1")).unwrap();
    std::fs::write(
        t.path("latin1/SKILL.md"),
        b"---\nname: latin1\ndescription: caf\xe9\n---\nbody\n",
    )
    .unwrap();
    let big = format!(
        "---\nname: big\ndescription: Use when big\n---\n{}",
        "x".repeat(5 * 1024 * 1024)
    );
    t.file("big/SKILL.md", &big);
    t.symlink(&t.path("does-not-exist"), "dangling");
    t.symlink(&t.path("missing-file"), "broken-md/SKILL.md");
    let set = discover_roots(vec![root(t.path(""), Scope::User)]);

    // Broken YAML falls back to key: value and still loads, with a warning.
    let bad = set.skills.iter().find(|s| s.id == "bad-yaml").unwrap();
    assert!(bad.warnings.iter().any(|w| w.contains("not valid YAML")));
    assert!(
        entry_status(&set, "unclosed/SKILL.md")
            .1
            .contains("closing")
    );
    assert!(
        entry_status(&set, "no-desc/SKILL.md")
            .1
            .contains("no description")
    );
    let latin = set.skills.iter().find(|s| s.id == "latin1").unwrap();
    assert!(latin.warnings.iter().any(|w| w.contains("UTF-8")));
    assert!(set.skills.iter().any(|s| s.id == "big"));
    assert!(
        set.notices.iter().any(|n| n.contains("broken link")),
        "{:?}",
        set.notices
    );
    assert!(
        entry_status(&set, "broken-md/SKILL.md")
            .1
            .contains("broken link")
    );
    // Odd names load (reading is lenient), reachable by their folder id, with a warning.
    match set.resolve("dotdot") {
        Resolution::Found(s) => {
            assert_eq!(s.name, "../../etc");
            assert!(
                s.warnings
                    .iter()
                    .any(|w| w.contains("differs from its folder"))
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn category_descriptions_come_from_description_md() {
    let t = Tree::new();
    t.skill("devops/deploy", "deploy", "Use when deploying")
        .file(
            "devops/DESCRIPTION.md",
            "---\ndescription: \"Running services\"\n---\nmore\n",
        )
        .file("data/DESCRIPTION.md", "Tools for tables\n")
        .skill("data/csv", "csv", "Use when csv");
    let set = discover_roots(vec![root(t.path(""), Scope::User)]);
    assert_eq!(set.category_description("devops"), Some("Running services"));
    assert_eq!(set.category_description("data"), Some("Tools for tables"));
}

#[test]
fn project_skills_need_a_trusted_repository() {
    let repo = Tree::new();
    let home = Tree::new();
    std::fs::create_dir_all(repo.path(".git")).unwrap();
    repo.skill(".knack/skills/proj", "proj", "Use when in the project")
        .skill(
            "sub/dir/.agents/skills/deep-proj",
            "deep-proj",
            "Use when deeper",
        );
    std::fs::create_dir_all(home.path("skills")).unwrap();
    let khome = knack_config::KnackHome::at(home.path(""));
    let cwd = repo.path("sub/dir");

    let mut config = knack_config::Config::default();
    let options = DiscoveryOptions::resolve(&khome, &config, &cwd);
    assert_eq!(options.roots.len(), 1, "only the user root while untrusted");
    assert_eq!(options.notices.len(), 1);
    assert!(options.notices[0].contains("not trusted"));

    config.skills.trusted_projects = vec![repo.path("").to_string_lossy().into_owned()];
    let options = DiscoveryOptions::resolve(&khome, &config, &cwd);
    let set = skill_core::discover(&options).0;
    // The second project root (deeper in the tree) has a namespace of its own.
    assert_eq!(names(&set), vec!["project-2:deep-proj", "project:proj"]);

    config.skills.project_discovery = false;
    assert_eq!(
        DiscoveryOptions::resolve(&khome, &config, &cwd).roots.len(),
        1
    );
}

#[test]
fn nested_project_roots_with_the_same_skill_are_both_reachable() {
    let repo = Tree::new();
    let home = Tree::new();
    std::fs::create_dir_all(repo.path(".git")).unwrap();
    repo.skill(".knack/skills/x", "x", "Use when x (repository)")
        .skill(".agents/skills/y", "y", "Use when y (repository)")
        .skill("svc/.knack/skills/x", "x", "Use when x (service)");
    std::fs::create_dir_all(home.path("skills")).unwrap();
    let khome = knack_config::KnackHome::at(home.path(""));
    let mut config = knack_config::Config::default();
    config.skills.trusted_projects = vec![repo.path("").to_string_lossy().into_owned()];
    let options = DiscoveryOptions::resolve(&khome, &config, &repo.path("svc"));
    let scopes: Vec<(&str, &str)> = options
        .roots
        .iter()
        .map(|r| (r.scope.namespace(), r.scope.label()))
        .collect();
    // Present roots only, from the repository root down to the working directory.
    assert_eq!(
        scopes,
        vec![
            ("project", "project"),
            ("project-2", "project"),
            ("project-3", "project"),
            ("user", "user")
        ]
    );
    let set = skill_core::discover(&options).0;
    assert_eq!(names(&set), vec!["project-3:x", "project:x", "project-2:y"]);
    for (qid, marker) in [("project:x", "(repository)"), ("project-3:x", "(service)")] {
        match set.resolve(qid) {
            Resolution::Found(s) => assert!(s.description.contains(marker), "{qid}"),
            other => panic!("{qid}: {other:?}"),
        }
    }
    // The bare name stays ambiguous; nothing is skipped for a shared id.
    assert!(matches!(set.resolve("x"), Resolution::Ambiguous(c) if c.len() == 2));
    assert!(
        !skill_core::doctor_report(&set)
            .iter()
            .any(|e| e.status == EntryStatus::Skipped),
        "{:?}",
        skill_core::doctor_report(&set)
    );
}

#[test]
fn external_dirs_expand_and_report_missing_ones() {
    let home = Tree::new();
    home.skill("skills/u", "u", "Use when user")
        .skill("more/e", "e", "Use when external");
    let khome = knack_config::KnackHome::at(home.path(""));
    let mut config = knack_config::Config::default();
    config.skills.external_dirs = vec!["more".into(), "/nonexistent/knack-test-dir".into()];
    let options = DiscoveryOptions::resolve(&khome, &config, home.path("").as_path());
    assert_eq!(options.roots.len(), 2);
    assert!(options.notices.iter().any(|n| n.contains("does not exist")));
    let set = skill_core::discover(&options).0;
    assert_eq!(names(&set), vec!["external:e", "user:u"]);
}

#[test]
fn cache_sees_content_edits_in_nested_folders_and_new_skills() {
    let t = Tree::new();
    t.skill("a/b/c/nested", "nested", "Use when old text");
    let options = DiscoveryOptions::with_roots(vec![root(t.path(""), Scope::User)]);
    let cache = DiscoveryCache::new();
    let first = cache.get(&options);
    assert!(
        std::sync::Arc::ptr_eq(&first, &cache.get(&options)),
        "unchanged tree is served from cache"
    );

    // Same length, new content, mtime moved forward.
    let md = t.path("a/b/c/nested/SKILL.md");
    std::fs::write(
        &md,
        "---\nname: nested\ndescription: Use when new text\n---\n# nested\n\nBody of nested.\n",
    )
    .unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(2);
    std::fs::File::options()
        .write(true)
        .open(&md)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let second = cache.get(&options);
    assert_eq!(second.skills[0].description, "Use when new text");

    t.skill("a/b/other", "other", "Use when added");
    let third = cache.get(&options);
    assert_eq!(third.skills.len(), 2);
}

#[test]
fn a_codex_skills_repository_in_external_dirs_lists_its_dot_folders() {
    let codex = Tree::new();
    for (folder, names) in [
        (".system", vec!["skill-creator", "skill-installer"]),
        (".curated", vec!["gh-fix-ci", "notion-api", "playwright"]),
        (".experimental", vec!["sora", "imagegen"]),
    ] {
        for name in names {
            codex.skill(
                &format!("skills/{folder}/{name}"),
                name,
                "Use when testing Codex",
            );
        }
    }
    codex.file("README.md", "Codex skills\n");
    // A folder with its own plain skills keeps the plain layout.
    let plain = Tree::new();
    plain.skill("mine", "mine", "Use when mine");
    plain.skill(".curated/hidden", "hidden", "Use when hidden");
    let home = Tree::new();
    std::fs::create_dir_all(home.path("skills")).unwrap();
    let khome = knack_config::KnackHome::at(home.path(""));
    let mut config = knack_config::Config::default();
    config.skills.project_discovery = false;
    config.skills.external_dirs = vec![
        codex.path("").to_string_lossy().into_owned(),
        plain.path("").to_string_lossy().into_owned(),
    ];
    let options = DiscoveryOptions::resolve(&khome, &config, home.path("").as_path());
    let set = skill_core::discover(&options).0;
    let listed: Vec<String> = set.visible().iter().map(|s| s.name.clone()).collect();
    assert_eq!(listed.len(), 8, "{listed:?}");
    for name in ["skill-creator", "gh-fix-ci", "sora", "mine"] {
        assert!(listed.contains(&name.to_owned()), "{name}: {listed:?}");
    }
    assert!(!listed.contains(&"hidden".to_owned()));
    // Each dot-folder is an external root of its own, in Codex's order.
    let gh = set
        .visible()
        .into_iter()
        .find(|s| s.name == "gh-fix-ci")
        .unwrap();
    assert_eq!(gh.qualified_id(), "external-2:gh-fix-ci");
    let creator = set
        .visible()
        .into_iter()
        .find(|s| s.name == "skill-creator")
        .unwrap();
    assert_eq!(creator.qualified_id(), "external:skill-creator");
}
