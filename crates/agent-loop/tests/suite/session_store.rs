//! state.db: migrations, the append/load round trip, listing, FTS search, delete,
//! and the session_search tool on top of it.

use std::sync::Arc;

use agent_loop::model::{ChatMessage, ToolCall};
use agent_loop::{Error, NewSession, SessionStore};
use knack_config::KnackHome;
use serde_json::json;

use super::tool_env::{ToolEnv, assert_ok};

fn new_session(model: &str) -> NewSession {
    NewSession {
        model: model.into(),
        system_prompt: "You are knack.\n".into(),
        tools_json: Some(r#"[{"type":"function"}]"#.into()),
        platform: "cli".into(),
        cwd: "/work".into(),
        ..NewSession::default()
    }
}

#[test]
fn an_empty_database_is_migrated_and_reopening_is_harmless() {
    let dir = tempfile::tempdir().unwrap();
    let home = KnackHome::at(dir.path().join("home"));
    let store = SessionStore::open(&home).unwrap();
    assert_eq!(store.schema_version().unwrap(), 5);
    assert!(home.state_db().exists());
    let id = store.create_session(&new_session("m")).unwrap();
    assert_eq!(store.load_session(&id).unwrap().meta.catalog, None);
    store
        .set_catalog(&id, &["user:a".to_owned(), "user:b/c".to_owned()])
        .unwrap();
    drop(store);
    let again = SessionStore::open(&home).unwrap();
    assert_eq!(again.schema_version().unwrap(), 5);
    assert_eq!(
        again.load_session(&id).unwrap().meta.catalog,
        Some(vec!["user:a".to_owned(), "user:b/c".to_owned()])
    );
    assert_eq!(again.list().unwrap()[0].id, id);
    let mode: String = rusqlite::Connection::open(home.state_db())
        .unwrap()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn a_database_from_a_newer_build_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let err = SessionStore::open_path(&path).err().unwrap();
    assert!(matches!(err, Error::StoreTooNew { found: 99, .. }), "{err}");
}

#[test]
fn messages_round_trip_in_order_with_tool_calls() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open(&KnackHome::at(dir.path())).unwrap();
    let id = store.create_session(&new_session("qwen")).unwrap();
    let messages = vec![
        ChatMessage::user("  Deploy the\n  staging cluster please  "),
        ChatMessage::assistant(
            "",
            vec![ToolCall::function(
                "c1",
                "terminal",
                r#"{"command":"kubectl get pods"}"#,
            )],
        ),
        ChatMessage::tool_result("c1", r#"{"success":true,"output":"pod-a"}"#),
        ChatMessage::assistant("Staging is deployed.", vec![]),
        ChatMessage::user("thanks"),
    ];
    for (i, message) in messages.iter().enumerate() {
        assert_eq!(store.append_message(&id, message).unwrap(), i as i64);
    }
    let loaded = store.load_session(&id).unwrap();
    assert_eq!(loaded.chat_messages(), messages);
    assert_eq!(loaded.meta.system_prompt, "You are knack.\n");
    assert_eq!(
        loaded.meta.tools_json.as_deref(),
        Some(r#"[{"type":"function"}]"#)
    );
    assert_eq!(loaded.meta.model, "qwen");
    assert_eq!(
        loaded.meta.title.as_deref(),
        Some("Deploy the staging cluster please")
    );
    assert!(loaded.meta.started_at.ends_with('Z') && loaded.meta.started_at.len() == 20);

    store.set_title(&id, "Renamed").unwrap();
    let summary = &store.list().unwrap()[0];
    assert_eq!(summary.title.as_deref(), Some("Renamed"));
    assert_eq!(summary.message_count, 5);

    assert!(matches!(
        store.append_message("missing", &ChatMessage::user("x")),
        Err(Error::SessionNotFound(_))
    ));
    assert!(matches!(
        store.load_session("missing"),
        Err(Error::SessionNotFound(_))
    ));
}

#[test]
fn list_is_newest_first_with_counts() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open(&KnackHome::at(dir.path())).unwrap();
    // Created in this order within (most likely) one second, the later one
    // with the smaller random suffix: creation order decides, not the id.
    let a = store
        .create_session(&NewSession {
            id: Some("20240101-000000-zzzzzz".into()),
            ..new_session("m")
        })
        .unwrap();
    let b = store
        .create_session(&NewSession {
            id: Some("20240101-000000-aaaaaa".into()),
            ..new_session("m")
        })
        .unwrap();
    store.append_message(&a, &ChatMessage::user("one")).unwrap();
    let list = store.list().unwrap();
    assert_eq!(
        list.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        [b.as_str(), a.as_str()]
    );
    assert_eq!(list[1].message_count, 1);
    assert_eq!(list[0].title, None);
    let value = serde_json::to_value(&list[1]).unwrap();
    assert_eq!(
        value.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["id", "started_at", "title", "model", "message_count"]
    );
}

#[test]
fn search_finds_words_ranks_and_excludes_and_survives_odd_queries() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open(&KnackHome::at(dir.path())).unwrap();
    let old = store.create_session(&new_session("m")).unwrap();
    let current = store.create_session(&new_session("m")).unwrap();
    store
        .append_message(
            &old,
            &ChatMessage::user("How do we rotate the Postgres credentials?"),
        )
        .unwrap();
    store
        .append_message(
            &old,
            &ChatMessage::assistant("Rotate them with vault write db/rotate.", vec![]),
        )
        .unwrap();
    store
        .append_message(&old, &ChatMessage::tool_result("c9", "postgres tool noise"))
        .unwrap();
    store
        .append_message(&current, &ChatMessage::user("postgres again"))
        .unwrap();

    let hits = store.search("postgres", 10, Some(&current)).unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].session_id, old);
    assert_eq!(hits[0].role, "user");
    assert!(
        hits[0].snippet.contains("**Postgres**"),
        "{}",
        hits[0].snippet
    );

    // Porter stemming: "rotating" finds "rotate".
    let stemmed = store.search("rotating", 10, None).unwrap();
    assert_eq!(stemmed.len(), 2, "{stemmed:?}");
    let everywhere = store.search("postgres", 10, None).unwrap();
    assert_eq!(
        everywhere.len(),
        2,
        "tool output is not indexed: {everywhere:?}"
    );

    for odd in [
        "\"",
        "'",
        "AND",
        "NOT postgres",
        "post*",
        "a:b",
        "(",
        "vault write ) OR",
        "--",
        "^",
        "NEAR(x y)",
        "",
    ] {
        store
            .search(odd, 10, None)
            .unwrap_or_else(|e| panic!("query {odd:?} failed: {e}"));
    }
    assert_eq!(store.search("db/rotate", 10, None).unwrap().len(), 1);
}

