//! `knack skills sync | list-modified | diff | reset | opt-out | opt-in`, and
//! the silent seeding every skill-reading command does first.

use std::path::PathBuf;

use assert_cmd::Command;
use serde_json::Value;

use super::common::{Env, stdout_json, success, write_file};

const SKILLS: &[(&str, &str)] = &[
    ("ops/DESCRIPTION.md", "Operations.\n"),
    (
        "ops/alpha/SKILL.md",
        "---\nname: alpha\ndescription: Use when alpha\n---\n# Alpha\nstep one\nstep two\n",
    ),
    ("ops/alpha/references/notes.md", "note\n"),
    (
        "ops/beta/SKILL.md",
        "---\nname: beta\ndescription: Use when beta\n---\n# Beta\n",
    ),
    (
        "data/gamma/SKILL.md",
        "---\nname: gamma\ndescription: Use when gamma\n---\n# Gamma\n",
    ),
];

/// An environment whose bundled-skills source holds three fixture skills.
fn bundled_env() -> Env {
    let env = Env::new();
    for (rel, text) in SKILLS {
        write_file(&env.bundle.path().join(rel), text);
    }
    env
}

fn skills(env: &Env) -> PathBuf {
    env.home_path("skills")
}

fn run(env: &Env, args: &[&str]) -> Command {
    let mut cmd = env.knack();
    cmd.args(args);
    cmd
}

