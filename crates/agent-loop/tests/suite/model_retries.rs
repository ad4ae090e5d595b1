//! Failures worth retrying: rate limits, server errors, cut streams; and where retrying stops.

use std::time::{Duration, Instant};

use agent_loop::ModelError;
use agent_loop::model::{StreamUpdate, ToolCall};
use pretty_assertions::assert_eq;
use test_support::{MockModelServer, NO_REPLY_LEFT, ScriptedReply};

use super::{HANG, client, request, retries, run, visible_text, within};

#[tokio::test]
async fn a_429_with_retry_after_waits_that_long_then_succeeds() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(ScriptedReply::status(429).retry_after(1));
    server.enqueue(ScriptedReply::text("after the wait"));
    let started = Instant::now();
    let (result, updates) = within(HANG, run(&client(&server.base_url(), 3), &request())).await;
    let elapsed = started.elapsed();

    assert_eq!(result.unwrap().content, "after the wait");
    // A lower bound only: a loaded machine makes the wait longer, never shorter.
    // The length of the one sleep is the delay the Retry event reports.
    assert!(
        elapsed >= Duration::from_millis(990),
        "waited only {elapsed:?}"
    );
    assert_eq!(
        retries(&updates),
        vec![(1, 1000, "rate limited (429)".to_owned())]
    );
    assert_eq!(server.chat_requests().len(), 2);
}

#[tokio::test]
async fn a_429_without_retry_after_uses_the_backoff() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(ScriptedReply::status(429));
    server.enqueue(ScriptedReply::text("ok"));
    let (result, updates) = run(&client(&server.base_url(), 3), &request()).await;
    assert_eq!(result.unwrap().content, "ok");
    let reported = retries(&updates);
    assert_eq!(reported.len(), 1);
    // base 10 ms with ±25 % jitter
    assert!((7..=13).contains(&reported[0].1), "{reported:?}");
}

#[tokio::test]
async fn a_retry_after_longer_than_the_limit_fails_at_once() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        ScriptedReply::status(429)
            .retry_after(3600)
            .with_error_message("quota exceeded"),
    );
    // Waiting the hour instead of failing would run into the hang guard.
    let (result, updates) = within(HANG, run(&client(&server.base_url(), 3), &request())).await;
    let err = result.unwrap_err();
    assert!(
        matches!(err, ModelError::RateLimitWaitTooLong { .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("3600s") && err.to_string().contains("quota exceeded"),
        "{err}"
    );
    assert!(retries(&updates).is_empty());
    assert_eq!(server.chat_requests().len(), 1);
}

#[tokio::test]
async fn server_errors_are_retried_with_growing_attempts() {
    let server = MockModelServer::start().await.unwrap();
    for status in [500, 502, 503] {
        server.enqueue(ScriptedReply::status(status));
    }
    server.enqueue(ScriptedReply::text("recovered"));
    let (result, updates) = run(&client(&server.base_url(), 3), &request()).await;
    assert_eq!(result.unwrap().content, "recovered");
    let reported: Vec<(u32, String)> = retries(&updates)
        .into_iter()
        .map(|(attempt, _, reason)| (attempt, reason))
        .collect();
    assert_eq!(
        reported,
        vec![
            (1, "server error (500)".to_owned()),
            (2, "server error (502)".to_owned()),
            (3, "server error (503)".to_owned()),
        ]
    );
    for (_, delay_ms, _) in retries(&updates) {
        assert!(delay_ms <= 40, "capped at max_delay: {delay_ms}");
    }
}

#[tokio::test]
async fn persistent_500s_end_in_a_clear_error_after_the_last_retry() {
    let server = MockModelServer::start().await.unwrap();
    let max_retries = 2;
    for _ in 0..=max_retries {
        server.enqueue(ScriptedReply::status(500).with_error_message("model crashed"));
    }
    server.enqueue(ScriptedReply::text("never reached"));
    let (result, updates) = run(&client(&server.base_url(), max_retries), &request()).await;

    let err = result.unwrap_err();
    assert_eq!(
        err.to_string(),
        "gave up after 3 attempts: model server error (500): model crashed"
    );
    assert!(!err.is_retryable());
    assert_eq!(retries(&updates).len(), max_retries as usize);
    assert_eq!(server.chat_requests().len(), 3);
    assert_eq!(server.pending(test_support::Purpose::Turn), 1);
}

#[tokio::test]
async fn a_stream_cut_mid_tool_call_is_retried_and_the_partial_call_discarded() {
    let server = MockModelServer::start().await.unwrap();
    let calls = [
        ("call_a", "skill_view", r#"{"name":"deploy-k8s"}"#),
        ("call_b", "skills_list", "{}"),
    ];
    server.enqueue(ScriptedReply::tool_calls(calls).cut_after_chunks(2));
    server.enqueue(ScriptedReply::tool_calls(calls));
    let (result, updates) = run(&client(&server.base_url(), 2), &request()).await;

    let completion = result.unwrap();
    assert_eq!(
        completion.tool_calls,
        vec![
            ToolCall::function("call_a", "skill_view", r#"{"name":"deploy-k8s"}"#),
            ToolCall::function("call_b", "skills_list", "{}"),
        ]
    );
    let reset_at = updates
        .iter()
        .position(|u| *u == StreamUpdate::Reset)
        .unwrap();
    assert!(matches!(
        updates[reset_at + 1],
        StreamUpdate::Retry { attempt: 1, .. }
    ));
    assert_eq!(retries(&updates)[0].2, "stream ended early");
    // call_a was announced before the cut and again after the retry.
    let announced = updates
        .iter()
        .filter(|u| matches!(u, StreamUpdate::ToolCallStarted { id, .. } if id == "call_a"))
        .count();
    assert_eq!(announced, 2);
}

#[tokio::test]
async fn a_stream_cut_mid_text_resets_so_the_text_is_not_doubled() {
    let server = MockModelServer::start().await.unwrap();
    let text = "The release checklist has four steps.";
    server.enqueue(ScriptedReply::text(text).cut_after_chunks(2));
    server.enqueue(ScriptedReply::text(text));
    let (result, updates) = run(&client(&server.base_url(), 1), &request()).await;
    assert_eq!(result.unwrap().content, text);
    assert_eq!(visible_text(&updates), text);
    assert!(updates.contains(&StreamUpdate::Reset));
}

#[tokio::test]
async fn a_stream_that_stalls_is_retried_after_the_idle_timeout() {
    let server = MockModelServer::start().await.unwrap();
    // One frame, then silence until the server is dropped: only the idle
    // timeout can end this attempt, however slow the machine.
    server.enqueue(ScriptedReply::text("stalling reply").stall_after_chunks(1));
    server.enqueue(ScriptedReply::text("quick reply"));
    let mut settings = super::settings(&server.base_url(), 1);
    settings.timeouts.idle = Duration::from_millis(150);
    let client = agent_loop::model::ChatCompletionsClient::new(settings).unwrap();
    let (result, updates) = within(HANG, run(&client, &request())).await;
    assert_eq!(result.unwrap().content, "quick reply");
    assert!(retries(&updates)[0].2.contains("stalled"), "{updates:?}");
}

#[tokio::test]
async fn an_exhausted_script_surfaces_the_mock_message() {
    let server = MockModelServer::start().await.unwrap();
    let (result, _) = run(&client(&server.base_url(), 1), &request()).await;
    let err = result.unwrap_err();
    assert!(err.to_string().contains(NO_REPLY_LEFT), "{err}");
}
