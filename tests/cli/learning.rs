//! The learning loop end to end: a review that tries to repeat a skill is
//! refused and patches instead, the review's caps, its share of the bill in
//! `sessions show`, and the inbox round trip from the agent's write to the
//! user's accept or reject.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use test_support::{CapturedRequest, Purpose, ScriptedReply, check_invariants};

use super::common::{Env, mock, run_cmd, stdout_json, success};

fn events(output: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// Five tool calls and an answer: enough to earn a review.
fn long_turn(server: &test_support::MockModelServer) {
    for i in 0..5 {
        server.enqueue(
            ScriptedReply::tool_calls([(format!("t{i}"), "skills_list", "{}")])
                .with_usage(1_000, 20, 0),
        );
    }
    server.enqueue(ScriptedReply::text("all done").with_usage(1_200, 30, 0));
}

fn review_requests(server: &test_support::MockModelServer) -> Vec<CapturedRequest> {
    server
        .chat_requests()
        .into_iter()
        .filter(|r| r.purpose() == Some("review"))
        .collect()
}

/// The content of the tool result answering `call_id` in `request`.
fn tool_result(request: &CapturedRequest, call_id: &str) -> Value {
    let message = request
        .messages()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .unwrap_or_else(|| panic!("no result for {call_id}"))
        .clone();
    serde_json::from_str(message["content"].as_str().unwrap()).unwrap()
}

const DEPLOY: &str = "---\nname: deploy-k8s\ndescription: Deploy an application to a Kubernetes cluster with kubectl. Use when shipping a service to k8s.\n---\n# Deploy\n\n1. Build the image and push it to the registry.\n2. kubectl apply the manifests.\n3. Watch the rollout status until it is complete.\n";

fn json_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

#[test]
fn a_review_that_repeats_a_skill_is_refused_with_its_name_and_patches_it_instead() {
    let env = Env::new();
    env.write("skills/devops/deploy-k8s/SKILL.md", DEPLOY)
        .write(
            "skills/devops/deploy-k8s/.knack-provenance.json",
            r#"{"created_by": "agent"}"#,
        );
    let server = mock();
    long_turn(&server);
    let copy = "---\nname: k8s-deploy\ndescription: Deploys applications to Kubernetes clusters using kubectl. Use when a service must ship to k8s.\n---\n# Deploying\n\n1. Build and push the image to the registry.\n2. Apply the manifests with kubectl.\n3. Watch the rollout status.\n";
    server.enqueue_for(
        Purpose::Review,
        ScriptedReply::tool_calls([(
            "r1",
            "skill_manage",
            format!(
                r#"{{"action":"create","name":"k8s-deploy","category":"devops","content":{}}}"#,
                json_string(copy)
            ),
        )]),
    );
    server.enqueue_for(
        Purpose::Review,
        ScriptedReply::tool_calls([("r2", "skill_view", r#"{"name":"deploy-k8s"}"#)]),
    );
    server.enqueue_for(
        Purpose::Review,
        ScriptedReply::tool_calls([(
            "r3",
            "skill_manage",
            r#"{"action":"patch","name":"deploy-k8s","old_string":"3. Watch the rollout status","new_string":"3. Check the namespace exists.\n4. Watch the rollout status"}"#,
        )]),
    );
    server.enqueue_for(Purpose::Review, ScriptedReply::text("Patched deploy-k8s."));
    let out = success(run_cmd(&env, &server).args(["run", "--json", "ship it"]));
    let reviews = review_requests(&server);
    assert_eq!(reviews.len(), 4);
    // The refusal the model was given names the skill to patch.
    let refusal = tool_result(&reviews[1], "r1");
    assert_eq!(refusal["success"], json!(false), "{refusal}");
    assert!(
        refusal["error"].as_str().unwrap().contains("'deploy-k8s'"),
        "{refusal}"
    );
    assert_eq!(refusal["similar_skill"], json!("user:devops/deploy-k8s"));
    // The review's instructions put patching before creating.
    let request = reviews[0].messages().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    let order = ["patch that skill", "umbrella", "references/", "create one"].map(|step| {
        request
            .find(step)
            .unwrap_or_else(|| panic!("{step}: {request}"))
    });
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    assert!(request.contains("Use when"), "{request}");
    // What it did: the existing skill patched, no copy.
    assert!(!env.home_path("skills/devops/k8s-deploy").exists());
    let patched =
        std::fs::read_to_string(env.home_path("skills/devops/deploy-k8s/SKILL.md")).unwrap();
    assert!(
        patched.contains("3. Check the namespace exists."),
        "{patched}"
    );
    let ev = events(&out);
    let finished = ev.iter().find(|e| e["type"] == "review_finished").unwrap();
    assert_eq!(
        finished["summary"],
        json!("review: updated skill deploy-k8s")
    );
    check_invariants(&server.requests()).unwrap();
}

#[test]
fn a_review_stops_cleanly_at_its_input_token_cap() {
    let env = Env::new();
    env.write("config.yaml", "skills:\n  review_max_input_tokens: 50000\n");
    let server = mock();
    long_turn(&server);
    // The first review request reports nearly the whole cap: the next one,
    // whatever its size, would pass it.
    for i in 0..4 {
        server.enqueue_for(
            Purpose::Review,
            ScriptedReply::tool_calls([(format!("r{i}"), "skills_list", "{}")])
                .with_usage(49_999, 40, 0),
        );
    }
    let out = success(run_cmd(&env, &server).args(["run", "--json", "task"]));
    assert_eq!(
        review_requests(&server).len(),
        1,
        "stopped before the second"
    );
    let ev = events(&out);
    let usage = ev.iter().find(|e| e["type"] == "review_usage").unwrap();
    assert_eq!(usage["requests"], json!(1));
    assert_eq!(usage["prompt_tokens"], json!(49_999));
    assert_eq!(usage["completion_tokens"], json!(40));
    assert!(
        usage["stopped"]
            .as_str()
            .unwrap()
            .contains("review_max_input_tokens"),
        "{usage}"
    );
    let kinds: Vec<&str> = ev.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let at = |kind: &str| kinds.iter().position(|k| *k == kind).unwrap();
    assert!(at("review_usage") < at("review_finished"));
    assert_eq!(kinds.last(), Some(&"turn_complete"));
    let finished = ev.iter().find(|e| e["type"] == "review_finished").unwrap();
    assert!(
        finished["summary"]
            .as_str()
            .unwrap()
            .contains("input-token cap"),
        "{finished}"
    );
}

#[test]
fn a_review_stops_at_its_request_cap_and_says_so_in_text_mode() {
    let env = Env::new();
    env.write("config.yaml", "skills:\n  review_max_iterations: 2\n");
    let server = mock();
    long_turn(&server);
    for i in 0..4 {
        server.enqueue_for(
            Purpose::Review,
            ScriptedReply::tool_calls([(format!("r{i}"), "skills_list", "{}")])
                .with_usage(3_000, 50, 0),
        );
    }
    let out = success(run_cmd(&env, &server).args(["run", "task"]));
    assert_eq!(review_requests(&server).len(), 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("review used 6000 input and 100 output tokens in 2 requests"),
        "{stderr}"
    );
    assert!(stderr.contains("review_max_iterations"), "{stderr}");
}

#[test]
fn sessions_show_splits_tokens_by_purpose() {
    let env = Env::new();
    let server = mock();
    long_turn(&server);
    server.enqueue_for(
        Purpose::Review,
        ScriptedReply::tool_calls([("r1", "skills_list", "{}")]).with_usage(7_000, 60, 0),
    );
    server.enqueue_for(
        Purpose::Review,
        ScriptedReply::text("Nothing worth saving.").with_usage(7_500, 10, 0),
    );
    let out = success(run_cmd(&env, &server).args(["run", "--json", "task"]));
    let ev = events(&out);
    let id = ev[0]["session_id"].as_str().unwrap().to_owned();
    let usage = ev.iter().find(|e| e["type"] == "review_usage").unwrap();
    assert_eq!(
        (usage["requests"].clone(), usage["prompt_tokens"].clone()),
        (json!(2), json!(14_500))
    );
    assert!(usage.get("stopped").is_none(), "{usage}");

    let shown = stdout_json(&success(
        env.knack().args(["sessions", "show", &id, "--json"]),
    ));
    let split = &shown["usage_by_purpose"];
    assert_eq!(split["turn"]["requests"], json!(6));
    assert_eq!(split["turn"]["fresh_input_tokens"], json!(6_200));
    assert_eq!(split["turn"]["output_tokens"], json!(130));
    assert_eq!(split["review"]["requests"], json!(2));
    assert_eq!(split["review"]["fresh_input_tokens"], json!(14_500));
    assert_eq!(split["review"]["output_tokens"], json!(70));
    assert!(split.get("compaction").is_none(), "{split}");
    assert_eq!(shown["usage"]["requests"], json!(8));

    let text = success(env.knack().args(["sessions", "show", &id]));
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("review: 2 requests · 14500 input · 70 output tokens"),
        "{text}"
    );
    assert!(text.contains("turn: 6 requests"), "{text}");
}

#[test]
fn inbox_round_trip_from_the_agents_write_to_accept_and_reject() {
    let env = Env::new();
    env.write("config.yaml", "skills:\n  agent_writes: inbox\n");
    let server = mock();
    let flow = "---\nname: release-notes\ndescription: Write release notes from merged pull requests. Use when tagging a release.\n---\n# Release notes\n\n1. List the merged pull requests.\n2. Group them by kind.\n";
    let other = "---\nname: csv-clean\ndescription: Clean a CSV file of empty rows. Use when a CSV has gaps.\n---\n# CSV\n\nDrop the empty rows with pandas.\n";
    server.enqueue(ScriptedReply::tool_calls([
        (
            "c1",
            "skill_manage",
            format!(
                r#"{{"action":"create","name":"release-notes","category":"writing","content":{}}}"#,
                json_string(flow)
            ),
        ),
        (
            "c2",
            "skill_manage",
            format!(
                r#"{{"action":"create","name":"csv-clean","content":{}}}"#,
                json_string(other)
            ),
        ),
    ]));
    server.enqueue(ScriptedReply::text("Saved both."));
    let out = success(run_cmd(&env, &server).args(["run", "--json", "--no-review", "go"]));
    let ev = events(&out);
    let id = ev[0]["session_id"].as_str().unwrap().to_owned();
    // The model was told where its skill went.
    let reqs = server.chat_requests();
    let told = tool_result(&reqs[1], "c1");
    assert_eq!(told["success"], json!(true), "{told}");
    assert!(
        told["message"].as_str().unwrap().contains("inbox"),
        "{told}"
    );

    // Not in the library, in the inbox.
    let list = stdout_json(&success(env.knack().args(["skills", "list", "--json"])));
    assert_eq!(list["count"], json!(0), "{list}");
    let inbox = stdout_json(&success(env.knack().args(["skills", "inbox", "--json"])));
    assert_eq!(inbox["count"], json!(2), "{inbox}");
    let first = &inbox["skills"][0];
    assert_eq!(first["name"], json!("csv-clean"));
    assert_eq!(first["kind"], json!("new"));
    assert_eq!(first["actor"], json!("agent"));
    assert_eq!(first["session_id"], json!(id));
    assert_eq!(inbox["skills"][1]["category"], json!("writing"));

    let diff = success(
        env.knack()
            .args(["skills", "inbox", "diff", "release-notes"]),
    );
    let diff = String::from_utf8_lossy(&diff.stdout);
    assert!(diff.contains("+2. Group them by kind."), "{diff}");

    success(
        env.knack()
            .args(["skills", "inbox", "accept", "release-notes"]),
    );
    let list = stdout_json(&success(env.knack().args(["skills", "list", "--json"])));
    assert_eq!(
        list["skills"][0]["id"],
        json!("writing/release-notes"),
        "{list}"
    );
    let history = stdout_json(&success(env.knack().args([
        "skills",
        "history",
        "release-notes",
        "--json",
    ])));
    let actors: Vec<&Value> = history
        .as_array()
        .expect("a list of versions")
        .iter()
        .map(|v| &v["actor"])
        .collect();
    assert!(
        !actors.is_empty() && actors.iter().all(|a| *a == "user"),
        "{history}"
    );

    // The library's own entries: the inbox folder itself goes with its last entry.
    let library_entries = || {
        std::fs::read_dir(env.home_path("skills"))
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.file_name()))
            .filter(|name| name != ".inbox")
            .count()
    };
    let before = library_entries();
    success(env.knack().args(["skills", "inbox", "reject", "csv-clean"]));
    let inbox = stdout_json(&success(env.knack().args(["skills", "inbox", "--json"])));
    assert_eq!(inbox["count"], json!(0), "{inbox}");
    assert!(!env.home_path("skills/csv-clean").exists());
    assert_eq!(before, library_entries());
    assert!(!env.home_path("skills/.inbox").exists());

    // A name that is not there is a failure, exit 1, naming what is.
    let missing = env
        .knack()
        .args(["skills", "inbox", "accept", "nothing"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&missing.stderr)
            .contains("no skill named 'nothing' is in the inbox"),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
}

#[test]
fn validate_warns_about_a_missing_or_cut_trigger() {
    let env = Env::new();
    env.skill("plain", "plain", "Summarises CSV files");
    env.skill(
        "good",
        "good",
        "Summarises CSV files. Use when a CSV arrives",
    );
    let long_trigger = format!(
        "Does things. Use when {}",
        "a CSV, a TSV or a spreadsheet export arrives from the finance team, ".repeat(4)
    );
    env.skill("wordy", "wordy", long_trigger.trim());
    let out = env
        .knack()
        .args(["skills", "validate", "--json"])
        .output()
        .unwrap();
    let report = stdout_json(&out);
    let text = report.to_string();
    let warnings_of = |name: &str| -> String {
        report["results"]
            .as_array()
            .expect("a list of results")
            .iter()
            .find(|s| s.to_string().contains(&format!("/{name}/")))
            .map(|s| s["warnings"].to_string())
            .unwrap_or_else(|| panic!("{name} missing: {text}"))
    };
    assert!(warnings_of("plain").contains("never says when"), "{text}");
    assert!(warnings_of("wordy").contains("would be cut"), "{text}");
    assert!(!warnings_of("good").contains("Use when"), "{text}");
}
