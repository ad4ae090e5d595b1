//! Edits one key of config.yaml's text in place, so `knack config set` keeps the
//! user's comments, blank lines and key order. Only block-style mappings are edited.
//!
//! The editor reads the file as lines: a mapping is the run of `key:` lines at one
//! indentation, and an entry's value is every more-indented line below it. That is
//! all a hand-written config.yaml uses; anything else (a flow mapping on the way to
//! the key, several documents, tabs) is reported as [`Unsupported`] and the caller
//! falls back to rewriting the file. The caller also re-reads the edited text and
//! compares it with the intended data, so a misreading here can never change a
//! value it did not mean to.

use serde_json::Value;

/// Why the text could not be edited in place, in words for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unsupported(pub String);

/// Returns `text` with `path` set to `rendered` (a one-line YAML value).
/// An existing entry has its value replaced on its own line (its trailing
/// comment stays); a missing key is added at the end of its parent mapping,
/// creating the missing sections on the way; a missing top-level section is
/// appended to the end of the file.
pub(crate) fn set_in_text(
    text: &str,
    path: &[&str],
    rendered: &str,
) -> Result<String, Unsupported> {
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let body_start = document_start(&lines)?;
    let step = indent_step(&lines[body_start..]);

    let mut start = body_start;
    let mut end = lines.len();
    let mut parent: Option<Entry> = None;
    for (depth, part) in path.iter().enumerate() {
        let mapping = scan_mapping(&lines, start, end)?;
        let found = mapping.entries.iter().find(|e| e.key == *part).cloned();
        match found {
            Some(entry) if depth + 1 == path.len() => {
                let line = &lines[entry.line];
                let replaced = format!("{} {rendered}{}", &line[..entry.colon_end], entry.comment);
                lines.splice(entry.line..entry.end, [replaced]);
                return Ok(join(&lines, newline));
            }
            Some(entry) => {
                if !entry.inline.is_empty() {
                    let what = if entry.inline.starts_with('{') {
                        "a flow mapping ({...})"
                    } else {
                        "a value on the same line"
                    };
                    return Err(Unsupported(format!(
                        "'{}' on line {} holds {what}, not an indented block",
                        path[..=depth].join("."),
                        entry.line + 1
                    )));
                }
                if entry.sequence_at_key_indent {
                    return Err(Unsupported(format!(
                        "'{}' on line {} holds a list, not a mapping",
                        path[..=depth].join("."),
                        entry.line + 1
                    )));
                }
                start = entry.line + 1;
                end = entry.end;
                parent = Some(entry);
            }
            None => {
                let indent = match (mapping.indent, &parent) {
                    (Some(indent), _) => indent,
                    (None, Some(p)) => p.indent + step,
                    (None, None) => 0,
                };
                let at = match (&parent, mapping.entries.last()) {
                    // A new top-level section goes to the very end, after any closing comments.
                    (None, _) => lines.len(),
                    (Some(_), Some(last)) => last.end,
                    (Some(p), None) => p.line + 1,
                };
                let added = nested_lines(&path[depth..], indent, step, rendered);
                lines.splice(at..at, added);
                return Ok(join(&lines, newline));
            }
        }
    }
    Err(Unsupported("an empty key".to_owned()))
}

/// One `key: value` line of a block mapping and the extent of its value.
#[derive(Debug, Clone)]
struct Entry {
    /// Index of the key's line.
    line: usize,
    indent: usize,
    key: String,
    /// Byte offset in the line just past the `:`.
    colon_end: usize,
    /// The value written on the key's line, without its comment.
    inline: String,
    /// The trailing comment with the blanks before it, or empty.
    comment: String,
    /// One past the last line of the value (blank and comment lines after the
    /// value belong to whatever follows).
    end: usize,
    /// The value is a `- item` list written at the key's own indentation.
    sequence_at_key_indent: bool,
}

struct Mapping {
    indent: Option<usize>,
    entries: Vec<Entry>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Blank,
    Comment(usize),
    Content(usize),
}

fn classify(line: &str) -> Result<Kind, Unsupported> {
    let rest = line.trim_start_matches(' ');
    let indent = line.len() - rest.len();
    if rest.trim().is_empty() {
        Ok(Kind::Blank)
    } else if rest.starts_with('#') {
        Ok(Kind::Comment(indent))
    } else if rest.starts_with('\t') {
        Err(Unsupported("a line is indented with a tab".to_owned()))
    } else {
        Ok(Kind::Content(indent))
    }
}

