//! The context budget and the history rewrite of a compaction, as pure functions over
//! messages: how big the next request is, whether it must shrink, where to cut, what to keep.
//!
//! The summarising request itself goes through the session's client with the session's own
//! system prompt and tools (see `session::compact`), so its prefix is a cache hit; nothing
//! here changes `messages[0]` or the tools.

use serde_json::Value;

use crate::invocation::{USER_REQUEST_HEADING, is_invocation};
use crate::model::{ChatMessage, Role};

/// Characters per token of the estimate. English prose, code and JSON
/// schemas average four to five characters per token in the tokenizers of
/// the common model families; four errs on the large side, so the budget is
/// kept rather than passed. The provider's own count replaces the estimate
/// as soon as a reply reports it.
const CHARS_PER_TOKEN: f64 = 4.0;
/// What the chat template adds around each message (role tags, separators).
const TOKENS_PER_MESSAGE: usize = 4;
/// The window assumed when neither the provider, the config nor the
/// environment names one: small enough for a local 8k model.
pub const DEFAULT_CONTEXT_WINDOW: usize = 8_192;
/// Marks the summary message so people and the model recognise it.
pub const SUMMARY_MARKER: &str = "[Summary of the earlier conversation]";
/// Marks a skill body carried across a compaction.
pub const CARRIED_SKILL_MARKER: &str = "[Skill loaded earlier in this session";

/// Roughly how many tokens `text` takes.
pub fn estimate_text(text: &str) -> usize {
    (text.chars().count() as f64 / CHARS_PER_TOKEN).ceil() as usize
}

/// Roughly how many tokens one message takes in a request.
pub fn estimate_message(message: &ChatMessage) -> usize {
    let mut tokens = TOKENS_PER_MESSAGE;
    if let Some(content) = &message.content {
        tokens += estimate_text(content);
    }
    for call in message.tool_calls.iter().flatten() {
        tokens += estimate_text(&call.function.name) + estimate_text(&call.function.arguments) + 4;
    }
    tokens
}

pub fn estimate_messages(messages: &[ChatMessage]) -> usize {
    messages.iter().map(estimate_message).sum()
}

/// What the model's window holds and when to compact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextBudget {
    /// The model's context window in tokens.
    pub window: usize,
    /// Kept free for the answer.
    pub reserve_output: usize,
    /// Compact when the next request would pass this share of the window.
    pub compact_at: f64,
}

impl ContextBudget {
    /// The one rule for a window's budget: an eighth of it (at most 8,192
    /// tokens) kept for the answer, and `compact_at` where it is a share in
    /// (0, 1], else 0.8. The session compacts by it and the client's default
    /// output limit leaves the room above its threshold.
    pub fn for_window(window: usize, compact_at: f64) -> Self {
        Self {
            window,
            reserve_output: (window / 8).min(8_192),
            compact_at: if compact_at > 0.0 && compact_at <= 1.0 {
                compact_at
            } else {
                0.8
            },
        }
    }

    /// The largest request that stays under the compaction threshold.
    pub fn threshold(&self) -> usize {
        let usable = self.window.saturating_sub(self.reserve_output);
        ((self.window as f64 * self.compact_at) as usize).min(usable)
    }

    pub fn should_compact(&self, next_request_tokens: usize) -> bool {
        next_request_tokens > self.threshold()
    }

    /// After a compaction the kept recent turns take at most this much: half
    /// of what the frozen prefix (`prefix_tokens`) leaves below the
    /// threshold, so the next requests have room before it comes round again
    /// and a compaction (which costs the cached conversation) stays rare.
    pub fn keep_recent_tokens(&self, prefix_tokens: usize) -> usize {
        self.threshold().saturating_sub(prefix_tokens) / 2
    }
}

