//! `knack run` end to end against the scripted mock model server: what the
//! agent sent (headers, frozen prefix, skill messages) as well as what it did.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use test_support::{CapturedRequest, Purpose, ScriptedReply, check_invariants};

use super::common::{Env, interrupt_mid_answer, mock, run_cmd, stdout_json, success};

fn fast_retries(env: &Env) {
    env.write(
        "config.yaml",
        "model:\n  max_retries: 2\n  retry_base_delay_ms: 10\n  retry_max_delay_ms: 50\n",
    );
}

fn events(output: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect()
}

fn system_prompt(req: &CapturedRequest) -> String {
    req.messages()[0]["content"].as_str().unwrap().to_owned()
}

#[test]
fn answers_on_stdout_and_sends_the_contract_headers() {
    let env = Env::new();
    let server = mock();
    server.enqueue(ScriptedReply::text("Paris is the capital.").with_usage(120, 8, 100));
    let out = success(run_cmd(&env, &server).args(["run", "capital of France?"]));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Paris is the capital.\n"
    );

    let reqs = server.chat_requests();
    assert_eq!(reqs.len(), 1);
    let req = &reqs[0];
    assert_eq!(req.purpose(), Some("turn"));
    assert!(req.session().is_some_and(|s| !s.is_empty()));
    assert_eq!(req.body["model"], json!("mock-model"));
    assert_eq!(req.body["stream"], json!(true));
    assert_eq!(req.messages()[0]["role"], json!("system"));
    assert_eq!(
        req.messages()[1],
        json!({"role": "user", "content": "capital of France?"})
    );
    let tool_names: Vec<&str> = req.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        tool_names.contains(&"skill_view") && tool_names.contains(&"terminal"),
        "{tool_names:?}"
    );
}

