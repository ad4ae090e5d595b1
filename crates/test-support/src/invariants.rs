//! Rules every request knack sends must obey on every wire, checked over a whole conversation.
//! Tool calls pair with exactly one result, and a session's frozen prefix never changes.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::server::{CapturedRequest, ModelWire};

/// The parts of a request body that must not change within a session, as the exact bytes sent.
#[derive(Deserialize)]
struct FrozenParts<'a> {
    #[serde(borrow, default)]
    messages: Vec<&'a RawValue>,
    /// Anthropic's system blocks.
    #[serde(borrow, default)]
    system: Option<&'a RawValue>,
    /// The Responses API's system prompt.
    #[serde(borrow, default)]
    instructions: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tools: Option<&'a RawValue>,
}

/// Anthropic accepts at most this many `cache_control` markers in a request.
const MAX_CACHE_BREAKPOINTS: usize = 4;

/// Checks every model request in `requests`. On `/chat/completions`:
///
/// - every message has a known role (`system`, `user`, `assistant`, `tool`),
///   the system prompt is `messages[0]` and the only system message, user and
///   system messages carry content, and assistant messages carry content or
///   tool calls;
/// - each assistant tool call is answered by exactly one `tool` message with
///   its id, and the answers follow their call directly (only other answers
///   in between), as OpenAI-compatible servers require;
/// - no `tool` message answers a call that was never made;
/// - within one `X-Knack-Session`, every request's `messages[0]` and `tools`
///   are byte-identical to the first request's.
///
/// On `/messages` (Anthropic): roles alternate from `user`; every `tool_use`
/// is answered by a `tool_result` at the start of the next user message and
/// every result answers a call of the assistant message before it; thinking
/// blocks carry their signature; at most four `cache_control` markers; and
/// `system` and `tools` are byte-identical within a session.
///
/// On `/chat/completions`, at most four `cache_control` markers (routers
/// pass them to Anthropic, which refuses more).
///
/// On `/responses`: `store` is false, `prompt_cache_key` (when sent) is the session id,
/// the system prompt is `instructions` (no system or developer items), every
/// `function_call` gets exactly one later `function_call_output` and no
/// output is orphaned, reasoning items carry their encrypted content; and
/// `instructions` and `tools` are byte-identical within a session.
///
/// Returns every violation found, one per line. The mock server runs the same
/// checks on each request as it arrives (see [`InvariantChecker`]).
pub fn check_invariants(requests: &[CapturedRequest]) -> Result<(), String> {
    let mut checker = InvariantChecker::default();
    let problems: Vec<String> = requests
        .iter()
        .enumerate()
        .flat_map(|(number, request)| checker.check(number, request))
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The invariants of [`check_invariants`], checked one request at a time: it
/// remembers each session's first request so later ones can be compared to it.
#[derive(Debug, Default)]
pub struct InvariantChecker {
    /// Session id -> (request number, `messages[0]` bytes, `tools` bytes).
    first_in_session: BTreeMap<String, (usize, String, Option<String>)>,
}

impl InvariantChecker {
    /// Checks request number `number` (its place among all requests the
    /// server received, used in the messages); returns its violations.
    /// Requests other than `/chat/completions` have none.
    pub fn check(&mut self, number: usize, request: &CapturedRequest) -> Vec<String> {
        let mut problems = Vec::new();
        let Some(wire) = request.wire() else {
            return problems;
        };
        let label = format!("request #{number}");
        if wire == ModelWire::Responses {
            check_responses(&label, request, &mut problems);
        } else {
            let Some(messages) = request.body.get("messages").and_then(Value::as_array) else {
                problems.push(format!("{label}: body has no `messages` array"));
                return problems;
            };
            if wire == ModelWire::Chat {
                check_roles(&label, messages, &mut problems);
                check_tool_pairing(&label, messages, &mut problems);
                let markers = count_key(&request.body, "cache_control");
                if markers > 4 {
                    problems.push(format!(
                        "{label}: {markers} cache_control markers (at most 4)"
                    ));
                }
            } else {
                check_anthropic(&label, &request.body, messages, &mut problems);
            }
        }

        let parts = match serde_json::from_str::<FrozenParts<'_>>(&request.raw_body) {
            Ok(parts) => parts,
            Err(err) => {
                problems.push(format!("{label}: cannot read body: {err}"));
                return problems;
            }
        };
        let system = match wire {
            ModelWire::Chat => parts.messages.first().copied(),
            ModelWire::Anthropic => parts.system,
            ModelWire::Responses => parts.instructions,
        };
        let Some(system) = system else {
            problems.push(format!("{label}: the request carries no system prompt"));
            return problems;
        };
        let system = system.get().to_owned();
        let tools = parts.tools.map(|t| t.get().to_owned());
        let session = request.session().unwrap_or("").to_owned();
        match self.first_in_session.get(&session) {
            None => {
                self.first_in_session
                    .insert(session, (number, system, tools));
            }
            Some((first, first_system, first_tools)) => {
                if *first_system != system {
                    let part = match wire {
                        ModelWire::Chat => "messages[0]",
                        ModelWire::Anthropic => "system",
                        ModelWire::Responses => "instructions",
                    };
                    problems.push(format!(
                        "{label}: {part} differs from request #{first} of session '{session}'"
                    ));
                }
                if *first_tools != tools {
                    problems.push(format!(
                        "{label}: tools differ from request #{first} of session '{session}'"
                    ));
                }
            }
        }
        problems
    }
}

