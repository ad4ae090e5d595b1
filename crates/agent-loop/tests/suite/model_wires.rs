//! The Anthropic Messages and OpenAI Responses clients against the scripted mock: what
//! they send, how they read each wire's stream, and how they retry its failures.

use std::sync::Arc;

use agent_loop::model::{
    ChatMessage, ChatRequest, ModelClient, RequestPurpose, StreamUpdate, ToolCall, Wire,
    build_client, freeze_tools,
};
use knack_config::Prices;
use pretty_assertions::assert_eq;
use serde_json::json;
use test_support::{MockModelServer, ScriptedReply, check_invariants};

use super::{retries, run, settings, visible_text};

fn wire_client(server: &MockModelServer, wire: Wire, retries: u32) -> Arc<dyn ModelClient> {
    let mut settings = settings(&server.base_url(), retries).with_wire(wire);
    settings.api_key = Some("key-123".into());
    build_client(settings).unwrap()
}

fn tool_request() -> ChatRequest {
    ChatRequest {
        model: "mock-model".into(),
        messages: vec![
            ChatMessage::system("You are a test."),
            ChatMessage::user("hello"),
        ],
        tools: freeze_tools(&[json!({"type": "function", "function": {
            "name": "skills_list", "description": "List skills",
            "parameters": {"type": "object", "properties": {}}}})])
        .unwrap(),
        purpose: RequestPurpose::Turn,
        session_id: "sess-7".into(),
    }
}

#[tokio::test]
async fn anthropic_sends_its_headers_and_reads_thinking_tools_and_cache_usage() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        ScriptedReply::tool_calls([("tu1", "skills_list", "{}"), ("tu2", "skills_list", "{}")])
            .with_reasoning("let me look")
            .with_cache_usage(1000, 30, 900, 80),
    );
    server.enqueue(ScriptedReply::text("Two lists.").with_cache_usage(1100, 5, 980, 100));
    let client = wire_client(&server, Wire::Anthropic, 0);
    let mut request = tool_request();
    let (result, updates) = run(client.as_ref(), &request).await;
    let completion = result.unwrap();
    assert_eq!(completion.tool_calls.len(), 2);
    assert_eq!(completion.finish_reason.as_deref(), Some("tool_calls"));
    let usage = completion.usage.unwrap();
    assert_eq!(
        (
            usage.prompt_tokens,
            usage.cached_tokens,
            usage.cache_write_tokens
        ),
        (1000, Some(900), Some(80))
    );
    let reasoning: String = updates
        .iter()
        .filter_map(|u| match u {
            StreamUpdate::ReasoningDelta(piece) => Some(piece.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasoning, "let me look");

    request.messages.push(completion.to_message());
    for call in &completion.tool_calls {
        request.messages.push(ChatMessage::tool_result(
            call.id.clone(),
            "{\"success\":true}",
        ));
    }
    let (result, _) = run(client.as_ref(), &request).await;
    assert_eq!(result.unwrap().content, "Two lists.");

    let sent = server.model_requests();
    assert_eq!(sent.len(), 2);
    let first = &sent[0];
    assert_eq!(first.path, "/v1/messages");
    assert_eq!(first.header("x-api-key"), Some("key-123"));
    assert_eq!(first.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(first.header("authorization"), None);
    assert_eq!(first.session(), Some("sess-7"));
    assert_eq!(first.purpose(), Some("turn"));
    // The thinking block goes back first, signed, before the tool uses.
    let replayed = &sent[1].body["messages"][1]["content"];
    assert_eq!(replayed[0]["type"], "thinking");
    assert_eq!(replayed[0]["signature"], "sig:let me look");
    assert_eq!(replayed[0]["thinking"], "let me look");
    // Both results in one user message, in call order.
    let results = &sent[1].body["messages"][2]["content"];
    assert_eq!(results[0]["tool_use_id"], "tu1");
    assert_eq!(results[1]["tool_use_id"], "tu2");
    assert_eq!(sent[0].body["system"], sent[1].body["system"]);
    check_invariants(&sent).unwrap();
}

#[tokio::test]
async fn anthropic_overload_and_rate_limits_wait_as_told_then_succeed() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        ScriptedReply::status(529)
            .retry_after(0)
            .with_error_message("Overloaded"),
    );
    server.enqueue(ScriptedReply::status(429).retry_after(0));
    server.enqueue(ScriptedReply::text("made it"));
    let client = wire_client(&server, Wire::Anthropic, 3);
    let (result, updates) = run(client.as_ref(), &tool_request()).await;
    assert_eq!(result.unwrap().content, "made it");
    let reasons: Vec<(u64, String)> = retries(&updates)
        .into_iter()
        .map(|(_, delay, reason)| (delay, reason))
        .collect();
    assert_eq!(
        reasons,
        [
            (0, "server overloaded (529)".to_owned()),
            (0, "rate limited (429)".to_owned())
        ]
    );
}

