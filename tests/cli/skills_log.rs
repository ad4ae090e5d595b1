//! `knack skills log` (every write across the library) and `knack skills diff
//! NAME [--version N]` (what one write changed), over writes made through
//! `tool call skill_manage` and by the agent in `knack run`.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use test_support::ScriptedReply;

use super::common::{Env, mock, run_cmd, stdout_json, success, write_file};

fn manage(env: &Env, args: &Value) {
    success(
        env.knack()
            .args(["tool", "call", "skill_manage", &args.to_string()]),
    );
}

fn skill_md(name: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: Use when testing {name}\n---\n# {name}\n\n{body}\n")
}

fn log_json(env: &Env, extra: &[&str]) -> Vec<Value> {
    let out = success(env.knack().args(["skills", "log", "--json"]).args(extra));
    stdout_json(&out).as_array().unwrap().clone()
}

/// Three writes by the user: create alpha, create beta, patch alpha (one line
/// becomes two).
fn three_writes(env: &Env) {
    manage(
        env,
        &json!({"action": "create", "name": "alpha", "content": skill_md("alpha", "first")}),
    );
    manage(
        env,
        &json!({"action": "create", "name": "beta", "content": skill_md("beta", "one")}),
    );
    manage(
        env,
        &json!({"action": "patch", "name": "alpha", "old_string": "first",
                "new_string": "second\nthird"}),
    );
}

#[test]
fn log_lists_every_write_newest_first_with_actor_and_stat() {
    let env = Env::new();
    three_writes(&env);
    let entries = log_json(&env, &[]);
    let keys: Vec<&String> = entries[0].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "time",
            "skill",
            "qualified_id",
            "action",
            "actor",
            "version",
            "added",
            "removed"
        ]
    );
    let rows: Vec<(String, String, u64, u64, u64)> = entries
        .iter()
        .map(|e| {
            (
                e["skill"].as_str().unwrap().to_owned(),
                e["action"].as_str().unwrap().to_owned(),
                e["version"].as_u64().unwrap(),
                e["added"].as_u64().unwrap(),
                e["removed"].as_u64().unwrap(),
            )
        })
        .collect();
    let created = skill_md("alpha", "first").lines().count() as u64;
    assert_eq!(
        rows,
        [
            ("alpha".into(), "patch".into(), 2, 2, 1),
            ("beta".into(), "create".into(), 1, created, 0),
            ("alpha".into(), "create".into(), 1, created, 0),
        ]
    );
    for e in &entries {
        assert_eq!(e["actor"], "user", "{e}");
        assert!(e["time"].as_str().unwrap().ends_with('Z'), "{e}");
        assert!(
            e["qualified_id"].as_str().unwrap().starts_with("user:"),
            "{e}"
        );
    }
    let out = success(env.knack().args(["skills", "log"]));
    let text = String::from_utf8_lossy(&out.stdout);
    let alpha_patch = text.find("patch").unwrap();
    let beta = text.find("user:beta").unwrap();
    assert!(alpha_patch < beta, "{text}");
    assert!(text.contains("+2 -1") && text.contains("by user"), "{text}");
}

#[test]
fn log_names_the_agent_for_writes_made_in_a_run() {
    let env = Env::new();
    manage(
        &env,
        &json!({"action": "create", "name": "notes", "content": skill_md("notes", "keep")}),
    );
    let server = mock();
    server.enqueue(ScriptedReply::tool_calls([(
        "c1",
        "skill_manage",
        json!({"action": "patch", "name": "notes", "old_string": "keep",
               "new_string": "keep short"})
        .to_string(),
    )]));
    server.enqueue(ScriptedReply::text("Patched."));
    success(run_cmd(&env, &server).args(["run", "tidy the notes skill"]));
    let entries = log_json(&env, &[]);
    let actors: Vec<(&str, &str)> = entries
        .iter()
        .map(|e| (e["action"].as_str().unwrap(), e["actor"].as_str().unwrap()))
        .collect();
    assert_eq!(actors, [("patch", "agent"), ("create", "user")]);
    assert_eq!(
        (entries[0]["added"].clone(), entries[0]["removed"].clone()),
        (json!(1), json!(1))
    );
}

/// Moves every recorded write of `skill` back to `time` (as if made then).
fn backdate(env: &Env, skill: &str, time: &str) {
    let root = env.home_path("skills/.history");
    for dir in std::fs::read_dir(root).unwrap().flatten() {
        for version in std::fs::read_dir(dir.path()).unwrap().flatten() {
            let path = version.path().join("record.json");
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let mut record: Value = serde_json::from_str(&text).unwrap();
            if record["name"] == skill {
                record["time"] = json!(time);
                write_file(&path, &record.to_string());
            }
        }
    }
}