/// The size of the next request: what the provider counted for the last
/// one, plus an estimate of what was appended since; the estimate of the
/// whole request when there is no count yet (or the count is stale because
/// the history was rewritten).
pub fn estimate_request(
    messages: &[ChatMessage],
    tools_json_chars: usize,
    last_count: Option<ProviderCount>,
) -> usize {
    match last_count {
        Some(count) if count.messages <= messages.len() => {
            count.prompt_tokens
                + scaled(estimate_messages(&messages[count.messages..]), count.ratio)
        }
        _ => {
            estimate_messages(messages)
                + (tools_json_chars as f64 / CHARS_PER_TOKEN).ceil() as usize
        }
    }
}

/// The provider's token count for a request of `messages` messages, and
/// how far it was from the estimate of the same request: the model's own
/// tokenizer calibrates the estimate of what comes next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProviderCount {
    pub prompt_tokens: usize,
    pub messages: usize,
    /// Provider tokens per estimated token (1.0 when they agreed).
    pub ratio: f64,
}

impl ProviderCount {
    /// The count for a request whose estimate was `estimated` tokens; the
    /// ratio is kept within bounds a real tokenizer stays in.
    pub fn new(prompt_tokens: usize, messages: usize, estimated: usize) -> Self {
        let ratio = if estimated == 0 {
            1.0
        } else {
            (prompt_tokens as f64 / estimated as f64).clamp(0.5, 4.0)
        };
        Self {
            prompt_tokens,
            messages,
            ratio,
        }
    }
}

/// `tokens` times `ratio`, rounded up.
pub fn scaled(tokens: usize, ratio: f64) -> usize {
    (tokens as f64 * ratio).ceil() as usize
}

/// Where a compaction cuts the history: `history[..cut]` is summarised,
/// `history[cut..]` is kept word for word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub cut: usize,
}

/// Picks the cut: the kept tail starts at a user message (never a tool
/// result, so no call is separated from its answer), holds at most
/// `keep_tokens` where it can, and the summarised head is not empty.
/// `None` when there is nothing worth summarising.
/// The cut is never before `min_cut` (a compaction's head is summarised
/// whole, never split).
pub fn choose_cut(history: &[ChatMessage], keep_tokens: usize, min_cut: usize) -> Option<Cut> {
    let mut kept = 0usize;
    let mut best: Option<usize> = None;
    for index in (min_cut.max(1)..history.len()).rev() {
        kept += estimate_message(&history[index]);
        if history[index].role == Role::User {
            if kept > keep_tokens && best.is_some() {
                break;
            }
            best = Some(index);
        }
    }
    // Only the last turn may be too big to keep whole: then everything before
    // it is summarised and the turn is kept anyway (it is the current work).
    best.map(|cut| Cut { cut })
}

/// Where the summarising request starts within `head` so that it fits in
/// `room` tokens: the oldest turns are dropped (at user messages, so no call
/// loses its result) until `estimate` of the rest fits, or one turn is left.
pub fn fit_start(
    head: &[ChatMessage],
    room: usize,
    estimate: impl Fn(&[ChatMessage]) -> usize,
) -> usize {
    let mut start = 0;
    while estimate(&head[start..]) > room {
        let next = head
            .iter()
            .enumerate()
            .skip(start + 1)
            .find(|(_, m)| m.role == Role::User)
            .map(|(i, _)| i);
        match next {
            Some(i) => start = i,
            None => break,
        }
    }
    start
}

/// What a compaction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionOutcome {
    /// The estimated size of the next request before and after.
    Compacted { before: usize, after: usize },
    /// The history is too short to summarise (one turn or less).
    NothingToDo,
}

/// The window a session uses: the one it was given, else the model family's
/// usual window, else [`DEFAULT_CONTEXT_WINDOW`]. The second value says
/// whether it was a guess.
pub fn effective_window(explicit: Option<u64>, model: &str) -> (usize, bool) {
    match explicit
        .and_then(|w| usize::try_from(w).ok())
        .or_else(|| known_window(model))
    {
        Some(window) => (window, false),
        None => (DEFAULT_CONTEXT_WINDOW, true),
    }
}