#[tokio::test]
async fn cut_streams_and_bad_chunks_are_retried_on_every_new_wire() {
    for wire in [Wire::Anthropic, Wire::Responses] {
        let server = MockModelServer::start().await.unwrap();
        server.enqueue(ScriptedReply::text("first try lost").cut_after_chunks(3));
        server.enqueue(ScriptedReply::text("second try lost").with_invalid_json_chunk());
        server.enqueue(ScriptedReply::text("whole"));
        let client = wire_client(&server, wire, 2);
        let (result, updates) = run(client.as_ref(), &tool_request()).await;
        assert_eq!(result.unwrap().content, "whole", "{wire:?}");
        assert_eq!(visible_text(&updates), "whole", "{wire:?}");
        let reasons: Vec<String> = retries(&updates).into_iter().map(|r| r.2).collect();
        assert_eq!(
            reasons,
            ["stream ended early", "unreadable stream chunk"],
            "{wire:?}"
        );
    }
}

#[tokio::test]
async fn a_bad_chunk_every_time_ends_in_an_error_not_an_empty_answer() {
    let server = MockModelServer::start().await.unwrap();
    for _ in 0..2 {
        server.enqueue(ScriptedReply::text("never whole").with_invalid_json_chunk());
    }
    let client = wire_client(&server, Wire::Anthropic, 1);
    let (result, _) = run(client.as_ref(), &tool_request()).await;
    let err = result.unwrap_err();
    assert!(err.to_string().contains("not valid JSON"), "{err}");
}

#[tokio::test]
async fn responses_is_stateless_keyed_by_session_and_replays_reasoning() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        ScriptedReply::tool_calls([("call_a", "skills_list", "{}")])
            .with_reasoning("plan")
            .with_usage(500, 20, 384),
    );
    server.enqueue(ScriptedReply::text("done"));
    let mut settings = settings(&server.base_url(), 0).with_wire(Wire::Responses);
    settings.reasoning_effort = Some("low".into());
    settings.prices = Some(Prices {
        input: 2.0,
        output: 8.0,
        cache_read: Some(0.5),
        cache_write: None,
    });
    let client = build_client(settings).unwrap();
    let mut request = tool_request();
    let (result, _) = run(client.as_ref(), &request).await;
    let completion = result.unwrap();
    assert_eq!(
        completion.tool_calls,
        vec![ToolCall::function("call_a", "skills_list", "{}")]
    );
    let usage = completion.usage.unwrap();
    assert_eq!((usage.prompt_tokens, usage.cached_tokens), (500, Some(384)));
    let expected = (116.0 * 2.0 + 384.0 * 0.5 + 20.0 * 8.0) / 1e6;
    assert!(
        (usage.cost_usd.unwrap() - expected).abs() < 1e-12,
        "{usage:?}"
    );

    request.messages.push(completion.to_message());
    request
        .messages
        .push(ChatMessage::tool_result("call_a", "{\"success\":true}"));
    let (result, _) = run(client.as_ref(), &request).await;
    assert_eq!(result.unwrap().content, "done");

    let sent = server.model_requests();
    assert_eq!(sent[0].path, "/v1/responses");
    assert_eq!(sent[0].header("authorization"), None);
    for req in &sent {
        assert_eq!(req.body["store"], false);
        assert_eq!(req.body["prompt_cache_key"], "sess-7");
        assert_eq!(req.body["instructions"], "You are a test.");
    }
    let input = sent[1].body["input"].as_array().unwrap();
    assert_eq!(input[1]["type"], "reasoning");
    assert_eq!(input[1]["encrypted_content"], "enc:plan");
    assert_eq!(input[2]["type"], "function_call");
    assert_eq!(input[3]["type"], "function_call_output");
    check_invariants(&sent).unwrap();
}