fn stdout(env: &Env, args: &[&str]) -> String {
    let out = run(env, args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json(env: &Env, args: &[&str]) -> Value {
    let out = run(env, args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout_json(&out)
}

fn names(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect()
}

#[test]
fn sync_reports_what_it_did() {
    let env = bundled_env();
    let first = stdout(&env, &["skills", "sync"]);
    assert!(
        first.contains("+ added (3): data/gamma, ops/alpha, ops/beta"),
        "{first}"
    );
    let again = json(&env, &["skills", "sync", "--json"]);
    assert_eq!(again["success"], true);
    assert_eq!(again["total"], 3);
    assert_eq!(
        names(&again["unchanged"]),
        ["data/gamma", "ops/alpha", "ops/beta"]
    );
    assert!(names(&again["added"]).is_empty());

    write_file(&skills(&env).join("ops/alpha/SKILL.md"), "mine\n");
    std::fs::remove_dir_all(skills(&env).join("ops/beta")).unwrap();
    write_file(&env.bundle.path().join("data/gamma/SKILL.md"), "gamma v2\n");
    let text = stdout(&env, &["skills", "sync"]);
    assert!(text.contains("↑ updated (1): data/gamma"), "{text}");
    assert!(text.contains("~ kept customized (1): ops/alpha"), "{text}");
    assert!(text.contains("- skipped deleted (1): ops/beta"), "{text}");
}

#[test]
fn skill_commands_seed_silently_and_keep_deletions() {
    let env = bundled_env();
    let out = run(&env, &["skills", "list", "--json"]).output().unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list = stdout_json(&out);
    let ids: Vec<&str> = list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["data/gamma", "ops/alpha", "ops/beta"]);
    assert!(skills(&env).join(".bundled_manifest").is_file());

    std::fs::remove_dir_all(skills(&env).join("ops/beta")).unwrap();
    for round in 0..3 {
        if round == 1 {
            // A new bundle version forces a full sync in between.
            write_file(&env.bundle.path().join("ops/alpha/SKILL.md"), "alpha v2\n");
        }
        run(&env, &["skills", "list"]).assert().success();
        assert!(!skills(&env).join("ops/beta").exists(), "round {round}");
    }
    let alpha = std::fs::read_to_string(skills(&env).join("ops/alpha/SKILL.md")).unwrap();
    assert_eq!(alpha, "alpha v2\n");
}

#[test]
fn a_damaged_manifest_is_reported_on_stderr_once() {
    let env = bundled_env();
    run(&env, &["skills", "list"]).assert().success();
    std::fs::write(
        skills(&env).join(".bundled_manifest"),
        "this is not a manifest\n",
    )
    .unwrap();
    let out = run(&env, &["skills", "list"]).output().unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning") && stderr.contains("damaged"),
        "{stderr}"
    );
    // Rebuilt: the next command is silent again.
    let out = run(&env, &["skills", "list"]).output().unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn list_modified_lists_edited_copies() {
    let env = bundled_env();
    run(&env, &["skills", "sync"]).assert().success();
    let none = stdout(&env, &["skills", "list-modified"]);
    assert!(
        none.contains("No bundled skill has local changes"),
        "{none}"
    );
    write_file(&skills(&env).join("ops/alpha/SKILL.md"), "mine\n");
    let listed = json(&env, &["skills", "list-modified", "--json"]);
    assert_eq!(listed["success"], true);
    assert_eq!(listed["count"], 1);
    assert_eq!(listed["modified"][0]["id"], "ops/alpha");
    assert_eq!(listed["modified"][0]["bundled_changed"], false);
    let text = stdout(&env, &["skills", "list-modified"]);
    assert!(text.contains("ops/alpha"), "{text}");
}

#[test]
fn diff_prints_a_unified_diff() {
    let env = bundled_env();
    run(&env, &["skills", "sync"]).assert().success();
    let path = skills(&env).join("ops/alpha/SKILL.md");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("step two", "step 2");
    std::fs::write(&path, text).unwrap();
    let out = stdout(&env, &["skills", "diff", "alpha", "--bundled"]);
    assert!(out.contains("--- bundled/ops/alpha/SKILL.md"), "{out}");
    assert!(
        out.contains("-step two") && out.contains("+step 2"),
        "{out}"
    );
    let as_json = json(&env, &["skills", "diff", "alpha", "--bundled", "--json"]);
    assert_eq!(as_json["files"][0]["status"], "modified");
    let same = stdout(&env, &["skills", "diff", "ops/beta", "--bundled"]);
    assert!(same.contains("matches the bundled version"), "{same}");
    run(&env, &["skills", "diff", "no-such-skill", "--bundled"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("not a bundled skill"));
}

#[test]
fn reset_untracks_and_restore_replaces_with_a_backup() {
    let env = bundled_env();
    run(&env, &["skills", "sync"]).assert().success();
    let skill_md = skills(&env).join("ops/alpha/SKILL.md");
    std::fs::write(&skill_md, "mine\n").unwrap();

    let out = stdout(&env, &["skills", "reset", "alpha"]);
    assert!(out.contains("no longer tracked"), "{out}");
    assert_eq!(std::fs::read_to_string(&skill_md).unwrap(), "mine\n");
    run(&env, &["skills", "reset", "alpha"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("not a tracked bundled skill"));

    let restored = json(&env, &["skills", "reset", "alpha", "--restore", "--json"]);
    assert_eq!(restored["action"], "restored");
    let backup = PathBuf::from(restored["backup"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(backup.join("SKILL.md")).unwrap(),
        "mine\n"
    );
    assert!(
        std::fs::read_to_string(&skill_md)
            .unwrap()
            .contains("# Alpha")
    );
    assert_eq!(
        json(&env, &["skills", "list-modified", "--json"])["count"],
        0
    );
}

#[test]
fn opt_out_stops_seeding_and_opt_in_resumes_it() {
    let env = bundled_env();
    let out = stdout(&env, &["skills", "opt-out"]);
    assert!(out.contains("no longer be seeded"), "{out}");
    let value = stdout(&env, &["config", "get", "skills.bundled_opt_out"]);
    assert_eq!(value.trim(), "true");
    run(&env, &["skills", "list"]).assert().success();
    assert!(!skills(&env).join("ops/alpha").exists());
    let sync = json(&env, &["skills", "sync", "--json"]);
    assert_eq!(sync["opted_out"], true);
    assert!(!skills(&env).join("ops/alpha").exists());

    run(&env, &["skills", "opt-in"]).assert().success();
    run(&env, &["skills", "list"]).assert().success();
    assert!(skills(&env).join("ops/alpha/SKILL.md").is_file());
}

#[test]
fn the_compiled_in_bundle_seeds_without_a_repository() {
    let env = Env::new();
    let out = success(run(&env, &["skills", "sync", "--json"]).env_remove("KNACK_BUNDLED_SKILLS"));
    let report = stdout_json(&out);
    let total = report["total"].as_u64().unwrap();
    assert!(total >= 12, "{total} bundled skills");
    let added = names(&report["added"]);
    assert_eq!(added.len() as u64, total);
    assert!(skills(&env).join(added[0]).join("SKILL.md").is_file());
}
