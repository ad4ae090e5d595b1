//! `knack eval` end to end against the scripted mock with a *policy*: replies
//! decided by what each request holds, so many sessions can run in any order.
//! The policy: a task whose skill the index lists loads it and finishes in two
//! tool calls; otherwise it explores in six (enough for the review to run),
//! and the review saves the skill. The tests check what the agent sent as
//! well as what the reports say.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Value, json};
use test_support::{
    CapturedRequest, MockModelServer, ScriptedReply, ScriptedToolCall, ScriptedUsage,
};

use super::common::{Env, write_file};

const SKILL: &str = "shout-procedure";

/// The text of a chat message, whether a string or a list of parts.
fn text_of(message: &Value) -> String {
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

fn call(id: &str, name: &str, arguments: Value) -> ScriptedToolCall {
    ScriptedToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.to_string(),
    }
}

/// Usage the policy reports, a pure function of the request so tests can recompute it.
fn usage_for(request: &CapturedRequest) -> ScriptedUsage {
    let prompt = request.raw_body.len() as u64 / 4;
    ScriptedUsage {
        prompt_tokens: prompt,
        completion_tokens: 7,
        cached_tokens: Some(prompt / 2),
        cache_write_tokens: None,
    }
}

fn marker<'a>(task: &'a str, key: &str) -> Option<&'a str> {
    let start = task.find(key)? + key.len();
    task[start..].split_whitespace().next()
}

/// The scripted policy; see the module docs.
fn policy(request: &CapturedRequest) -> ScriptedReply {
    let messages = request.messages();
    let system = messages.first().map(text_of).unwrap_or_default();
    let listed = system.contains(SKILL);
    let mut reply = if request.purpose() == Some("review") {
        review_policy(messages, listed)
    } else {
        turn_policy(messages, listed)
    };
    reply.usage = Some(usage_for(request));
    reply
}

fn review_policy(messages: &[Value], listed: bool) -> ScriptedReply {
    let asked = messages
        .iter()
        .rposition(|m| m["role"] == "user" && text_of(m).contains("[Self-improvement review]"))
        .unwrap_or(0);
    let acted = messages[asked..].iter().any(|m| m["role"] == "tool");
    if listed || acted {
        return ScriptedReply::text("Nothing worth saving.");
    }
    let content = format!(
        "---\nname: {SKILL}\ndescription: Write a word in capitals into answer.txt. Use when a task asks to shout a word.\n---\n# Shout\n\nWrite the word upper-cased into answer.txt.\n"
    );
    ScriptedReply {
        tool_calls: vec![call(
            "rv1",
            "skill_manage",
            json!({"action": "create", "name": SKILL, "content": content}),
        )],
        ..ScriptedReply::default()
    }
}

