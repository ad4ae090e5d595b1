//! `knack run --json`'s `tool_call_output`: a long result arrives as a
//! shortened JSON object that still parses, while the model gets all of it.

use serde_json::Value;
use test_support::ScriptedReply;

use super::common::{Env, mock, run_cmd, success};

#[test]
fn a_long_tool_result_is_previewed_as_valid_json_and_sent_whole() {
    let env = Env::new();
    let lines: String = (1..=400)
        .map(|i| format!("line {i}: \"quoted\" text\n"))
        .collect();
    std::fs::write(env.cwd.path().join("long.txt"), &lines).unwrap();
    let server = mock();
    server.enqueue(ScriptedReply::tool_calls([(
        "c1",
        "read_file",
        r#"{"path": "long.txt"}"#,
    )]));
    server.enqueue(ScriptedReply::text("It is long."));

    let out = success(run_cmd(&env, &server).args(["run", "--json", "Read long.txt"]));
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let output = events
        .iter()
        .find(|e| e["type"] == "tool_call_output")
        .and_then(|e| e["output"].as_str())
        .expect("a tool_call_output event");
    assert!(
        output.chars().count() <= agent_loop::tool_preview::PREVIEW_CHARS,
        "{}",
        output.chars().count()
    );
    let preview: Value = serde_json::from_str(output).expect("the preview is valid JSON");
    assert_eq!(preview["success"], true);
    assert_eq!(preview["total_lines"], 400);
    let content = preview["content"].as_str().unwrap();
    let (kept, more) = agent_loop::tool_preview::split_cut(content);
    assert!(kept.contains("line 1: \"quoted\" text"), "{kept}");
    assert!(more.is_some_and(|n| n > 0), "{content}");

    // The model got the whole result, not the preview.
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    let sent = requests[1]
        .messages()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_owned();
    let sent: Value = serde_json::from_str(&sent).unwrap();
    let whole = sent["content"].as_str().unwrap();
    assert!(whole.contains("line 400: \"quoted\" text"), "{whole}");
    assert!(
        whole.starts_with(kept),
        "the preview is the start of the result"
    );
}
