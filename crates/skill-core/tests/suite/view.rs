//! `skills_list` and `skill_view` JSON on fixture trees, including file
//! serving with traversal and link escapes refused.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use skill_core::{
    DiscoveryOptions, PreprocessOptions, Scope, ViewContext, skill_view, skills_list,
};

use super::fixture::{Tree, discover_roots, root};

fn view(set: &skill_core::SkillSet, name: &str, file: Option<&str>) -> Value {
    let env = knack_config::parse_env_file("FROM_DOTENV=1\n");
    let ctx = ViewContext {
        preprocess: PreprocessOptions::from_config(
            &knack_config::KnackHome::at("/nonexistent-knack-home"),
            &knack_config::Config::default(),
        ),
        session_id: Some("sess-1"),
        env: &env,
    };
    skill_view(set, name, file, &ctx)
}

fn fixture() -> (Tree, skill_core::SkillSet) {
    let t = Tree::new();
    t.file(
        "devops/deploy/SKILL.md",
        "---\nname: deploy\ndescription: Use when deploying\ntags: [k8s, ops]\nrelated_skills: \"rollback, logs\"\nrequired_environment_variables:\n  - FROM_DOTENV\n  - SKILL_TEST_SURELY_UNSET_VAR\n  - name: OPTIONAL_ONE\n    optional: true\n---\n# Deploy\nRun ${KNACK_SKILL_DIR}/scripts/go.sh in ${KNACK_SESSION_ID}\n",
    )
    .file("devops/deploy/references/api.md", "# API\n")
    .file("devops/deploy/references/old/SKILL.md", "---\nname: old\ndescription: decoy\n---\nold body\n")
    .file("devops/deploy/scripts/go.sh", "#!/bin/sh\necho go\n")
    .file("devops/deploy/notes.txt", "loose notes\n")
    .skill("data/csv", "csv", "Use when exploring CSV");
    std::fs::write(
        t.path("devops/deploy/assets/logo.png"),
        b"\x89PNG\r\n\x1a\n\0\0\0binary",
    )
    .unwrap_or_else(|_| {
        std::fs::create_dir_all(t.path("devops/deploy/assets")).unwrap();
        std::fs::write(
            t.path("devops/deploy/assets/logo.png"),
            b"\x89PNG\r\n\x1a\n\0\0\0binary",
        )
        .unwrap();
    });
    let outside = t.path("outside-secret.txt");
    std::fs::write(&outside, "secret").unwrap();
    t.symlink(&outside, "devops/deploy/references/leak.md");
    t.symlink(&t.path("data"), "devops/deploy/templates/escape-dir");
    let set = discover_roots(vec![root(t.path(""), Scope::User)]);
    (t, set)
}

#[test]
fn list_matches_the_contract_shape() {
    let (_t, set) = fixture();
    let out = skills_list(&set, None);
    assert_eq!(out["success"], json!(true));
    assert_eq!(out["count"], json!(2));
    assert_eq!(out["categories"], json!(["data", "devops"]));
    assert_eq!(
        out["skills"][0],
        json!({"name": "csv", "description": "Use when exploring CSV", "category": "data",
               "id": "data/csv", "qualified_id": "user:data/csv", "scope": "user"})
    );
    let filtered = skills_list(&set, Some("devops"));
    assert_eq!(filtered["count"], json!(1));
    assert_eq!(skills_list(&set, Some("nope"))["count"], json!(0));
}

#[test]
fn view_returns_content_links_and_readiness() {
    let (t, set) = fixture();
    let out = view(&set, "deploy", None);
    assert_eq!(out["success"], json!(true), "{out}");
    assert_eq!(out["qualified_id"], json!("user:devops/deploy"));
    assert_eq!(out["tags"], json!(["k8s", "ops"]));
    assert_eq!(out["related_skills"], json!(["rollback", "logs"]));
    let dir = t.path("devops/deploy");
    let content = out["content"].as_str().unwrap();
    assert!(content.starts_with("---\nname: deploy"), "frontmatter kept");
    assert!(content.contains(&format!("Run {}/scripts/go.sh in sess-1", dir.display())));
    // Links out of the skill (leak.md, escape-dir) are not offered: skill_view
    // would refuse to serve them. Files beside SKILL.md are offered.
    assert_eq!(
        out["linked_files"],
        json!({
            ".": ["notes.txt"],
            "references": ["references/api.md", "references/old/SKILL.md"],
            "scripts": ["scripts/go.sh"],
            "assets": ["assets/logo.png"],
        })
    );
    assert_eq!(out["readiness_status"], json!("setup_needed"));
    assert_eq!(
        out["missing_required_environment_variables"],
        json!(["SKILL_TEST_SURELY_UNSET_VAR"])
    );
    assert_eq!(out["skill_dir"], json!(dir));
}