/// Anthropic's rules for one request body.
fn check_anthropic(label: &str, body: &Value, messages: &[Value], problems: &mut Vec<String>) {
    let markers = count_key(body, "cache_control");
    if markers > MAX_CACHE_BREAKPOINTS {
        problems.push(format!(
            "{label}: {markers} cache_control markers (at most {MAX_CACHE_BREAKPOINTS})"
        ));
    }
    // Calls of the previous assistant message, still waiting for their result.
    let mut waiting: Vec<String> = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("");
        let expected = if index % 2 == 0 { "user" } else { "assistant" };
        if role != expected {
            problems.push(format!(
                "{label}: messages[{index}] is '{role}', expected '{expected}' (roles alternate from user)"
            ));
        }
        let blocks = match message.get("content") {
            Some(Value::Array(blocks)) if !blocks.is_empty() => blocks.as_slice(),
            Some(Value::String(text)) if !text.is_empty() => &[],
            _ => {
                problems.push(format!("{label}: messages[{index}] has no content"));
                &[]
            }
        };
        let kind = |block: &Value| {
            block
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        if role == "user" {
            let mut results_done = false;
            for block in blocks {
                if kind(block) != "tool_result" {
                    results_done = true;
                    continue;
                }
                let id = block
                    .get("tool_use_id")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if results_done {
                    problems.push(format!(
                        "{label}: messages[{index}] has tool_result '{id}' after other content"
                    ));
                }
                match waiting.iter().position(|w| w == id) {
                    Some(pos) => {
                        waiting.remove(pos);
                    }
                    None => problems.push(format!(
                        "{label}: messages[{index}] has a tool_result for '{id}', which the assistant message before it did not call"
                    )),
                }
            }
        }
        for id in waiting.drain(..) {
            problems.push(format!(
                "{label}: tool_use '{id}' has no tool_result in messages[{index}]"
            ));
        }
        if role == "assistant" {
            for block in blocks {
                match kind(block).as_str() {
                    "tool_use" => waiting.push(
                        block
                            .get("id")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                    ),
                    "thinking" => {
                        let signed = block
                            .get("signature")
                            .and_then(Value::as_str)
                            .is_some_and(|s| !s.is_empty());
                        if !signed {
                            problems.push(format!(
                                "{label}: messages[{index}] has a thinking block without its signature"
                            ));
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    for id in waiting {
        problems.push(format!(
            "{label}: tool_use '{id}' has no result (conversation ends first)"
        ));
    }
}

/// The Responses API's rules for one request.
fn check_responses(label: &str, request: &CapturedRequest, problems: &mut Vec<String>) {
    let body = &request.body;
    if body.get("store") != Some(&Value::Bool(false)) {
        problems.push(format!("{label}: `store` is not false"));
    }
    // A profile may turn the key off (`prompt_cache_key: false`); when it is
    // sent, it must route the session to one cache.
    if let Some(key) = body.get("prompt_cache_key")
        && key.as_str() != request.session()
    {
        problems.push(format!(
            "{label}: prompt_cache_key {key} is not the session id {:?}",
            request.session()
        ));
    }
    let Some(items) = body.get("input").and_then(Value::as_array) else {
        problems.push(format!("{label}: body has no `input` array"));
        return;
    };
    let mut open: Vec<String> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    for (index, item) in items.iter().enumerate() {
        let kind = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        let call_id = item
            .get("call_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        match kind {
            "function_call" => {
                if answered.contains(&call_id) || open.contains(&call_id) {
                    problems.push(format!(
                        "{label}: input[{index}] repeats call id '{call_id}'"
                    ));
                }
                open.push(call_id);
            }
            "function_call_output" => match open.iter().position(|id| *id == call_id) {
                Some(pos) => {
                    open.remove(pos);
                    answered.insert(call_id);
                }
                None if answered.contains(&call_id) => problems.push(format!(
                    "{label}: input[{index}] is a second output for call '{call_id}'"
                )),
                None => problems.push(format!(
                    "{label}: input[{index}] answers call '{call_id}', which was never made"
                )),
            },
            "reasoning" if !item.get("encrypted_content").is_some_and(Value::is_string) => {
                problems.push(format!(
                    "{label}: input[{index}] is a reasoning item without encrypted_content (nothing is stored)"
                ));
            }
            "message" => {
                let role = item.get("role").and_then(Value::as_str).unwrap_or("");
                if !matches!(role, "user" | "assistant") {
                    problems.push(format!(
                        "{label}: input[{index}] has role '{role}'; the system prompt belongs in instructions"
                    ));
                }
            }
            _ => {}
        }
    }
    for id in open {
        problems.push(format!("{label}: call '{id}' has no output"));
    }
}

/// How many objects anywhere in `value` have `key`.
fn count_key(value: &Value, key: &str) -> usize {
    match value {
        Value::Object(map) => {
            usize::from(map.contains_key(key))
                + map.values().map(|v| count_key(v, key)).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(|v| count_key(v, key)).sum(),
        _ => 0,
    }
}

/// Roles OpenAI-compatible servers accept, and the shape each must have.
fn check_roles(label: &str, messages: &[Value], problems: &mut Vec<String>) {
    for (index, message) in messages.iter().enumerate() {
        let Some(role) = message.get("role").and_then(Value::as_str) else {
            problems.push(format!("{label}: messages[{index}] has no role"));
            continue;
        };
        let has = |field: &str| message.get(field).is_some_and(|v| !v.is_null());
        match role {
            // knack's system prompt is frozen at the top; anything added later
            // enters as a user message, so a second system message is a bug.
            "system" if index != 0 => problems.push(format!(
                "{label}: messages[{index}] is a system message after messages[0]"
            )),
            "system" | "user" if !has("content") => problems.push(format!(
                "{label}: messages[{index}] ({role}) has no content"
            )),
            "assistant" if !has("content") && !has("tool_calls") => problems.push(format!(
                "{label}: messages[{index}] (assistant) has neither content nor tool_calls"
            )),
            "system" | "user" | "assistant" | "tool" => {}
            other => problems.push(format!(
                "{label}: messages[{index}] has an unknown role '{other}'"
            )),
        }
        if index == 0 && role != "system" {
            problems.push(format!(
                "{label}: messages[0] is a {role} message, not the system prompt"
            ));
        }
    }
}

fn check_tool_pairing(label: &str, messages: &[Value], problems: &mut Vec<String>) {
    let mut called: HashSet<String> = HashSet::new();
    let mut answered: HashMap<String, usize> = HashMap::new();
    // Calls of the latest assistant message still waiting for their result.
    let mut waiting: Vec<String> = Vec::new();

    for (index, message) in messages.iter().enumerate() {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("");
        if role == "tool" {
            let id = message
                .get("tool_call_id")
                .and_then(Value::as_str)
                .unwrap_or("");
            if let Some(pos) = waiting.iter().position(|w| w == id) {
                waiting.remove(pos);
                answered.insert(id.to_owned(), index);
            } else if let Some(first) = answered.get(id) {
                problems.push(format!(
                    "{label}: messages[{index}] is a second result for call '{id}' (first at messages[{first}])"
                ));
            } else if called.contains(id) {
                problems.push(format!(
                    "{label}: messages[{index}] answers call '{id}' but not directly after the call"
                ));
            } else {
                problems.push(format!(
                    "{label}: messages[{index}] is a tool result for unknown call '{id}'"
                ));
            }
            continue;
        }
        for id in waiting.drain(..) {
            problems.push(format!(
                "{label}: call '{id}' has no result before messages[{index}]"
            ));
        }
        if role != "assistant" {
            continue;
        }
        let calls = message
            .get("tool_calls")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        for call in calls {
            let id = call.get("id").and_then(Value::as_str).unwrap_or("");
            if !called.insert(id.to_owned()) {
                problems.push(format!(
                    "{label}: messages[{index}] repeats tool call id '{id}'"
                ));
            }
            waiting.push(id.to_owned());
        }
    }
    for id in waiting {
        problems.push(format!(
            "{label}: call '{id}' has no result (conversation ends first)"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(session: &str, body: Value) -> CapturedRequest {
        let raw_body = body.to_string();
        CapturedRequest {
            method: "POST".into(),
            path: "/v1/chat/completions".into(),
            headers: [("x-knack-session".to_owned(), session.to_owned())].into(),
            body,
            raw_body,
        }
    }

    fn call(id: &str) -> Value {
        json!({"id": id, "type": "function", "function": {"name": "skills_list", "arguments": "{}"}})
    }

    fn system() -> Value {
        json!({"role": "system", "content": "frozen"})
    }

    #[test]
    fn a_well_formed_conversation_passes() {
        let body = json!({"messages": [
            system(),
            {"role": "user", "content": "hi"},
            {"role": "assistant", "tool_calls": [call("a"), call("b")]},
            {"role": "tool", "tool_call_id": "b", "content": "{}"},
            {"role": "tool", "tool_call_id": "a", "content": "{}"},
            {"role": "assistant", "content": "done"},
            {"role": "user", "content": "again"},
        ], "tools": [{"type": "function"}]});
        assert_eq!(check_invariants(&[request("s", body)]), Ok(()));
    }

    #[test]
    fn missing_duplicate_orphan_and_late_results_are_reported() {
        let body = json!({"messages": [
            system(),
            {"role": "assistant", "tool_calls": [call("a"), call("b")]},
            {"role": "tool", "tool_call_id": "a", "content": "{}"},
            {"role": "tool", "tool_call_id": "a", "content": "{}"},
            {"role": "user", "content": "note"},
            {"role": "tool", "tool_call_id": "b", "content": "{}"},
            {"role": "tool", "tool_call_id": "zzz", "content": "{}"},
            {"role": "assistant", "tool_calls": [call("c")]},
        ]});
        let report = check_invariants(&[request("s", body)]).unwrap_err();
        assert!(report.contains("second result for call 'a'"), "{report}");
        assert!(
            report.contains("call 'b' has no result before messages[4]"),
            "{report}"
        );
        assert!(
            report.contains("answers call 'b' but not directly"),
            "{report}"
        );
        assert!(report.contains("unknown call 'zzz'"), "{report}");
        assert!(report.contains("call 'c' has no result"), "{report}");
        assert_eq!(report.lines().count(), 5, "{report}");
    }

    #[test]
    fn a_changed_system_prompt_or_tools_in_one_session_is_reported() {
        let first = request("s1", json!({"messages": [system()], "tools": [1]}));
        let same = request(
            "s1",
            json!({"messages": [system(), {"role": "user", "content": "x"}], "tools": [1]}),
        );
        let other_session = request(
            "s2",
            json!({"messages": [{"role": "system", "content": "other"}]}),
        );
        assert_eq!(
            check_invariants(&[first.clone(), same, other_session]),
            Ok(())
        );

        let changed_prompt = request(
            "s1",
            json!({"messages": [{"role": "system", "content": "changed"}], "tools": [1]}),
        );
        let dropped_tools = request("s1", json!({"messages": [system()]}));
        let report = check_invariants(&[first, changed_prompt, dropped_tools]).unwrap_err();
        assert!(
            report.contains("request #1: messages[0] differs from request #0"),
            "{report}"
        );
        assert!(
            report.contains("request #2: tools differ from request #0"),
            "{report}"
        );
    }

    #[test]
    fn unknown_roles_misplaced_system_messages_and_empty_messages_are_reported() {
        let body = json!({"messages": [
            {"role": "user", "content": "no system prompt first"},
            {"role": "system", "content": "late"},
            {"role": "developer", "content": "?"},
            {"content": "no role"},
            {"role": "assistant"},
            {"role": "user", "content": null},
        ]});
        let report = check_invariants(&[request("s", body)]).unwrap_err();
        for expected in [
            "messages[0] is a user message, not the system prompt",
            "messages[1] is a system message after messages[0]",
            "messages[2] has an unknown role 'developer'",
            "messages[3] has no role",
            "messages[4] (assistant) has neither content nor tool_calls",
            "messages[5] (user) has no content",
        ] {
            assert!(report.contains(expected), "{expected}: {report}");
        }
        assert_eq!(report.lines().count(), 6, "{report}");
    }

    #[test]
    fn the_checker_compares_each_request_with_its_sessions_first() {
        let mut checker = InvariantChecker::default();
        let first = request("s", json!({"messages": [system()], "tools": [1]}));
        let changed = request(
            "s",
            json!({"messages": [{"role": "system", "content": "x"}], "tools": [1]}),
        );
        assert!(checker.check(0, &first).is_empty());
        assert!(checker.check(1, &first).is_empty());
        let problems = checker.check(2, &changed);
        assert_eq!(
            problems,
            ["request #2: messages[0] differs from request #0 of session 's'"]
        );
    }

    fn on(path: &str, session: &str, body: Value) -> CapturedRequest {
        CapturedRequest {
            path: path.into(),
            ..request(session, body)
        }
    }

    #[test]
    fn anthropic_pairing_signatures_markers_and_frozen_system() {
        let mark = json!({"type": "ephemeral"});
        let good = json!({"system": [{"type": "text", "text": "s", "cache_control": mark}],
        "tools": [{"name": "t"}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "x", "signature": "sig"},
                {"type": "tool_use", "id": "a", "name": "t", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "ok"},
                                          {"type": "text", "text": "note", "cache_control": mark}]},
        ]});
        assert_eq!(
            check_invariants(&[on("/v1/messages", "s", good.clone())]),
            Ok(())
        );

        let bad = json!({"system": [{"type": "text", "text": "other", "cache_control": mark}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": mark}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "x", "cache_control": mark},
                {"type": "tool_use", "id": "a", "name": "t", "input": {}, "cache_control": mark}]},
            {"role": "user", "content": [{"type": "text", "text": "first", "cache_control": mark},
                                          {"type": "tool_result", "tool_use_id": "a", "content": "ok"},
                                          {"type": "tool_result", "tool_use_id": "zz", "content": "ok"}]},
            {"role": "user", "content": [{"type": "text", "text": "again"}]},
        ]});
        let report =
            check_invariants(&[on("/v1/messages", "s", good), on("/v1/messages", "s", bad)])
                .unwrap_err();
        for expected in [
            "5 cache_control markers",
            "thinking block without its signature",
            "tool_result 'a' after other content",
            "tool_result for 'zz'",
            "messages[3] is 'user', expected 'assistant'",
            "system differs from request #0",
            "tools differ from request #0",
        ] {
            assert!(report.contains(expected), "{expected}:\n{report}");
        }
    }

    #[test]
    fn responses_statelessness_cache_key_and_call_pairing() {
        let good = json!({"instructions": "s", "store": false, "prompt_cache_key": "s1",
        "input": [
            {"role": "user", "content": "hi"},
            {"type": "reasoning", "id": "rs", "encrypted_content": "e"},
            {"type": "function_call", "call_id": "a", "name": "t", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "a", "output": "ok"},
        ]});
        assert_eq!(check_invariants(&[on("/v1/responses", "s1", good)]), Ok(()));
        // A profile with `prompt_cache_key: false` sends none, which is fine.
        let keyless = json!({"instructions": "s", "store": false, "input": []});
        assert_eq!(
            check_invariants(&[on("/v1/responses", "s2", keyless)]),
            Ok(())
        );
        let bad = json!({"instructions": "s", "prompt_cache_key": "other",
        "input": [
            {"role": "developer", "content": "late system text"},
            {"type": "reasoning", "id": "rs"},
            {"type": "function_call", "call_id": "a", "name": "t", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "b", "output": "ok"},
        ]});
        let report = check_invariants(&[on("/v1/responses", "s1", bad)]).unwrap_err();
        for expected in [
            "`store` is not false",
            "prompt_cache_key",
            "role 'developer'",
            "without encrypted_content",
            "answers call 'b', which was never made",
            "call 'a' has no output",
        ] {
            assert!(report.contains(expected), "{expected}: {report}");
        }
    }

    #[test]
    fn byte_level_differences_count_even_when_the_json_is_equal() {
        let first = request("s", json!({"messages": [system()]}));
        let mut reordered = request("s", json!({"messages": [system()]}));
        reordered.raw_body = r#"{"messages":[{"content":"frozen","role":"system"}]}"#.into();
        let report = check_invariants(&[first, reordered]).unwrap_err();
        assert!(report.contains("messages[0] differs"), "{report}");
    }
}