#[test]
fn delete_removes_the_session_its_messages_and_their_index() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open(&KnackHome::at(dir.path())).unwrap();
    let keep = store.create_session(&new_session("m")).unwrap();
    let gone = store.create_session(&new_session("m")).unwrap();
    store
        .append_message(&keep, &ChatMessage::user("zebra kept"))
        .unwrap();
    store
        .append_message(&gone, &ChatMessage::user("zebra gone"))
        .unwrap();
    store.delete(&gone).unwrap();
    assert!(matches!(
        store.load_session(&gone),
        Err(Error::SessionNotFound(_))
    ));
    assert!(matches!(
        store.delete(&gone),
        Err(Error::SessionNotFound(_))
    ));
    let hits = store.search("zebra", 10, None).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].session_id, keep);
    assert_eq!(store.list().unwrap().len(), 1);
}

#[test]
fn usage_is_recorded_per_request_and_totalled_per_session() {
    use agent_loop::model::{RequestPurpose, Usage};
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open(&KnackHome::at(dir.path())).unwrap();
    let id = store.create_session(&new_session("m")).unwrap();
    let other = store.create_session(&new_session("m")).unwrap();
    assert_eq!(store.usage_totals(&id).unwrap(), Default::default());
    let turn = Usage {
        prompt_tokens: 1000,
        completion_tokens: 40,
        cached_tokens: Some(700),
        cache_write_tokens: Some(200),
        reasoning_tokens: Some(12),
        cost_usd: Some(0.25),
    };
    let unpriced = Usage {
        prompt_tokens: 500,
        completion_tokens: 10,
        cached_tokens: Some(450),
        ..Usage::default()
    };
    store
        .record_usage(&id, RequestPurpose::Turn, &turn)
        .unwrap();
    store
        .record_usage(&id, RequestPurpose::Review, &turn)
        .unwrap();
    store
        .record_usage(&id, RequestPurpose::Compact, &unpriced)
        .unwrap();
    store
        .record_usage(&other, RequestPurpose::Turn, &turn)
        .unwrap();

    let totals = store.load_session(&id).unwrap().usage;
    assert_eq!(totals.requests, 3);
    assert_eq!(totals.fresh_input_tokens, 100 + 100 + 50);
    assert_eq!(totals.cache_read_tokens, 700 + 700 + 450);
    assert_eq!(totals.cache_write_tokens, 400);
    assert_eq!(totals.output_tokens, 90);
    assert_eq!(totals.reasoning_tokens, 24);
    assert_eq!(totals.priced_requests, 2);
    assert!((totals.cost_usd.unwrap() - 0.5).abs() < 1e-9, "{totals:?}");
    let json = serde_json::to_value(store.load_session(&id).unwrap()).unwrap();
    assert_eq!(json["usage"]["cache_write_tokens"], 400);

    // Split by purpose (what `knack eval` charges to the review), the parts add up.
    let review = store.usage_totals_for(&id, RequestPurpose::Review).unwrap();
    assert_eq!((review.requests, review.output_tokens), (1, 40));
    let compact = store
        .usage_totals_for(&id, RequestPurpose::Compact)
        .unwrap();
    assert_eq!(
        (
            compact.requests,
            compact.cache_read_tokens,
            compact.cost_usd
        ),
        (1, 450, None)
    );
    let turn = store.usage_totals_for(&id, RequestPurpose::Turn).unwrap();
    assert_eq!(
        turn.fresh_input_tokens + review.fresh_input_tokens + compact.fresh_input_tokens,
        totals.fresh_input_tokens
    );

    // The records go with their session.
    store.delete(&id).unwrap();
    assert_eq!(store.usage_totals(&id).unwrap().requests, 0);
    assert_eq!(store.usage_totals(&other).unwrap().requests, 1);
}