#[test]
fn decoy_is_reachable_as_a_file_of_its_parent() {
    let (_t, set) = fixture();
    let out = view(&set, "user:devops/deploy", Some("references/old/SKILL.md"));
    assert_eq!(out["success"], json!(true));
    assert_eq!(out["file"], json!("references/old/SKILL.md"));
    assert!(out["content"].as_str().unwrap().contains("old body"));
    assert!(matches!(
        set.resolve("old"),
        skill_core::Resolution::NotFound
    ));
}

#[test]
fn file_escapes_are_refused() {
    let (_t, set) = fixture();
    for bad in [
        "../../outside-secret.txt",
        "/etc/passwd",
        "references/../../../outside-secret.txt",
        "references/leak.md",
        "templates/escape-dir/csv/SKILL.md",
        "~/x",
    ] {
        let out = view(&set, "deploy", Some(bad));
        assert_eq!(out["success"], json!(false), "{bad}: {out}");
        assert!(
            out["error"].as_str().unwrap().contains("refused"),
            "{bad}: {out}"
        );
    }
}

#[test]
fn binary_files_are_described_and_missing_files_list_the_rest() {
    let (_t, set) = fixture();
    let out = view(&set, "deploy", Some("assets/logo.png"));
    assert_eq!(out["is_binary"], json!(true));
    assert!(out["content"].as_str().unwrap().contains("PNG image"));
    let out = view(&set, "deploy", Some("references/nope.md"));
    assert_eq!(out["success"], json!(false));
    let files = out["available_files"].as_array().unwrap();
    assert!(files.contains(&json!("references/api.md")));
    assert!(files.contains(&json!("notes.txt")));
}

#[test]
fn names_that_are_paths_are_refused() {
    let (_t, set) = fixture();
    for bad in [
        "/etc/passwd",
        "../deploy",
        "devops/../data/csv",
        "~/skills/x",
    ] {
        let out = view(&set, bad, None);
        assert_eq!(out["success"], json!(false), "{bad}");
    }
}

#[test]
fn ambiguous_not_found_unsupported_and_disabled_failures() {
    let a = Tree::new();
    a.skill("one/dup", "dup", "Use when one")
        .skill("two/dup", "dup", "Use when two")
        .file(
            "win/SKILL.md",
            "---\nname: win\ndescription: Use when windows\nplatforms: [windows]\n---\nb\n",
        )
        .skill("off", "off", "Use when off");
    let mut options = DiscoveryOptions::with_roots(vec![root(a.path(""), Scope::User)]);
    options.platform = "linux".into();
    options.disabled = vec!["user:off".into()];
    let set = skill_core::discover(&options).0;

    let out = view(&set, "dup", None);
    assert_eq!(out["success"], json!(false));
    assert_eq!(out["matches"], json!(["user:one/dup", "user:two/dup"]));
    assert_eq!(view(&set, "one/dup", None)["success"], json!(true));

    let out = view(&set, "nothing-here", None);
    assert_eq!(out["available_skills"], json!(["dup", "dup"]));

    let out = view(&set, "win", None);
    assert_eq!(out["readiness_status"], json!("unsupported"));
    let out = view(&set, "off", None);
    assert!(out["hint"].as_str().unwrap().contains("skills.disabled"));
}

#[test]
fn an_oversized_skill_md_is_cut_for_the_model() {
    let t = Tree::new();
    let body = "word ".repeat(60_000);
    t.file(
        "big/SKILL.md",
        &format!("---\nname: big\ndescription: Use when big\n---\n{body}"),
    );
    let set = discover_roots(vec![root(t.path(""), Scope::User)]);
    let out = view(&set, "big", None);
    let content = out["content"].as_str().unwrap();
    assert!(
        content.chars().count() < 100_300,
        "{}",
        content.chars().count()
    );
    assert!(
        content.contains("[truncated: this SKILL.md has 300"),
        "{}",
        &content[content.len() - 200..]
    );
}