fn turn_policy(messages: &[Value], listed: bool) -> ScriptedReply {
    let task = messages
        .iter()
        .find(|m| m["role"] == "user")
        .map(text_of)
        .unwrap_or_default();
    let steps = messages.iter().filter(|m| m["role"] == "tool").count();
    let viewed = messages.iter().any(|m| {
        m["tool_calls"]
            .as_array()
            .is_some_and(|calls| calls.iter().any(|c| c["function"]["name"] == "skill_view"))
    });
    let id = format!("c{steps}");
    if let Some(number) = marker(&task, "COUNT=") {
        // A control task: one write. It misfires by loading any listed skill first.
        return match steps {
            0 if listed => ScriptedReply {
                tool_calls: vec![call(&id, "skill_view", json!({"name": SKILL}))],
                ..ScriptedReply::default()
            },
            _ if !messages.iter().any(|m| {
                m["tool_calls"]
                    .as_array()
                    .is_some_and(|c| c.iter().any(|c| c["function"]["name"] == "write_file"))
            }) =>
            {
                ScriptedReply {
                    tool_calls: vec![call(
                        &id,
                        "write_file",
                        json!({"path": "count.txt", "content": number}),
                    )],
                    ..ScriptedReply::default()
                }
            }
            _ => ScriptedReply::text("Counted."),
        };
    }
    let word = marker(&task, "WORD=").unwrap_or("nothing").to_uppercase();
    let write = call(
        &id,
        "write_file",
        json!({"path": "answer.txt", "content": word}),
    );
    let uses_skill = listed && !task.contains("IGNORE-SKILLS");
    let plan: Vec<Option<ScriptedToolCall>> = if uses_skill {
        vec![
            Some(call(&id, "skill_view", json!({"name": SKILL}))),
            Some(write),
        ]
    } else {
        let explore = call(&id, "read_file", json!({"path": "input.txt"}));
        vec![
            Some(explore.clone()),
            Some(explore.clone()),
            Some(explore.clone()),
            Some(explore.clone()),
            Some(explore),
            Some(write),
        ]
    };
    let _ = viewed;
    match plan.into_iter().nth(steps).flatten() {
        Some(next) => ScriptedReply {
            tool_calls: vec![next],
            ..ScriptedReply::default()
        },
        None => ScriptedReply::text("Done."),
    }
}

fn mock_with_policy() -> MockModelServer {
    let server = MockModelServer::start_blocking().unwrap();
    server.set_policy(policy);
    server
}

/// A family of `words.len()` shout instances (and a control family of counts).
fn write_families(root: &Path, words: &[&str], counts: &[u32]) {
    write_file(
        &root.join("shout/family.yaml"),
        "name: shout\ndescription: upper-case a word into a file\ncontrol: false\n",
    );
    for (i, word) in words.iter().enumerate() {
        let dir = root.join(format!("shout/i{i}"));
        write_file(
            &dir.join("task.md"),
            &format!("Write the word in capitals into answer.txt. WORD={word}\n"),
        );
        write_file(
            &dir.join("fixture/input.txt"),
            &format!("the word is {word}\n"),
        );
        write_file(
            &dir.join("verify.sh"),
            &format!("test \"$(cat answer.txt)\" = \"{}\"\n", word.to_uppercase()),
        );
    }
    write_file(
        &root.join("count/family.yaml"),
        "name: count\ndescription: write a number\ncontrol: true\n",
    );
    for (i, n) in counts.iter().enumerate() {
        let dir = root.join(format!("count/i{i}"));
        write_file(
            &dir.join("task.md"),
            &format!("Write the number into count.txt. COUNT={n}\n"),
        );
        write_file(
            &dir.join("verify.sh"),
            &format!("test \"$(cat count.txt)\" = \"{n}\"\n"),
        );
    }
}

