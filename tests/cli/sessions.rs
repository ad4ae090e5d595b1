//! `knack sessions list|show|search|delete` over a state.db filled through the store.

use agent_loop::model::{ChatMessage, ToolCall};
use agent_loop::{NewSession, SessionStore};
use knack_config::KnackHome;
use serde_json::json;

use super::common::{Env, stdout_json, success};

/// Two sessions: an older one about a heron and a newer one about a pelican.
fn seed(env: &Env) -> (String, String) {
    let store = SessionStore::open(&KnackHome::at(env.home.path())).unwrap();
    let new = |id: &str| NewSession {
        id: Some(id.to_owned()),
        model: "mock-model".into(),
        system_prompt: "You are knack.".into(),
        tools_json: Some("[]".into()),
        platform: "cli".into(),
        cwd: "/somewhere".into(),
    };
    let older = store
        .create_session(&new("20240101-090000-aaaaaa"))
        .unwrap();
    store
        .append_message(&older, &ChatMessage::user("Where does the heron nest?"))
        .unwrap();
    store
        .append_message(
            &older,
            &ChatMessage::assistant(
                "",
                vec![ToolCall::function(
                    "c1",
                    "read_file",
                    r#"{"path":"birds.md"}"#,
                )],
            ),
        )
        .unwrap();
    store
        .append_message(
            &older,
            &ChatMessage::tool_result("c1", r#"{"success":true,"content":"reeds"}"#),
        )
        .unwrap();
    store
        .append_message(
            &older,
            &ChatMessage::assistant("The heron nests in the reeds.", vec![]),
        )
        .unwrap();
    let newer = store
        .create_session(&new("20240102-090000-bbbbbb"))
        .unwrap();
    store
        .append_message(&newer, &ChatMessage::user("Tell me about the pelican"))
        .unwrap();
    (older, newer)
}

#[test]
fn list_is_newest_first_in_the_contract_shape() {
    let env = Env::new();
    let (older, newer) = seed(&env);
    let out = success(env.knack().args(["sessions", "list", "--json"]));
    let list = stdout_json(&out);
    let items = list.as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["id"], newer);
    assert_eq!(items[1]["id"], older);
    assert_eq!(
        items[1].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["id", "started_at", "title", "model", "message_count"]
    );
    assert_eq!(items[1]["message_count"], 4);
    assert_eq!(items[1]["title"], "Where does the heron nest?");
    assert_eq!(items[1]["model"], "mock-model");

    let human = env.knack().args(["sessions", "list"]).output().unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains(&older) && text.contains("heron"), "{text}");
}

#[test]
fn an_empty_home_lists_nothing() {
    let env = Env::new();
    let out = env
        .knack()
        .args(["sessions", "list", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(stdout_json(&out), json!([]));
}

#[test]
fn show_prints_the_transcript_or_the_stored_json() {
    let env = Env::new();
    let (older, _) = seed(&env);
    let out = env
        .knack()
        .args(["sessions", "show", &older])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for piece in [
        "Where does the heron nest?",
        "read_file",
        "reeds",
        "The heron nests in the reeds.",
    ] {
        assert!(text.contains(piece), "{piece}: {text}");
    }

    let out = env
        .knack()
        .args(["sessions", "show", &older, "--json"])
        .output()
        .unwrap();
    let session = stdout_json(&out);
    assert_eq!(session["meta"]["id"], older);
    assert_eq!(session["meta"]["system_prompt"], "You are knack.");
    let messages = session["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(
        messages[1]["tool_calls"][0]["function"]["name"],
        "read_file"
    );
    assert_eq!(messages[2]["tool_call_id"], "c1");

    let missing = env
        .knack()
        .args(["sessions", "show", "nope"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no session with id 'nope'"));
}

#[test]
fn search_returns_hits_in_the_contract_shape() {
    let env = Env::new();
    let (older, _) = seed(&env);
    let out = env
        .knack()
        .args(["sessions", "search", "heron", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let hits = stdout_json(&out);
    let hits = hits.as_array().unwrap();
    assert_eq!(hits.len(), 2, "{hits:?}");
    for hit in hits {
        assert_eq!(hit["session_id"], older);
        assert_eq!(
            hit.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["session_id", "role", "snippet"]
        );
        assert!(
            hit["snippet"]
                .as_str()
                .unwrap()
                .to_lowercase()
                .contains("heron")
        );
    }
    // Query syntax never breaks the command.
    for odd in ["\"heron", "heron OR", "*", "(pelican"] {
        let out = env
            .knack()
            .args(["sessions", "search", odd, "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{odd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn delete_removes_a_session_and_refuses_unknown_ids() {
    let env = Env::new();
    let (older, newer) = seed(&env);
    env.knack()
        .args(["sessions", "delete", &older])
        .assert()
        .success();
    let out = env
        .knack()
        .args(["sessions", "list", "--json"])
        .output()
        .unwrap();
    let list = stdout_json(&out);
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["id"], newer);
    let out = env
        .knack()
        .args(["sessions", "search", "heron", "--json"])
        .output()
        .unwrap();
    assert_eq!(stdout_json(&out), json!([]));

    let again = env
        .knack()
        .args(["sessions", "delete", &older])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains(&older));
}
