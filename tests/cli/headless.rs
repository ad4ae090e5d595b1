//! `knack run` as a daily driver: no progress bytes in piped output, an output
//! cap on every wire, a refused local server named and retried once, errors a
//! person can act on ("did you mean"), and every `--json` event documented.

use agent_loop::SessionStore;
use agent_loop::model::ChatMessage;
use agent_protocol::{Event, SkillActor, SkillLoadVia, TurnAbortReason};
use knack_config::KnackHome;
use serde_json::{Value, json};
use test_support::{MockModelServer, ModelWire, ScriptedReply};

use super::common::{Env, mock, run_cmd, stdout_json, success, write_file};

/// Fast retries, so the failure tests end quickly whatever the count.
const FAST_RETRIES: &str =
    "model:\n  max_retries: 4\n  retry_base_delay_ms: 10\n  retry_max_delay_ms: 20\n";

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json_lines(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// A port on 127.0.0.1 that nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn a_piped_run_carries_no_progress_bytes() {
    let env = Env::new();
    let server = mock();
    server.enqueue(ScriptedReply::tool_calls([("c1", "skills_list", "{}")]));
    server.enqueue(ScriptedReply::text("All listed."));
    let out = success(run_cmd(&env, &server).args(["run", "--no-review", "list the skills"]));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "All listed.\n");
    let err = stderr(&out);
    assert!(err.contains("✓ skills_list"), "progress notes stay: {err}");
    // No status line: no carriage return, no escape sequence, no spinner.
    assert!(!err.contains('\r'), "{err:?}");
    assert!(!err.contains('\x1b'), "{err:?}");
    assert!(
        !err.contains('⠋') && !err.contains("waiting for the model"),
        "{err:?}"
    );
}

fn provider(wire: &str, base_url: &str, extra: &str) -> String {
    format!(
        "model:\n  provider: mock\n  name: mock-model\nproviders:\n  mock:\n    wire: {wire}\n    base_url: {base_url}\n    context_window: 200000\n{extra}"
    )
}

/// The output cap a request carried, under its wire's name for it.
fn sent_cap(body: &Value, wire: ModelWire) -> Value {
    match wire {
        ModelWire::Responses => body["max_output_tokens"].clone(),
        _ => body["max_tokens"].clone(),
    }
}

#[test]
fn every_wire_sends_an_output_cap() {
    for (name, wire) in [
        ("chat", ModelWire::Chat),
        ("anthropic", ModelWire::Anthropic),
        ("responses", ModelWire::Responses),
    ] {
        let env = Env::new();
        let server = MockModelServer::start_blocking().unwrap();
        env.write("config.yaml", &provider(name, &server.base_url(), ""));
        server.enqueue(ScriptedReply::tool_calls([("c1", "skills_list", "{}")]));
        server.enqueue(ScriptedReply::text("done"));
        success(
            env.knack()
                .timeout(std::time::Duration::from_secs(60))
                .args(["run", "--no-review", "go"]),
        );
        let requests = server.model_requests();
        assert_eq!(requests.len(), 2, "{name}");
        for request in &requests {
            assert_eq!(
                sent_cap(&request.body, wire),
                json!(agent_loop::model::DEFAULT_MAX_OUTPUT_TOKENS),
                "{name}: {}",
                request.body
            );
        }
        assert!(server.violations().is_empty(), "{:?}", server.violations());
    }
}

#[test]
fn the_providers_own_cap_wins_and_a_small_window_lowers_the_default() {
    let env = Env::new();
    let server = mock();
    env.write(
        "config.yaml",
        &provider("chat", &server.base_url(), "    max_output_tokens: 512\n"),
    );
    server.enqueue(ScriptedReply::text("short"));
    success(env.knack().args(["run", "--no-review", "go"]));
    assert_eq!(server.chat_requests()[0].body["max_tokens"], json!(512));

    // A known 16k window: the reply gets what compaction leaves free, so
    // the prompt and the reply fit together.
    let env = Env::new();
    let server = mock();
    server.enqueue(ScriptedReply::text("short"));
    success(
        run_cmd(&env, &server)
            .env("KNACK_CONTEXT_WINDOW", "16384")
            .args(["run", "--no-review", "go"]),
    );
    let cap = server.chat_requests()[0].body["max_tokens"]
        .as_u64()
        .unwrap();
    // Compaction keeps the prompt under 0.8 of the window: 13,107 tokens.
    assert!(cap > 0 && cap + 13_107 <= 16_384, "{cap}");
}

