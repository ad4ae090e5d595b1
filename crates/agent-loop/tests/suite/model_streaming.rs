//! Replies that arrive whole: text, tool calls, usage, and the odd shapes servers send.

use agent_loop::model::{StreamUpdate, ToolCall, Usage};
use pretty_assertions::assert_eq;
use test_support::{MockModelServer, ScriptedReply};

use super::{client, request, retries, run, visible_text};

#[tokio::test]
async fn streamed_text_arrives_in_pieces_with_usage() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        ScriptedReply::text("Deploys go through the staging cluster first.").with_usage(120, 9, 96),
    );
    let (result, updates) = run(&client(&server.base_url(), 0), &request()).await;

    let completion = result.unwrap();
    assert_eq!(
        completion.content,
        "Deploys go through the staging cluster first."
    );
    assert_eq!(completion.finish_reason.as_deref(), Some("stop"));
    assert_eq!(
        completion.usage,
        Some(Usage {
            prompt_tokens: 120,
            completion_tokens: 9,
            cached_tokens: Some(96),
            ..Usage::default()
        })
    );
    assert!(completion.tool_calls.is_empty());
    let deltas = updates
        .iter()
        .filter(|u| matches!(u, StreamUpdate::TextDelta(_)))
        .count();
    assert!(deltas >= 3, "expected several deltas, got {updates:?}");
    assert_eq!(visible_text(&updates), completion.content);
}

#[tokio::test]
async fn two_streamed_tool_calls_are_reassembled() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(ScriptedReply::tool_calls([
        ("call_1", "skills_list", r#"{"category":"devops"}"#),
        (
            "call_2",
            "skill_view",
            r#"{"name":"deploy-k8s","file_path":"references/api.md"}"#,
        ),
    ]));
    let (result, updates) = run(&client(&server.base_url(), 0), &request()).await;

    let completion = result.unwrap();
    assert_eq!(
        completion.tool_calls,
        vec![
            ToolCall::function("call_1", "skills_list", r#"{"category":"devops"}"#),
            ToolCall::function(
                "call_2",
                "skill_view",
                r#"{"name":"deploy-k8s","file_path":"references/api.md"}"#
            ),
        ]
    );
    assert_eq!(completion.content, "");
    assert_eq!(completion.finish_reason.as_deref(), Some("tool_calls"));
    let started: Vec<_> = updates
        .iter()
        .filter_map(|u| match u {
            StreamUpdate::ToolCallStarted { id, name } => Some((id.as_str(), name.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        started,
        vec![("call_1", "skills_list"), ("call_2", "skill_view")]
    );
    // The message to append next round carries the calls and no empty content.
    let message = serde_json::to_value(completion.to_message()).unwrap();
    assert!(message.get("content").is_none(), "{message}");
}

#[tokio::test]
async fn text_then_tool_call_in_one_reply() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(ScriptedReply::text("Let me look.").with_tool_calls([(
        "c9",
        "skills_list",
        "{}",
    )]));
    let (result, _) = run(&client(&server.base_url(), 0), &request()).await;
    let completion = result.unwrap();
    assert_eq!(completion.content, "Let me look.");
    assert_eq!(
        completion.tool_calls,
        vec![ToolCall::function("c9", "skills_list", "{}")]
    );
}

#[tokio::test]
async fn empty_choices_and_reasoning_do_not_break_the_reply() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        ScriptedReply::text("still fine")
            .with_reasoning("thinking it over")
            .with_empty_choices_chunk(),
    );
    let (result, updates) = run(&client(&server.base_url(), 0), &request()).await;
    assert_eq!(result.unwrap().content, "still fine");
    let reasoning: String = updates
        .iter()
        .filter_map(|u| match u {
            StreamUpdate::ReasoningDelta(piece) => Some(piece.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasoning, "thinking it over");
}

#[tokio::test]
async fn a_chunk_that_is_not_json_is_retried_like_a_cut_stream() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(ScriptedReply::text("lost text").with_invalid_json_chunk());
    server.enqueue(ScriptedReply::text("whole again"));
    let (result, updates) = run(&client(&server.base_url(), 1), &request()).await;
    assert_eq!(result.unwrap().content, "whole again");
    assert_eq!(visible_text(&updates), "whole again");
    let retried = retries(&updates);
    assert_eq!(retried.len(), 1, "{retried:?}");
    assert_eq!(retried[0].2, "unreadable stream chunk");
    assert_eq!(server.chat_requests().len(), 2);
}

#[tokio::test]
async fn a_stream_of_only_garbage_is_an_error_not_an_empty_reply() {
    let server = MockModelServer::start().await.unwrap();
    for _ in 0..3 {
        server.enqueue(ScriptedReply::raw_frames(["{oops", "<html>"]));
    }
    let (result, _) = run(&client(&server.base_url(), 2), &request()).await;
    let err = result.unwrap_err();
    assert!(err.to_string().contains("not valid JSON"), "{err}");
    assert_eq!(server.chat_requests().len(), 3);
}

#[tokio::test]
async fn slow_chunks_within_the_idle_limit_are_fine() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(ScriptedReply::text("slow but steady").chunk_delay_ms(40));
    let (result, _) = run(&client(&server.base_url(), 0), &request()).await;
    assert_eq!(result.unwrap().content, "slow but steady");
}