fn eval_cmd(env: &Env, server: &MockModelServer) -> assert_cmd::Command {
    let mut cmd = env.knack();
    cmd.env("KNACK_BASE_URL", server.base_url())
        .env("KNACK_MODEL", "mock-model")
        .timeout(std::time::Duration::from_secs(600));
    cmd
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn assert_report_files(out: &Path) -> Value {
    let report = read_json(&out.join("report.json"));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.lines()
            .next()
            .unwrap()
            .contains("measures the eval harness, not learning"),
        "{md}"
    );
    assert!(report["notice"].as_str().unwrap().contains("not learning"));
    assert_eq!(
        report
            .as_object()
            .unwrap()
            .keys()
            .next()
            .map(String::as_str),
        Some("notice")
    );
    for key in ["provider", "model", "knack_version", "seeds", "inputs"] {
        assert!(
            !report["header"][key].is_null(),
            "header.{key} missing: {report}"
        );
    }
    let svg = std::fs::read_to_string(out.join("chart.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    report
}

#[test]
fn loop_learning_beats_baseline_on_the_same_instance_and_accounts_every_token() {
    let env = Env::new();
    let server = mock_with_policy();
    let evals = tempfile::tempdir().unwrap();
    write_families(evals.path(), &["alpha", "beta", "IGNORE-SKILLS"], &[3, 7]);
    let out = env.home.path().join("report-loop");
    let output = eval_cmd(&env, &server)
        .args(["eval", "loop"])
        .arg(evals.path())
        .args(["--seeds", "3", "--jobs", "3", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = assert_report_files(&out);
    let runs = report["runs"].as_array().unwrap();
    // 3 shout + 2 count instances, 2 arms, 3 seeds.
    assert_eq!(runs.len(), (3 + 2) * 2 * 3);

    // Latin square: over the seeds each instance of a family takes every position.
    for (family, n) in [("shout", 3), ("count", 2)] {
        for arm in ["baseline", "learning"] {
            let mut seen: BTreeSet<(String, u64)> = BTreeSet::new();
            for r in runs
                .iter()
                .filter(|r| r["family"] == family && r["arm"] == arm)
            {
                seen.insert((
                    r["instance"].as_str().unwrap().to_owned(),
                    r["repetition"].as_u64().unwrap(),
                ));
            }
            assert_eq!(seen.len(), n * n, "{family}/{arm}: {seen:?}");
        }
    }

    let shout = |arm: &str| {
        runs.iter()
            .filter(move |r| r["family"] == "shout" && r["arm"] == arm)
            .collect::<Vec<_>>()
    };
    for r in shout("baseline") {
        assert_eq!(r["review_tokens"], 0, "baseline never reviews: {r}");
        assert_eq!(r["tool_calls"], 6);
        assert!(r["skills"]["created"].as_array().unwrap().is_empty());
        assert_eq!(r["passed"], true);
    }
    for r in shout("learning") {
        assert_eq!(r["passed"], true, "{r}");
        let rep = r["repetition"].as_u64().unwrap();
        let bypassing = r["instance"] == "i2";
        if rep == 1 {
            // The first instance explores, and the review writes the skill (its tokens counted).
            assert_eq!(r["tool_calls"], 6);
            assert!(r["review_tokens"].as_u64().unwrap() > 0, "{r}");
            assert_eq!(r["skills"]["created"], json!([SKILL]));
            assert_eq!(r["skills"]["activated"], Value::Null);
        } else if bypassing {
            assert_eq!(r["skills"]["activated"], false, "silent bypass: {r}");
            assert_eq!(r["tool_calls"], 6);
        } else {
            assert_eq!(r["skills"]["activated"], true, "{r}");
            assert_eq!(r["skills"]["loaded"], json!([SKILL]));
            assert_eq!(r["tool_calls"], 2);
        }
        // Every token of the run is the sum of what the mock reported for its session.
        let tokens = &r["tokens"];
        let sum: u64 = ["input", "cache_read", "cache_write", "output"]
            .iter()
            .map(|k| tokens[k].as_u64().unwrap())
            .sum();
        assert_eq!(r["tokens_total"].as_u64().unwrap(), sum);
    }

    // The ledger matches the mock: per session, prompt and output tokens of every request, review included.
    let requests = server.chat_requests();
    let mut sessions: BTreeSet<String> = BTreeSet::new();
    for request in &requests {
        sessions.insert(request.session().unwrap().to_owned());
    }
    assert_eq!(sessions.len(), runs.len(), "one session per run");
    let total_reported: u64 = runs
        .iter()
        .map(|r| r["tokens_total"].as_u64().unwrap())
        .sum();
    let total_sent: u64 = requests
        .iter()
        .map(|r| {
            let u = usage_for(r);
            u.prompt_tokens + u.completion_tokens
        })
        .sum();
    assert_eq!(total_reported, total_sent);
    let cache_reported: u64 = runs
        .iter()
        .map(|r| r["tokens"]["cache_read"].as_u64().unwrap())
        .sum();
    let cache_sent: u64 = requests
        .iter()
        .map(|r| usage_for(r).cached_tokens.unwrap())
        .sum();
    assert_eq!(cache_reported, cache_sent);

    // What the agent sent: the learned skill reached later learning runs' index, never baseline's,
    // and no request ever carried a verifier.
    let review_requests = requests
        .iter()
        .filter(|r| r.purpose() == Some("review"))
        .count();
    assert!(review_requests > 0);
    assert!(
        requests
            .iter()
            .all(|r| !r.raw_body.contains("verify.sh") && !r.raw_body.contains("test \\\"$(cat"))
    );

    // The headline: learning at repetition 2 and 3 uses fewer tokens than baseline on the same instance.
    let headline = report["summary"]["headline"].as_array().unwrap();
    let at = |k: u64| {
        headline
            .iter()
            .find(|h| h["arm"] == "learning" && h["repetition"] == k)
            .unwrap()
    };
    assert!(
        at(1)["tokens_difference"]["value"].as_f64().unwrap() > 0.0,
        "the review costs at rep 1: {}",
        at(1)
    );
    assert!(
        at(2)["tokens_difference"]["value"].as_f64().unwrap() < 0.0,
        "{}",
        at(2)
    );
    assert_eq!(at(2)["pairs"], 3);
    let reps = report["summary"]["per_repetition"].as_array().unwrap();
    let learning_rep = |k: u64| {
        reps.iter()
            .find(|s| s["arm"] == "learning" && s["repetition"] == k)
            .unwrap()
    };
    assert_eq!(
        learning_rep(2)["silent_bypass"].as_u64().unwrap()
            + learning_rep(3)["silent_bypass"].as_u64().unwrap(),
        2
    );
    assert_eq!(
        learning_rep(2)["activated"].as_u64().unwrap()
            + learning_rep(3)["activated"].as_u64().unwrap(),
        4
    );

    // Control: the learning arm starts with the learned skill, and every control run misfires on it.
    let control = report["summary"]["control"].as_array().unwrap();
    let learning_control = control.iter().find(|c| c["arm"] == "learning").unwrap();
    assert_eq!(learning_control["misfires"], 6);
    let baseline_control = control.iter().find(|c| c["arm"] == "baseline").unwrap();
    assert_eq!(baseline_control["misfires"], 0);
}

#[test]
fn a_failing_verifier_fails_the_run_and_a_down_provider_is_an_error() {
    let env = Env::new();
    let evals = tempfile::tempdir().unwrap();
    write_families(evals.path(), &["alpha", "beta"], &[1, 2]);
    // Break one verifier: the run is a failure with the verifier's output kept.
    write_file(
        &evals.path().join("shout/i1/verify.sh"),
        "echo expected something else; exit 1\n",
    );
    let server = mock_with_policy();
    let out = env.home.path().join("fail");
    let output = eval_cmd(&env, &server)
        .args(["eval", "loop"])
        .arg(evals.path())
        .args([
            "--seeds",
            "1",
            "--arms",
            "baseline",
            "--families",
            "shout",
            "--json",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(line["success"], true);
    let report = read_json(&out.join("report.json"));
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "--families shout and one arm");
    let broken = runs.iter().find(|r| r["instance"] == "i1").unwrap();
    assert_eq!(broken["passed"], false);
    assert!(
        broken["verify_output"]
            .as_str()
            .unwrap()
            .contains("expected something else")
    );
    assert_eq!(broken["error"], Value::Null);

    // A provider that is down: errors, not failures; exit 1; the report still written.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    env.write("config.yaml", "model:\n  max_retries: 0\n");
    let out = env.home.path().join("down");
    let output = env
        .knack()
        .env("KNACK_BASE_URL", format!("http://127.0.0.1:{port}/v1"))
        .env("KNACK_MODEL", "mock-model")
        .timeout(std::time::Duration::from_secs(300))
        .args(["eval", "loop"])
        .arg(evals.path())
        .args(["--seeds", "1", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("could not be measured"));
    let report = read_json(&out.join("report.json"));
    assert_eq!(report["notice"], Value::Null, "not the mock: no notice");
    for run in report["runs"].as_array().unwrap() {
        assert_eq!(run["passed"], Value::Null, "{run}");
        assert!(run["error"].is_string());
    }
}

#[test]
fn skill_ab_pairs_with_and_without_and_reports_the_difference() {
    let env = Env::new();
    env.skill(
        SKILL,
        SKILL,
        "Write a word in capitals into answer.txt. Use when a task asks to shout a word.",
    );
    let server = mock_with_policy();
    let dir = tempfile::tempdir().unwrap();
    write_file(&dir.path().join("fx/input.txt"), "the word is gamma\n");
    write_file(
        &dir.path().join("tasks.yaml"),
        "- prompt: \"Write the word in capitals into answer.txt. WORD=gamma\"\n  fixture: fx\n  verify: test \"$(cat answer.txt)\" = GAMMA\n- prompt: \"Shout it. WORD=delta\"\n  fixture: fx\n  verify: \"false\"\n",
    );
    let out = env.home.path().join("ab");
    let output = eval_cmd(&env, &server)
        .args(["eval", "skill", SKILL, "--tasks"])
        .arg(dir.path().join("tasks.yaml"))
        .args(["--runs", "2", "--jobs", "2", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = assert_report_files(&out);
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2 * 2 * 2);
    for r in runs {
        let with = r["arm"] == "with";
        assert_eq!(r["tool_calls"], if with { 2 } else { 6 }, "{r}");
        assert_eq!(r["passed"], r["task"] == 1, "{r}");
        assert_eq!(r["review_tokens"], 0);
    }
    let diff = &report["summary"]["difference"];
    assert_eq!(diff["pairs"], 4);
    assert_eq!(diff["tool_calls"]["value"], -4.0);
    assert!(diff["tokens_total"]["value"].as_f64().unwrap() < 0.0);
    assert_eq!(diff["passed"]["value"], 0.0);
    // The hidden arm's sessions never listed the skill; the other arm's always did.
    let requests = server.chat_requests();
    let listing = requests
        .iter()
        .filter(|r| text_of(&r.messages()[0]).contains(SKILL))
        .count();
    assert!(listing > 0 && listing < requests.len());
}

#[test]
fn triggers_report_recall_precision_misses_and_false_triggers() {
    let env = Env::new();
    env.skill(
        "deploy-app",
        "deploy-app",
        "Deploy the app. Use when asked to deploy.",
    );
    env.skill(
        "write-notes",
        "write-notes",
        "Write release notes. Use when asked for notes.",
    );
    let server = MockModelServer::start_blocking().unwrap();
    server.set_policy(|request| {
        let task = request
            .messages()
            .iter()
            .find(|m| m["role"] == "user")
            .map(text_of)
            .unwrap_or_default();
        let answered = request.messages().iter().any(|m| m["role"] == "tool");
        let skill = if task.contains("deploy") {
            Some("deploy-app")
        } else if task.contains("notes") {
            Some("write-notes")
        } else {
            None
        };
        let mut reply = match skill {
            Some(name) if !answered => ScriptedReply {
                tool_calls: vec![call("t1", "skill_view", json!({"name": name}))],
                ..ScriptedReply::default()
            },
            _ => ScriptedReply::text("ok"),
        };
        reply.usage = Some(usage_for(request));
        reply
    });
    let file = env.cwd.path().join("triggers.yaml");
    write_file(
        &file,
        "- {prompt: \"please deploy the app\", skill: deploy-app}\n- {prompt: \"draft the notes for 2.0\", skill: write-notes}\n- {prompt: \"ship it to production\", skill: deploy-app}\n- {prompt: \"what does deploy mean?\", skill: none}\n- {prompt: \"hello there\", skill: none}\n",
    );
    let out = env.home.path().join("tr");
    let output = eval_cmd(&env, &server)
        .args(["eval", "triggers"])
        .arg(&file)
        .args(["--jobs", "2", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = assert_report_files(&out);
    let prompts = report["prompts"].as_array().unwrap();
    let by = |p: &str| prompts.iter().find(|r| r["prompt"] == p).unwrap();
    assert_eq!(by("please deploy the app")["ok"], true);
    assert_eq!(by("please deploy the app")["loaded"], json!(["deploy-app"]));
    assert_eq!(by("ship it to production")["ok"], false);
    assert_eq!(by("what does deploy mean?")["ok"], false);
    assert_eq!(by("hello there")["ok"], true);
    let summary = &report["summary"];
    assert!(
        (summary["recall"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9,
        "{summary}"
    );
    assert!((summary["precision"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9);
    assert_eq!(summary["misses"].as_array().unwrap().len(), 1);
    assert_eq!(summary["false_triggers"].as_array().unwrap().len(), 1);
    // One prefix: every session's system prompt is the same bytes up to its
    // session layer (which names the session), so the provider's cache serves it.
    let systems: BTreeSet<String> = server
        .chat_requests()
        .iter()
        .map(|r| {
            let text = text_of(&r.messages()[0]);
            text.split("## Session")
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(systems.len(), 1);
    assert!(systems.iter().next().unwrap().contains("deploy-app"));
}

#[test]
fn bad_eval_inputs_are_usage_errors_naming_the_file() {
    let env = Env::new();
    let file = env.cwd.path().join("triggers.yaml");
    write_file(&file, "- {prompt: hi, skill: no-such-skill}\n");
    let out = env
        .knack()
        .env("KNACK_MODEL", "m")
        .env("KNACK_BASE_URL", "http://127.0.0.1:9/v1")
        .args(["eval", "triggers"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-skill"));
    write_file(&file, "prompt: not a list\n");
    let out = env
        .knack()
        .env("KNACK_MODEL", "m")
        .args(["eval", "triggers"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("triggers.yaml"));
    let out = env
        .knack()
        .env("KNACK_MODEL", "m")
        .args(["eval", "loop"])
        .arg(env.cwd.path())
        .args(["--arms", "baseline,bogus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bogus"));
}

#[test]
fn ctrl_c_finishes_the_run_in_flight_writes_the_report_and_exits_130() {
    use std::io::BufRead as _;
    use std::sync::{Arc, Condvar, Mutex};

    let env = Env::new();
    let evals = tempfile::tempdir().unwrap();
    write_families(evals.path(), &["alpha", "beta"], &[1, 2]);
    // The first request waits until the test lets it go: the eval is
    // interrupted while its first run is in flight, whatever the machine's speed.
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let server = MockModelServer::start_blocking().unwrap();
    let policy_gate = Arc::clone(&gate);
    let (arrived_tx, arrived_rx) = std::sync::mpsc::channel::<()>();
    let arrived_tx = Mutex::new(arrived_tx);
    server.set_policy(move |request| {
        let _ = arrived_tx.lock().unwrap().send(());
        let (open, wake) = &*policy_gate;
        let mut opened = open.lock().unwrap();
        while !*opened {
            opened = wake.wait(opened).unwrap();
        }
        policy(request)
    });
    let out = env.home.path().join("interrupted");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("knack"))
        .args(["eval", "loop"])
        .arg(evals.path())
        .args([
            "--seeds",
            "1",
            "--arms",
            "baseline",
            "--families",
            "count",
            "--out",
        ])
        .arg(&out)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("KNACK_HOME", env.home.path())
        .env("KNACK_BUNDLED_SKILLS", env.bundle.path())
        .env("KNACK_BASE_URL", server.base_url())
        .env("KNACK_MODEL", "mock-model")
        .current_dir(env.cwd.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (line_tx, line_rx) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = line_tx.send(line);
        }
    });
    arrived_rx.recv().unwrap();
    // Only the eval gets the signal (not its child session), as `kill -INT` would send it.
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    while !line_rx.recv().unwrap().contains("interrupted") {}
    let (open, wake) = &*gate;
    *open.lock().unwrap() = true;
    wake.notify_all();
    let status = child.wait().unwrap();
    reader.join().unwrap();
    assert_eq!(status.code(), Some(130));
    let report = read_json(&out.join("report.json"));
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    let first = runs.iter().find(|r| r["repetition"] == 1).unwrap();
    assert_eq!(
        first["passed"], true,
        "the run in flight finished and was verified: {first}"
    );
    let second = runs.iter().find(|r| r["repetition"] == 2).unwrap();
    assert_eq!(second["passed"], Value::Null);
    assert!(
        second["error"].as_str().unwrap().contains("not run"),
        "{second}"
    );
    // Nothing but the first run's session reached the model.
    let sessions: BTreeSet<String> = server
        .chat_requests()
        .iter()
        .filter_map(|r| r.session().map(str::to_owned))
        .collect();
    assert_eq!(sessions.len(), 1);
}

#[test]
fn the_curated_arm_starts_with_the_family_skill_under_its_own_name() {
    let env = Env::new();
    let server = mock_with_policy();
    let evals = tempfile::tempdir().unwrap();
    write_families(evals.path(), &["alpha", "beta"], &[1, 2]);
    // The folder is called `skill`; the model knows the skill by its frontmatter name.
    write_file(
        &evals.path().join("shout/skill/SKILL.md"),
        &format!(
            "---\nname: {SKILL}\ndescription: Shout a word into answer.txt. Use when asked to shout.\n---\nUpper-case the word.\n"
        ),
    );
    write_file(
        &evals.path().join("shout/family.yaml"),
        "name: shout\ndescription: upper-case a word\ncontrol: false\ncurated_skill: skill\n",
    );
    let out = env.home.path().join("curated");
    let output = eval_cmd(&env, &server)
        .args(["eval", "loop"])
        .arg(evals.path())
        .args([
            "--seeds",
            "1",
            "--arms",
            "baseline,curated",
            "--families",
            "shout",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = read_json(&out.join("report.json"));
    let curated: Vec<&Value> = report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["arm"] == "curated")
        .collect();
    assert_eq!(curated.len(), 2);
    for r in curated {
        assert_eq!(r["skills"]["available"], json!([SKILL]), "{r}");
        assert_eq!(r["skills"]["activated"], true, "{r}");
        assert_eq!(r["tool_calls"], 2);
        assert_eq!(r["review_tokens"], 0, "the curated arm does not review");
    }
    let headline = report["summary"]["headline"].as_array().unwrap();
    assert!(
        headline
            .iter()
            .all(|h| h["arm"] == "curated"
                && h["tokens_difference"]["value"].as_f64().unwrap() < 0.0),
        "{headline:?}"
    );
}

#[test]
fn a_project_skill_is_refused_because_no_run_could_see_it() {
    let env = Env::new();
    std::fs::create_dir(env.cwd.path().join(".git")).unwrap();
    write_file(
        &env.cwd.path().join(".knack/skills/lint/SKILL.md"),
        "---\nname: lint\ndescription: Lint this repository. Use when linting.\n---\nRun the linter.\n",
    );
    let trusted = env.knack().args(["skills", "trust"]).output().unwrap();
    assert!(trusted.status.success());
    let file = env.cwd.path().join("triggers.yaml");
    write_file(&file, "- {prompt: lint it, skill: lint}\n");
    let out = env
        .knack()
        .env("KNACK_MODEL", "m")
        .env("KNACK_BASE_URL", "http://127.0.0.1:9/v1")
        .args(["eval", "triggers"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("project skill") && stderr.contains("temp workspaces"),
        "{stderr}"
    );
}
