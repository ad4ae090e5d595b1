//! What the mock model server says back to one request, and how it renders as SSE frames.
//! Builders cover the shapes real OpenAI-compatible servers produce, including broken ones.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// One scripted answer to one `/chat/completions` request.
///
/// A reply is either a status error (`status` set) or a streamed completion
/// made of optional reasoning, text and tool calls. The struct also
/// deserializes from the JSON script format of the `mock-model-server` binary,
/// so every field has a plain serde shape.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScriptedReply {
    /// An HTTP error status instead of a stream.
    pub status: Option<u16>,
    /// `Retry-After` header (seconds) sent with a status error.
    pub retry_after: Option<u64>,
    /// The `error.message` of a status error's JSON body.
    pub error_message: Option<String>,
    pub text: Option<String>,
    /// Streamed as `delta.reasoning_content`, a field local servers add.
    pub reasoning: Option<String>,
    pub tool_calls: Vec<ScriptedToolCall>,
    pub usage: Option<ScriptedUsage>,
    /// Overrides the `finish_reason` (default `stop`, or `tool_calls`).
    pub finish_reason: Option<String>,
    /// Send only this many SSE frames, then close the socket without `[DONE]`.
    pub cut_after_chunks: Option<usize>,
    /// Send only this many SSE frames, then keep the connection open and
    /// silent until the server is dropped: a stall no timeout can outwait,
    /// so timeout tests do not depend on how fast the machine is.
    pub stall_after_chunks: Option<usize>,
    /// Pause before each SSE frame.
    pub chunk_delay_ms: u64,
    /// Pause before the response headers.
    pub first_byte_delay_ms: u64,
    /// Insert a frame whose data is not JSON after the first frame.
    pub invalid_json_chunk: bool,
    /// Insert a frame with `"choices": []` after the first frame.
    pub empty_choices_chunk: bool,
    /// Send exactly these `data:` payloads (then `[DONE]`) instead of rendering.
    pub raw_frames: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptedToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ScriptedUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: Option<u64>,
}

/// How many pieces a text or an argument string is streamed in.
const PIECES: usize = 3;

impl ScriptedReply {
    /// A streamed assistant text, split into several content deltas.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    /// Streamed tool calls `(id, name, arguments)`, each with its own `index`
    /// and its arguments split across several chunks.
    pub fn tool_calls<I, S1, S2, S3>(calls: I) -> Self
    where
        I: IntoIterator<Item = (S1, S2, S3)>,
        S1: Into<String>,
        S2: Into<String>,
        S3: Into<String>,
    {
        Self::default().with_tool_calls(calls)
    }

    /// An HTTP error with a JSON body `{"error": {"message": ...}}`.
    pub fn status(code: u16) -> Self {
        Self {
            status: Some(code),
            ..Self::default()
        }
    }

    /// Exactly these `data:` payloads, followed by `[DONE]`.
    pub fn raw_frames<I: IntoIterator<Item = S>, S: Into<String>>(frames: I) -> Self {
        Self {
            raw_frames: Some(frames.into_iter().map(Into::into).collect()),
            ..Self::default()
        }
    }

    pub fn with_tool_calls<I, S1, S2, S3>(mut self, calls: I) -> Self
    where
        I: IntoIterator<Item = (S1, S2, S3)>,
        S1: Into<String>,
        S2: Into<String>,
        S3: Into<String>,
    {
        self.tool_calls.extend(
            calls
                .into_iter()
                .map(|(id, name, arguments)| ScriptedToolCall {
                    id: id.into(),
                    name: name.into(),
                    arguments: arguments.into(),
                }),
        );
        self
    }

    pub fn with_reasoning(mut self, reasoning: impl Into<String>) -> Self {
        self.reasoning = Some(reasoning.into());
        self
    }

