//! What one `knack run --json` session did, read from its event stream:
//! tool calls, model requests, skills loaded and written, and how it ended.
//! Token counts come from the session store (see `runner`), which also holds
//! the review's and the compaction's requests.

use serde::Serialize;
use serde_json::Value;

/// Tokens of a set of requests, split as providers bill them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tokens {
    /// Prompt tokens neither read from nor written to the cache.
    pub input: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    /// Generated tokens, reasoning included.
    pub output: u64,
    pub reasoning: u64,
}

impl Tokens {
    /// Every token processed once: all prompt tokens plus the output.
    pub fn total(&self) -> u64 {
        self.input + self.cache_read + self.cache_write + self.output
    }

    pub fn add(&mut self, other: &Tokens) {
        self.input += other.input;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.output += other.output;
        self.reasoning += other.reasoning;
    }
}

/// A skill write the session reported (`skill_written`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillWrite {
    pub action: String,
    pub name: String,
    pub actor: String,
}

/// The parts of a session's event stream the eval accounts for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionTrace {
    pub session_id: Option<String>,
    /// Tool calls of the conversation (the review's are not counted here).
    pub tool_calls: u32,
    /// Model requests of the conversation (`usage` events before the review).
    pub turns: u32,
    /// Skills whose text entered the conversation or were viewed, in order, without repeats.
    pub loaded: Vec<String>,
    /// Skills the session loaded before doing anything else: slash or preload
    /// loads, then `skill_view` calls at the start of the first reply (looking
    /// with `skills_list`/`skills_search` first is allowed).
    pub loaded_first: Vec<String>,
    pub written: Vec<SkillWrite>,
    pub review_ran: bool,
    pub compactions: u32,
    /// The `error` event's message, when the session ended with one.
    pub error: Option<String>,
    /// The stream ended with `turn_complete`.
    pub completed: bool,
    /// Whether any model reply arrived (a `usage` or `assistant_message` event).
    pub model_answered: bool,
}

/// Tools that only look for skills; calling them first still counts as "before anything else".
const DISCOVERY_TOOLS: [&str; 2] = ["skills_list", "skills_search"];

