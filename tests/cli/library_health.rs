//! A library that stays healthy: usage records counted through the CLI and
//! `knack run` with the scripted mock, archive and restore, pins against the
//! review and the foreground model, consolidation by a scripted review, the
//! index ordered by use, and a damaged usage table.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use test_support::{Purpose, ScriptedReply, check_invariants};

use super::common::{Env, doctor_without_model, mock, run_cmd, stdout_json, success};

/// `knack skills stats --json`, by qualified id.
fn stats(env: &Env) -> BTreeMap<String, Value> {
    let out = success(env.knack().args(["skills", "stats", "--json"]));
    stdout_json(&out)
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["qualified_id"].as_str().unwrap().to_owned(),
                row.clone(),
            )
        })
        .collect()
}

/// An agent-created skill (as the review's rule reads it: the provenance sidecar).
fn agent_skill(env: &Env, rel: &str, name: &str, description: &str) {
    env.skill(rel, name, description);
    env.write(
        &format!("skills/{rel}/.knack-provenance.json"),
        "{\"created_by\": \"agent\"}\n",
    );
}

/// Every file under `dir` with its bytes and mode, for byte-exact comparisons.
fn tree(dir: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, u32)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(base).unwrap().display().to_string();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                out.insert(format!("{rel}/"), (Vec::new(), meta.permissions().mode()));
                walk(base, &path, out);
            } else {
                out.insert(
                    rel,
                    (std::fs::read(&path).unwrap(), meta.permissions().mode()),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The text of every tool result the model was sent in `purpose` requests.
fn tool_results_sent(server: &test_support::MockModelServer, purpose: &str) -> Vec<String> {
    let requests = server.chat_requests();
    let last = requests
        .iter()
        .rfind(|r| r.purpose() == Some(purpose))
        .expect("a request of that purpose");
    last.messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn uses_views_and_patches_are_counted_through_run_and_the_cli() {
    let env = Env::new();
    env.skill("ops/deploy", "deploy", "Use when deploying the app");
    env.skill("ops/logs", "logs", "Use when reading the logs");
    std::fs::write(env.cwd.path().join("notes.txt"), "line\n").unwrap();
    let server = mock();

    // A slash invocation is a use; the skill's text is what the model got.
    server.enqueue(ScriptedReply::text("shipped"));
    success(run_cmd(&env, &server).args(["run", "--no-review", "/deploy ship it"]));
    let first = &server.chat_requests()[0];
    assert!(
        first.messages().iter().any(|m| m["content"]
            .as_str()
            .is_some_and(|c| c.contains("invoked the skill \"deploy\" (user:ops/deploy)"))),
        "the invocation reached the model"
    );

    // A view followed by other work in the turn is a view and one use; a
    // second view in the same turn is a second view, not a second use.
    server.enqueue(ScriptedReply::tool_calls([(
        "v1",
        "skill_view",
        r#"{"name": "logs"}"#,
    )]));
    server.enqueue(ScriptedReply::tool_calls([
        ("v2", "skill_view", r#"{"name": "logs"}"#),
        ("r1", "read_file", r#"{"path": "notes.txt"}"#),
    ]));
    server.enqueue(ScriptedReply::tool_calls([(
        "p1",
        "skill_manage",
        r#"{"action": "patch", "name": "logs", "old_string": "Steps for logs.", "new_string": "Steps for logs, newest first."}"#,
    )]));
    server.enqueue(ScriptedReply::text("read them"));
    success(run_cmd(&env, &server).args(["run", "--no-review", "check the logs"]));
    let sent = tool_results_sent(&server, "turn");
    assert!(
        sent.iter()
            .any(|r| r.contains("\"success\":true") && r.contains("Patched")),
        "{sent:?}"
    );

    // A preload is a use too.
    server.enqueue(ScriptedReply::text("ok"));
    success(run_cmd(&env, &server).args(["run", "--no-review", "-s", "deploy", "again"]));

    // A person's patch through `knack tool call` counts as the user's; a
    // person's view is not the model's and is not counted.
    success(env.knack().args([
        "tool",
        "call",
        "skill_manage",
        r#"{"action": "patch", "name": "logs", "old_string": "newest first", "new_string": "newest on top"}"#,
    ]));
    success(
        env.knack()
            .args(["tool", "call", "skill_view", r#"{"name": "logs"}"#]),
    );

    let s = stats(&env);
    let deploy = &s["user:ops/deploy"];
    assert_eq!(
        (
            deploy["uses"].clone(),
            deploy["views"].clone(),
            deploy["patches"].clone()
        ),
        (json!(2), json!(0), json!(0))
    );
    let logs = &s["user:ops/logs"];
    assert_eq!(
        (
            logs["uses"].clone(),
            logs["views"].clone(),
            logs["patches"].clone()
        ),
        (json!(1), json!(2), json!(2))
    );
    assert_eq!(logs["patches_by"], json!({"agent": 1, "user": 1}));
    for row in [deploy, logs] {
        assert_eq!(row["state"], "active");
        assert_eq!(row["pinned"], false);
        assert_eq!(row["created_by"], "user");
        let last = row["last_used"].as_str().unwrap();
        assert!(last.len() == 20 && last.ends_with('Z'), "{last}");
    }
    // The contract's keys, every one of them.
    for key in [
        "name",
        "qualified_id",
        "created_by",
        "views",
        "uses",
        "patches",
        "last_used",
        "state",
        "pinned",
    ] {
        assert!(logs.get(key).is_some(), "missing {key}");
    }
    let by_uses = stdout_json(&success(
        env.knack()
            .args(["skills", "stats", "--json", "--sort", "uses"]),
    ));
    assert_eq!(by_uses[0]["name"], "deploy");
    let human = success(env.knack().args(["skills", "stats", "--sort", "name"]));
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("2 (agent 1, user 1)"), "{text}");
    check_invariants(&server.requests()).unwrap();
}

#[test]
fn archive_and_restore_round_trip_byte_for_byte() {
    let env = Env::new();
    env.write(
        "skills/ops/deploy/SKILL.md",
        "---\r\nname: deploy\r\ndescription: Use when deploying\r\n---\r\nNo final newline",
    );
    env.write("skills/ops/deploy/references/notes.md", "ref\n");
    env.write("skills/ops/deploy/scripts/run.sh", "#!/bin/sh\necho hi\n");
    let script = env.home_path("skills/ops/deploy/scripts/run.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = env.home_path("skills/ops/deploy");
    let before = tree(&dir);

    let out = success(env.knack().args(["skills", "archive", "deploy"]));
    assert!(String::from_utf8_lossy(&out.stdout).contains("skills restore deploy"));
    assert!(!dir.exists());
    let list = stdout_json(&success(env.knack().args(["skills", "list", "--json"])));
    assert_eq!(list["skills"], json!([]), "gone from the list");
    env.knack()
        .args(["skills", "view", "deploy"])
        .assert()
        .code(1);
    let prompt = success(env.knack().args(["prompt", "show"]));
    assert!(!String::from_utf8_lossy(&prompt.stdout).contains("Use when deploying"));
    assert_eq!(stats(&env)["user:ops/deploy"]["state"], "archived");

    success(env.knack().args(["skills", "restore", "deploy"]));
    assert_eq!(tree(&dir), before);
    assert_eq!(stats(&env)["user:ops/deploy"]["state"], "active");
    let history = stdout_json(&success(
        env.knack().args(["skills", "history", "deploy", "--json"]),
    ));
    let actions: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["archive", "restore"]);

    // Archived again, then a new skill of the same name: restore refuses
    // and names both folders.
    success(env.knack().args(["skills", "archive", "user:ops/deploy"]));
    env.skill("tools/deploy", "deploy", "Use when deploying, the new way");
    let out = env
        .knack()
        .args(["skills", "restore", "deploy"])
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains(&env.home_path("skills/tools/deploy").display().to_string()),
        "{err}"
    );
    assert!(err.contains(".archive/deploy-"), "{err}");
    assert!(!dir.exists());
}

#[test]
fn unknown_and_ambiguous_names_are_refused_with_qualified_ids() {
    let env = Env::new();
    env.skill("a/dup", "dup", "Use when a");
    env.skill("b/dup", "dup", "Use when b");
    for verb in ["archive", "pin", "unpin"] {
        let out = env.knack().args(["skills", verb, "dup"]).assert().code(1);
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(
            err.contains("user:a/dup") && err.contains("user:b/dup"),
            "{verb}: {err}"
        );
        let out = env.knack().args(["skills", verb, "nope"]).assert().code(1);
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(err.contains("no skill named 'nope'"), "{verb}: {err}");
    }
    let out = env
        .knack()
        .args(["skills", "restore", "nope"])
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("no archived skill named 'nope'"), "{err}");
    // Both archived: the restore must be told which one.
    success(env.knack().args(["skills", "archive", "user:a/dup"]));
    success(env.knack().args(["skills", "archive", "user:b/dup"]));
    let out = env
        .knack()
        .args(["skills", "restore", "dup"])
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("user:a/dup") && err.contains("user:b/dup"),
        "{err}"
    );
    success(env.knack().args(["skills", "restore", "user:b/dup"]));
    assert!(env.home_path("skills/b/dup/SKILL.md").is_file());
}

#[test]
fn a_pin_stops_the_review_and_a_foreground_delete_but_not_a_foreground_patch() {
    let env = Env::new();
    agent_skill(&env, "ops/flaky", "flaky", "Use when a test is flaky");
    env.write("config.yaml", "skills:\n  review_after_tool_calls: 2\n");
    let pinned = success(env.knack().args(["skills", "pin", "flaky"]));
    assert!(String::from_utf8_lossy(&pinned.stdout).contains("knack skills unpin flaky"));
    assert_eq!(stats(&env)["user:ops/flaky"]["pinned"], true);
    let md = env.home_path("skills/ops/flaky/SKILL.md");
    let server = mock();

    // Foreground: the delete is refused, the patch goes through.
    server.enqueue(ScriptedReply::tool_calls([(
        "d1",
        "skill_manage",
        r#"{"action": "delete", "name": "flaky"}"#,
    )]));
    server.enqueue(ScriptedReply::tool_calls([(
        "p1",
        "skill_manage",
        r#"{"action": "patch", "name": "flaky", "old_string": "Steps for flaky.", "new_string": "Rerun it twice."}"#,
    )]));
    // Two more calls after the last skill write earn the review.
    server.enqueue(ScriptedReply::tool_calls([
        ("t1", "skills_list", "{}"),
        ("t2", "skills_list", "{}"),
    ]));
    server.enqueue(ScriptedReply::text("done"));
    // The review: it reads the skill, then tries to change it.
    server.enqueue_for(
        Purpose::Review,
        ScriptedReply::tool_calls([("rv", "skill_view", r#"{"name": "flaky"}"#)]),
    );
    server.enqueue_for(
        Purpose::Review,
        ScriptedReply::tool_calls([(
            "rp",
            "skill_manage",
            r#"{"action": "patch", "name": "flaky", "old_string": "Rerun it twice.", "new_string": "Rerun it."}"#,
        )]),
    );
    server.enqueue_for(Purpose::Review, ScriptedReply::text("Could not change it."));
    success(run_cmd(&env, &server).args(["run", "fix the flaky test"]));

    let turn = tool_results_sent(&server, "turn");
    let refusal: Value = serde_json::from_str(&turn[0]).unwrap();
    assert_eq!(refusal["success"], false);
    assert!(
        refusal["error"].as_str().unwrap().contains("pinned"),
        "{refusal}"
    );
    assert!(
        refusal["hint"]
            .as_str()
            .unwrap()
            .contains("knack skills unpin flaky"),
        "{refusal}"
    );
    let review = tool_results_sent(&server, "review");
    let refusal: Value = serde_json::from_str(review.last().unwrap()).unwrap();
    assert_eq!(refusal["success"], false);
    assert!(
        refusal["error"].as_str().unwrap().contains("pinned"),
        "{refusal}"
    );
    assert!(
        refusal["hint"]
            .as_str()
            .unwrap()
            .contains("knack skills unpin flaky")
    );
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.contains("Rerun it twice."),
        "the foreground patch landed: {text}"
    );
    assert_eq!(
        stats(&env)["user:ops/flaky"]["patches_by"],
        json!({"agent": 1})
    );

    // The user's own archive is refused too until they unpin.
    env.knack()
        .args(["skills", "archive", "flaky"])
        .assert()
        .code(1);
    success(env.knack().args(["skills", "unpin", "flaky"]));
    success(env.knack().args(["skills", "archive", "flaky"]));
    check_invariants(&server.requests()).unwrap();
}

#[test]
fn a_scripted_review_consolidates_two_agent_skills_and_rollback_undoes_it() {
    let env = Env::new();
    agent_skill(
        &env,
        "ops/deploy-web",
        "deploy-web",
        "Use when deploying the web app",
    );
    agent_skill(
        &env,
        "ops/deploy-api",
        "deploy-api",
        "Use when deploying the api",
    );
    env.write("config.yaml", "skills:\n  review_after_tool_calls: 1\n");
    let server = mock();
    server.enqueue(ScriptedReply::tool_calls([("t1", "skills_list", "{}")]));
    server.enqueue(ScriptedReply::text("deployed both"));
    let umbrella = "---\\nname: deploy\\ndescription: Use when deploying the web app or the api\\n---\\n# Deploy\\n\\n## Web\\nSteps for deploy-web.\\n\\n## API\\nSteps for deploy-api.\\n";
    server.enqueue_for(
        Purpose::Review,
        ScriptedReply::tool_calls([
            ("v1", "skill_view", r#"{"name": "deploy-web"}"#),
            ("v2", "skill_view", r#"{"name": "deploy-api"}"#),
        ]),
    );
    server.enqueue_for(
        Purpose::Review,
        ScriptedReply::tool_calls([(
            "c1",
            "skill_manage",
            format!(r#"{{"action": "create", "name": "deploy", "category": "ops", "content": "{umbrella}"}}"#),
        )]),
    );
    server.enqueue_for(
        Purpose::Review,
        ScriptedReply::tool_calls([
            (
                "d1",
                "skill_manage",
                r#"{"action": "delete", "name": "deploy-web", "absorbed_into": "deploy"}"#,
            ),
            (
                "d2",
                "skill_manage",
                r#"{"action": "delete", "name": "deploy-api", "absorbed_into": "deploy"}"#,
            ),
        ]),
    );
    server.enqueue_for(
        Purpose::Review,
        ScriptedReply::text("Merged both into deploy."),
    );
    let out = success(run_cmd(&env, &server).args(["run", "--json", "deploy everything"]));
    let summary = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(summary.contains("archived skill deploy-web"), "{summary}");

    // The review was told how to consolidate.
    let review = server
        .chat_requests()
        .into_iter()
        .find(|r| r.purpose() == Some("review"))
        .unwrap();
    let ask = review.messages().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        ask.contains("umbrella") && ask.contains("absorbed_into"),
        "{ask}"
    );
    for result in tool_results_sent(&server, "review") {
        assert!(result.contains("\"success\":true"), "{result}");
    }

    let s = stats(&env);
    assert_eq!(s["user:ops/deploy"]["state"], "active");
    assert_eq!(s["user:ops/deploy"]["created_by"], "review");
    assert_eq!(s["user:ops/deploy-web"]["state"], "archived");
    assert_eq!(s["user:ops/deploy-api"]["state"], "archived");
    let records: Vec<Value> = std::fs::read_dir(env.home_path("skills/.archive"))
        .unwrap()
        .filter_map(|e| {
            let path = e.unwrap().path();
            path.to_string_lossy()
                .ends_with(".archived.json")
                .then(|| serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap())
        })
        .collect();
    assert_eq!(records.len(), 2);
    assert!(
        records
            .iter()
            .all(|r| r["absorbed_into"] == "deploy" && r["actor"] == "review")
    );
    let history = stdout_json(&success(env.knack().args([
        "skills",
        "history",
        "deploy-web",
        "--json",
    ])));
    assert_eq!(history[0]["action"], "archive");
    assert_eq!(history[0]["actor"], "review");

    // Every step can be undone: the absorbed skills come back (and leave the
    // archive), the umbrella goes.
    for name in ["deploy-web", "deploy-api"] {
        success(env.knack().args(["skills", "rollback", name]));
    }
    env.knack()
        .args(["skills", "rollback", "deploy"])
        .assert()
        .code(1);
    success(env.knack().args([
        "tool",
        "call",
        "skill_manage",
        r#"{"action": "delete", "name": "deploy"}"#,
    ]));
    let s = stats(&env);
    assert_eq!(s["user:ops/deploy-web"]["state"], "active");
    assert_eq!(s["user:ops/deploy-api"]["state"], "active");
    assert!(!s.contains_key("user:ops/deploy"));
    assert!(
        std::fs::read_to_string(env.home_path("skills/ops/deploy-web/SKILL.md"))
            .unwrap()
            .contains("Steps for deploy-web.")
    );
    let left = std::fs::read_dir(env.home_path("skills/.archive"))
        .unwrap()
        .count();
    assert_eq!(left, 0, "the archived copies were dropped");
    check_invariants(&server.requests()).unwrap();
}

#[test]
fn the_most_used_skills_keep_their_descriptions_longest() {
    let env = Env::new();
    let names = [
        "alpha", "beta", "delta", "epsilon", "eta", "gamma", "theta", "zeta",
    ];
    for name in names {
        env.skill(
            &format!("ops/{name}"),
            name,
            &format!("Use when {name} {}", "x ".repeat(60)),
        );
    }
    // A budget with room for every name but only some descriptions.
    env.write("config.yaml", "skills:\n  index_budget_chars: 850\n");
    let server = mock();
    for _ in 0..2 {
        server.enqueue(ScriptedReply::text("ok"));
        success(run_cmd(&env, &server).args(["run", "--no-review", "/zeta go"]));
    }
    server.enqueue(ScriptedReply::text("ok"));
    success(run_cmd(&env, &server).args(["run", "--no-review", "/gamma go"]));
    server.enqueue(ScriptedReply::text("ok"));
    success(run_cmd(&env, &server).args(["run", "--no-review", "hello"]));
    let requests = server.chat_requests();
    let prompt_of = |i: usize| {
        requests[i].messages()[0]["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let described =
        |prompt: &str, name: &str| prompt.contains(&format!("- {name}: Use when {name}"));
    let bare = |prompt: &str, name: &str| prompt.contains(&format!("- {name}\n"));
    let first = prompt_of(0);
    let last = prompt_of(requests.len() - 1);
    // Without uses, the category's first skills keep theirs.
    assert!(
        described(&first, "alpha") && bare(&first, "zeta"),
        "{first}"
    );
    // The used ones keep theirs over every unused one, and every name stays.
    assert!(
        described(&last, "zeta") && described(&last, "gamma"),
        "{last}"
    );
    assert!(bare(&last, "theta"), "{last}");
    for name in names {
        assert!(
            described(&last, name) || bare(&last, name),
            "{name}: {last}"
        );
    }
    assert!(
        last.contains("listed skills are shown by name only"),
        "{last}"
    );
    // `knack prompt show` prints what that session got.
    let shown = success(env.knack().args(["prompt", "show"]));
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        described(&shown, "zeta") && bare(&shown, "theta"),
        "{shown}"
    );
    check_invariants(&requests).unwrap();
}

#[test]
fn a_damaged_usage_table_leaves_commands_working_and_doctor_says_so() {
    let env = Env::new();
    env.skill("ops/deploy", "deploy", "Use when deploying");
    success(env.knack().args(["skills", "stats"]));
    success(
        env.knack()
            .args(["tool", "call", "skill_view", r#"{"name": "deploy"}"#]),
    );
    let doctor = stdout_json(&doctor_without_model(&env, &["--json"]));
    assert_eq!(doctor["skill_usage"]["ok"], true);
    {
        let db = rusqlite::Connection::open(env.home_path("state.db")).unwrap();
        db.execute_batch("DROP TABLE skill_usage; CREATE TABLE skill_usage (junk TEXT);")
            .unwrap();
    }
    let out = success(env.knack().args(["skills", "stats", "--json"]));
    assert_eq!(stdout_json(&out)[0]["uses"], 0);
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be read"));
    success(env.knack().args([
        "tool",
        "call",
        "skill_manage",
        r#"{"action": "patch", "name": "deploy", "old_string": "Steps for deploy.", "new_string": "Ship it."}"#,
    ]));
    let doctor = stdout_json(&doctor_without_model(&env, &["--json"]));
    assert_eq!(doctor["skill_usage"]["ok"], false);
    assert!(
        doctor["skill_usage"]["error"]
            .as_str()
            .is_some_and(|e| !e.is_empty())
    );
    let text = doctor_without_model(&env, &[]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("cannot be read"));
}

#[test]
fn stats_sort_takes_last_used_as_the_contract_spells_it() {
    let env = Env::new();
    env.skill("b", "beta", "Use when b");
    env.skill("a", "alpha", "Use when a");
    for spelling in ["last_used", "last-used"] {
        let out = success(
            env.knack()
                .args(["skills", "stats", "--json", "--sort", spelling]),
        );
        let names: Vec<Value> = stdout_json(&out)
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].clone())
            .collect();
        // Never used: ordered by name.
        assert_eq!(names, [json!("alpha"), json!("beta")], "{spelling}");
    }
}

#[test]
fn archive_restore_and_pin_twice_succeed_and_an_ambiguous_name_never_reaches_the_archive() {
    let env = Env::new();
    env.skill("ops/deploy", "deploy", "Use when deploying");
    let archive_entries = || {
        std::fs::read_dir(env.home_path("skills/.archive"))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    success(env.knack().args(["skills", "archive", "deploy"]));
    let entries = archive_entries();
    for name in ["deploy", "ops/deploy", "user:ops/deploy"] {
        let out = success(env.knack().args(["skills", "archive", name]));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("already archived") && text.contains("user:ops/deploy"),
            "{name}: {text}"
        );
    }
    assert_eq!(archive_entries(), entries, "nothing archived twice");
    assert_eq!(stats(&env)["user:ops/deploy"]["state"], "archived");

    success(env.knack().args(["skills", "restore", "deploy"]));
    let out = success(env.knack().args(["skills", "restore", "deploy"]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("is not archived")
            && text.contains(&env.home_path("skills/ops/deploy").display().to_string()),
        "{text}"
    );
    let history = stdout_json(&success(
        env.knack().args(["skills", "history", "deploy", "--json"]),
    ));
    let actions: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        ["archive", "restore"],
        "the second restore wrote nothing"
    );

    // Two live skills share a name and a third of that name is archived:
    // the name is ambiguous, and neither pin nor archive picks the archived one.
    env.skill("a/dup", "dup", "Use when a");
    env.skill("b/dup", "dup", "Use when b");
    env.skill("c/dup", "dup", "Use when c");
    success(env.knack().args(["skills", "archive", "user:c/dup"]));
    for verb in ["pin", "archive"] {
        let out = env.knack().args(["skills", verb, "dup"]).assert().code(1);
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(
            err.contains("ambiguous") && err.contains("user:a/dup") && err.contains("user:b/dup"),
            "{verb}: {err}"
        );
    }
    assert_eq!(stats(&env)["user:c/dup"]["pinned"], false);
}

#[test]
fn stale_after_days_zero_is_reported_as_staleness_off() {
    let env = Env::new();
    env.skill("old", "old", "Use when old");
    env.write("config.yaml", "skills:\n  stale_after_days: 0\n");
    let out = success(env.knack().args(["skills", "stats"]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("staleness off"), "{text}");
    assert!(!text.contains("no use in 0 days"), "{text}");
    assert_eq!(stats(&env)["user:old"]["state"], "active");
}

#[test]
fn a_broken_pins_file_is_reported_and_never_overwritten() {
    let env = Env::new();
    env.skill("ops/keep", "keep", "Use when keeping things");
    env.write("skills/.pins.json", "{\"pinned\": [\"user:ops/keep\"");
    let out = env
        .knack()
        .args(["skills", "pin", "keep"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(".pins.json is not valid JSON"), "{err}");
    assert_eq!(
        std::fs::read_to_string(env.home_path("skills/.pins.json")).unwrap(),
        "{\"pinned\": [\"user:ops/keep\"",
        "the user's pins stay as they were"
    );
    let out = success(env.knack().args(["skills", "stats", "--json"]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("every skill counts as pinned"), "{err}");
    assert_eq!(stdout_json(&out)[0]["pinned"], json!(false));
    assert_eq!(
        std::fs::read_to_string(env.home_path("skills/.pins.json.damaged")).unwrap(),
        "{\"pinned\": [\"user:ops/keep\"",
        "a copy of the damaged file is kept beside it"
    );
}
