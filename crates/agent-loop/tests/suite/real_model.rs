//! The client against a real model server (llama.cpp's server with SmolLM2,
//! started by `../shared/tools/local-llm.sh start`). Ignored by default:
//! `cargo test -p agent-loop --test all -- --ignored real_model`
//! (`KNACK_REAL_MODEL_URL` overrides `http://127.0.0.1:8088/v1`).

use std::sync::Arc;

use agent_loop::model::{
    ChatCompletionsClient, ChatMessage, ChatRequest, ClientSettings, ModelClient, RequestPurpose,
    StreamUpdate, freeze_tools,
};
use serde_json::json;

use super::tool_env::ToolEnv;

fn client() -> ChatCompletionsClient {
    let url =
        std::env::var("KNACK_REAL_MODEL_URL").unwrap_or_else(|_| "http://127.0.0.1:8088/v1".into());
    ChatCompletionsClient::new(ClientSettings::new(url)).unwrap()
}

#[tokio::test]
#[ignore = "needs a real model server on 127.0.0.1 (see docs/agent.md)"]
async fn real_model_tool_call_round_trip_through_the_registry() {
    let env = ToolEnv::new();
    env.write(
        &env.home_path("skills/dev/git-basics/SKILL.md"),
        "---\nname: git-basics\ndescription: Use when committing with git\n---\n# git-basics\nUse `git status`, `git add`, then `git commit -m MSG`.\n",
    );
    // One small tool definition, as verified in the research notes: the tiny
    // model only emits a call reliably for this shape and a spelled-out prompt.
    // The call itself is dispatched by knack's real registry.
    let spec = json!({"type": "function", "function": {
        "name": "skill_view",
        "description": "Show the full text of a named skill document.",
        "parameters": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}});
    let tools = freeze_tools(&[spec]).unwrap();
    let mut messages = vec![
        ChatMessage::system(
            "You are an agent. Use the skill_view tool to read skills when the user asks about one.",
        ),
        ChatMessage::user(
            "Reply with exactly this and nothing else:\n<tool_call>\n{\"name\": \"skill_view\", \"arguments\": {\"name\": \"git-basics\"}}\n</tool_call>",
        ),
    ];
    let client = Arc::new(client());
    let mut pieces = 0usize;
    let first = client
        .stream_chat(
            &ChatRequest {
                model: "smollm2".into(),
                messages: messages.clone(),
                tools: tools.clone(),
                purpose: RequestPurpose::Turn,
                session_id: "real-model-test".into(),
            },
            &mut |u| {
                if matches!(
                    u,
                    StreamUpdate::ToolCallStarted { .. } | StreamUpdate::TextDelta(_)
                ) {
                    pieces += 1;
                }
            },
        )
        .await
        .unwrap();
    assert_eq!(first.tool_calls.len(), 1, "{first:?}");
    let call = &first.tool_calls[0];
    assert_eq!(call.function.name, "skill_view");
    let args: serde_json::Value = serde_json::from_str(&call.function.arguments).unwrap();
    assert_eq!(args, json!({"name": "git-basics"}));
    assert!(pieces >= 1);

    let reply = env
        .registry
        .dispatch(&call.function.name, &call.function.arguments, &env.ctx)
        .await
        .unwrap();
    assert!(reply.success(), "{}", reply.content());
    messages.push(first.to_message());
    messages.push(ChatMessage::tool_result(call.id.clone(), reply.content()));
    let second = client
        .stream_chat(
            &ChatRequest {
                model: "smollm2".into(),
                messages,
                tools,
                purpose: RequestPurpose::Turn,
                session_id: "real-model-test".into(),
            },
            &mut |_| {},
        )
        .await
        .unwrap();
    // The server accepted the tool result and answered (text or another call).
    assert!(
        !second.content.trim().is_empty() || !second.tool_calls.is_empty(),
        "{second:?}"
    );
    assert!(second.usage.is_some_and(|u| u.prompt_tokens > 0));
    eprintln!(
        "second reply: {:?} / {:?}",
        second.content, second.tool_calls
    );
}
