//! What the client puts on the wire, checked on the requests the mock captured.

use agent_loop::model::{
    ChatCompletionsClient, ChatMessage, RequestPurpose, ToolCall, freeze_tools,
};
use pretty_assertions::assert_eq;
use serde_json::json;
use test_support::{MockModelServer, Purpose, ScriptedReply, check_invariants};

use super::{client, request, run, settings};

#[tokio::test]
async fn headers_and_body_follow_the_contract() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue_for(Purpose::Review, ScriptedReply::text("nothing to save"));
    let tools = freeze_tools(&[json!({"type": "function", "function": {
        "name": "skills_list", "description": "List skills",
        "parameters": {"type": "object", "properties": {"category": {"type": "string"}}}}})])
    .unwrap();
    let mut review = request();
    review.purpose = RequestPurpose::Review;
    review.session_id = "sess-42".into();
    review.tools = tools.clone();
    let (result, _) = run(&client(&server.base_url(), 0), &review).await;
    assert_eq!(result.unwrap().content, "nothing to save");

    let captured = server.chat_requests();
    assert_eq!(captured.len(), 1);
    let req = &captured[0];
    assert_eq!(req.method, "POST");
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.purpose(), Some("review"));
    assert_eq!(req.session(), Some("sess-42"));
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(req.header("authorization"), None);
    assert_eq!(req.body["model"], "mock-model");
    assert_eq!(req.body["stream"], true);
    assert_eq!(req.body["stream_options"], json!({"include_usage": true}));
    assert_eq!(
        req.body["messages"],
        json!([{"role": "system", "content": "You are a test."}, {"role": "user", "content": "hello"}])
    );
    // The frozen tool bytes appear verbatim.
    let tools_bytes = tools.unwrap().get().to_owned();
    assert!(
        req.raw_body.contains(&format!("\"tools\":{tools_bytes}")),
        "{}",
        req.raw_body
    );
}

#[tokio::test]
async fn the_api_key_is_sent_as_a_bearer_token_only_when_given() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(ScriptedReply::text("a"));
    let mut with_key = settings(&server.base_url(), 0);
    with_key.api_key = Some("sk-test-123".into());
    let client = ChatCompletionsClient::new(with_key).unwrap();
    let (result, _) = run(&client, &request()).await;
    result.unwrap();
    assert_eq!(
        server.chat_requests()[0].header("authorization"),
        Some("Bearer sk-test-123")
    );
}

#[tokio::test]
async fn tools_are_omitted_when_there_are_none() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(ScriptedReply::text("a"));
    let (result, _) = run(&client(&server.base_url(), 0), &request()).await;
    result.unwrap();
    assert!(server.chat_requests()[0].body.get("tools").is_none());
}

#[tokio::test]
async fn a_two_round_conversation_keeps_the_invariants_across_retries() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(ScriptedReply::tool_calls([("call_1", "skills_list", "{}")]));
    server.enqueue(ScriptedReply::status(503));
    server.enqueue(ScriptedReply::text("You have no skills yet."));
    let client = client(&server.base_url(), 2);
    let mut request = request();
    request.tools =
        freeze_tools(&[json!({"type": "function", "function": {"name": "skills_list"}})]).unwrap();

    let (first, _) = run(&client, &request).await;
    let first = first.unwrap();
    assert_eq!(
        first.tool_calls,
        vec![ToolCall::function("call_1", "skills_list", "{}")]
    );
    request.messages.push(first.to_message());
    request.messages.push(ChatMessage::tool_result(
        "call_1",
        r#"{"success":true,"count":0,"skills":[]}"#,
    ));
    let (second, _) = run(&client, &request).await;
    assert_eq!(second.unwrap().content, "You have no skills yet.");

    let captured = server.chat_requests();
    assert_eq!(captured.len(), 3);
    assert_eq!(check_invariants(&captured), Ok(()));
    // The retried request is byte-for-byte the same request.
    assert_eq!(captured[1].raw_body, captured[2].raw_body);
    assert_eq!(captured[2].messages().len(), 4);
}