/// Reads the JSON lines of `knack run --json`; lines that are not JSON are skipped
/// (a debug build may print warnings), unknown event types are ignored.
pub fn parse_trace(stdout: &str) -> SessionTrace {
    let mut trace = SessionTrace::default();
    let mut in_review = false;
    // The first reply's tool calls come after its `usage` event and before the next one.
    let mut replies_seen = 0u32;
    let mut first_reply_open = true;
    for line in stdout.lines() {
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let field = |name: &str| {
            event
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        match event
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
        {
            "session_started" => trace.session_id = Some(field("session_id")),
            "skill_loaded" => {
                let name = field("name");
                if replies_seen == 0 && !in_review {
                    push_unique(&mut trace.loaded_first, &name);
                }
                push_unique(&mut trace.loaded, &name);
            }
            "usage" => {
                trace.model_answered = true;
                if !in_review {
                    trace.turns += 1;
                    replies_seen += 1;
                }
            }
            "assistant_message" => trace.model_answered = true,
            "tool_call_begin" if !in_review => {
                trace.tool_calls += 1;
                let name = field("name");
                let viewed = (name == "skill_view")
                    .then(|| skill_view_target(&event))
                    .flatten();
                if let Some(skill) = &viewed {
                    push_unique(&mut trace.loaded, skill);
                }
                if first_reply_open && replies_seen <= 1 {
                    match &viewed {
                        Some(skill) => push_unique(&mut trace.loaded_first, skill),
                        None if DISCOVERY_TOOLS.contains(&name.as_str()) => {}
                        None => first_reply_open = false,
                    }
                } else {
                    first_reply_open = false;
                }
            }
            "review_started" => {
                in_review = true;
                trace.review_ran = true;
            }
            "review_finished" => in_review = false,
            "skill_written" => trace.written.push(SkillWrite {
                action: field("action"),
                name: field("name"),
                actor: field("actor"),
            }),
            "compaction" => trace.compactions += 1,
            "error" => trace.error = Some(field("message")),
            "turn_complete" => trace.completed = true,
            _ => {}
        }
    }
    trace
}

/// The skill a `skill_view` call names (`name`, without a `file_path` read of a
/// support file counting twice: a file read still loads the skill).
fn skill_view_target(event: &Value) -> Option<String> {
    let arguments = event.get("arguments")?;
    let parsed;
    let arguments = match arguments {
        Value::String(text) => {
            parsed = serde_json::from_str::<Value>(text).ok()?;
            &parsed
        }
        other => other,
    };
    let name = arguments.get("name")?.as_str()?.trim();
    // A qualified id (`user:devops/deploy`) or an id (`devops/deploy`) names the skill by its last part.
    let short = name.rsplit(['/', ':']).next().unwrap_or(name);
    (!short.is_empty()).then(|| short.to_owned())
}

fn push_unique(list: &mut Vec<String>, name: &str) {
    if !name.is_empty() && !list.iter().any(|n| n == name) {
        list.push(name.to_owned());
    }
}

impl SessionTrace {
    /// Skills this session created (by the agent or its review).
    pub fn created(&self) -> Vec<String> {
        self.writes_where(|action| action == "create")
    }

    /// Skills this session changed after they existed.
    pub fn patched(&self) -> Vec<String> {
        self.writes_where(|action| {
            matches!(action, "patch" | "edit" | "write_file" | "remove_file")
        })
    }

    fn writes_where(&self, keep: impl Fn(&str) -> bool) -> Vec<String> {
        let mut names = Vec::new();
        for write in &self.written {
            if matches!(write.actor.as_str(), "agent" | "review") && keep(&write.action) {
                push_unique(&mut names, &write.name);
            }
        }
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn accounts_the_conversation_apart_from_the_review() {
        let stream = r#"{"type":"session_started","session_id":"s1","model":"m"}
{"type":"usage","prompt_tokens":10,"completion_tokens":2,"cached_tokens":0}
{"type":"tool_call_begin","call_id":"a","name":"skills_list","arguments":{}}
{"type":"tool_call_begin","call_id":"b","name":"skill_view","arguments":{"name":"user:dev/changelog"}}
{"type":"tool_call_begin","call_id":"c","name":"terminal","arguments":{"command":"ls"}}
{"type":"usage","prompt_tokens":10,"completion_tokens":2,"cached_tokens":0}
{"type":"tool_call_begin","call_id":"d","name":"skill_view","arguments":"{\"name\":\"other\"}"}
{"type":"usage","prompt_tokens":10,"completion_tokens":2,"cached_tokens":0}
{"type":"assistant_message","text":"done"}
{"type":"review_started"}
{"type":"tool_call_begin","call_id":"e","name":"skill_manage","arguments":{}}
{"type":"skill_written","action":"create","name":"new-one","actor":"review"}
{"type":"review_finished","summary":"saved"}
{"type":"turn_complete"}
"#;
        let trace = parse_trace(stream);
        assert_eq!(trace.session_id.as_deref(), Some("s1"));
        assert_eq!(trace.tool_calls, 4);
        assert_eq!(trace.turns, 3);
        assert_eq!(trace.loaded, vec!["changelog", "other"]);
        assert_eq!(trace.loaded_first, vec!["changelog"]);
        assert_eq!(trace.created(), vec!["new-one"]);
        assert!(trace.review_ran && trace.completed && trace.model_answered);
    }

    #[test]
    fn a_skill_viewed_after_other_work_did_not_fire_first() {
        let stream = r#"{"type":"usage","prompt_tokens":1,"completion_tokens":1}
{"type":"tool_call_begin","call_id":"a","name":"terminal","arguments":{"command":"ls"}}
{"type":"tool_call_begin","call_id":"b","name":"skill_view","arguments":{"name":"deploy"}}
"#;
        let trace = parse_trace(stream);
        assert!(trace.loaded_first.is_empty());
        assert_eq!(trace.loaded, vec!["deploy"]);
    }

    #[test]
    fn slash_loads_count_as_first() {
        let stream = r#"{"type":"skill_loaded","name":"deploy","via":"slash"}
{"type":"usage","prompt_tokens":1,"completion_tokens":1}
"#;
        assert_eq!(parse_trace(stream).loaded_first, vec!["deploy"]);
    }

    #[test]
    fn an_error_without_any_reply_is_recorded() {
        let trace = parse_trace("{\"type\":\"error\",\"message\":\"connection refused\"}\n");
        assert_eq!(trace.error.as_deref(), Some("connection refused"));
        assert!(!trace.model_answered);
    }
}
