//! What follows an answered turn, as every frontend sees it through the session
//! handle: the review when one is due, then `TurnComplete` as the turn's last
//! event; the review stopped by `agent.review_timeout_secs`; and the session
//! handed back once the frontend drops its senders (how `knack run` ends).

use std::sync::Arc;
use std::time::Duration;

use agent_loop::session::{EventSink, Session, SessionHandle, SessionOptions, spawn_session};
use agent_protocol::{Event, Op};
use knack_config::{Config, KnackHome};
use prompt_builder::Platform;
use test_support::{MockModelServer, Purpose, ScriptedReply};

struct Fixture {
    server: MockModelServer,
    _home: tempfile::TempDir,
    _cwd: tempfile::TempDir,
    handle: SessionHandle,
}

/// A session whose review is due after one tool call, with `review_timeout_secs`.
async fn session(review_timeout_secs: u64) -> Fixture {
    let server = MockModelServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.skills.bundled_opt_out = true;
    config.skills.review_after_tool_calls = 1;
    config.agent.review_timeout_secs = review_timeout_secs;
    let (events, events_rx) = EventSink::channel();
    let options = SessionOptions::new(
        KnackHome::at(home.path()),
        config,
        cwd.path().to_path_buf(),
        Platform::Cli,
        "mock-model",
    );
    let client = Arc::new(super::client(&server.base_url(), 0));
    let session = Session::start(options, client, events).unwrap();
    Fixture {
        server,
        _home: home,
        _cwd: cwd,
        handle: spawn_session(session, events_rx, None),
    }
}

/// Sends one turn, drops every sender as `knack run` does, and collects the
/// events until the session is handed back.
async fn one_turn(fixture: Fixture, text: &str) -> (Vec<Event>, Session, MockModelServer) {
    let Fixture {
        server,
        handle,
        _home,
        _cwd,
    } = fixture;
    let SessionHandle {
        ops,
        mut events,
        models,
        finished,
        ..
    } = handle;
    ops.send(Op::UserTurn { text: text.into() }).unwrap();
    drop(ops);
    drop(models);
    let session = tokio::time::timeout(Duration::from_secs(30), finished)
        .await
        .expect("the session did not end after its queued work")
        .unwrap();
    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        seen.push(event);
    }
    (seen, session, server)
}

fn position(events: &[Event], wanted: impl Fn(&Event) -> bool) -> usize {
    events
        .iter()
        .position(wanted)
        .unwrap_or_else(|| panic!("missing event in {events:#?}"))
}

#[tokio::test]
async fn the_review_runs_before_the_turn_completes() {
    let fixture = session(300).await;
    fixture
        .server
        .enqueue(ScriptedReply::tool_calls([("c1", "skills_list", "{}")]));
    fixture.server.enqueue(ScriptedReply::text("the answer"));
    fixture.server.enqueue_for(
        Purpose::Review,
        ScriptedReply::text("Nothing worth saving."),
    );
    let (events, _session, server) = one_turn(fixture, "list my skills").await;

    let answer = position(
        &events,
        |e| matches!(e, Event::AssistantMessage { text } if text == "the answer"),
    );
    let started = position(&events, |e| matches!(e, Event::ReviewStarted));
    let finished = position(&events, |e| matches!(e, Event::ReviewFinished { .. }));
    assert!(answer < started && started < finished, "{events:#?}");
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete),
        "the turn's last event"
    );
    assert_eq!(
        events.iter().filter(|e| **e == Event::TurnComplete).count(),
        1
    );
    // What was sent: two turn requests, then one review request that carries
    // the whole conversation.
    let requests = server.chat_requests();
    let purposes: Vec<Option<&str>> = requests.iter().map(|r| r.purpose()).collect();
    assert_eq!(purposes, [Some("turn"), Some("turn"), Some("review")]);
    let review = requests[2].messages();
    assert!(
        review
            .iter()
            .any(|m| m["content"].as_str() == Some("the answer")),
        "the review sees the answer: {review:#?}"
    );
}

#[tokio::test]
async fn a_review_past_its_time_is_stopped_and_the_turn_still_completes() {
    // The review's reply never comes (the client itself would give up only
    // after its 5 s first-byte timeout); a limit of zero stops it at once.
    let fixture = session(0).await;
    fixture
        .server
        .enqueue(ScriptedReply::tool_calls([("c1", "skills_list", "{}")]));
    fixture.server.enqueue(ScriptedReply::text("the answer"));
    fixture.server.enqueue_for(
        Purpose::Review,
        ScriptedReply::text("never sent").stall_after_chunks(0),
    );
    let (events, session, server) = one_turn(fixture, "list my skills").await;

    let summary = events
        .iter()
        .find_map(|e| match e {
            Event::ReviewFinished { summary } => Some(summary.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no review summary in {events:#?}"));
    assert!(
        summary.contains("agent.review_timeout_secs"),
        "the summary names the setting: {summary}"
    );
    assert_eq!(events.last(), Some(&Event::TurnComplete));
    // The answer is kept whatever became of the review.
    assert!(
        session
            .history()
            .iter()
            .any(|m| m.content.as_deref() == Some("the answer"))
    );
    assert_eq!(server.pending(Purpose::Turn), 0);
}

#[tokio::test]
async fn no_review_is_due_without_enough_tool_calls() {
    let fixture = session(300).await;
    fixture.server.enqueue(ScriptedReply::text("just text"));
    let (events, _session, server) = one_turn(fixture, "hi").await;
    assert!(
        !events.iter().any(|e| matches!(e, Event::ReviewStarted)),
        "{events:#?}"
    );
    assert_eq!(events.last(), Some(&Event::TurnComplete));
    assert_eq!(server.chat_requests().len(), 1);
}
