//! `knack skills list|view|doctor|validate`: JSON shapes, human output and exit codes.

use pretty_assertions::assert_eq;
use serde_json::json;

use predicates::prelude::PredicateBooleanExt;

use super::common::{Env, stdout_json, success, write_file};

fn populated() -> Env {
    let env = Env::new();
    env.skill(
        "devops/deploy-k8s",
        "deploy-k8s",
        "Use when rolling out to Kubernetes",
    )
    .skill(
        "data/csv-explore",
        "csv-explore",
        "Use when exploring a CSV file",
    )
    .skill("solo", "solo", "Use when alone")
    .write(
        "skills/devops/deploy-k8s/references/api.md",
        "# API notes\n",
    )
    .write(
        "skills/devops/deploy-k8s/references/old/SKILL.md",
        "---\nname: old\ndescription: decoy\n---\nold\n",
    );
    env
}

#[test]
fn list_json_matches_the_contract() {
    let env = populated();
    let out = env
        .knack()
        .args(["skills", "list", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v = stdout_json(&out);
    assert_eq!(v["success"], json!(true));
    assert_eq!(v["count"], json!(3));
    assert_eq!(v["categories"], json!(["data", "devops"]));
    assert_eq!(
        v["skills"][0],
        json!({"name": "solo", "description": "Use when alone", "category": null,
               "id": "solo", "qualified_id": "user:solo", "scope": "user"})
    );
    let names: Vec<&str> = v["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["solo", "csv-explore", "deploy-k8s"]);

    let out = env
        .knack()
        .args(["skills", "list", "--json", "--category", "devops"])
        .output()
        .unwrap();
    assert_eq!(stdout_json(&out)["count"], json!(1));
}

#[test]
fn list_human_output_is_a_table() {
    let env = populated();
    env.knack()
        .args(["skills", "list"])
        .assert()
        .success()
        .stdout(predicates::str::contains("NAME"))
        .stdout(predicates::str::contains(
            "deploy-k8s   devops    user   Use when rolling out to Kubernetes",
        ))
        .stdout(predicates::str::contains("3 skill(s)"))
        .stdout(predicates::str::contains("\x1b[").not());
}

#[test]
fn empty_home_lists_nothing_and_succeeds() {
    let env = Env::new();
    let out = env
        .knack()
        .args(["skills", "list", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(stdout_json(&out)["count"], json!(0));
}

#[test]
fn view_json_and_file_serving() {
    let env = populated();
    let out = env
        .knack()
        .args(["skills", "view", "deploy-k8s", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v = stdout_json(&out);
    assert_eq!(v["qualified_id"], json!("user:devops/deploy-k8s"));
    assert_eq!(
        v["linked_files"],
        json!({"references": ["references/api.md", "references/old/SKILL.md"]})
    );
    assert_eq!(v["readiness_status"], json!("available"));
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        vec![
            "success",
            "name",
            "description",
            "category",
            "id",
            "qualified_id",
            "scope",
            "path",
            "skill_dir",
            "content",
            "tags",
            "related_skills",
            "linked_files",
            "readiness_status",
            "missing_required_environment_variables"
        ]
    );

    env.knack()
        .args([
            "skills",
            "view",
            "deploy-k8s",
            "--file",
            "references/api.md",
        ])
        .assert()
        .success()
        .stdout("# API notes\n");
    let out = env
        .knack()
        .args([
            "skills",
            "view",
            "deploy-k8s",
            "--file",
            "../../../../etc/passwd",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout_json(&out)["success"], json!(false));
}

#[test]
fn view_failures_exit_1_with_a_clear_message() {
    let env = populated();
    env.skill("other/deploy-k8s", "deploy-k8s", "Use when another copy");
    env.knack()
        .args(["skills", "view", "deploy-k8s"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("ambiguous"))
        .stderr(predicates::str::contains(
            "user:devops/deploy-k8s, user:other/deploy-k8s",
        ));
    let out = env
        .knack()
        .args(["skills", "view", "deploy-k8s", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout_json(&out)["matches"],
        json!(["user:devops/deploy-k8s", "user:other/deploy-k8s"])
    );
    env.knack()
        .args(["skills", "view", "user:other/deploy-k8s"])
        .assert()
        .success()
        .stdout(predicates::str::contains("Steps for deploy-k8s"));
    env.knack()
        .args(["skills", "view", "missing-one"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("no skill named 'missing-one'"))
        .stderr(predicates::str::contains("available skills: solo"));
}

#[test]
fn doctor_json_reports_every_skill_md() {
    let env = populated();
    env.write("skills/broken/SKILL.md", "---\nname: broken\n")
        .write(
            "skills/win/SKILL.md",
            "---\nname: win\ndescription: Use when windows\nplatforms: [windows]\n---\nbody\n",
        )
        .write(
            ".hub/quarantine/pending/SKILL.md",
            "---\nname: pending\ndescription: x\n---\nb\n",
        );
    let ext = tempfile::tempdir().unwrap();
    write_file(
        &ext.path().join("tools/solo/SKILL.md"),
        "---\nname: solo\ndescription: Use when external\n---\nb\n",
    );
    env.write(
        "config.yaml",
        &format!("skills:\n  external_dirs: [{}]\n", ext.path().display()),
    );
    let out = env
        .knack()
        .args(["skills", "doctor", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v = stdout_json(&out);
    assert_eq!(v["roots"][0]["scope"], json!("user"));
    assert_eq!(v["roots"][1]["scope"], json!("external"));
    assert_eq!(v["roots"][0]["skills"], json!(5));
    let status_of = |suffix: &str| -> String {
        v["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["path"].as_str().unwrap().ends_with(suffix))
            .unwrap_or_else(|| panic!("{suffix} missing in {v}"))["status"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(status_of("devops/deploy-k8s/SKILL.md"), "ok");
    assert_eq!(status_of("references/old/SKILL.md"), "skipped");
    assert_eq!(status_of("broken/SKILL.md"), "skipped");
    assert_eq!(status_of("win/SKILL.md"), "gated");
    assert_eq!(status_of("skills/solo/SKILL.md"), "ambiguous");
    assert_eq!(status_of("tools/solo/SKILL.md"), "ambiguous");
    assert_eq!(status_of("pending/SKILL.md"), "quarantined");
    let entry = &v["skills"][0];
    for key in [
        "path",
        "status",
        "name",
        "qualified_id",
        "reason",
        "warnings",
    ] {
        assert!(entry.get(key).is_some(), "{key} missing in {entry}");
    }

    env.knack()
        .args(["skills", "doctor"])
        .assert()
        .success()
        .stdout(predicates::str::contains("ambiguous"))
        .stdout(predicates::str::contains("quarantined"));
}

#[test]
fn validate_reports_each_rule_and_exit_code() {
    let env = populated();
    env.knack().args(["skills", "validate"]).assert().success();
    let bad = tempfile::tempdir().unwrap();
    write_file(
        &bad.path().join("Bad Name/SKILL.md"),
        "---\nname: Bad Name\ndescription: d\n---\nbody\n",
    );
    write_file(
        &bad.path().join("empty-body/SKILL.md"),
        "---\nname: empty-body\ndescription: d\n---\n\n",
    );
    let out = env
        .knack()
        .args(["skills", "validate", "--json"])
        .arg(bad.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v = stdout_json(&out);
    assert_eq!(v["checked"], json!(2));
    assert_eq!(v["invalid"], json!(2));
    let errors: Vec<String> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["errors"][0].as_str().unwrap().to_owned())
        .collect();
    assert!(errors[0].contains("not allowed"), "{errors:?}");
    assert!(errors[1].contains("body"), "{errors:?}");
    env.knack()
        .args(["skills", "validate", "/nonexistent/knack/path"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("does not exist"));
}

#[test]
fn validate_skips_history_copies_and_other_hidden_folders() {
    let env = Env::new();
    let create = json!({
        "action": "create",
        "name": "tidy",
        "content": "---\nname: tidy\ndescription: Use when tidying\n---\n# tidy\n\nStep one.\n",
    });
    let patch = json!({
        "action": "patch",
        "name": "tidy",
        "old_string": "Step one.",
        "new_string": "Step one, then two.",
    });
    for args in [create, patch] {
        success(
            env.knack()
                .args(["tool", "call", "skill_manage", &args.to_string()]),
        );
    }
    let history = env.home_path("skills/.history");
    assert!(history.is_dir(), "the writes left versions");
    write_file(
        &env.home_path("skills/.git/old/SKILL.md"),
        "---\nname: Old Copy\ndescription: d\n---\nbody\n",
    );
    let out = success(
        env.knack()
            .args(["skills", "validate", "--json"])
            .arg(env.home_path("skills")),
    );
    let v = stdout_json(&out);
    assert_eq!(v["checked"], json!(1), "{v}");
    let text = v.to_string();
    assert!(
        !text.contains(".history") && !text.contains(".git"),
        "{text}"
    );
}

#[test]
fn usage_errors_exit_2_and_help_works_everywhere() {
    let env = Env::new();
    env.knack()
        .args(["skills", "list", "--bogus"])
        .assert()
        .code(2);
    env.knack().args(["skills", "view"]).assert().code(2);
    for args in [
        &["--help"][..],
        &["skills", "--help"],
        &["skills", "view", "--help"],
        &["config", "--help"],
    ] {
        env.knack().args(args).assert().success();
    }
}
