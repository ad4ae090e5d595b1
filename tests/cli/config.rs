//! `knack config path|get|set` and how an invalid config.yaml is reported.

use predicates::prelude::*;

use super::common::Env;

#[test]
fn path_get_set_round_trip() {
    let env = Env::new();
    let out = env.knack().args(["config", "path"]).output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        env.home_path("config.yaml").to_string_lossy()
    );
    env.knack()
        .args(["config", "get", "skills.index_budget_chars"])
        .assert()
        .success()
        .stdout("12000\n");
    env.knack()
        .args(["config", "set", "skills.disabled", "[a, b]"])
        .assert()
        .success();
    env.knack()
        .args(["config", "get", "skills.disabled"])
        .assert()
        .success()
        .stdout("[\"a\",\"b\"]\n");
    let text = std::fs::read_to_string(env.home_path("config.yaml")).unwrap();
    assert!(text.contains("disabled"), "{text}");
}

#[test]
fn unknown_keys_and_bad_values_are_config_errors() {
    let env = Env::new();
    env.knack()
        .args(["config", "get", "skills.nope"])
        .assert()
        .code(3)
        .stderr(predicates::str::contains("keys under 'skills' are"));
    env.knack()
        .args(["config", "set", "skills.scan_max_depth", "deep"])
        .assert()
        .code(3);
    assert!(
        !env.home_path("config.yaml").exists(),
        "nothing written on a refused set"
    );
}

#[test]
fn invalid_config_file_names_file_and_line_and_exits_3() {
    let env = Env::new();
    env.write("config.yaml", "skills:\n  disabled: [a\n");
    env.knack()
        .args(["skills", "list"])
        .assert()
        .code(3)
        .stderr(predicates::str::contains("config.yaml"))
        .stderr(predicates::str::contains("line"))
        .stderr(predicates::str::contains(format!(
            "--> {}:2:",
            env.home_path("config.yaml").display()
        )))
        .stderr(predicates::str::contains("<input>").not());
}

#[test]
fn set_edits_the_key_in_place_and_keeps_comments() {
    let env = Env::new();
    env.write(
        "config.yaml",
        "# written by hand\nmodel:\n  name: a  # small\n\n# skills next\nskills:\n  disabled: [x]\n",
    );
    env.knack()
        .args(["config", "set", "skills.disabled", "[a, b]"])
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
    env.knack()
        .args(["config", "set", "model.name", "b"])
        .assert()
        .success();
    assert_eq!(
        std::fs::read_to_string(env.home_path("config.yaml")).unwrap(),
        "# written by hand\nmodel:\n  name: b  # small\n\n# skills next\nskills:\n  disabled: [a, b]\n"
    );

    // A flow mapping cannot be edited line by line: the file is rewritten, and the user told.
    env.write("config.yaml", "# lost\nskills: {disabled: [x]}\n");
    env.knack()
        .args(["config", "set", "skills.inline_shell", "true"])
        .assert()
        .success()
        .stderr(predicate::str::contains("comments were not kept"));
}
