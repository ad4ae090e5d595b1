//! The short form of a tool's result that front ends show (the TUI's tool
//! cards, `knack run --json`'s `tool_call_output`), live and on resume. The
//! model always gets the whole result; this is only what people see.
//!
//! A result that is a JSON object or array stays valid JSON with its shape:
//! long strings keep their start and end in `…[N more characters]`, long
//! lists and objects keep their first entries and end in an `…[N more items]`
//! item or an `"…": "N more fields"` member. Anything else (plain text) is cut
//! at the budget and ends in the same character marker.

use std::io;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

/// The most characters a preview has (the markers included).
pub const PREVIEW_CHARS: usize = 2000;

/// Lists and objects keep one entry for every this many characters a string
/// may keep, so that long strings and long lists give way together: one
/// knob to search for, and no part of a result is starved for another.
const CHARS_PER_ITEM: usize = 16;

/// The key of the member that stands for the fields left out of an object.
pub const MORE_FIELDS_KEY: &str = "…";

/// What people see of a tool's result: `content` itself when it is short
/// enough, otherwise a shortened form of at most [`PREVIEW_CHARS`] characters
/// (see the module's documentation).
pub fn preview(content: &str) -> String {
    if content.chars().count() <= PREVIEW_CHARS {
        return content.to_owned();
    }
    match serde_json::from_str::<Value>(content) {
        Ok(value @ (Value::Object(_) | Value::Array(_))) => shortened_json(&value),
        _ => cut_plain(content),
    }
}

/// A string the preview shortened: the text it kept and how many characters
/// it left out. Any other string is returned whole with `None`.
pub fn split_cut(text: &str) -> (&str, Option<usize>) {
    match parse_marker(text, "characters") {
        Some((kept, more)) => (kept, Some(more)),
        None => (text, None),
    }
}

/// Whether anything in `value` (a parsed preview) was left out.
pub fn is_shortened(value: &Value) -> bool {
    match value {
        Value::String(text) => {
            split_cut(text).1.is_some()
                || parse_marker(text, "items").is_some_and(|(kept, _)| kept.is_empty())
        }
        Value::Array(items) => items.iter().any(is_shortened),
        Value::Object(map) => map.contains_key(MORE_FIELDS_KEY) || map.values().any(is_shortened),
        _ => false,
    }
}

fn chars_marker(more: usize) -> String {
    format!("…[{more} more characters]")
}

fn items_marker(more: usize) -> String {
    format!("…[{more} more items]")
}

fn fields_marker(more: usize) -> String {
    format!("{more} more fields")
}

/// `text` ending in `…[N more <unit>]`: what comes before it, and N.
fn parse_marker<'a>(text: &'a str, unit: &str) -> Option<(&'a str, usize)> {
    let body = text
        .strip_suffix(']')?
        .strip_suffix(unit)?
        .strip_suffix(" more ")?;
    let open = body.rfind("…[")?;
    let digits = &body[open + "…[".len()..];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((&text[..open], digits.parse().ok()?))
}

/// Plain text: its start, then the marker, within the budget.
fn cut_plain(content: &str) -> String {
    let total = content.chars().count();
    // The marker for every character is the longest this one can need.
    let keep = PREVIEW_CHARS.saturating_sub(chars_marker(total).chars().count());
    let at = content
        .char_indices()
        .nth(keep)
        .map_or(content.len(), |(at, _)| at);
    format!("{}{}", &content[..at], chars_marker(total - keep))
}

/// The JSON value, compact, with the largest string limit that fits the
/// budget (found by bisection: a larger limit never makes the text shorter
/// but for a digit of a marker, and every candidate is measured).
fn shortened_json(value: &Value) -> String {
    if let Some(whole) = render(value, PREVIEW_CHARS) {
        return whole;
    }
    let fits = |chars: usize| render(&Cut::new(value, chars), PREVIEW_CHARS);
    let (mut low, mut high) = (0, PREVIEW_CHARS);
    let mut best = fits(0);
    if best.is_some() {
        while low < high {
            let mid = low + (high - low).div_ceil(2);
            match fits(mid) {
                Some(text) => {
                    best = Some(text);
                    low = mid;
                }
                None => high = mid - 1,
            }
        }
    }
    // Only a result of many nested levels or very long keys misses the
    // budget at the smallest limit; it is still shown, past the budget.
    best.or_else(|| render(&Cut::new(value, 0), usize::MAX))
        .unwrap_or_default()
}