/// The index of the first line of the document's body: after a leading `---`.
/// Directives and a second document are beyond this editor.
fn document_start(lines: &[String]) -> Result<usize, Unsupported> {
    let mut start = 0;
    let mut seen_content = false;
    for (i, line) in lines.iter().enumerate() {
        if !matches!(classify(line)?, Kind::Content(0)) {
            continue;
        }
        let marker = |m: &str| line == m || line.starts_with(&format!("{m} "));
        if line.starts_with('%') {
            return Err(Unsupported(
                "the file starts with a YAML directive".to_owned(),
            ));
        }
        if marker("---") && !seen_content {
            start = i + 1;
        } else if marker("---") || marker("...") {
            return Err(Unsupported(
                "the file holds several YAML documents".to_owned(),
            ));
        }
        seen_content = true;
    }
    Ok(start)
}

/// The indentation one nesting level adds: the smallest non-zero indentation
/// of a content line, else two spaces.
fn indent_step(lines: &[String]) -> usize {
    lines
        .iter()
        .filter_map(|l| match classify(l) {
            Ok(Kind::Content(n)) if n > 0 => Some(n),
            _ => None,
        })
        .min()
        .unwrap_or(2)
}

/// Reads the block mapping held by `lines[start..end]`.
fn scan_mapping(lines: &[String], start: usize, end: usize) -> Result<Mapping, Unsupported> {
    let mut mapping = Mapping {
        indent: None,
        entries: Vec::new(),
    };
    for (i, line) in lines.iter().enumerate().take(end).skip(start) {
        let indent = match classify(line)? {
            Kind::Blank => continue,
            Kind::Comment(indent) => {
                // Inside a block scalar (`key: |`) a `#` line is text, not a comment.
                if let Some(last) = mapping.entries.last_mut()
                    && is_block_scalar(&last.inline)
                    && mapping.indent.is_some_and(|m| indent > m)
                {
                    last.end = i + 1;
                }
                continue;
            }
            Kind::Content(indent) => indent,
        };
        let map_indent = *mapping.indent.get_or_insert(indent);
        let content = &line[indent..];
        if indent > map_indent {
            match mapping.entries.last_mut() {
                Some(last) => last.end = i + 1,
                None => return Err(unexpected(i)),
            }
            continue;
        }
        if indent < map_indent {
            return Err(unexpected(i));
        }
        if content == "-" || content.starts_with("- ") {
            // `key:` followed by `- item` lines at the same indentation is a list value.
            match mapping.entries.last_mut() {
                Some(last) if last.inline.is_empty() && last.end == last.line + 1 => {
                    last.end = i + 1;
                    last.sequence_at_key_indent = true;
                }
                Some(last) if last.sequence_at_key_indent => last.end = i + 1,
                _ => return Err(unexpected(i)),
            }
            continue;
        }
        let Some((key, after_colon)) = parse_key(content) else {
            return Err(unexpected(i));
        };
        let (inline, comment) = split_comment(&content[after_colon..]);
        mapping.entries.push(Entry {
            line: i,
            indent,
            key,
            colon_end: indent + after_colon,
            inline: inline.to_owned(),
            comment: comment.to_owned(),
            end: i + 1,
            sequence_at_key_indent: false,
        });
    }
    Ok(mapping)
}

fn unexpected(line: usize) -> Unsupported {
    Unsupported(format!(
        "line {} is not a `key: value` line of a block mapping (a flow mapping or a list?)",
        line + 1
    ))
}

fn is_block_scalar(inline: &str) -> bool {
    inline.starts_with('|') || inline.starts_with('>')
}