    /// A final chunk with `choices: []` and usage, as `include_usage` asks for.
    pub fn with_usage(mut self, prompt: u64, completion: u64, cached: u64) -> Self {
        self.usage = Some(ScriptedUsage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            cached_tokens: Some(cached),
        });
        self
    }

    pub fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs);
        self
    }

    pub fn with_error_message(mut self, message: impl Into<String>) -> Self {
        self.error_message = Some(message.into());
        self
    }

    pub fn finish_reason(mut self, reason: impl Into<String>) -> Self {
        self.finish_reason = Some(reason.into());
        self
    }

    pub fn cut_after_chunks(mut self, frames: usize) -> Self {
        self.cut_after_chunks = Some(frames);
        self
    }

    pub fn stall_after_chunks(mut self, frames: usize) -> Self {
        self.stall_after_chunks = Some(frames);
        self
    }

    pub fn chunk_delay_ms(mut self, ms: u64) -> Self {
        self.chunk_delay_ms = ms;
        self
    }

    pub fn first_byte_delay_ms(mut self, ms: u64) -> Self {
        self.first_byte_delay_ms = ms;
        self
    }

    pub fn with_invalid_json_chunk(mut self) -> Self {
        self.invalid_json_chunk = true;
        self
    }

    pub fn with_empty_choices_chunk(mut self) -> Self {
        self.empty_choices_chunk = true;
        self
    }

    /// The `data:` payloads of the stream, in order, ending with `[DONE]`.
    pub fn frames(&self) -> Vec<String> {
        let mut frames = match &self.raw_frames {
            Some(raw) => raw.clone(),
            None => self.rendered_frames(),
        };
        frames.push("[DONE]".to_owned());
        frames
    }

    fn rendered_frames(&self) -> Vec<String> {
        let mut deltas: Vec<Value> = Vec::new();
        if let Some(reasoning) = &self.reasoning {
            deltas.extend(
                split_pieces(reasoning)
                    .into_iter()
                    .map(|piece| json!({ "reasoning_content": piece })),
            );
        }
        if let Some(text) = &self.text {
            deltas.extend(
                split_pieces(text)
                    .into_iter()
                    .map(|piece| json!({ "content": piece })),
            );
        }
        for (index, call) in self.tool_calls.iter().enumerate() {
            deltas.push(json!({ "tool_calls": [{
                "index": index,
                "id": call.id,
                "type": "function",
                "function": { "name": call.name, "arguments": "" },
            }]}));
            deltas.extend(split_pieces(&call.arguments).into_iter().map(|piece| {
                json!({ "tool_calls": [{ "index": index, "function": { "arguments": piece } }] })
            }));
        }
        if deltas.is_empty() {
            deltas.push(json!({ "content": "" }));
        }
        if let Some(Value::Object(first)) = deltas.first_mut() {
            first.insert("role".into(), json!("assistant"));
        }

        let mut frames: Vec<String> = deltas
            .into_iter()
            .map(|delta| chunk(json!([{ "index": 0, "delta": delta, "finish_reason": null }])))
            .collect();
        let finish = self.finish_reason.clone().unwrap_or_else(|| {
            if self.tool_calls.is_empty() {
                "stop".into()
            } else {
                "tool_calls".into()
            }
        });
        frames.push(chunk(
            json!([{ "index": 0, "delta": {}, "finish_reason": finish }]),
        ));
        if let Some(usage) = self.usage {
            let mut usage_chunk = chunk_value(json!([]));
            usage_chunk["usage"] = json!({
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "total_tokens": usage.prompt_tokens + usage.completion_tokens,
                "prompt_tokens_details": { "cached_tokens": usage.cached_tokens },
            });
            frames.push(usage_chunk.to_string());
        }
        if self.empty_choices_chunk {
            frames.insert(1, chunk(json!([])));
        }
        if self.invalid_json_chunk {
            frames.insert(
                1,
                r#"{"id":"chatcmpl-mock","choices":[{"delta":"#.to_owned(),
            );
        }
        frames
    }
}

fn chunk_value(choices: Value) -> Value {
    json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "mock-model",
        // A field no client asked for: parsers must tolerate it.
        "system_fingerprint": "fp_mock",
        "choices": choices,
    })
}

fn chunk(choices: Value) -> String {
    chunk_value(choices).to_string()
}

/// Splits into up to [`PIECES`] non-empty pieces on char boundaries; an empty
/// string stays one empty piece so the field still appears on the wire.
fn split_pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    let size = chars.len().div_ceil(PIECES);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(frames: &[String]) -> Vec<Value> {
        frames
            .iter()
            .filter(|f| f.as_str() != "[DONE]")
            .map(|f| serde_json::from_str(f).unwrap())
            .collect()
    }

    #[test]
    fn text_streams_in_several_pieces_that_join_back() {
        let frames = ScriptedReply::text("Hello there, world").frames();
        assert_eq!(frames.last().map(String::as_str), Some("[DONE]"));
        let chunks = parsed(&frames);
        let pieces: Vec<&str> = chunks
            .iter()
            .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert!(pieces.len() >= 3, "{pieces:?}");
        assert_eq!(pieces.concat(), "Hello there, world");
        assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
        let last = &chunks[chunks.len() - 1];
        assert_eq!(last["choices"][0]["finish_reason"], "stop");
    }

    #[test]
    fn tool_call_arguments_are_split_and_keyed_by_index() {
        let reply = ScriptedReply::tool_calls([
            ("call_1", "skills_list", r#"{"category":"devops"}"#),
            ("call_2", "skill_view", r#"{"name":"k8s"}"#),
        ])
        .with_usage(10, 5, 4);
        let chunks = parsed(&reply.frames());
        let mut args = [String::new(), String::new()];
        let mut argument_chunks = 0;
        for c in &chunks {
            for tc in c["choices"][0]["delta"]["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let index = tc["index"].as_u64().unwrap() as usize;
                let piece = tc["function"]["arguments"].as_str().unwrap();
                if !piece.is_empty() {
                    argument_chunks += 1;
                }
                args[index].push_str(piece);
            }
        }
        assert_eq!(args[0], r#"{"category":"devops"}"#);
        assert_eq!(args[1], r#"{"name":"k8s"}"#);
        assert!(argument_chunks >= 4);
        let usage = chunks.last().unwrap();
        assert_eq!(usage["choices"], json!([]));
        assert_eq!(usage["usage"]["prompt_tokens_details"]["cached_tokens"], 4);
        assert_eq!(
            chunks[chunks.len() - 2]["choices"][0]["finish_reason"],
            "tool_calls"
        );
    }

    #[test]
    fn broken_frames_are_inserted_early() {
        let frames = ScriptedReply::text("abc")
            .with_invalid_json_chunk()
            .with_empty_choices_chunk()
            .frames();
        assert!(serde_json::from_str::<Value>(&frames[1]).is_err());
        let empty: Value = serde_json::from_str(&frames[2]).unwrap();
        assert_eq!(empty["choices"], json!([]));
    }

    #[test]
    fn script_entries_deserialize_from_plain_json() {
        let reply: ScriptedReply =
            serde_json::from_str(r#"{"status": 429, "retry_after": 2}"#).unwrap();
        assert_eq!(reply, ScriptedReply::status(429).retry_after(2));
        let bad = serde_json::from_str::<ScriptedReply>(r#"{"txt": "typo"}"#);
        assert!(bad.is_err());
    }
}