#[test]
fn since_keeps_recent_writes_and_refuses_what_it_cannot_read() {
    let env = Env::new();
    three_writes(&env);
    backdate(&env, "beta", "2020-03-01T12:00:00Z");
    let names = |entries: Vec<Value>| -> Vec<String> {
        entries
            .iter()
            .map(|e| e["skill"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        names(log_json(&env, &["--since", "1d"])),
        ["alpha", "alpha"]
    );
    assert_eq!(
        names(log_json(&env, &["--since", "2h"])),
        ["alpha", "alpha"]
    );
    assert_eq!(
        names(log_json(&env, &["--since", "2020-02-29"])),
        ["alpha", "alpha", "beta"]
    );
    assert_eq!(
        names(log_json(&env, &["--since", "2020-03-02"])),
        ["alpha", "alpha"]
    );
    for bad in ["yesterday", "3x", "2020-02-30", "d"] {
        let out = env
            .knack()
            .args(["skills", "log", "--since", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(bad) && err.contains("7d") && err.contains("YYYY-MM-DD"),
            "{bad}: {err}"
        );
    }
}

#[test]
fn log_of_an_empty_library_is_empty_not_an_error() {
    let env = Env::new();
    assert_eq!(log_json(&env, &[]), Vec::<Value>::new());
    success(env.knack().args(["skills", "log"]));
}

#[test]
fn diff_shows_the_latest_write_or_the_version_asked_for() {
    let env = Env::new();
    three_writes(&env);
    let out = success(env.knack().args(["skills", "diff", "alpha"]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("#2") && text.contains("patch"), "{text}");
    assert!(
        text.contains("-first") && text.contains("+second") && text.contains("+third"),
        "{text}"
    );
    let out = success(
        env.knack()
            .args(["skills", "diff", "alpha", "--version", "1"]),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("create") && text.contains("+first"), "{text}");
    assert!(!text.contains("+second"), "{text}");
    let out = success(
        env.knack()
            .args(["skills", "diff", "alpha", "--version", "2", "--json"]),
    );
    let v = stdout_json(&out);
    assert_eq!(
        (
            &v["version"],
            &v["action"],
            &v["actor"],
            &v["added"],
            &v["removed"]
        ),
        (
            &json!(2),
            &json!("patch"),
            &json!("user"),
            &json!(2),
            &json!(1)
        )
    );
    assert!(v["diff"].as_str().unwrap().contains("-first"), "{v}");
}

#[test]
fn diff_of_an_unknown_version_or_skill_says_what_exists() {
    let env = Env::new();
    three_writes(&env);
    let out = env
        .knack()
        .args(["skills", "diff", "alpha", "--version", "9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no version 9") && err.contains("1, 2"),
        "{err}"
    );
    let out = env
        .knack()
        .args(["skills", "diff", "alpa"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("alpa'") && err.contains("alpha"), "{err}");
    let out = env
        .knack()
        .args(["skills", "diff", "alpha", "--version", "1", "--bundled"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bundled_keeps_the_old_comparison() {
    let env = Env::new();
    write_file(
        &env.bundle.path().join("ops/gamma/SKILL.md"),
        &skill_md("gamma", "bundled text"),
    );
    success(env.knack().args(["skills", "sync"]));
    let path = env.home_path("skills/ops/gamma/SKILL.md");
    write_file(&path, &skill_md("gamma", "my text"));
    let out = success(env.knack().args(["skills", "diff", "gamma", "--bundled"]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("-bundled text") && text.contains("+my text"),
        "{text}"
    );
    // Without the flag, a seeded skill nobody wrote through knack has no history.
    let out = env
        .knack()
        .args(["skills", "diff", "gamma"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--bundled"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_write_to_a_support_file_is_counted_and_shown_as_that_file() {
    let env = Env::new();
    three_writes(&env);
    manage(
        &env,
        &json!({"action": "write_file", "name": "beta", "file_path": "references/api.md",
                "file_content": "get\nput\ndelete\n"}),
    );
    let newest = log_json(&env, &[]).remove(0);
    assert_eq!(
        (
            &newest["skill"],
            &newest["action"],
            &newest["added"],
            &newest["removed"]
        ),
        (&json!("beta"), &json!("write_file"), &json!(3), &json!(0))
    );
    let out = success(env.knack().args(["skills", "diff", "beta"]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("+++ b/references/api.md") && text.contains("+delete"),
        "{text}"
    );
}