#[test]
fn a_cap_of_zero_is_a_configuration_error_before_any_request() {
    let env = Env::new();
    let server = mock();
    env.write(
        "config.yaml",
        &provider("chat", &server.base_url(), "    max_output_tokens: 0\n"),
    );
    let out = env
        .knack()
        .args(["run", "--no-review", "go"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("providers.mock.max_output_tokens"),
        "{}",
        stderr(&out)
    );
    assert!(server.chat_requests().is_empty());
}

#[test]
fn a_refused_local_server_is_named_retried_once_and_leaves_no_session() {
    let env = Env::new();
    env.write("config.yaml", FAST_RETRIES);
    let url = format!("http://127.0.0.1:{}/v1", closed_port());
    let out = env
        .knack()
        .env("KNACK_BASE_URL", &url)
        .env("KNACK_MODEL", "m")
        .timeout(std::time::Duration::from_secs(60))
        .args(["run", "--json", "hello"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let events = json_lines(&out);
    let retries = events.iter().filter(|e| e["type"] == "retry").count();
    assert_eq!(retries, 1, "four retries allowed, one used: {events:?}");
    let last = events.last().unwrap();
    assert_eq!(last["type"], "error");
    let message = last["message"].as_str().unwrap();
    for part in [
        url.as_str(),
        "connection refused",
        "start the model server",
        "KNACK_BASE_URL",
        "no session was saved",
    ] {
        assert!(message.contains(part), "'{part}' missing from: {message}");
    }
    let sessions = success(env.knack().args(["sessions", "list", "--json"]));
    assert_eq!(stdout_json(&sessions), json!([]));

    // In text mode the same sentence is what the person reads.
    let out = env
        .knack()
        .env("KNACK_BASE_URL", &url)
        .env("KNACK_MODEL", "m")
        .timeout(std::time::Duration::from_secs(60))
        .args(["run", "hello"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("nothing is listening at {url}")),
        "{err}"
    );
    assert_eq!(err.matches("retry 1").count(), 1, "{err}");
    assert!(!err.contains("retry 2"), "{err}");
}

#[test]
fn a_provider_profile_is_named_when_its_local_server_is_down() {
    let env = Env::new();
    let url = format!("http://127.0.0.1:{}/v1", closed_port());
    env.write("config.yaml", &provider("chat", &url, ""));
    let out = env
        .knack()
        .timeout(std::time::Duration::from_secs(60))
        .args(["run", "hello"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("providers.mock.base_url"),
        "{}",
        stderr(&out)
    );
}

/// A home with one user skill, `release-notes`.
fn env_with_skill() -> Env {
    let env = Env::new();
    env.skill(
        "writing/release-notes",
        "release-notes",
        "Use when drafting release notes",
    );
    env
}

/// Asserts a failure that names the closest skill and says nothing meant for the model.
fn assert_suggests(out: &std::process::Output, code: i32, name: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert!(err.contains(&format!("did you mean '{name}'?")), "{err}");
    for model_words in ["skills_list", "skill_view(", "hint:", "Call "] {
        assert!(!err.contains(model_words), "'{model_words}' in: {err}");
    }
}

#[test]
fn mistyped_skill_names_get_a_did_you_mean_everywhere() {
    let env = env_with_skill();
    for args in [
        vec!["skills", "view", "relase-notes"],
        vec!["skills", "history", "relase-notes"],
        vec!["skills", "rollback", "relase-notes"],
    ] {
        let out = env.knack().args(&args).output().unwrap();
        assert_suggests(&out, 1, "release-notes");
    }

    // `-s` is refused before a session or a request exists.
    let server = mock();
    let out = run_cmd(&env, &server)
        .args(["run", "-s", "relase-notes", "draft them"])
        .output()
        .unwrap();
    assert_suggests(&out, 2, "release-notes");
    assert!(server.chat_requests().is_empty());

    // Names no skill is close to: what there is, or where to look instead.
    let out = env
        .knack()
        .args(["skills", "view", "zzzzzzzz"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("available skills: release-notes"),
        "{}",
        stderr(&out)
    );
    let out = env
        .knack()
        .args(["skills", "history", "zzzzzzzz"])
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("`knack skills list`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_ambiguous_or_hidden_preload_is_a_usage_error_before_any_request() {
    let env = env_with_skill();
    env.skill("ops/deploy", "deploy", "Use when deploying");
    env.skill("web/deploy", "deploy", "Use when deploying the site");
    env.write("config.yaml", "skills:\n  disabled: [release-notes]\n");
    let server = mock();
    let out = run_cmd(&env, &server)
        .args(["run", "--json", "-s", "deploy", "ship it"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let events = json_lines(&out);
    assert_eq!(events.len(), 1, "only the error: {events:?}");
    let message = events[0]["message"].as_str().unwrap();
    assert!(
        message.contains("user:ops/deploy") && message.contains("user:web/deploy"),
        "{message}"
    );
    let out = run_cmd(&env, &server)
        .args(["run", "-s", "release-notes", "draft them"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("skills.disabled"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("session "), "{}", stderr(&out));
    assert!(server.chat_requests().is_empty());
}

#[test]
fn a_mistyped_bundled_skill_gets_a_did_you_mean_from_diff_and_reset() {
    let env = Env::new();
    write_file(
        &env.bundle.path().join("writing/release-notes/SKILL.md"),
        "---\nname: release-notes\ndescription: Use when drafting release notes\n---\n# Notes\n",
    );
    for args in [
        vec!["skills", "diff", "relase-notes", "--bundled"],
        vec!["skills", "reset", "relase-notes"],
    ] {
        let out = env.knack().args(&args).output().unwrap();
        assert_suggests(&out, 1, "release-notes");
    }
}

#[test]
fn a_mistyped_hub_skill_gets_a_did_you_mean_from_uninstall() {
    let env = Env::new();
    let source = tempfile::tempdir().unwrap();
    write_file(
        &source.path().join("release-notes/SKILL.md"),
        "---\nname: release-notes\ndescription: Use when drafting release notes\n---\n# Notes\n",
    );
    let path = source.path().join("release-notes").display().to_string();
    success(env.knack().args(["skills", "install", &path, "--yes"]));
    let out = env
        .knack()
        .args(["skills", "uninstall", "relase-notes", "--yes"])
        .output()
        .unwrap();
    assert_suggests(&out, 1, "release-notes");
    assert!(env.home_path("skills/release-notes/SKILL.md").is_file());
}

#[test]
fn an_empty_skill_list_speaks_to_the_person() {
    let env = Env::new();
    let out = success(env.knack().args(["skills", "list"]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("knack skills install"), "{text}");
    assert!(!text.contains("skill_manage"), "{text}");
}

#[test]
fn a_mistyped_session_id_gets_the_closest_one() {
    let env = Env::new();
    let store = SessionStore::open(&KnackHome::at(env.home.path())).unwrap();
    let id = store
        .create_session(&agent_loop::NewSession {
            id: Some("20240101-090000-abcdef".into()),
            model: "mock-model".into(),
            system_prompt: "s".into(),
            tools_json: Some("[]".into()),
            platform: "cli".into(),
            cwd: "/".into(),
        })
        .unwrap();
    store
        .append_message(&id, &ChatMessage::user("Where does the **heron** nest?"))
        .unwrap();
    drop(store);
    let typo = "20240101-090000-abcdeg";
    let out = env
        .knack()
        .args(["sessions", "show", typo])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!("did you mean '{id}'?")),
        "{}",
        stderr(&out)
    );

    let server = mock();
    let out = run_cmd(&env, &server)
        .args(["run", "--resume", typo, "go on"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(&format!("did you mean '{id}'?")));

    // Search hits are plain text when piped: no `**` markers.
    let out = success(env.knack().args(["sessions", "search", "heron"]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("heron"), "{text}");
    assert!(!text.contains("**"), "{text}");
    // The JSON keeps the store's markers.
    let out = success(env.knack().args(["sessions", "search", "heron", "--json"]));
    assert!(
        stdout_json(&out)[0]["snippet"]
            .as_str()
            .unwrap()
            .contains("**heron**")
    );
}

/// One of every event, each with all its fields. The match below has no
/// catch-all, so a new event type does not compile until it is listed here.
fn every_event() -> Vec<Event> {
    let events = vec![
        Event::SessionStarted {
            session_id: "s".into(),
            model: "m".into(),
        },
        Event::SkillLoaded {
            name: "n".into(),
            via: SkillLoadVia::Slash,
        },
        Event::AssistantDelta { text: "t".into() },
        Event::ReasoningDelta { text: "t".into() },
        Event::tool_call_begin("c", "n", "{}"),
        Event::ToolCallOutput {
            call_id: "c".into(),
            output: "o".into(),
        },
        Event::ToolCallEnd {
            call_id: "c".into(),
            name: "n".into(),
            success: true,
            duration_ms: 1,
        },
        Event::Retry {
            attempt: 1,
            delay_ms: 1,
            reason: "r".into(),
        },
        Event::Usage {
            prompt_tokens: 1,
            completion_tokens: 1,
            cached_tokens: 0,
            cache_write_tokens: 0,
            cost_usd: Some(0.1),
        },
        Event::CatalogNote {
            added: vec![],
            removed: vec![],
        },
        Event::Compaction {
            before_tokens: 2,
            after_tokens: 1,
        },
        Event::AssistantMessage { text: "t".into() },
        Event::ApprovalRequest {
            call_id: "c".into(),
            command: "x".into(),
            reason: "r".into(),
            exact_rule: Some("terminal(x)".into()),
            prefix_rule: Some("terminal(x:*)".into()),
            diff: Some("d".into()),
        },
        Event::AutoApproved {
            call_id: "c".into(),
            rule: "terminal(x)".into(),
        },
        Event::FileDiff {
            call_id: "c".into(),
            path: "p".into(),
            diff: "d".into(),
        },
        Event::ReviewStarted,
        Event::SkillWritten {
            action: "create".into(),
            name: "n".into(),
            actor: SkillActor::Review,
        },
        Event::ReviewUsage {
            requests: 2,
            prompt_tokens: 10,
            completion_tokens: 2,
            cached_tokens: 5,
            cost_usd: Some(0.1),
            stopped: Some("cap".into()),
        },
        Event::ReviewFinished {
            summary: "s".into(),
        },
        Event::Error {
            message: "m".into(),
        },
        Event::TurnAborted {
            reason: TurnAbortReason::Interrupted,
        },
        Event::TurnComplete,
    ];
    for event in &events {
        match event {
            Event::SessionStarted { .. }
            | Event::SkillLoaded { .. }
            | Event::AssistantDelta { .. }
            | Event::ReasoningDelta { .. }
            | Event::ToolCallBegin { .. }
            | Event::ToolCallOutput { .. }
            | Event::ToolCallEnd { .. }
            | Event::Retry { .. }
            | Event::Usage { .. }
            | Event::CatalogNote { .. }
            | Event::Compaction { .. }
            | Event::AssistantMessage { .. }
            | Event::ApprovalRequest { .. }
            | Event::AutoApproved { .. }
            | Event::FileDiff { .. }
            | Event::ReviewStarted
            | Event::SkillWritten { .. }
            | Event::ReviewUsage { .. }
            | Event::ReviewFinished { .. }
            | Event::Error { .. }
            | Event::TurnAborted { .. }
            | Event::TurnComplete => {}
        }
    }
    events
}

#[test]
fn docs_agent_md_lists_every_json_event_with_its_fields() {
    let docs = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/agent.md"),
    )
    .unwrap();
    for event in every_event() {
        let value: Value = serde_json::from_str(&event.to_json_line().unwrap()).unwrap();
        let kind = value["type"].as_str().unwrap();
        let row = docs
            .lines()
            .find(|line| line.starts_with(&format!("| `{kind}` |")))
            .unwrap_or_else(|| panic!("docs/agent.md has no event table row for `{kind}`"));
        for field in value.as_object().unwrap().keys().filter(|k| *k != "type") {
            assert!(
                row.contains(&format!("`{field}`")),
                "docs/agent.md's row for `{kind}` does not name its field `{field}`"
            );
        }
    }
}
