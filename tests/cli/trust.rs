//! `knack skills trust|untrust`: a repository's project skills are used only
//! once the user trusts it, and the choice lands in config.yaml with the
//! user's comments kept.

use super::common::{Env, stdout_json, success, write_file};

fn project_ids(env: &Env) -> Vec<String> {
    let out = success(env.knack().args(["skills", "list", "--json"]));
    stdout_json(&out)["skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["scope"] == "project")
        .map(|s| s["qualified_id"].as_str().unwrap().to_owned())
        .collect()
}

/// A git repository in the test's working directory with one project skill.
fn repository_with_a_skill(env: &Env) {
    std::fs::create_dir(env.cwd.path().join(".git")).unwrap();
    write_file(
        &env.cwd.path().join(".knack/skills/lint/SKILL.md"),
        "---\nname: lint\ndescription: Use when linting this repository\n---\n# lint\n\nRun the linter.\n",
    );
}

#[test]
fn trust_adds_the_repository_keeps_comments_and_untrust_takes_it_away() {
    let env = Env::new();
    repository_with_a_skill(&env);
    env.write(
        "config.yaml",
        "# my settings\nskills:\n  # keep me\n  scan_max_dirs: 5000\n",
    );
    assert!(project_ids(&env).is_empty(), "untrusted: not used");
    let doctor = success(env.knack().args(["skills", "doctor", "--json"]));
    let notices = stdout_json(&doctor)["notices"].to_string();
    assert!(notices.contains("knack skills trust"), "{notices}");

    let out = success(env.knack().args(["skills", "trust"]));
    let text = String::from_utf8_lossy(&out.stdout);
    let repo = env.cwd.path().canonicalize().unwrap();
    assert!(
        text.contains(&format!("Trusted {}", repo.display())),
        "{text}"
    );
    assert!(text.contains(".knack/skills"), "{text}");
    let config = std::fs::read_to_string(env.home_path("config.yaml")).unwrap();
    assert!(
        config.contains("# my settings") && config.contains("# keep me"),
        "{config}"
    );
    assert!(config.contains(&*repo.to_string_lossy()), "{config}");
    assert_eq!(project_ids(&env), ["project:lint"]);

    let again = success(env.knack().args(["skills", "trust"]));
    assert!(String::from_utf8_lossy(&again.stdout).contains("already trusted"));

    // From a folder inside the repository, by path.
    std::fs::create_dir(env.cwd.path().join("src")).unwrap();
    success(env.knack().args(["skills", "untrust", "src"]));
    assert!(project_ids(&env).is_empty());
    let config = std::fs::read_to_string(env.home_path("config.yaml")).unwrap();
    assert!(!config.contains(&*repo.to_string_lossy()), "{config}");
    assert!(config.contains("# keep me"), "{config}");
    let again = success(env.knack().args(["skills", "untrust"]));
    assert!(String::from_utf8_lossy(&again.stdout).contains("was not trusted"));
}

#[test]
fn a_folder_outside_any_repository_cannot_be_trusted() {
    let env = Env::new();
    let out = env.knack().args(["skills", "trust"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not inside a git repository"), "{err}");
    let missing = env
        .knack()
        .args(["skills", "trust", "nope"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read"));
    assert!(!env.home_path("config.yaml").exists(), "nothing written");
}

#[test]
fn a_trusted_entry_may_start_with_a_tilde() {
    let env = Env::new();
    repository_with_a_skill(&env);
    let home_dir = env.cwd.path().parent().unwrap();
    let name = env.cwd.path().file_name().unwrap().to_string_lossy();
    env.write(
        "config.yaml",
        &format!("skills:\n  trusted_projects: [\"~/{name}\"]\n"),
    );
    let out = success(
        env.knack()
            .env("HOME", home_dir)
            .args(["skills", "list", "--json"]),
    );
    let ids: Vec<String> = stdout_json(&out)["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["qualified_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, ["project:lint"]);
}