/// The window a session was given, else its model family's usual one;
/// `None` when neither is known (no guess, unlike `effective_window`): the
/// skills index then keeps its fixed budget.
pub fn known_context_window(explicit: Option<u64>, model: &str) -> Option<u64> {
    explicit
        .filter(|w| *w > 0)
        .or_else(|| known_window(model).map(|w| w as u64))
}

/// The usual context window of well-known model families, by name; the
/// provider profile or the config wins over this.
pub fn known_window(model: &str) -> Option<usize> {
    let name = model.to_ascii_lowercase();
    const FAMILIES: [(&str, usize); 12] = [
        ("claude", 200_000),
        ("gpt-5", 400_000),
        ("gpt-4.1", 1_000_000),
        ("gpt-4o", 128_000),
        ("o3", 200_000),
        ("o4", 200_000),
        ("gemini", 1_000_000),
        ("deepseek", 128_000),
        ("qwen3", 32_768),
        ("qwen2.5", 32_768),
        ("llama-3.1", 128_000),
        ("mistral-large", 128_000),
    ];
    FAMILIES
        .iter()
        .find(|(family, _)| name.contains(family))
        .map(|(_, window)| *window)
}

/// The instruction appended to the summarising request.
pub fn summary_instruction() -> String {
    "Write a compact summary of the conversation so far so that you can continue the work \
     from it alone. Keep: the user's goals and constraints, decisions made and why, files \
     and commands that matter (with paths), results of tool calls that are still relevant, \
     open questions and the next steps. Leave out pleasantries and anything already \
     superseded. Do not call any tool; answer with the summary only."
        .to_owned()
}

/// The messages a summarising request carries after the system prompt:
/// the part to summarise, closed by the instruction.
/// With `cap_chars`, each message's text keeps at most that many characters
/// (its beginning and end): the retry for a server that found the request
/// too long although the estimate fit.
pub fn summary_request_messages(
    head: &[ChatMessage],
    cap_chars: Option<usize>,
) -> Vec<ChatMessage> {
    let mut messages = head.to_vec();
    if let Some(cap) = cap_chars {
        for message in &mut messages {
            if let Some(text) = &mut message.content {
                let len = text.chars().count();
                if len > cap {
                    let head: String = text.chars().take(cap / 2).collect();
                    let tail: String = text.chars().skip(len - cap / 2).collect();
                    *text = format!("{head}\n[… {} characters left out …]\n{tail}", len - cap);
                }
            }
        }
    }
    messages.push(ChatMessage::user(summary_instruction()));
    messages
}

/// The new history: the summary as a marked user message, then the skill
/// bodies the summarised part had loaded (they are instructions, not chat),
/// then the kept tail unchanged.
pub fn rewrite(history: &[ChatMessage], cut: &Cut, summary: &str) -> Vec<ChatMessage> {
    let (head, tail) = history.split_at(cut.cut.min(history.len()));
    let mut out = Vec::with_capacity(tail.len() + 4);
    out.push(ChatMessage::user(format!(
        "{SUMMARY_MARKER}\nThe conversation was compacted to fit the model's context window. \
         What happened before this point, in summary:\n\n{}",
        summary.trim()
    )));
    out.extend(carried_skills(head));
    // The summary stands where a user message would; an assistant reply
    // that would now follow it directly is fine on every wire, since the
    // tail starts with a user message by construction.
    out.extend(tail.iter().cloned());
    out
}

