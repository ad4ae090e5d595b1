//! Skills laid out the way public collections write them (long descriptions
//! with the trigger at the end, sibling docs, dot-folders, twin roots).

use serde_json::json;

use super::common::{Env, stdout_json, success};

/// A description shaped like the real ones: boilerplate first, trigger last.
const LONG_DESCRIPTION: &str = "Comprehensive toolkit for spreadsheet work including formulas, pivot tables, charts, conditional formatting and data validation across many sheets. Use when the user asks to read, create or change an .xlsx workbook.";

#[test]
fn one_description_rule_for_writes_validate_and_doctor() {
    let env = Env::new();
    let content = format!(
        "---\nname: sheets\ndescription: {LONG_DESCRIPTION}\n---\n# sheets\n\n1. Open the workbook.\n"
    );
    let create = json!({"action": "create", "name": "sheets", "content": content});
    let out = success(
        env.knack()
            .args(["tool", "call", "skill_manage", &create.to_string()]),
    );
    assert_eq!(stdout_json(&out)["success"], json!(true));
    let out = success(
        env.knack()
            .args(["skills", "validate", "--json"])
            .arg(env.home_path("skills/sheets")),
    );
    let v = stdout_json(&out);
    assert_eq!(v["invalid"], json!(0), "{v}");
    assert_eq!(v["results"][0]["warnings"], json!([]), "{v}");
    // Past the soft length: a warning everywhere, never an error.
    let wordy = format!("Use when {}", "reading long prose ".repeat(40));
    env.skill("wordy", "wordy", &wordy);
    let out = success(
        env.knack()
            .args(["skills", "validate", "--json"])
            .arg(env.home_path("skills/wordy")),
    );
    let v = stdout_json(&out);
    assert!(
        v["results"][0]["warnings"]
            .to_string()
            .contains("rarely read"),
        "{v}"
    );
    let out = success(env.knack().args(["skills", "doctor", "--json"]));
    let v = stdout_json(&out);
    let skills = v["skills"].as_array().unwrap();
    let warnings_of = |name: &str| {
        skills
            .iter()
            .find(|s| s["name"] == json!(name))
            .map(|s| s["warnings"].to_string())
            .unwrap()
    };
    assert!(warnings_of("wordy").contains("rarely read"));
    assert!(!warnings_of("sheets").contains("description"), "{v}");
    // A description over the hard limit is refused by a write.
    let too_long = format!(
        "---\nname: huge\ndescription: {}\n---\nbody\n",
        "x".repeat(1100)
    );
    let create = json!({"action": "create", "name": "huge", "content": too_long});
    let out = env
        .knack()
        .args(["tool", "call", "skill_manage", &create.to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout_json(&out)["error"]
            .as_str()
            .unwrap()
            .contains("1024")
    );
}

#[test]
fn linked_files_offer_sibling_docs_and_other_folders() {
    let env = Env::new();
    env.skill("pdf", "pdf", LONG_DESCRIPTION)
        .write("skills/pdf/forms.md", "# Filling forms\n")
        .write("skills/pdf/LICENSE.txt", "MIT\n")
        .write("skills/pdf/examples/invoice.json", "{}\n")
        .write("skills/pdf/scripts/fill.py", "print('fill')\n")
        .write("skills/pdf/.knack-provenance.json", "{}\n");
    let out = success(env.knack().args(["skills", "view", "pdf", "--json"]));
    let v = stdout_json(&out);
    assert_eq!(
        v["linked_files"],
        json!({
            ".": ["LICENSE.txt", "forms.md"],
            "scripts": ["scripts/fill.py"],
            "examples": ["examples/invoice.json"],
        })
    );
    assert!(v.get("linked_files_omitted").is_none(), "{v}");
    let out = success(
        env.knack()
            .args(["skills", "view", "pdf", "--file", "forms.md", "--json"]),
    );
    assert_eq!(stdout_json(&out)["content"], json!("# Filling forms\n"));
    let out = success(
        env.knack()
            .args(["skills", "validate", "--json"])
            .arg(env.home_path("skills/pdf")),
    );
    assert_eq!(stdout_json(&out)["results"][0]["warnings"], json!([]));
}

#[test]
fn two_external_roots_with_the_same_skill_are_both_reachable() {
    let env = Env::new();
    let first = env.home_path("team-a");
    let second = env.home_path("team-b");
    for (dir, who) in [(&first, "team a"), (&second, "team b")] {
        super::common::write_file(
            &dir.join("skill-creator/SKILL.md"),
            &format!(
                "---\nname: skill-creator\ndescription: Use when writing a skill ({who})\n---\n# skill-creator\n\nSteps by {who}.\n"
            ),
        );
    }
    env.write(
        "config.yaml",
        &format!(
            "skills:\n  external_dirs: [\"{}\", \"{}\"]\n",
            first.display(),
            second.display()
        ),
    );
    let out = success(env.knack().args(["skills", "list", "--json"]));
    let v = stdout_json(&out);
    let ids: Vec<&str> = v["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["qualified_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["external-2:skill-creator", "external:skill-creator"]);
    assert!(
        v["skills"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["scope"] == json!("external"))
    );
    for (qid, who) in [
        ("external:skill-creator", "team a"),
        ("external-2:skill-creator", "team b"),
    ] {
        let out = success(env.knack().args(["skills", "view", qid, "--json"]));
        assert!(stdout_json(&out)["content"].as_str().unwrap().contains(who));
    }
    let out = env
        .knack()
        .args(["skills", "view", "skill-creator", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout_json(&out)["matches"],
        json!(["external-2:skill-creator", "external:skill-creator"])
    );
    let patch = json!({
        "action": "patch",
        "name": "external-2:skill-creator",
        "old_string": "Steps by team b.",
        "new_string": "Steps by team b, revised.",
    });
    success(
        env.knack()
            .args(["tool", "call", "skill_manage", &patch.to_string()]),
    );
    let text = std::fs::read_to_string(second.join("skill-creator/SKILL.md")).unwrap();
    assert!(text.contains("revised"), "{text}");
    let text = std::fs::read_to_string(first.join("skill-creator/SKILL.md")).unwrap();
    assert!(!text.contains("revised"), "{text}");
}

/// The skills of a collection that keeps them all in dot-folders, as
/// `(folder below the collection, name)`.
pub(super) const DOT_FOLDER_SKILLS: [(&str, &str); 2] = [
    (".curated/gh-fix-ci", "gh-fix-ci"),
    (".system/skill-installer", "skill-installer"),
];

/// Writes a collection laid out like public ones that keep every skill in
/// dot-folders (`skills/.curated/…`, `skills/.system/…`) under `collection`.
pub(super) fn write_dot_folder_collection(collection: &std::path::Path) {
    for (folder, name) in DOT_FOLDER_SKILLS {
        super::common::write_file(
            &collection.join(folder).join("SKILL.md"),
            &format!(
                "---\nname: {name}\ndescription: Use when {name} is needed\n---\n# {name}\n\nSteps.\n"
            ),
        );
    }
}

#[test]
fn dot_folder_collections_are_read_when_named_and_reported_when_skipped() {
    let env = Env::new();
    // A collection that keeps its skills in dot-folders (a Codex repository).
    let collection = env.home_path("codex-skills/skills");
    write_dot_folder_collection(&collection);
    // The same layout inside the user root is not a collection anyone named.
    write_dot_folder_collection(&env.home_path("skills/vendor"));
    env.write(
        "config.yaml",
        &format!(
            "skills:\n  external_dirs: [\"{}\", \"{}\"]\n",
            collection.display(),
            collection.join(".curated").display()
        ),
    );
    let out = success(env.knack().args(["skills", "list", "--json"]));
    let v = stdout_json(&out);
    let ids: Vec<&str> = v["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["qualified_id"].as_str().unwrap())
        .collect();
    // Named, the collection is read through its dot-folders, each a root of
    // its own in Codex's order; naming one of them again adds nothing.
    assert_eq!(
        ids,
        ["external-2:gh-fix-ci", "external:skill-installer"],
        "{v}"
    );
    let out = success(env.knack().args(["skills", "doctor", "--json"]));
    let v = stdout_json(&out);
    let notices = v["notices"].to_string();
    assert!(
        notices.contains("vendor/.system") && notices.contains("skills.external_dirs"),
        "{v}"
    );
    assert!(!notices.contains("codex-skills"), "{v}");
    let out = success(env.knack().args(["skills", "doctor"]));
    assert!(String::from_utf8_lossy(&out.stdout).contains("skipped the dot-folder"));
}

#[test]
fn inspect_json_answers_an_object_even_when_the_package_is_refused() {
    let env = Env::new();
    let pkg = env.home_path("incoming/broken");
    super::common::write_file(&pkg.join("SKILL.md"), "---\nname: broken\n---\n\n");
    let out = env
        .knack()
        .args(["skills", "inspect", "--json"])
        .arg(&pkg)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v = stdout_json(&out);
    assert_eq!(v["success"], json!(false));
    assert!(v["error"].as_str().unwrap().contains("broken"), "{v}");
}

#[test]
fn a_published_site_installs_over_http() {
    let env = Env::new();
    let team = env.home_path("team-library");
    for (name, extra) in [
        ("deploy", "scripts/roll.sh"),
        ("triage", "references/logs.md"),
    ] {
        super::common::write_file(
            &team.join(format!("ops/{name}/SKILL.md")),
            &format!(
                "---\nname: {name}\ndescription: Use when the team needs {name}\n---\n# {name}\n\nSteps.\n"
            ),
        );
        super::common::write_file(&team.join(format!("ops/{name}/{extra}")), "echo ok\n");
    }
    super::common::write_file(&team.join("ops/deploy/.knack-provenance.json"), "{}");
    let site = env.home_path("site");
    let out = success(
        env.knack()
            .args(["skills", "publish", "--json", "--out"])
            .arg(&site)
            .arg(&team),
    );
    let v = stdout_json(&out);
    assert_eq!(v["success"], json!(true));
    let names: Vec<&str> = v["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["deploy", "triage"]);
    let index_path = site.join(".well-known/agent-skills/index.json");
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&index_path).unwrap()).unwrap();
    let first = &index["skills"][0];
    assert_eq!(first["type"], json!("archive"));
    assert_eq!(first["url"], json!("deploy.tar.gz"));
    assert!(first["digest"].as_str().unwrap().starts_with("sha256:"));

    // Any static server will do: serve the site's files as they are.
    let server = test_support::StaticServer::start_blocking().unwrap();
    for entry in std::fs::read_dir(site.join(".well-known/agent-skills")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        server.put(
            &format!("/.well-known/agent-skills/{name}"),
            std::fs::read(&path).unwrap(),
        );
    }
    let id = format!("well-known:{}#deploy", server.base_url());
    success(env.knack().args(["skills", "install", &id, "--yes"]));
    let installed = env.home_path("skills/deploy");
    assert!(installed.join("scripts/roll.sh").is_file());
    let out = success(env.knack().args(["skills", "view", "deploy", "--json"]));
    assert_eq!(stdout_json(&out)["scope"], json!("user"));
    // A tampered archive is refused by its digest.
    server.put(
        "/.well-known/agent-skills/triage.tar.gz",
        b"not the archive".to_vec(),
    );
    let id = format!("well-known:{}#triage", server.base_url());
    let out = env
        .knack()
        .args(["skills", "install", &id, "--yes"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("digest"));
}