/// The key of a `key: value` line and the byte offset just past its colon.
/// Plain keys and simple quoted keys (no escapes) are understood.
fn parse_key(content: &str) -> Option<(String, usize)> {
    let (key, rest_at) = match content.chars().next()? {
        quote @ ('"' | '\'') => {
            let close = content[1..].find(quote)? + 1;
            let key = &content[1..close];
            if key.contains('\\') || content[close + 1..].starts_with(quote) {
                return None;
            }
            (key.to_owned(), close + 1)
        }
        first => {
            if "-?:,[]{}#&*!|>%@`".contains(first) {
                return None;
            }
            let colon = find_key_colon(content)?;
            (content[..colon].trim_end().to_owned(), colon)
        }
    };
    let after = &content[rest_at..];
    let colon = after.len() - after.trim_start_matches(' ').len();
    let tail = &after[colon..];
    let tail = tail.strip_prefix(':')?;
    if !(tail.is_empty() || tail.starts_with(' ')) || key.is_empty() {
        return None;
    }
    Some((key, rest_at + colon + 1))
}

/// The first `:` followed by a blank or the end of the line.
fn find_key_colon(content: &str) -> Option<usize> {
    let bytes = content.as_bytes();
    bytes.iter().enumerate().find_map(|(i, b)| {
        let ends = bytes.get(i + 1).is_none_or(|n| *n == b' ');
        (*b == b':' && ends).then_some(i)
    })
}

/// Splits what follows a key's colon into the value and its trailing comment
/// (kept with the blanks before the `#`). Quotes are respected.
fn split_comment(rest: &str) -> (&str, &str) {
    let bytes = rest.as_bytes();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(b'"') if b == b'\\' => i += 1,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None if b == b'#' && (i == 0 || bytes[i - 1] == b' ') => {
                let value = rest[..i].trim_end();
                let blanks_start = rest[..i].trim_end().len();
                return (value.trim_start(), &rest[blanks_start..]);
            }
            None => {}
        }
        i += 1;
    }
    (rest.trim(), "")
}

/// `a:` / `  b:` / `    c: value` lines for a path missing below `indent`.
fn nested_lines(path: &[&str], indent: usize, step: usize, rendered: &str) -> Vec<String> {
    let last = path.len().saturating_sub(1);
    path.iter()
        .enumerate()
        .map(|(depth, key)| {
            let pad = " ".repeat(indent + depth * step);
            if depth == last {
                format!("{pad}{key}: {rendered}")
            } else {
                format!("{pad}{key}:")
            }
        })
        .collect()
}

fn join(lines: &[String], newline: &str) -> String {
    let mut text = lines.join(newline);
    if !text.is_empty() {
        text.push_str(newline);
    }
    text
}

/// A one-line YAML spelling of `value`: the user's own text when it reads back
/// as the same value, else a flow rendering with plain scalars where they are
/// unambiguous, else JSON (which YAML reads as flow style).
pub(crate) fn render_value(raw: &str, value: &Value) -> String {
    let raw = raw.trim();
    if !raw.is_empty() && !raw.contains(['\n', '\r']) && reads_back(raw, value) {
        return raw.to_owned();
    }
    let flow = flow(value);
    if reads_back(&flow, value) {
        return flow;
    }
    serde_json::to_string(value).unwrap_or(flow)
}

fn reads_back(text: &str, value: &Value) -> bool {
    let doc = format!("v: {text}\n");
    match serde_saphyr::from_str::<Value>(&doc) {
        Ok(Value::Object(map)) => map.len() == 1 && map.get("v") == Some(value),
        _ => false,
    }
}

fn flow(value: &Value) -> String {
    match value {
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(flow).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", flow_str(k), flow(v)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        Value::String(s) => flow_str(s),
        other => other.to_string(),
    }
}