/// Skill bodies loaded in `head`: a `/skill` invocation (kept as it was) or a
/// successful `skill_view` of a whole skill (carried as a user message).
fn carried_skills(head: &[ChatMessage]) -> Vec<ChatMessage> {
    let mut out = Vec::new();
    let mut skill_view_calls = std::collections::HashSet::new();
    for message in head {
        match message.role {
            Role::User => {
                if let Some(text) = &message.content {
                    if text.starts_with(CARRIED_SKILL_MARKER) {
                        out.push(message.clone());
                    } else if is_invocation(text) {
                        // The skills stay; the user's words of that turn are
                        // part of what the summary covers.
                        let skills = text
                            .rfind(USER_REQUEST_HEADING)
                            .map_or(text.as_str(), |at| &text[..at]);
                        out.push(ChatMessage::user(skills.trim_end()));
                    }
                }
            }
            Role::Assistant => {
                for call in message.tool_calls.iter().flatten() {
                    let args: Value =
                        serde_json::from_str(&call.function.arguments).unwrap_or(Value::Null);
                    if call.function.name == "skill_view" && args.get("file_path").is_none() {
                        skill_view_calls.insert(call.id.clone());
                    }
                }
            }
            Role::Tool => {
                let is_view = message
                    .tool_call_id
                    .as_ref()
                    .is_some_and(|id| skill_view_calls.contains(id));
                if !is_view {
                    continue;
                }
                let Some(result) = message
                    .content
                    .as_deref()
                    .and_then(|c| serde_json::from_str::<Value>(c).ok())
                else {
                    continue;
                };
                if result["success"] != Value::Bool(true) {
                    continue;
                }
                let name = result["name"].as_str().unwrap_or("a skill");
                let content = result["content"].as_str().unwrap_or_default();
                let text = format!("{CARRIED_SKILL_MARKER}: {name}]\n\n{content}");
                // The same skill viewed twice is carried once.
                if !out
                    .iter()
                    .any(|m: &ChatMessage| m.content.as_deref() == Some(&text))
                {
                    out.push(ChatMessage::user(text));
                }
            }
            Role::System => {}
        }
    }
    out
}

/// Caps a tool result at `max_chars` of JSON text before it enters the
/// history: the longest string fields keep their beginning and end around a
/// line that says how much was cut. Returns whether anything was cut.
pub fn cap_tool_result(value: &mut Value, max_chars: usize) -> bool {
    let total = value.to_string().chars().count();
    if total <= max_chars {
        return false;
    }
    let mut excess = total - max_chars;
    // Cut the longest strings first; a few rounds settle any shape.
    for _ in 0..8 {
        if excess == 0 {
            break;
        }
        let Some(longest) = longest_string(value) else {
            break;
        };
        let len = longest.chars().count();
        // Keep at least a little of each end so the result stays readable.
        let keep = len.saturating_sub(excess + 120).max(200.min(len));
        if keep >= len {
            break;
        }
        let cut = len - keep;
        let head: String = longest.chars().take(keep / 2).collect();
        let tail: String = longest.chars().skip(len - (keep - keep / 2)).collect();
        *longest = format!(
            "{head}\n\n[… {cut} characters cut here: the result was longer than tools.max_output_chars …]\n\n{tail}"
        );
        let now = value.to_string().chars().count();
        excess = now.saturating_sub(max_chars);
    }
    if let Value::Object(map) = value {
        map.insert("truncated".into(), Value::Bool(true));
    }
    true
}

fn longest_string(value: &mut Value) -> Option<&mut String> {
    match value {
        Value::String(s) => Some(s),
        Value::Array(items) => items
            .iter_mut()
            .filter_map(longest_string)
            .max_by_key(|s| s.len()),
        Value::Object(map) => map
            .values_mut()
            .filter_map(longest_string)
            .max_by_key(|s| s.len()),
        _ => None,
    }
}

