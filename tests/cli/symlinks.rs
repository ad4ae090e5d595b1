//! Links out of the skills root through the binary: a SKILL.md linked outside
//! is never listed, viewed or put in the prompt, doctor says why, and
//! `skills rollback` refuses a skill folder swapped for a link.

use serde_json::json;

use super::common::{Env, stdout_json, write_file};

#[test]
fn a_skill_md_linked_outside_is_never_shown_and_doctor_reports_it() {
    let env = Env::new();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.md");
    write_file(
        &secret,
        "---\nname: leak\ndescription: Use when TOPSECRET\n---\nTOPSECRET body\n",
    );
    env.skill("fine", "fine", "Use when fine");
    std::fs::create_dir_all(env.home_path("skills/leak")).unwrap();
    std::os::unix::fs::symlink(&secret, env.home_path("skills/leak/SKILL.md")).unwrap();

    let list = env
        .knack()
        .args(["skills", "list", "--json"])
        .output()
        .unwrap();
    assert!(list.status.success());
    assert_eq!(stdout_json(&list)["count"], json!(1));
    assert!(!String::from_utf8_lossy(&list.stdout).contains("TOPSECRET"));

    let view = env
        .knack()
        .args(["skills", "view", "leak"])
        .output()
        .unwrap();
    assert!(!view.status.success());
    assert!(!String::from_utf8_lossy(&view.stdout).contains("TOPSECRET"));

    let prompt = env.knack().args(["prompt", "show"]).output().unwrap();
    assert!(prompt.status.success());
    assert!(!String::from_utf8_lossy(&prompt.stdout).contains("TOPSECRET"));

    let doctor = env
        .knack()
        .args(["skills", "doctor", "--json"])
        .output()
        .unwrap();
    let v = stdout_json(&doctor);
    let entry = v["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"].as_str().unwrap().ends_with("leak/SKILL.md"))
        .unwrap_or_else(|| panic!("leak missing in {v}"))
        .clone();
    assert_eq!(entry["status"], json!("skipped"));
    assert!(
        entry["reason"]
            .as_str()
            .unwrap()
            .contains("leads outside its skills root"),
        "{entry}"
    );
}

#[test]
fn rollback_refuses_a_skill_folder_swapped_for_a_link() {
    let env = Env::new();
    let call = |args: serde_json::Value| {
        let out = env
            .knack()
            .args(["tool", "call", "skill_manage", &args.to_string()])
            .output()
            .unwrap();
        assert_eq!(stdout_json(&out)["success"], json!(true), "{args}");
    };
    call(json!({"action": "create", "name": "victim",
        "content": "---\nname: victim\ndescription: Use when attacked\n---\n# victim\n\nhold\n"}));
    call(json!({"action": "patch", "name": "victim", "old_string": "hold", "new_string": "held"}));
    let outside = tempfile::tempdir().unwrap();
    write_file(&outside.path().join("keep.md"), "keep\n");
    let skill = env.home_path("skills/victim");
    std::fs::rename(&skill, env.home_path("victim-aside")).unwrap();
    std::os::unix::fs::symlink(outside.path(), &skill).unwrap();

    let out = env
        .knack()
        .args(["skills", "rollback", "user:victim"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("symbolic link"), "{stderr}");
    let left: Vec<_> = std::fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("keep.md")]);
    assert_eq!(
        std::fs::read_to_string(outside.path().join("keep.md")).unwrap(),
        "keep\n"
    );
}