/// A string as a plain scalar when nothing in it can be read as syntax.
fn flow_str(s: &str) -> String {
    let plain = !s.is_empty()
        && s.trim() == s
        && !s.starts_with(|c: char| "-?:,[]{}#&*!|>'\"%@`".contains(c))
        && !s.contains([',', '[', ']', '{', '}', '#', '\n', '\r', '\t'])
        && !s.contains(": ")
        && !s.ends_with(':');
    if plain {
        s.to_owned()
    } else {
        serde_json::Value::String(s.to_owned()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn set(text: &str, key: &str, value: &str) -> String {
        let path: Vec<&str> = key.split('.').collect();
        set_in_text(text, &path, value).unwrap()
    }

    #[test]
    fn replaces_a_scalar_and_keeps_its_comment() {
        let text = "# mine\nmodel:\n  name: a   # the small one\n\n  max_retries: 4\n";
        assert_eq!(
            set(text, "model.name", "b"),
            "# mine\nmodel:\n  name: b   # the small one\n\n  max_retries: 4\n"
        );
    }

    #[test]
    fn replaces_a_block_list_with_a_flow_list() {
        let text = "skills:\n  disabled:\n    - a\n    - b\n  # next\n  inline_shell: true\n";
        assert_eq!(
            set(text, "skills.disabled", "[c]"),
            "skills:\n  disabled: [c]\n  # next\n  inline_shell: true\n"
        );
        let same_indent = "skills:\n  disabled:\n  - a\n  - b\n  inline_shell: true\n";
        assert_eq!(
            set(same_indent, "skills.disabled", "[c]"),
            "skills:\n  disabled: [c]\n  inline_shell: true\n"
        );
    }

    #[test]
    fn adds_a_missing_key_at_the_end_of_its_section() {
        let text = "model:\n    name: a\n\n# hub below\nhub:\n    fetch_timeout_secs: 5\n";
        assert_eq!(
            set(text, "model.max_retries", "2"),
            "model:\n    name: a\n    max_retries: 2\n\n# hub below\nhub:\n    fetch_timeout_secs: 5\n"
        );
    }

    #[test]
    fn adds_missing_sections() {
        assert_eq!(
            set("", "skills.disabled", "[a]"),
            "skills:\n  disabled: [a]\n"
        );
        assert_eq!(
            set("model:\n  name: a\n# end\n", "hub.trusted_repos", "[x/y]"),
            "model:\n  name: a\n# end\nhub:\n  trusted_repos: [x/y]\n"
        );
        assert_eq!(
            set(
                "skills:\n# nothing yet\nmodel:\n  name: a\n",
                "skills.plugins.ns",
                "/p"
            ),
            "skills:\n  plugins:\n    ns: /p\n# nothing yet\nmodel:\n  name: a\n"
        );
    }

    #[test]
    fn a_leading_document_marker_and_crlf_are_kept() {
        assert_eq!(
            set("---\r\nmodel:\r\n  name: a\r\n", "model.name", "b"),
            "---\r\nmodel:\r\n  name: b\r\n"
        );
    }

    #[test]
    fn block_scalars_are_replaced_whole() {
        let text =
            "agent:\n  system_message: |\n    be brief\n    # not a comment\n  yolo: false\n";
        assert_eq!(
            set(text, "agent.system_message", "short"),
            "agent:\n  system_message: short\n  yolo: false\n"
        );
    }

    #[test]
    fn flow_mappings_on_the_way_are_refused() {
        let path = ["skills", "disabled"];
        let err = set_in_text("skills: {disabled: [a]}\n", &path, "[b]").unwrap_err();
        assert!(err.0.contains("flow mapping"), "{err:?}");
        assert!(set_in_text("{skills: {disabled: [a]}}\n", &path, "[b]").is_err());
        assert!(set_in_text("a: 1\n---\nb: 2\n", &path, "[b]").is_err());
    }

    #[test]
    fn comments_after_a_colon_and_quoted_hashes() {
        assert_eq!(split_comment(" 'a # b'  # c"), ("'a # b'", "  # c"));
        assert_eq!(split_comment(" a#b"), ("a#b", ""));
        assert_eq!(split_comment("   # only"), ("", "   # only"));
        assert_eq!(parse_key("\"k\": v"), Some(("k".to_owned(), 4)));
        assert_eq!(parse_key("url: http://x"), Some(("url".to_owned(), 4)));
        assert_eq!(parse_key("- a"), None);
    }

    #[test]
    fn values_render_as_the_user_wrote_them_when_they_read_back() {
        assert_eq!(
            render_value("[a, b]", &serde_json::json!(["a", "b"])),
            "[a, b]"
        );
        assert_eq!(
            render_value("qwen2.5:0.5b", &serde_json::json!("qwen2.5:0.5b")),
            "qwen2.5:0.5b"
        );
        assert_eq!(render_value("#x", &serde_json::json!("#x")), "\"#x\"");
        assert_eq!(render_value("", &serde_json::json!("")), "\"\"");
        assert_eq!(render_value("true", &serde_json::json!("true")), "\"true\"");
    }
}