/// Whether a provider's error says the request did not fit its window.
/// Each server words it its own way; these are the phrasings in use.
pub fn is_context_overflow(message: &str) -> bool {
    const PHRASES: [&str; 8] = [
        "context_length_exceeded",
        "maximum context length",
        "context length",
        "exceeds the available context size",
        "prompt is too long",
        "too many tokens",
        "context window",
        "request too large",
    ];
    let lower = message.to_ascii_lowercase();
    PHRASES.iter().any(|p| lower.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;

    fn call(id: &str, name: &str, args: &str) -> ChatMessage {
        ChatMessage::assistant("", vec![ToolCall::function(id, name, args)])
    }

    fn long(n: usize) -> String {
        "word ".repeat(n)
    }

    fn conversation(turns: usize) -> Vec<ChatMessage> {
        let mut h = Vec::new();
        for t in 0..turns {
            h.push(ChatMessage::user(format!("turn {t}: {}", long(100))));
            h.push(call(&format!("c{t}"), "terminal", r#"{"command":"ls"}"#));
            h.push(ChatMessage::tool_result(format!("c{t}"), long(200)));
            h.push(ChatMessage::assistant(format!("done {t}"), Vec::new()));
        }
        h
    }

    #[test]
    fn the_cut_lands_on_a_user_message_and_keeps_calls_with_their_results() {
        let h = conversation(10);
        let cut = choose_cut(&h, 800, 1).unwrap();
        assert_eq!(h[cut.cut].role, Role::User);
        assert!(cut.cut > 0 && cut.cut < h.len());
        let kept = &h[cut.cut..];
        assert!(estimate_messages(kept) <= 800 || kept.len() == 4);
        // Every tool result in the tail answers a call in the tail.
        for (i, m) in kept.iter().enumerate() {
            if m.role == Role::Tool {
                let id = m.tool_call_id.clone().unwrap();
                assert!(
                    kept[..i]
                        .iter()
                        .any(|a| a.tool_calls.iter().flatten().any(|c| c.id == id))
                );
            }
        }
    }

    #[test]
    fn a_single_huge_turn_is_kept_and_everything_before_is_summarised() {
        let mut h = conversation(2);
        h.push(ChatMessage::user(long(10_000)));
        let cut = choose_cut(&h, 100, 1).unwrap();
        assert_eq!(cut.cut, 8);
        assert!(
            choose_cut(&h[..1], 100, 1).is_none(),
            "nothing to summarise"
        );
        // A compaction's head is never split.
        let cut = choose_cut(&h, 100, 6).unwrap();
        assert!(cut.cut >= 6);
    }

    #[test]
    fn the_rewrite_has_the_summary_then_skills_then_the_tail() {
        let mut h = vec![
            ChatMessage::user(
                "[The user invoked the skill \"deploy\" (user:deploy). ...]\nsteps\nUser's request:\nOLD WORDS",
            ),
            call("v1", "skill_view", r#"{"name":"lint"}"#),
            ChatMessage::tool_result(
                "v1",
                r#"{"success":true,"name":"lint","content":"run the linter"}"#,
            ),
            call(
                "v2",
                "skill_view",
                r#"{"name":"lint","file_path":"references/a.md"}"#,
            ),
            ChatMessage::tool_result("v2", r#"{"success":true,"name":"lint","content":"ref"}"#),
        ];
        h.extend(conversation(3));
        let cut = Cut { cut: 5 };
        let out = rewrite(&h, &cut, "they deployed");
        assert!(
            out[0]
                .content
                .as_deref()
                .unwrap()
                .starts_with(SUMMARY_MARKER)
        );
        assert!(out[0].content.as_deref().unwrap().contains("they deployed"));
        assert!(out[1].content.as_deref().unwrap().contains("\"deploy\""));
        assert!(!out[1].content.as_deref().unwrap().contains("OLD WORDS"));
        assert!(
            out[2]
                .content
                .as_deref()
                .unwrap()
                .contains("run the linter")
        );
        assert_eq!(out.len(), 3 + 12, "support-file views are not carried");
        assert_eq!(&out[3..], &h[5..]);
        // A second compaction carries the carried skills again.
        let again = rewrite(&out, &Cut { cut: 7 }, "summary of summary");
        assert!(again.iter().any(|m| {
            m.content
                .as_deref()
                .is_some_and(|c| c.contains("run the linter"))
        }));
    }

    #[test]
    fn the_summarised_part_drops_its_oldest_turns_to_fit() {
        let h = conversation(6);
        let start = fit_start(&h, 900, estimate_messages);
        assert!(start > 0 && h[start].role == Role::User);
        assert!(estimate_messages(&h[start..]) <= 900);
        assert_eq!(fit_start(&h, usize::MAX, estimate_messages), 0);
    }

    #[test]
    fn a_summary_retry_cuts_long_messages_to_their_ends() {
        let head = vec![ChatMessage::user(format!("START{}END", "x".repeat(10_000)))];
        let plain = summary_request_messages(&head, None);
        assert_eq!(plain[0], head[0]);
        let capped = summary_request_messages(&head, Some(2_000));
        let text = capped[0].content.as_deref().unwrap();
        assert!(text.starts_with("START") && text.ends_with("END"));
        assert!(text.chars().count() < 2_100, "{}", text.len());
        assert!(
            capped
                .last()
                .unwrap()
                .content
                .as_deref()
                .unwrap()
                .contains("summary")
        );
    }

    #[test]
    fn known_families_have_windows() {
        assert_eq!(known_window("claude-sonnet-4-5"), Some(200_000));
        assert_eq!(known_window("Qwen2.5-7B-Instruct"), Some(32_768));
        assert_eq!(known_window("my-local-model"), None);
    }

    #[test]
    fn the_budget_keeps_room_for_the_answer() {
        let budget = ContextBudget {
            window: 8_000,
            reserve_output: 2_000,
            compact_at: 0.9,
        };
        assert_eq!(budget.threshold(), 6_000);
        assert!(budget.should_compact(6_001));
        assert!(!budget.should_compact(6_000));
    }

    #[test]
    fn a_provider_count_is_extended_by_the_estimate_of_new_messages() {
        let h = conversation(2);
        let counted = ProviderCount::new(1_000, 4, 1_000);
        assert_eq!(
            estimate_request(&h, 0, Some(counted)),
            1_000 + estimate_messages(&h[4..])
        );
        // A tokenizer that counts half again as many tokens as the estimate
        // scales the estimate of what was appended.
        let denser = ProviderCount::new(1_500, 4, 1_000);
        assert_eq!(
            estimate_request(&h, 0, Some(denser)),
            1_500 + scaled(estimate_messages(&h[4..]), 1.5)
        );
        // A count from before a rewrite (more messages than now) is ignored.
        let stale = ProviderCount::new(1_000, 99, 1_000);
        assert_eq!(estimate_request(&h, 0, Some(stale)), estimate_messages(&h));
    }

    #[test]
    fn a_huge_tool_result_is_capped_with_head_tail_and_a_note() {
        let big: String = (0..40_000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let mut value = serde_json::json!({"success": true, "output": format!("BEGIN{big}END"), "exit_code": 0});
        assert!(cap_tool_result(&mut value, 30_000));
        let text = value.to_string();
        assert!(text.chars().count() <= 30_000, "{}", text.len());
        let output = value["output"].as_str().unwrap();
        assert!(output.starts_with("BEGIN") && output.ends_with("END"));
        assert!(output.contains("characters cut here"));
        assert_eq!(value["truncated"], true);
        assert_eq!(value["exit_code"], 0);
        let mut small = serde_json::json!({"success": true, "output": "hi"});
        assert!(!cap_tool_result(&mut small, 30_000));
    }

    #[test]
    fn overflow_errors_are_recognised_across_servers() {
        for text in [
            "This model's maximum context length is 8192 tokens",
            "request (9000 tokens) exceeds the available context size (8192 tokens)",
            "prompt is too long: 210000 tokens > 200000 maximum",
            r#"{"error":{"code":"context_length_exceeded"}}"#,
        ] {
            assert!(is_context_overflow(text), "{text}");
        }
        assert!(!is_context_overflow("rate limit reached"));
    }
}