#[test]
fn a_version_3_database_gains_the_usage_table_and_keeps_its_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let home = KnackHome::at(dir.path());
    let store = SessionStore::open(&home).unwrap();
    let id = store.create_session(&new_session("m")).unwrap();
    store
        .append_message(&id, &ChatMessage::user("kept"))
        .unwrap();
    drop(store);
    // Step back to what the previous build left: no usage table, version 3.
    let conn = rusqlite::Connection::open(home.state_db()).unwrap();
    conn.execute_batch(
        "DROP TABLE request_usage; DROP TABLE skill_usage; DROP TABLE skill_patches;
         PRAGMA user_version = 3;",
    )
    .unwrap();
    drop(conn);
    let store = SessionStore::open(&home).unwrap();
    assert_eq!(store.schema_version().unwrap(), 5);
    let stored = store.load_session(&id).unwrap();
    assert_eq!(stored.messages.len(), 1);
    assert_eq!(stored.usage.requests, 0);
    assert_eq!(stored.usage.cost_usd, None);
}

#[test]
fn a_version_4_database_gains_the_skill_usage_tables() {
    let dir = tempfile::tempdir().unwrap();
    let home = KnackHome::at(dir.path());
    let store = SessionStore::open(&home).unwrap();
    let id = store.create_session(&new_session("m")).unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(home.state_db()).unwrap();
    conn.execute_batch(
        "DROP TABLE skill_usage; DROP TABLE skill_patches; PRAGMA user_version = 4;",
    )
    .unwrap();
    drop(conn);
    let store = SessionStore::open(&home).unwrap();
    assert_eq!(store.schema_version().unwrap(), 5);
    assert!(store.load_session(&id).is_ok());
    agent_loop::skill_usage::record(
        &store,
        "user:a",
        "a",
        agent_loop::skill_usage::UsageEvent::Use,
    );
    assert_eq!(
        agent_loop::skill_usage::load(&store).unwrap()["user:a"].uses,
        1
    );
}

#[tokio::test]
async fn session_search_tool_excludes_the_current_session() {
    let env = ToolEnv::new();
    let store = Arc::new(SessionStore::open(&env.ctx.home).unwrap());
    let earlier = store.create_session(&new_session("m")).unwrap();
    store
        .append_message(
            &earlier,
            &ChatMessage::user("the flamingo deployment failed"),
        )
        .unwrap();
    let current = store
        .create_session(&NewSession {
            id: Some(env.ctx.session_id.clone()),
            ..new_session("m")
        })
        .unwrap();
    store
        .append_message(&current, &ChatMessage::user("flamingo here too"))
        .unwrap();

    // Without a shared store the tool opens state.db from the home itself.
    let out = env
        .call("session_search", json!({"query": "flamingo"}))
        .await;
    assert_ok(&out);
    assert_eq!(out["count"], 1);
    assert_eq!(out["results"][0]["session_id"], earlier);
    assert_eq!(
        out["results"][0]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["session_id", "role", "snippet"]
    );

    let none = env
        .call("session_search", json!({"query": "\"unclosed"}))
        .await;
    assert_ok(&none);
    assert_eq!(none["count"], 0);
}
