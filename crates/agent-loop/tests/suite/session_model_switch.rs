//! `/model` as the session sees it: a switch sent through the handle sends
//! the following requests to the new model (here another server as well),
//! with the system prompt and the tools unchanged byte for byte, and the
//! stored session names the model in use.

use std::sync::Arc;
use std::time::Duration;

use agent_loop::SessionStore;
use agent_loop::session::{
    EventSink, ModelSwitch, Session, SessionHandle, SessionOptions, spawn_session,
};
use agent_protocol::{Event, Op};
use knack_config::{Config, KnackHome};
use prompt_builder::Platform;
use test_support::{MockModelServer, ScriptedReply};

/// Sends one user turn and waits for its end.
async fn turn(handle: &mut SessionHandle, text: &str) {
    handle.ops.send(Op::UserTurn { text: text.into() }).unwrap();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), handle.events.recv())
            .await
            .expect("the session went quiet")
            .expect("the session ended");
        match event {
            Event::TurnComplete => return,
            Event::Error { message } => panic!("the turn failed: {message}"),
            _ => {}
        }
    }
}

#[tokio::test]
async fn a_switched_model_gets_the_next_request_with_the_same_prefix() {
    let first = MockModelServer::start().await.unwrap();
    let second = MockModelServer::start().await.unwrap();
    first.enqueue(ScriptedReply::text("from the first model"));
    second.enqueue(ScriptedReply::text("from the second model"));
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.skills.bundled_opt_out = true;
    let (events, events_rx) = EventSink::channel();
    let options = SessionOptions {
        review: false,
        ..SessionOptions::new(
            KnackHome::at(home.path()),
            config,
            cwd.path().to_path_buf(),
            Platform::Tui,
            "model-one",
        )
    };
    let client = |server: &MockModelServer| Arc::new(super::client(&server.base_url(), 0));
    let session = Session::start(options, client(&first), events).unwrap();
    let mut handle = spawn_session(session, events_rx, None);

    turn(&mut handle, "hello").await;
    assert!(handle.models.switch(ModelSwitch {
        model: "model-two".into(),
        client: client(&second),
        context_window: Some(64_000),
    }));
    turn(&mut handle, "and now?").await;

    let before = first.chat_requests();
    let after = second.chat_requests();
    assert_eq!((before.len(), after.len()), (1, 1));
    assert_eq!(before[0].body["model"], "model-one");
    assert_eq!(after[0].body["model"], "model-two");
    assert_eq!(
        before[0].messages()[0],
        after[0].messages()[0],
        "the system prompt is unchanged"
    );
    assert_eq!(before[0].body["tools"], after[0].body["tools"]);
    // The conversation went along: the second model sees the first answer.
    let texts: Vec<&str> = after[0]
        .messages()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(texts.contains(&"from the first model"), "{texts:?}");
    let _ = handle.ops.send(Op::Shutdown);
}

/// Options for a session in `home` that starts on `model`, without the review.
fn options(home: &std::path::Path, cwd: &std::path::Path, model: &str) -> SessionOptions {
    let mut config = Config::default();
    config.skills.bundled_opt_out = true;
    SessionOptions {
        review: false,
        ..SessionOptions::new(
            KnackHome::at(home),
            config,
            cwd.to_path_buf(),
            Platform::Tui,
            model,
        )
    }
}

#[tokio::test]
async fn the_stored_session_names_the_model_it_was_switched_to() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(ScriptedReply::text("one"));
    server.enqueue(ScriptedReply::text("two"));
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let client = Arc::new(super::client(&server.base_url(), 0));
    let (events, events_rx) = EventSink::channel();
    let session = Session::start(
        options(home.path(), cwd.path(), "model-one"),
        client.clone(),
        events,
    )
    .unwrap();
    let id = session.id().to_owned();
    let mut handle = spawn_session(session, events_rx, None);
    turn(&mut handle, "hello").await;
    let store = SessionStore::open(&KnackHome::at(home.path())).unwrap();
    assert_eq!(store.load_session(&id).unwrap().meta.model, "model-one");

    assert!(handle.models.switch(ModelSwitch {
        model: "model-two".into(),
        client,
        context_window: None,
    }));
    // The switch is applied in order with the ops: once this turn is over,
    // it has been stored.
    turn(&mut handle, "and now?").await;
    assert_eq!(store.load_session(&id).unwrap().meta.model, "model-two");
    let listed = store.list().unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|s| (s.id.as_str(), s.model.as_str()))
            .collect::<Vec<_>>(),
        [(id.as_str(), "model-two")]
    );
    let _ = handle.ops.send(Op::Shutdown);
}

#[test]
fn resuming_with_another_model_records_that_model() {
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    // No request is made: starting and resuming never call the model.
    let client = Arc::new(super::client("http://127.0.0.1:9", 0));
    let (events, _rx) = EventSink::channel();
    let first = Session::start(
        options(home.path(), cwd.path(), "model-one"),
        client.clone(),
        events,
    )
    .unwrap();
    let id = first.id().to_owned();
    drop(first);

    let (events, _rx) = EventSink::channel();
    let resumed = Session::start(
        SessionOptions {
            resume: Some(id.clone()),
            ..options(home.path(), cwd.path(), "model-three")
        },
        client,
        events,
    )
    .unwrap();
    assert_eq!(resumed.model(), "model-three");
    let store = SessionStore::open(&KnackHome::at(home.path())).unwrap();
    assert_eq!(store.load_session(&id).unwrap().meta.model, "model-three");
}