#[test]
fn json_events_follow_the_contract_and_end_with_turn_complete() {
    let env = Env::new();
    let server = mock();
    server.enqueue(ScriptedReply::tool_calls([("call_1", "skills_list", "{}")]));
    server.enqueue(ScriptedReply::text("done").with_usage(50, 2, 0));
    let out = success(run_cmd(&env, &server).args(["run", "--json", "list skills"]));
    let ev = events(&out);
    let t = types(&ev);
    assert_eq!(t.first().map(String::as_str), Some("session_started"));
    assert_eq!(t.last().map(String::as_str), Some("turn_complete"));
    let begin = ev.iter().find(|e| e["type"] == "tool_call_begin").unwrap();
    assert_eq!(begin["call_id"], json!("call_1"));
    assert_eq!(begin["name"], json!("skills_list"));
    assert_eq!(begin["arguments"], json!({}));
    let end = ev.iter().find(|e| e["type"] == "tool_call_end").unwrap();
    assert_eq!(end["success"], json!(true));
    assert!(end["duration_ms"].is_u64());
    assert!(
        ev.iter()
            .any(|e| e["type"] == "usage" && e["prompt_tokens"] == 50)
    );
    assert!(
        ev.iter()
            .any(|e| e == &json!({"type": "assistant_message", "text": "done"}))
    );
    check_invariants(&server.requests()).unwrap();
    // The tool result the model got is the skills_list object.
    let second = &server.chat_requests()[1];
    let tool_msg = second
        .messages()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    let result: Value = serde_json::from_str(tool_msg["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["success"], json!(true));
}

#[test]
fn slash_skill_body_arrives_as_a_user_message_never_in_the_system_prompt() {
    let env = Env::new();
    env.write(
        "skills/devops/deploy-k8s/SKILL.md",
        "---\nname: deploy-k8s\ndescription: Use when rolling out to Kubernetes\n---\n# Deploy\nUNIQUE-BODY-MARKER: apply the manifest in ${KNACK_SKILL_DIR}.\n",
    );
    let server = mock();
    server.enqueue(ScriptedReply::text("rolled out"));
    let out = success(run_cmd(&env, &server).args(["run", "--json", "/deploy-k8s roll out v2"]));
    assert!(
        events(&out)
            .iter()
            .any(|e| e == &json!({"type": "skill_loaded", "name": "deploy-k8s", "via": "slash"}))
    );
    let req = &server.chat_requests()[0];
    let system = system_prompt(req);
    assert!(!system.contains("UNIQUE-BODY-MARKER"));
    assert!(system.contains("deploy-k8s"), "the index names the skill");
    let user = req.messages()[1]["content"].as_str().unwrap();
    assert_eq!(req.messages()[1]["role"], json!("user"));
    assert!(user.contains("UNIQUE-BODY-MARKER"), "{user}");
    assert!(
        user.contains(
            &env.home_path("skills/devops/deploy-k8s")
                .display()
                .to_string()
        )
    );
    assert!(user.ends_with("roll out v2"), "{user}");
}

#[test]
fn preloaded_skill_is_ephemeral_and_after_the_system_prompt() {
    let env = Env::new();
    env.skill("tools/lint", "lint", "Use when linting");
    let server = mock();
    server.enqueue(ScriptedReply::text("ok"));
    success(run_cmd(&env, &server).args(["run", "-s", "lint", "check it"]));
    let req = &server.chat_requests()[0];
    assert!(
        req.messages()[1]["content"]
            .as_str()
            .unwrap()
            .contains("Steps for lint")
    );
    assert_eq!(req.messages()[2]["content"], json!("check it"));
    let sessions = env
        .knack()
        .args(["sessions", "list", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        stdout_json(&sessions)[0]["message_count"],
        json!(2),
        "the preload is not stored"
    );
}

#[test]
fn a_skill_created_mid_session_adds_one_catalog_note_and_keeps_the_prefix() {
    let env = Env::new();
    let server = mock();
    let content = "---\\nname: new-skill\\ndescription: Use when testing notes\\n---\\n# New\\nDo the thing.\\n";
    server.enqueue(ScriptedReply::tool_calls([(
        "c1",
        "skill_manage",
        format!(r#"{{"action":"create","name":"new-skill","content":"{content}"}}"#),
    )]));
    server.enqueue(ScriptedReply::text("created"));
    let out =
        success(run_cmd(&env, &server).args(["run", "--json", "--no-review", "make a skill"]));
    let ev = events(&out);
    assert!(
        ev.iter()
            .any(|e| e
                == &json!({"type": "catalog_note", "added": ["user:new-skill"], "removed": []})),
        "{ev:?}"
    );
    assert!(
        ev.iter()
            .any(|e| e["type"] == "skill_written" && e["actor"] == "agent")
    );
    let reqs = server.chat_requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(system_prompt(&reqs[0]), system_prompt(&reqs[1]));
    let last = reqs[1].messages().last().unwrap();
    assert_eq!(last["role"], json!("user"));
    assert!(last["content"].as_str().unwrap().contains("user:new-skill"));
    let notes = reqs[1]
        .messages()
        .iter()
        .filter(|m| {
            m["content"]
                .as_str()
                .is_some_and(|c| c.contains("Skill catalog update"))
        })
        .count();
    assert_eq!(notes, 1);
    check_invariants(&server.requests()).unwrap();
    assert!(env.home_path("skills/new-skill/SKILL.md").is_file());
}

#[test]
fn six_tool_calls_trigger_a_review_that_creates_an_agent_skill() {
    let env = Env::new();
    let server = mock();
    for i in 0..6 {
        server.enqueue(ScriptedReply::tool_calls([(
            format!("t{i}"),
            "skills_list",
            "{}",
        )]));
    }
    server.enqueue(ScriptedReply::text("all done"));
    let content = "---\\nname: learned-flow\\ndescription: Use when repeating the learned flow\\n---\\n# Flow\\n1. Do it.\\n";
    server.enqueue_for(
        Purpose::Review,
        ScriptedReply::tool_calls([(
            "r1",
            "skill_manage",
            format!(r#"{{"action":"create","name":"learned-flow","content":"{content}"}}"#),
        )]),
    );
    server.enqueue_for(Purpose::Review, ScriptedReply::text("Saved learned-flow."));
    let out = success(run_cmd(&env, &server).args(["run", "--json", "do the long task"]));
    let ev = events(&out);
    let t = types(&ev);
    let answer = t.iter().position(|x| x == "assistant_message").unwrap();
    let started = t.iter().position(|x| x == "review_started").unwrap();
    assert!(answer < started);
    assert_eq!(t.last().map(String::as_str), Some("turn_complete"));
    assert!(ev.iter().any(|e| e == &json!({"type": "skill_written", "action": "create", "name": "learned-flow", "actor": "review"})));
    let finished = ev.iter().find(|e| e["type"] == "review_finished").unwrap();
    assert_eq!(
        finished["summary"],
        json!("review: created skill learned-flow")
    );

    let reqs = server.chat_requests();
    let turn: Vec<&CapturedRequest> = reqs
        .iter()
        .filter(|r| r.purpose() == Some("turn"))
        .collect();
    let review: Vec<&CapturedRequest> = reqs
        .iter()
        .filter(|r| r.purpose() == Some("review"))
        .collect();
    assert_eq!((turn.len(), review.len()), (7, 2));
    assert_eq!(
        review[0].messages()[0].to_string(),
        turn[0].messages()[0].to_string()
    );
    assert_eq!(
        review[0].body["tools"].to_string(),
        turn[0].body["tools"].to_string()
    );
    assert_eq!(review[0].session(), turn[0].session());
    check_invariants(&reqs).unwrap();

    let provenance =
        std::fs::read_to_string(env.home_path("skills/learned-flow/.knack-provenance.json"))
            .unwrap();
    assert!(provenance.contains("\"agent\""), "{provenance}");
}

#[test]
fn the_review_may_not_use_the_terminal() {
    let env = Env::new();
    let server = mock();
    for i in 0..5 {
        server.enqueue(ScriptedReply::tool_calls([(
            format!("t{i}"),
            "skills_list",
            "{}",
        )]));
    }
    server.enqueue(ScriptedReply::text("finished"));
    server.enqueue_for(
        Purpose::Review,
        ScriptedReply::tool_calls([("r1", "terminal", r#"{"command":"touch reviewed.txt"}"#)]),
    );
    server.enqueue_for(
        Purpose::Review,
        ScriptedReply::text("Nothing worth saving."),
    );
    success(run_cmd(&env, &server).args(["run", "--json", "task"]));
    let review_reqs: Vec<CapturedRequest> = server
        .chat_requests()
        .into_iter()
        .filter(|r| r.purpose() == Some("review"))
        .collect();
    assert_eq!(review_reqs.len(), 2);
    let refusal = review_reqs[1].messages().last().unwrap();
    assert_eq!(refusal["role"], json!("tool"));
    assert!(
        refusal["content"]
            .as_str()
            .unwrap()
            .contains("not allowed in a review")
    );
    assert!(!env.cwd.path().join("reviewed.txt").exists());
}

#[test]
fn rate_limit_then_success_shows_a_retry_event() {
    let env = Env::new();
    fast_retries(&env);
    let server = mock();
    server.enqueue(ScriptedReply::status(429));
    server.enqueue(ScriptedReply::text("after the wait"));
    let out = success(run_cmd(&env, &server).args(["run", "--json", "hi"]));
    let ev = events(&out);
    let retry = ev.iter().find(|e| e["type"] == "retry").unwrap();
    assert_eq!(retry["attempt"], json!(1));
    assert!(retry["reason"].as_str().unwrap().contains("429"));
    assert_eq!(types(&ev).last().map(String::as_str), Some("turn_complete"));
}

#[test]
fn repeated_server_errors_exit_1_and_save_no_session() {
    let env = Env::new();
    fast_retries(&env);
    let server = mock();
    for _ in 0..3 {
        server.enqueue(ScriptedReply::status(500).with_error_message("boom"));
    }
    let out = run_cmd(&env, &server)
        .args(["run", "--json", "remember-this-word"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let ev = events(&out);
    let last = ev.last().unwrap();
    assert_eq!(last["type"], json!("error"));
    assert!(last["message"].as_str().unwrap().contains("500"), "{last}");
    let found = env
        .knack()
        .args(["sessions", "search", "remember-this-word", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        stdout_json(&found).as_array().unwrap().len(),
        0,
        "no request succeeded, so nothing is kept"
    );
    assert!(
        last["message"]
            .as_str()
            .unwrap()
            .contains("no session was saved"),
        "{last}"
    );
}

#[test]
fn a_stream_cut_mid_tool_call_is_retried() {
    let env = Env::new();
    fast_retries(&env);
    let server = mock();
    server.enqueue(ScriptedReply::tool_calls([("c1", "skills_list", "{}")]).cut_after_chunks(1));
    server.enqueue(ScriptedReply::tool_calls([("c1", "skills_list", "{}")]));
    server.enqueue(ScriptedReply::text("recovered"));
    let out = success(run_cmd(&env, &server).args(["run", "--json", "go"]));
    let ev = events(&out);
    assert!(ev.iter().any(|e| e["type"] == "retry"));
    assert_eq!(
        ev.iter().filter(|e| e["type"] == "tool_call_begin").count(),
        1
    );
    check_invariants(&server.requests()).unwrap();
}

#[test]
fn invalid_tool_json_from_the_model_becomes_an_error_result_and_the_loop_goes_on() {
    let env = Env::new();
    let server = mock();
    server.enqueue(ScriptedReply::tool_calls([(
        "c1",
        "skill_view",
        "{not json",
    )]));
    server.enqueue(ScriptedReply::text("fixed"));
    let out = run_cmd(&env, &server)
        .args(["run", "--json", "go"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let end = events(&out)
        .into_iter()
        .find(|e| e["type"] == "tool_call_end")
        .unwrap();
    assert_eq!(end["success"], json!(false));
    let tool_msg = server.chat_requests()[1]
        .messages()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    assert!(
        tool_msg["content"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
}

#[test]
fn sessions_search_finds_a_word_from_an_earlier_run_and_resume_reuses_the_prompt() {
    let env = Env::new();
    let server = mock();
    server.enqueue(ScriptedReply::text("noted the zebrafish"));
    run_cmd(&env, &server)
        .args(["run", "tell me about zebrafish"])
        .assert()
        .success();
    let found = env
        .knack()
        .args(["sessions", "search", "zebrafish", "--json"])
        .output()
        .unwrap();
    let hits = stdout_json(&found);
    let id = hits[0]["session_id"].as_str().unwrap().to_owned();

    // A skill added since must not change the resumed session's system prompt.
    env.skill("new/later", "later", "Use when later");
    server.enqueue(ScriptedReply::text("continuing"));
    run_cmd(&env, &server)
        .args(["run", "--resume", &id, "and more"])
        .assert()
        .success();
    let reqs = server.chat_requests();
    assert_eq!(system_prompt(&reqs[0]), system_prompt(&reqs[1]));
    assert_eq!(reqs[1].session(), Some(id.as_str()));
    assert_eq!(
        reqs[1].messages().len(),
        5,
        "system, 2 stored messages, a catalog note, the new turn"
    );
}

#[test]
fn no_model_configured_exits_3_naming_the_variable() {
    let env = Env::new();
    env.knack()
        .args(["run", "hello"])
        .assert()
        .code(3)
        .stderr(predicates::str::contains("KNACK_BASE_URL"));
}

#[test]
fn connection_refused_is_a_clear_error() {
    let env = Env::new();
    fast_retries(&env);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    env.knack()
        .env("KNACK_BASE_URL", format!("http://127.0.0.1:{port}/v1"))
        .env("KNACK_MODEL", "m")
        .args(["run", "hello"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(format!("127.0.0.1:{port}")));
}

#[test]
fn sigint_stops_the_run_with_130_and_keeps_the_session() {
    let env = Env::new();
    let server = mock();
    // Two frames, then the stream stalls until the server is dropped: the run
    // is mid-reply when the signal comes, however slow the machine.
    server.enqueue(
        ScriptedReply::text("a slow answer that never gets to finish because the user stops it")
            .stall_after_chunks(2),
    );
    let interrupted = interrupt_mid_answer(&env, &server.base_url(), "interrupt-me-please");
    assert_eq!(interrupted.code, 130, "{}", interrupted.stderr);
    let ev = interrupted.events;
    assert_eq!(ev.last().unwrap()["type"], json!("error"));
    assert!(ev.iter().any(|e| e["type"] == "turn_aborted"));
    assert!(!interrupted.stderr.contains("panicked"));
    let found = env
        .knack()
        .args(["sessions", "search", "interrupt-me-please", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        stdout_json(&found).as_array().unwrap().len(),
        1,
        "the user's message was saved"
    );
}

#[test]
fn resuming_an_unknown_session_says_how_to_find_one() {
    let env = Env::new();
    let server = mock();
    let out = run_cmd(&env, &server)
        .args(["run", "--resume", "no-such-session", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no session with id 'no-such-session'"),
        "{stderr}"
    );
    assert!(stderr.contains("knack sessions list"), "{stderr}");
    assert!(
        server.chat_requests().is_empty(),
        "nothing was sent to the model"
    );
}