#[test]
fn skills_list_pages_stay_under_the_cap_and_say_where_to_go_on() {
    use skill_core::{ListPage, skills_list_page};
    let tree = Tree::new();
    for i in 0..250 {
        tree.skill(
            &format!("c{}/skill-{i:03}", i % 4),
            &format!("skill-{i:03}"),
            &format!(
                "Use when task {i} comes up, {}",
                "with many words ".repeat(20)
            ),
        );
    }
    tree.file(
        "manual/SKILL.md",
        "---\nname: manual\ndescription: Use when asked\ndisable-model-invocation: true\n---\nBody.\n",
    );
    let set = discover_roots(vec![root(tree.dir.path().to_path_buf(), Scope::User)]);
    let mut seen = Vec::new();
    let mut offset = 0;
    let mut pages = 0;
    loop {
        let page = skills_list_page(
            &set,
            &ListPage {
                category: None,
                offset,
                limit: 100,
                max_chars: 30_000,
            },
        );
        pages += 1;
        assert!(page.to_string().len() <= 30_000, "page {pages} too long");
        assert_eq!(
            page["count"],
            json!(250),
            "manual-only skills are not listed"
        );
        let rows = page["skills"].as_array().unwrap();
        assert!(!rows.is_empty());
        seen.extend(rows.iter().map(|r| r["name"].as_str().unwrap().to_owned()));
        match page.get("next_offset") {
            Some(next) => {
                offset = next.as_u64().unwrap() as usize;
                assert_eq!(offset, seen.len());
                assert!(
                    page["hint"]
                        .as_str()
                        .unwrap()
                        .contains(&format!("offset {offset}"))
                );
            }
            None => break,
        }
    }
    assert!(pages >= 4, "the cap split the pages: {pages}");
    assert_eq!(seen.len(), 250);
    let unique: std::collections::BTreeSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), 250);
    assert!(!seen.iter().any(|n| n == "manual"));
    // A category narrows, and a small limit pages too.
    let page = skills_list_page(
        &set,
        &ListPage {
            category: Some("c1"),
            offset: 0,
            limit: 10,
            max_chars: 30_000,
        },
    );
    assert_eq!(page["count"], json!(63));
    assert_eq!(page["skills"].as_array().unwrap().len(), 10);
    assert_eq!(page["next_offset"], json!(10));
    // Past the end: nothing, and no next page.
    let page = skills_list_page(
        &set,
        &ListPage {
            category: None,
            offset: 999,
            limit: 10,
            max_chars: 30_000,
        },
    );
    assert!(page["skills"].as_array().unwrap().is_empty());
    assert!(page.get("next_offset").is_none());
}

#[test]
fn other_runtimes_fields_are_shown_and_prerequisites_decide_readiness() {
    let tree = Tree::new();
    tree.file(
        "notion/SKILL.md",
        "---\nname: notion\ndescription: Use when editing Notion pages\nallowed-tools: Read, Bash(curl:*)\nrequires:\n  mcp: [notion]\ndependencies: [requests]\nprerequisites:\n  env_vars: [NOTION_TEST_KEY_UNSET_29]\n  commands: [sh, knack-test-no-such-command]\nmetadata:\n  short-description: Notion pages\n---\nBody.\n",
    );
    tree.file(
        "ready/SKILL.md",
        "---\nname: ready\ndescription: Use when ready\nprerequisites:\n  commands: [sh]\n---\nBody.\n",
    );
    let set = discover_roots(vec![root(tree.dir.path().to_path_buf(), Scope::User)]);
    let out = view(&set, "notion", None);
    assert_eq!(out["short_description"], json!("Notion pages"));
    assert_eq!(out["allowed_tools"], json!(["Read", "Bash(curl:*)"]));
    assert_eq!(out["requires_mcp"], json!(["notion"]));
    assert_eq!(out["dependencies"], json!(["requests"]));
    assert_eq!(
        out["missing_commands"],
        json!(["knack-test-no-such-command"])
    );
    assert_eq!(
        out["missing_required_environment_variables"],
        json!(["NOTION_TEST_KEY_UNSET_29"])
    );
    assert_eq!(out["readiness_status"], json!("setup_needed"));
    let ready = view(&set, "ready", None);
    assert_eq!(ready["readiness_status"], json!("available"));
    assert!(ready.get("missing_commands").is_none());
    assert!(ready.get("allowed_tools").is_none());
}