/// `value` as compact JSON, or `None` once it passes `budget` characters
/// (the writing stops there, so a huge value costs no more than the budget).
fn render(value: &impl Serialize, budget: usize) -> Option<String> {
    let mut out = Capped {
        bytes: Vec::new(),
        chars: 0,
        budget,
    };
    serde_json::to_writer(&mut out, value).ok()?;
    String::from_utf8(out.bytes).ok()
}

/// A writer that refuses to grow past `budget` characters.
struct Capped {
    bytes: Vec<u8>,
    chars: usize,
    budget: usize,
}

impl io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // serde_json writes whole UTF-8 sequences; count their first bytes.
        self.chars += buf.iter().filter(|b| (**b & 0xC0) != 0x80).count();
        if self.chars > self.budget {
            return Err(io::Error::other("past the preview budget"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A value serialised with its strings cut to `chars` characters and its
/// lists and objects to `items` entries, each cut marked.
#[derive(Clone, Copy)]
struct Cut<'a> {
    value: &'a Value,
    chars: usize,
    items: usize,
}

impl<'a> Cut<'a> {
    fn new(value: &'a Value, chars: usize) -> Self {
        Self {
            value,
            chars,
            items: (chars / CHARS_PER_ITEM).max(1),
        }
    }

    fn of(self, value: &'a Value) -> Self {
        Self { value, ..self }
    }
}

impl Serialize for Cut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.value {
            Value::String(text) => match text.char_indices().nth(self.chars) {
                Some((at, _)) => {
                    let more = text[at..].chars().count();
                    serializer.serialize_str(&format!("{}{}", &text[..at], chars_marker(more)))
                }
                None => serializer.serialize_str(text),
            },
            Value::Array(items) => {
                let kept = items.len().min(self.items);
                let more = items.len() - kept;
                let mut seq = serializer.serialize_seq(Some(kept + usize::from(more > 0)))?;
                for item in &items[..kept] {
                    seq.serialize_element(&self.of(item))?;
                }
                if more > 0 {
                    seq.serialize_element(&items_marker(more))?;
                }
                seq.end()
            }
            Value::Object(fields) => {
                let kept = fields.len().min(self.items);
                let more = fields.len() - kept;
                let mut map = serializer.serialize_map(Some(kept + usize::from(more > 0)))?;
                for (key, field) in fields.iter().take(kept) {
                    map.serialize_entry(key, &self.of(field))?;
                }
                if more > 0 {
                    map.serialize_entry(MORE_FIELDS_KEY, &fields_marker(more))?;
                }
                map.end()
            }
            other => other.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chars(text: &str) -> usize {
        text.chars().count()
    }

    #[test]
    fn a_short_result_is_sent_as_it_is() {
        let text = "{\n  \"success\": true\n}";
        assert_eq!(preview(text), text);
        assert_eq!(preview("plain words"), "plain words");
    }

    #[test]
    fn long_plain_text_keeps_its_start_and_says_how_much_is_left() {
        let text = "é".repeat(5000);
        let shown = preview(&text);
        assert_eq!(chars(&shown), PREVIEW_CHARS);
        let (kept, more) = split_cut(&shown);
        assert!(text.starts_with(kept));
        assert_eq!(chars(kept) + more.unwrap(), 5000);
        // Not JSON either way: a JSON string is text too.
        let quoted = serde_json::to_string(&text).unwrap();
        assert!(split_cut(&preview(&quoted)).1.is_some());
    }

    #[test]
    fn a_long_string_field_is_cut_and_the_rest_of_the_object_kept() {
        let content = "line of a skill\n".repeat(400);
        let result = json!({"success": true, "name": "deploy", "content": content,
                            "tags": ["a", "b"], "linked_files": {"references": ["r.md"]}});
        let shown = preview(&result.to_string());
        assert!(chars(&shown) <= PREVIEW_CHARS, "{}", chars(&shown));
        let parsed: Value = serde_json::from_str(&shown).unwrap();
        let keys: Vec<&String> = parsed.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["success", "name", "content", "tags", "linked_files"]);
        assert_eq!(parsed["tags"], json!(["a", "b"]));
        assert_eq!(parsed["linked_files"], json!({"references": ["r.md"]}));
        let (kept, more) = split_cut(parsed["content"].as_str().unwrap());
        assert!(content.starts_with(kept));
        assert_eq!(chars(kept) + more.unwrap(), chars(&content));
        // The budget is used, not wasted: most of it went to the content.
        assert!(chars(kept) > PREVIEW_CHARS / 2, "{}", chars(kept));
        assert!(is_shortened(&parsed));
    }

    #[test]
    fn a_long_list_keeps_its_first_items_and_counts_the_rest() {
        let matches: Vec<String> = (0..1000).map(|i| format!("src/lib.rs:{i}: TODO")).collect();
        let result = json!({"success": true, "count": 1000, "matches": matches});
        let shown = preview(&result.to_string());
        assert!(chars(&shown) <= PREVIEW_CHARS);
        let parsed: Value = serde_json::from_str(&shown).unwrap();
        let items = parsed["matches"].as_array().unwrap();
        let kept = items.len() - 1;
        assert!(kept > 10, "{kept}");
        for (item, want) in items[..kept].iter().zip(&matches) {
            assert_eq!(item, want);
        }
        assert_eq!(items[kept], json!(format!("…[{} more items]", 1000 - kept)));
        assert_eq!(parsed["count"], 1000);
        assert!(is_shortened(&parsed));
    }

    #[test]
    fn an_object_of_many_fields_keeps_the_first_and_counts_the_rest() {
        let fields: serde_json::Map<String, Value> = (0..400)
            .map(|i| (format!("field_{i:03}"), json!(format!("value {i}"))))
            .collect();
        let shown = preview(&Value::Object(fields).to_string());
        assert!(chars(&shown) <= PREVIEW_CHARS);
        let parsed: Value = serde_json::from_str(&shown).unwrap();
        let map = parsed.as_object().unwrap();
        assert_eq!(map.keys().next().unwrap(), "field_000");
        let more = map[MORE_FIELDS_KEY].as_str().unwrap();
        assert_eq!(more, format!("{} more fields", 400 - (map.len() - 1)));
        assert!(is_shortened(&parsed));
    }

    #[test]
    fn a_result_that_fits_once_compact_is_not_cut() {
        let result = json!({"success": true, "items": (0..300).collect::<Vec<_>>()});
        let pretty = serde_json::to_string_pretty(&result).unwrap();
        assert!(chars(&pretty) > PREVIEW_CHARS);
        let shown = preview(&pretty);
        assert_eq!(shown, result.to_string());
        assert!(!is_shortened(&serde_json::from_str(&shown).unwrap()));
    }

    #[test]
    fn escapes_count_against_the_budget_and_every_size_stays_valid() {
        for size in [1990, 2001, 2100, 4000, 30_000] {
            let output: String = "a \"quoted\"\tword\n".chars().cycle().take(size).collect();
            let result = json!({"success": true, "output": output, "exit_code": 0});
            let shown = preview(&result.to_string());
            assert!(chars(&shown) <= PREVIEW_CHARS, "{size}: {}", chars(&shown));
            let parsed: Value = serde_json::from_str(&shown).expect("valid JSON");
            let (kept, _) = split_cut(parsed["output"].as_str().unwrap());
            assert!(output.starts_with(kept), "{size}");
            assert_eq!(parsed["exit_code"], 0);
        }
    }

    #[test]
    fn nested_lists_of_objects_shrink_evenly() {
        let results: Vec<Value> = (0..40)
            .map(|i| {
                json!({"session_id": format!("s{i}"), "role": "user",
                            "snippet": "word ".repeat(60)})
            })
            .collect();
        let shown = preview(&json!({"success": true, "results": results}).to_string());
        assert!(chars(&shown) <= PREVIEW_CHARS);
        let parsed: Value = serde_json::from_str(&shown).unwrap();
        let items = parsed["results"].as_array().unwrap();
        assert!(items.len() > 3, "{}", items.len());
        assert_eq!(items[0]["session_id"], "s0");
        assert!(split_cut(items[0]["snippet"].as_str().unwrap()).1.is_some());
    }

    #[test]
    fn markers_are_read_back_and_ordinary_text_is_not_taken_for_one() {
        assert_eq!(split_cut("abc…[12 more characters]"), ("abc", Some(12)));
        assert_eq!(
            split_cut("see [12 more characters]"),
            ("see [12 more characters]", None)
        );
        assert_eq!(split_cut("…[x more characters]").1, None);
        assert!(!is_shortened(
            &json!({"a": ["…[2 more things]"], "b": "ok"})
        ));
        assert!(is_shortened(&json!({"a": [1, "…[2 more items]"]})));
    }
}
