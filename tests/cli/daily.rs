//! Issue #20, "a daily driver": what people who use a coding agent every day
//! expect of `knack run` — interruptions kept, early usage errors, reasons shown.

use serde_json::Value;
use test_support::ScriptedReply;

use super::common::{Env, interrupt_mid_answer, mock, run_cmd};

fn json_lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

#[test]
fn an_interrupted_answer_is_kept_with_a_marker_and_roles_alternate() {
    let env = Env::new();
    let server = mock();
    server.enqueue(
        ScriptedReply::text("Partial words that the user cuts off before the end")
            .stall_after_chunks(2),
    );
    let interrupted = interrupt_mid_answer(&env, &server.base_url(), "first question");
    let (code, events) = (interrupted.code, interrupted.events);
    assert_eq!(code, 130, "{events:?}");
    let id = events
        .iter()
        .find(|e| e["type"] == "session_started")
        .and_then(|e| e["session_id"].as_str())
        .unwrap()
        .to_owned();
    let streamed: String = events
        .iter()
        .filter(|e| e["type"] == "assistant_delta")
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert!(!streamed.is_empty());

    server.enqueue(ScriptedReply::text("second answer"));
    let out = run_cmd(&env, &server)
        .args(["run", "--resume", &id, "second question"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = server.chat_requests();
    let messages = requests.last().unwrap().messages();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    let first = messages
        .iter()
        .position(|m| m["content"] == "first question")
        .unwrap();
    let answer = &messages[first + 1];
    assert_eq!(answer["role"], "assistant", "roles: {roles:?}");
    let text = answer["content"].as_str().unwrap();
    assert!(text.starts_with(streamed.trim_end()), "{text}");
    assert!(text.ends_with("[interrupted by the user]"), "{text}");
    assert!(
        roles.windows(2).all(|w| w != ["assistant", "assistant"]),
        "{roles:?}"
    );
    assert_eq!(roles.last(), Some(&"user"), "{roles:?}");
    assert!(
        messages[first + 2..]
            .iter()
            .any(|m| m["content"] == "second question"),
        "{roles:?}"
    );
}

#[test]
fn an_unknown_skill_is_a_usage_error_before_any_request() {
    let env = Env::new();
    env.skill(
        "writing/release-notes",
        "release-notes",
        "Draft release notes",
    );
    let server = mock();
    let typo = run_cmd(&env, &server)
        .args(["run", "/relase-notes draft v2"])
        .output()
        .unwrap();
    assert_eq!(typo.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&typo.stderr);
    assert!(stderr.contains("did you mean /release-notes?"), "{stderr}");

    let unknown = run_cmd(&env, &server)
        .args(["run", "--json", "/no-such-skill do it"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2));
    let events = json_lines(&unknown.stdout);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "error");
    assert!(
        events[0]["message"]
            .as_str()
            .unwrap()
            .contains("no skill named /no-such-skill"),
        "{events:?}"
    );
    assert!(server.chat_requests().is_empty(), "nothing was sent");
    let sessions = env
        .knack()
        .args(["sessions", "list", "--json"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&sessions.stdout).trim(), "[]");
}

#[test]
fn a_path_at_the_start_of_the_prompt_is_still_sent() {
    let env = Env::new();
    let server = mock();
    server.enqueue(ScriptedReply::text("it is a directory"));
    let out = run_cmd(&env, &server)
        .args(["run", "/usr/bin is odd"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(server.chat_requests().len(), 1);
}

#[test]
fn json_mode_reports_a_configuration_error_as_an_event() {
    let env = Env::new();
    let out = env
        .knack()
        .args(["run", "--json", "hello"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let events = json_lines(&out.stdout);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "error");
    assert!(
        events[0]["message"]
            .as_str()
            .unwrap()
            .contains("KNACK_BASE_URL"),
        "{events:?}"
    );
}

#[test]
fn sessions_are_found_by_a_unique_prefix() {
    let env = Env::new();
    let server = mock();
    server.enqueue(ScriptedReply::text("first"));
    let out = run_cmd(&env, &server)
        .args(["run", "--json", "one"])
        .output()
        .unwrap();
    let id = json_lines(&out.stdout)[0]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let prefix = &id[..8];
    let shown = env
        .knack()
        .args(["sessions", "show", prefix, "--json"])
        .output()
        .unwrap();
    assert_eq!(shown.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&shown.stdout).contains(&id));

    server.enqueue(ScriptedReply::text("second"));
    let resumed = run_cmd(&env, &server)
        .args(["run", "--json", "--resume", prefix, "two"])
        .output()
        .unwrap();
    assert_eq!(resumed.status.code(), Some(0));
    assert_eq!(json_lines(&resumed.stdout)[0]["session_id"], id.as_str());

    let unknown = run_cmd(&env, &server)
        .args(["run", "--resume", "19990101", "three"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2));
}

#[test]
fn a_failed_tool_shows_its_reason_on_stderr() {
    let env = Env::new();
    let server = mock();
    server.enqueue(ScriptedReply::tool_calls([(
        "c1",
        "skill_view",
        r#"{"name": "missing-skill"}"#,
    )]));
    server.enqueue(ScriptedReply::text("no such skill"));
    let out = run_cmd(&env, &server)
        .args(["run", "--no-review", "view it"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("✗ skill_view"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(line.contains("missing-skill"), "{line}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "no such skill\n");
}
