//! Turning a `tools/call` result into what the model reads: text joined, images, audio and
//! resources described in one line each, structured content kept as JSON, `isError` kept.
//!
//! The result is read as the protocol's JSON rather than the SDK's types, so a content kind
//! the SDK adds later still gets a line instead of breaking the call.

use serde_json::Value;

/// Most characters of text kept from one result; past it the head and tail are kept, so a
/// server that floods its output cannot fill the model's context.
pub const MAX_OUTPUT_CHARS: usize = 50_000;

/// One tool call's answer, ready for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// The server flagged the result as an error (`isError`).
    pub is_error: bool,
    /// Text blocks joined by newlines, other blocks as one line each.
    pub text: String,
    /// `structuredContent`, when the server sent one.
    pub structured: Option<Value>,
}

impl CallOutcome {
    /// Reads a `CallToolResult` in its wire form.
    pub fn from_wire(result: &Value) -> Self {
        let mut parts = Vec::new();
        for block in result
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            parts.push(describe_block(block));
        }
        let text = cap(&parts.join("\n"), MAX_OUTPUT_CHARS);
        Self {
            is_error: result.get("isError").and_then(Value::as_bool) == Some(true),
            text,
            structured: result
                .get("structuredContent")
                .filter(|v| !v.is_null())
                .cloned(),
        }
    }
}

fn describe_block(block: &Value) -> String {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    let text_of = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or("");
    match kind {
        "text" => text_of("text").to_owned(),
        "image" | "audio" => format!(
            "[{kind}: {}, {}]",
            mime_or_unknown(block),
            size(base64_len(text_of("data")))
        ),
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("?");
            let bytes = match (
                resource.get("text").and_then(Value::as_str),
                resource.get("blob").and_then(Value::as_str),
            ) {
                (Some(text), _) => text.len(),
                (None, Some(blob)) => base64_len(blob),
                (None, None) => 0,
            };
            format!(
                "[resource: {uri}, {}, {}]",
                mime_or_unknown(resource),
                size(bytes)
            )
        }
        "resource_link" => {
            let uri = text_of("uri");
            let mut line = format!("[resource link: {uri}, {}", mime_or_unknown(block));
            if let Some(bytes) = block.get("size").and_then(Value::as_u64) {
                line.push_str(&format!(", {}", size(usize::try_from(bytes).unwrap_or(0))));
            }
            line.push(']');
            line
        }
        other => format!(
            "[{} content]",
            if other.is_empty() { "unknown" } else { other }
        ),
    }
}

fn mime_or_unknown(value: &Value) -> &str {
    value
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or("unknown type")
}

/// The decoded size of base64 text, without decoding it.
fn base64_len(data: &str) -> usize {
    let padding = data.bytes().rev().take_while(|&b| b == b'=').count();
    (data.len() / 4 * 3).saturating_sub(padding)
}

fn size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else {
        // One decimal is plenty to tell a thumbnail from a photo.
        let kib = bytes as f64 / 1024.0;
        if kib < 1024.0 {
            format!("{kib:.1} KiB")
        } else {
            format!("{:.1} MiB", kib / 1024.0)
        }
    }
}

/// `text` cut to `max` characters: the head and the tail around a marker.
fn cap(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let keep = max / 2;
    let head: String = text.chars().take(keep).collect();
    let tail: String = text.chars().skip(count - keep).collect();
    format!(
        "{head}\n[... {} characters left out ...]\n{tail}",
        count - 2 * keep
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_become_text_and_lines() {
        let result = json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "abc"}},
                {"type": "resource_link", "uri": "file:///b", "name": "b"},
                {"type": "text", "text": "world"}
            ],
            "structuredContent": {"n": 1},
            "isError": false
        });
        let out = CallOutcome::from_wire(&result);
        assert_eq!(
            out.text,
            "hello\n[image: image/png, 3 bytes]\n[resource: file:///a.txt, text/plain, 3 bytes]\n[resource link: file:///b, unknown type]\nworld"
        );
        assert_eq!(out.structured, Some(json!({"n": 1})));
        assert!(!out.is_error);
        assert!(CallOutcome::from_wire(&json!({"content": [], "isError": true})).is_error);
    }

    #[test]
    fn huge_text_keeps_head_and_tail() {
        let text = format!("{}{}", "a".repeat(MAX_OUTPUT_CHARS), "b".repeat(100));
        let out = CallOutcome::from_wire(&json!({"content": [{"type": "text", "text": text}]}));
        assert!(out.text.chars().count() < MAX_OUTPUT_CHARS + 100);
        assert!(out.text.starts_with('a') && out.text.ends_with('b'));
        assert!(out.text.contains("characters left out"));
    }
}
