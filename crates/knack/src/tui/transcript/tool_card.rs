//! Tool cards: one summary line per call (what ran, on what, what came of it),
//! the error sentence of a failed call, and the result drawn as text — a
//! skill's SKILL.md as Markdown, command output as it was printed, anything
//! else as `key: value` lines. The raw JSON is one key away (Ctrl-T).
//!
//! Tool results reach the TUI as the agent loop's preview of the tool's reply
//! (`agent_loop::tool_preview`): valid JSON whose long strings and lists were
//! shortened and marked. The text keeps what was sent; the card ends with a
//! note that the rest is not shown.

use agent_loop::tool_preview::{is_shortened, split_cut};
use ratatui::text::{Line, Span};
use serde_json::{Map, Value};

use super::super::markdown;
use super::super::theme::Theme;
use super::super::wrap::{truncate, wrap_spans};
use super::{SPINNER, ToolStatus, format_duration};

/// Screen lines of a result a collapsed card shows.
pub const COLLAPSED_LINES: usize = 3;
/// Screen lines of a result an expanded card shows at most.
pub const EXPANDED_LINES: usize = 400;
/// The longest summary of a call's subject (a command, a path) on the card.
const SUBJECT_CHARS: usize = 80;
/// Where the result's lines start: under the tool name.
const GUTTER: &str = "    │ ";
const INDENT: &str = "    ";

/// What a card shows, borrowed from its transcript cell.
pub struct ToolCard<'a> {
    pub name: &'a str,
    pub arguments: &'a Value,
    pub status: &'a ToolStatus,
    pub output: &'a str,
    pub expanded: bool,
    pub raw: bool,
    /// The permission rule that let the call run without asking.
    pub approved_by: Option<&'a str>,
    /// What the call changed in files, as unified diffs.
    pub diffs: &'a [String],
}

/// Screen lines of a diff a collapsed edit card shows: enough to see the change start.
pub const DIFF_COLLAPSED_LINES: usize = 8;

/// Where the card is drawn and how.
pub struct Frame<'a> {
    pub width: usize,
    pub theme: &'a Theme,
    pub tick: usize,
    pub selected: bool,
}

/// A piece of a result's body, in the order it is drawn.
#[derive(Debug, PartialEq)]
enum Block {
    /// Printed as it is, line by line (command output, file content).
    Text(String),
    /// Rendered Markdown (a skill's instructions).
    Markdown(String),
    /// Dimmed text (a skill's frontmatter, notes about the result).
    Quiet(String),
    /// `key: value`, nested values indented under their key.
    Field(String, Value),
}

/// A result read for people: the card's summary and its body.
#[derive(Debug, Default, PartialEq)]
struct Reading {
    /// What the call worked on: the command, the path, the skill.
    subject: String,
    /// What came of it, for the summary line: "120 lines", "12 matches".
    detail: Option<String>,
    error: Option<String>,
    hint: Option<String>,
    body: Vec<Block>,
}

pub fn render(card: &ToolCard<'_>, frame: &Frame<'_>) -> Vec<Line<'static>> {
    let theme = frame.theme;
    let (result, cut, plain) = parse_result(card.output);
    let mut reading = match &result {
        Some(map) => read_result(card.name, card.arguments, map),
        None => Reading {
            subject: summarize_arguments(card.arguments),
            body: (!plain.trim().is_empty())
                .then(|| Block::Text(plain.to_owned()))
                .into_iter()
                .collect(),
            ..Reading::default()
        },
    };

    if cut {
        reading.body.push(Block::Quiet(
            "… the rest is not shown here (the model received all of it)".to_owned(),
        ));
    }
    let has_diff = !card.raw && !card.diffs.is_empty();
    if has_diff {
        let (added, removed) = card
            .diffs
            .iter()
            .map(|d| agent_loop::edit_diff::stat(d))
            .fold((0, 0), |(a, r), (da, dr)| (a + da, r + dr));
        let stat = format!("+{added} -{removed}");
        reading.detail = Some(match reading.detail.take() {
            Some(detail) => format!("{detail} · {stat}"),
            None => stat,
        });
    }
    let mut out = head(card, &reading, frame);
    if let Some(rule) = card.approved_by {
        let lead = [Span::raw(INDENT)];
        out.extend(wrap_spans(
            &[Span::styled(
                format!("allowed without asking by rule {rule}"),
                theme.dim(),
            )],
            frame.width,
            &lead,
            &lead,
        ));
    }
    if let Some(error) = &reading.error {
        let lead = [Span::raw(INDENT)];
        out.extend(wrap_spans(
            &[Span::styled(error.clone(), theme.failure())],
            frame.width,
            &lead,
            &lead,
        ));
        if let Some(hint) = reading.hint.as_ref().filter(|_| card.expanded) {
            out.extend(wrap_spans(
                &[Span::styled(hint.clone(), theme.dim())],
                frame.width,
                &lead,
                &lead,
            ));
        }
    }

    let body_width = frame.width.saturating_sub(GUTTER.chars().count()).max(1);
    let mut body = if card.raw {
        raw_lines(card.output, result.as_ref(), body_width, theme)
    } else if has_diff {
        diff_body(card.diffs, body_width, theme)
    } else {
        body_lines(&reading.body, body_width, theme)
    };
    if body.is_empty() {
        return out;
    }
    let collapsed = if has_diff {
        DIFF_COLLAPSED_LINES
    } else {
        COLLAPSED_LINES
    };
    let shown = if card.expanded {
        EXPANDED_LINES
    } else {
        collapsed
    };
    let total = body.len();
    let hidden = total.saturating_sub(shown);
    body.truncate(shown);
    let gutter = Span::styled(GUTTER, theme.gutter());
    out.extend(body.into_iter().map(|line| {
        let mut spans = vec![gutter.clone()];
        spans.extend(line.spans);
        Line::from(spans)
    }));
    let lines = if hidden == 1 { "line" } else { "lines" };
    let hint = if hidden > 0 && card.expanded {
        Some(format!("… {hidden} more {lines} not shown"))
    } else if hidden > 0 {
        Some(format!("… {hidden} more {lines} (ctrl-o expands)"))
    } else if card.expanded && total > collapsed {
        Some("(ctrl-o collapses)".to_owned())
    } else {
        None
    };
    if let Some(hint) = hint {
        out.push(Line::from(vec![
            Span::raw(INDENT),
            Span::styled(hint, theme.dim()),
        ]));
    }
    out
}

/// File diffs as the card's body: the `---`/`+++` headers dropped (the card names the
/// file), added lines green, removed red, hunk headers in the accent colour.
fn diff_body(diffs: &[String], width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for diff in diffs {
        for line in diff.lines() {
            if line.starts_with("+++") || line.starts_with("---") {
                continue;
            }
            let style = match line.as_bytes().first() {
                Some(b'+') => theme.success(),
                Some(b'-') => theme.failure(),
                Some(b'@') => theme.accent(),
                _ => theme.text(),
            };
            out.extend(wrap_spans(
                &[Span::styled(line.to_owned(), style)],
                width,
                &[],
                &[],
            ));
        }
    }
    out
}

/// `✓ name  subject — detail  1.2s`, wrapped under the name.
fn head(card: &ToolCard<'_>, reading: &Reading, frame: &Frame<'_>) -> Vec<Line<'static>> {
    let theme = frame.theme;
    let (icon, icon_style, duration) = match card.status {
        ToolStatus::Running => (
            SPINNER[frame.tick % SPINNER.len()],
            theme.warning(),
            String::new(),
        ),
        ToolStatus::Done {
            success,
            duration_ms,
        } => {
            let (icon, style) = outcome(*success, theme);
            (icon, style, format_duration(*duration_ms))
        }
        ToolStatus::Stored { success } => {
            let (icon, style) = outcome(*success, theme);
            (icon, style, String::new())
        }
    };
    let marker = if frame.selected {
        Span::styled("▶ ", theme.selected())
    } else {
        Span::raw("  ")
    };
    let mut spans = vec![Span::styled(card.name.to_owned(), theme.tool_name())];
    if !reading.subject.is_empty() {
        // A long command is cut on a collapsed card and wraps whole once expanded.
        let subject = if card.expanded {
            reading.subject.clone()
        } else {
            truncate(&reading.subject, SUBJECT_CHARS)
        };
        spans.push(Span::raw("  "));
        spans.push(Span::styled(subject, theme.text()));
    }
    if let Some(detail) = &reading.detail {
        spans.push(Span::styled(format!(" — {detail}"), theme.dim()));
    }
    if !duration.is_empty() {
        spans.push(Span::styled(format!("  {duration}"), theme.dim()));
    }
    if card.raw {
        spans.push(Span::styled("  · raw JSON", theme.dim()));
    }
    let first = [marker, Span::styled(format!("{icon} "), icon_style)];
    wrap_spans(&spans, frame.width, &first, &[Span::raw(INDENT)])
}

fn outcome(success: bool, theme: &Theme) -> (&'static str, ratatui::style::Style) {
    if success {
        ("✓", theme.success())
    } else {
        ("✗", theme.failure())
    }
}

/// The tool's reply as an object (`None` when it is not a JSON object),
/// whether the preview shortened it, and the text shown when it is not an
/// object (plain text without the preview's marker).
fn parse_result(output: &str) -> (Option<Map<String, Value>>, bool, &str) {
    let Ok(mut value) = serde_json::from_str::<Value>(output.trim()) else {
        let (text, more) = split_cut(output);
        return (None, more.is_some(), text);
    };
    // Decoded strings may hold control sequences the JSON text kept escaped.
    crate::terminal_text::escape_json(&mut value);
    let cut = is_shortened(&value);
    match value {
        Value::Object(map) => (Some(map), cut, output),
        _ => (None, cut, output),
    }
}

/// Reads a tool's reply for people: the parts each tool is known for, then
/// every other field as `key: value`.
fn read_result(name: &str, args: &Value, result: &Map<String, Value>) -> Reading {
    let arg = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or_default();
    // A shortened string loses its marker here: the card's last line says
    // that the rest is not shown.
    let text = |key: &str| split_cut(result.get(key).and_then(Value::as_str).unwrap_or_default()).0;
    let num = |key: &str| result.get(key).and_then(Value::as_u64);
    let truncated = result.get("truncated").and_then(Value::as_bool) == Some(true);
    let mut reading = Reading {
        error: result
            .get("error")
            .and_then(Value::as_str)
            .map(str::to_owned),
        hint: result
            .get("hint")
            .and_then(Value::as_str)
            .map(str::to_owned),
        ..Reading::default()
    };
    // The fields this tool's reading shows; the rest are listed after it.
    let mut used: Vec<&str> = vec!["success", "error", "hint"];
    let body = &mut reading.body;
    match name {
        "terminal" => {
            reading.subject = one_line(arg("command"));
            push_text(body, text("output"));
            if truncated {
                let note = match result.get("full_output").and_then(Value::as_str) {
                    Some(path) => format!("output cut; all of it is in {path}"),
                    None => "output cut".to_owned(),
                };
                body.push(Block::Quiet(note));
            }
            if let Some(note) = result.get("note").and_then(Value::as_str) {
                body.push(Block::Quiet(note.to_owned()));
            }
            used.extend([
                "output",
                "duration_ms",
                "truncated",
                "full_output",
                "note",
                "exit_code",
                "timed_out",
                "interrupted",
            ]);
        }
        "read_file" => {
            reading.subject = one_line(first_of(arg("path"), text("path")));
            if let (Some(start), Some(end), Some(total)) =
                (num("start_line"), num("end_line"), num("total_lines"))
            {
                reading.detail = Some(if start <= 1 && end >= total {
                    plural(total, "line", "lines")
                } else {
                    format!("lines {start}–{end} of {total}")
                });
            }
            push_text(body, text("content"));
            used.extend([
                "path",
                "content",
                "start_line",
                "end_line",
                "total_lines",
                "truncated",
            ]);
        }
        "write_file" => {
            reading.subject = one_line(first_of(arg("path"), text("path")));
            if let Some(bytes) = num("bytes_written") {
                let created = result.get("created").and_then(Value::as_bool) == Some(true);
                let what = plural(bytes, "byte", "bytes");
                reading.detail = Some(if created {
                    format!("new file, {what}")
                } else {
                    what
                });
            }
            used.extend(["path", "bytes_written", "created"]);
        }
        "patch" => {
            reading.subject = one_line(first_of(arg("path"), text("path")));
            reading.detail = num("replacements").map(|n| plural(n, "replacement", "replacements"));
            used.extend(["path", "replacements"]);
        }
        "search_files" => {
            reading.subject = format!("\"{}\"", one_line(arg("pattern")));
            if !arg("path").is_empty() {
                reading
                    .subject
                    .push_str(&format!(" in {}", one_line(arg("path"))));
            }
            let (key, one, many) = if result.contains_key("files") {
                ("files", "file", "files")
            } else {
                ("matches", "match", "matches")
            };
            if let Some(count) = num("count") {
                let more = if truncated { " (more exist)" } else { "" };
                reading.detail = Some(format!("{}{more}", plural(count, one, many)));
            }
            push_text(body, &string_list(result.get(key)));
            used.extend(["count", "matches", "files", "truncated"]);
            if truncated {
                used.push("hint");
                reading.hint = None;
            }
        }
        "skill_view" => {
            reading.subject = one_line(arg("name"));
            if !arg("file_path").is_empty() {
                reading
                    .subject
                    .push_str(&format!(" {}", one_line(arg("file_path"))));
            }
            if text("readiness_status") == "setup_needed" {
                reading.detail = Some("setup needed".to_owned());
            }
            let content = text("content");
            let binary = result.get("is_binary").and_then(Value::as_bool) == Some(true);
            let markdown = arg("file_path").is_empty() || arg("file_path").ends_with(".md");
            if binary || !markdown {
                push_text(body, content);
            } else {
                push_skill_text(body, content);
            }
            for (key, label) in [
                ("linked_files", "linked files"),
                (
                    "missing_required_environment_variables",
                    "missing variables",
                ),
            ] {
                if let Some(value) = result.get(key).filter(|v| !is_empty(v)) {
                    body.push(Block::Field(label.to_owned(), value.clone()));
                }
            }
            used.extend([
                "name",
                "description",
                "category",
                "id",
                "qualified_id",
                "scope",
                "path",
                "skill_dir",
                "content",
                "tags",
                "related_skills",
                "linked_files",
                "readiness_status",
                "missing_required_environment_variables",
                "file",
                "is_binary",
            ]);
        }
        "skills_list" => {
            reading.subject = one_line(arg("category"));
            reading.detail = num("count").map(|n| plural(n, "skill", "skills"));
            let skills = result.get("skills").and_then(Value::as_array);
            let lines: Vec<String> = skills
                .into_iter()
                .flatten()
                .map(|s| {
                    let id = s.get("id").and_then(Value::as_str).unwrap_or_default();
                    let about = s
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    format!("{id} — {}", one_line(about))
                })
                .collect();
            push_text(body, &lines.join("\n"));
            used.extend(["count", "categories", "skills"]);
        }
        "skill_manage" | "memory" => {
            let target = if name == "memory" {
                arg("target")
            } else {
                arg("name")
            };
            reading.subject = one_line(&format!("{} {target}", arg("action")));
            reading.detail = num("replacements").map(|n| plural(n, "replacement", "replacements"));
            if let (Some(used), Some(limit)) = (num("chars_used"), num("char_limit")) {
                let entries = plural(num("entry_count").unwrap_or(0), "entry", "entries");
                reading.detail = Some(format!("{entries}, {used}/{limit} characters"));
            }
            push_text(body, text("message"));
            used.extend([
                "message",
                "replacements",
                "target",
                "entry_count",
                "chars_used",
                "char_limit",
            ]);
        }
        "web_fetch" => {
            reading.subject = one_line(first_of(text("url"), arg("url")));
            let content = text("content");
            if !content.is_empty() {
                reading.detail = Some(plural(content.lines().count() as u64, "line", "lines"));
                body.push(Block::Markdown(content.to_owned()));
            }
            used.extend(["url", "content"]);
        }
        "session_search" => {
            reading.subject = format!("\"{}\"", one_line(arg("query")));
            reading.detail = num("count").map(|n| plural(n, "result", "results"));
            let hits = result.get("results").and_then(Value::as_array);
            let lines: Vec<String> = hits
                .into_iter()
                .flatten()
                .map(|h| {
                    let field = |k: &str| h.get(k).and_then(Value::as_str).unwrap_or_default();
                    format!(
                        "{} {}: {}",
                        field("session_id"),
                        field("role"),
                        one_line(field("snippet"))
                    )
                })
                .collect();
            push_text(body, &lines.join("\n"));
            push_text(body, text("message"));
            used.extend(["count", "results", "message"]);
        }
        _ if name.starts_with("mcp__") => {
            reading.subject = summarize_arguments(args);
            push_text(body, text("output"));
            used.push("output");
        }
        _ => reading.subject = summarize_arguments(args),
    }
    for (key, value) in result {
        if !used.contains(&key.as_str()) && !is_empty(value) {
            body.push(Block::Field(label_of(key), value.clone()));
        }
    }
    reading
}

fn push_text(body: &mut Vec<Block>, text: &str) {
    if !text.trim().is_empty() {
        body.push(Block::Text(text.to_owned()));
    }
}

/// A SKILL.md: its frontmatter dimmed as written, its instructions as Markdown.
fn push_skill_text(body: &mut Vec<Block>, content: &str) {
    let text = skill_core::frontmatter::strip_bom(content);
    match skill_core::frontmatter::split_frontmatter(text) {
        Ok(Some((yaml, body_at))) => {
            body.push(Block::Quiet(yaml.trim_end().to_owned()));
            let rest = text.get(body_at..).unwrap_or_default();
            if !rest.trim().is_empty() {
                body.push(Block::Markdown(rest.to_owned()));
            }
        }
        _ if !text.trim().is_empty() => body.push(Block::Markdown(text.to_owned())),
        _ => {}
    }
}

fn body_lines(blocks: &[Block], width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        // Rendered Markdown is set off from what follows it (a skill's
        // linked files); the frontmatter before it stays close, so a
        // collapsed card shows the description and the first heading.
        if i > 0 && matches!(blocks[i - 1], Block::Markdown(_)) {
            out.push(Line::default());
        }
        match block {
            Block::Text(text) => out.extend(text_lines(text, width, theme.text())),
            Block::Quiet(text) => out.extend(text_lines(text, width, theme.dim())),
            Block::Markdown(text) => out.extend(markdown::render(text, width, theme)),
            Block::Field(key, value) => field_lines("", key, value, 0, width, theme, &mut out),
        }
    }
    out
}

/// Text as it was printed: its own line breaks, wrapped where too long.
fn text_lines(
    text: &str,
    width: usize,
    style: ratatui::style::Style,
) -> impl Iterator<Item = Line<'static>> {
    text.trim_end_matches('\n')
        .split('\n')
        .map(move |line| {
            wrap_spans(
                &[Span::styled(line.trim_end_matches('\r').to_owned(), style)],
                width,
                &[],
                &[],
            )
        })
        .collect::<Vec<_>>()
        .into_iter()
        .flatten()
}

/// `key: value` for a scalar or a short list; otherwise the key alone with
/// the parts indented under it, list items marked `- ` (as YAML reads).
fn field_lines(
    bullet: &str,
    key: &str,
    value: &Value,
    indent: usize,
    width: usize,
    theme: &Theme,
    out: &mut Vec<Line<'static>>,
) {
    let label = if key.is_empty() {
        bullet.to_owned()
    } else {
        format!("{bullet}{key}: ")
    };
    let first = [
        Span::raw(" ".repeat(indent)),
        Span::styled(label, theme.dim()),
    ];
    let inner = indent + bullet.chars().count() + 2;
    let hang = [Span::raw(" ".repeat(inner))];
    let inline = match value {
        Value::String(s) if !s.contains('\n') => Some(s.clone()),
        Value::Array(items) if items.iter().all(is_scalar) => {
            Some(items.iter().map(scalar_text).collect::<Vec<_>>().join(", "))
        }
        Value::String(_) | Value::Array(_) | Value::Object(_) => None,
        other => Some(scalar_text(other)),
    };
    if let Some(text) = inline {
        out.extend(wrap_spans(
            &[Span::styled(text, theme.text())],
            width,
            &first,
            &hang,
        ));
        return;
    }
    if !key.is_empty() {
        out.push(Line::from(vec![
            Span::raw(" ".repeat(indent)),
            Span::styled(format!("{bullet}{key}:"), theme.dim()),
        ]));
    }
    match value {
        Value::String(s) => {
            for line in text_lines(s, width.saturating_sub(inner).max(1), theme.text()) {
                let mut spans = hang.to_vec();
                spans.extend(line.spans);
                out.push(Line::from(spans));
            }
        }
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::Object(map) if !map.is_empty() => {
                        for (i, (k, v)) in map.iter().enumerate() {
                            let mark = if i == 0 { "- " } else { "  " };
                            field_lines(mark, &label_of(k), v, inner, width, theme, out);
                        }
                    }
                    other => field_lines("- ", "", other, inner, width, theme, out),
                }
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                field_lines("", &label_of(k), v, inner, width, theme, out);
            }
        }
        _ => {}
    }
}

/// A JSON key as words: `available_skills` reads "available skills".
fn label_of(key: &str) -> String {
    key.replace('_', " ")
}

/// The reply as it came: pretty JSON when it is JSON, the text otherwise.
fn raw_lines(
    output: &str,
    result: Option<&Map<String, Value>>,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let text = match result {
        Some(map) => serde_json::to_string_pretty(map).unwrap_or_else(|_| output.into()),
        _ => output.to_owned(),
    };
    if text.trim().is_empty() {
        return Vec::new();
    }
    text_lines(&text, width, theme.dim()).collect()
}

fn is_scalar(value: &Value) -> bool {
    !matches!(value, Value::Array(_) | Value::Object(_))
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn string_list(value: Option<&Value>) -> String {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(scalar_text)
        .collect::<Vec<_>>()
        .join("\n")
}

fn first_of<'a>(a: &'a str, b: &'a str) -> &'a str {
    if a.is_empty() { b } else { a }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Whitespace (newlines included) folded to single spaces. The card's head
/// cuts it to fit when collapsed; expanded, it is shown whole, wrapped.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A one-line view of a tool's arguments: the fields that say the most, or
/// compact JSON; whole (the card's head cuts it when collapsed).
fn summarize_arguments(arguments: &Value) -> String {
    const KEYS: [&str; 8] = [
        "command",
        "path",
        "file_path",
        "name",
        "query",
        "pattern",
        "action",
        "category",
    ];
    let text = match arguments {
        Value::Object(map) => {
            let picked: Vec<&str> = KEYS
                .iter()
                .filter_map(|k| map.get(*k).and_then(Value::as_str))
                .take(2)
                .collect();
            if picked.is_empty() {
                if map.is_empty() {
                    String::new()
                } else {
                    arguments.to_string()
                }
            } else {
                picked.join(" ")
            }
        }
        Value::String(raw) => raw.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    one_line(&text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn plain(card: &ToolCard<'_>, width: usize) -> Vec<String> {
        let frame = Frame {
            width,
            theme: &Theme::plain(),
            tick: 0,
            selected: false,
        };
        render(card, &frame)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    fn done(name: &'static str, arguments: &Value, output: &str) -> Vec<String> {
        let card = ToolCard {
            name,
            arguments,
            status: &ToolStatus::Done {
                success: true,
                duration_ms: 20,
            },
            output,
            expanded: true,
            raw: false,
            approved_by: None,
            diffs: &[],
        };
        plain(&card, 60)
    }

    #[test]
    fn an_edit_card_shows_its_diff_and_the_rule_that_allowed_it() {
        let diff = agent_loop::edit_diff::unified(
            std::path::Path::new("src/a.rs"),
            "fn a() {}\nfn b() {}\n",
            "fn a() {}\nfn b() { todo!() }\n",
        );
        let diffs = [diff];
        let out = json!({"success": true, "path": "src/a.rs", "replacements": 1}).to_string();
        let mut card = ToolCard {
            name: "patch",
            arguments: &json!({"path": "src/a.rs"}),
            status: &ToolStatus::Stored { success: true },
            output: &out,
            expanded: false,
            raw: false,
            approved_by: Some("write(/srv:*)"),
            diffs: &diffs,
        };
        let lines = plain(&card, 60);
        assert!(lines[0].contains("+1 -1"), "{lines:?}");
        assert_eq!(lines[1], "    allowed without asking by rule write(/srv:*)");
        assert_eq!(
            lines[2..],
            [
                "    │ @@ -1,2 +1,2 @@",
                "    │  fn a() {}",
                "    │ -fn b() {}",
                "    │ +fn b() { todo!() }",
            ]
        );
        // The raw view still shows the tool's reply.
        card.raw = true;
        card.expanded = true;
        assert!(plain(&card, 60).iter().any(|l| l.contains("replacements")));
    }

    #[test]
    fn a_long_diff_is_cut_when_collapsed_and_whole_when_expanded() {
        let new: String = (0..500).map(|i| format!("line {i}\n")).collect();
        let diffs = [agent_loop::edit_diff::unified(
            std::path::Path::new("big.txt"),
            "",
            &new,
        )];
        let out = json!({"success": true, "created": true}).to_string();
        let mut card = ToolCard {
            name: "write_file",
            arguments: &json!({"path": "big.txt"}),
            status: &ToolStatus::Stored { success: true },
            output: &out,
            expanded: false,
            raw: false,
            approved_by: None,
            diffs: &diffs,
        };
        let collapsed = plain(&card, 60);
        // Head, the hunk header and the file's head, then the expand hint.
        assert_eq!(
            collapsed.len(),
            1 + DIFF_COLLAPSED_LINES + 1,
            "{collapsed:?}"
        );
        assert_eq!(collapsed[2], "    │ +line 0");
        assert!(collapsed.last().unwrap().contains("ctrl-o expands"));
        card.expanded = true;
        let expanded = plain(&card, 60);
        assert!(
            expanded.iter().any(|l| l == "    │ +line 398"),
            "{}",
            expanded.len()
        );
    }

    #[test]
    fn a_long_command_is_cut_when_collapsed_and_wraps_whole_when_expanded() {
        let command = format!(
            "echo start && {} && echo the-very-end",
            "true ".repeat(40).trim()
        );
        let args = json!({"command": command});
        let output = r#"{"success": true, "output": "start", "exit_code": 0}"#;
        let card = |expanded| ToolCard {
            name: "terminal",
            arguments: &args,
            status: &ToolStatus::Done {
                success: true,
                duration_ms: 5,
            },
            output,
            expanded,
            raw: false,
            approved_by: None,
            diffs: &[],
        };
        let collapsed = plain(&card(false), 60).join("\n");
        assert!(!collapsed.contains("the-very-end"), "{collapsed}");
        assert!(collapsed.contains('…'), "{collapsed}");
        let expanded = plain(&card(true), 60);
        let text = expanded.join(" ");
        assert!(text.contains("the-very-end"), "{text}");
        assert!(
            expanded.iter().all(|l| l.chars().count() <= 60),
            "{expanded:#?}"
        );
        let head_lines = expanded.iter().take_while(|l| !l.contains('│')).count();
        assert!(
            head_lines > 2,
            "the command wraps over several lines: {expanded:#?}"
        );
    }

    #[test]
    fn argument_summaries_prefer_telling_fields() {
        assert_eq!(
            summarize_arguments(&json!({"path": "a.rs", "x": 1})),
            "a.rs"
        );
        assert_eq!(summarize_arguments(&json!({"x": 1})), r#"{"x":1}"#);
        assert_eq!(summarize_arguments(&json!("raw {")), "raw {");
    }

    #[test]
    fn a_shortened_preview_reads_as_text_and_says_the_rest_is_not_shown() {
        use agent_loop::tool_preview::preview;
        let shown = |name: &'static str, output: &str| done(name, &json!({}), output).join("\n");
        let note = "… the rest is not shown here (the model received all";

        let output: String = (1..=400).map(|i| format!("line {i}\n")).collect();
        let reply = json!({"success": true, "output": output, "exit_code": 0}).to_string();
        let text = shown("terminal", &preview(&reply));
        assert!(text.contains("    │ line 1\n    │ line 2\n"), "{text}");
        assert!(text.contains(note), "{text}");
        assert!(!text.contains("more characters]"), "{text}");

        let plain = "word ".repeat(1000);
        let text = shown("mcp__docs__fetch", &preview(&plain));
        assert!(text.contains("    │ word word"), "{text}");
        assert!(text.contains(note), "{text}");
        assert!(!text.contains("more characters]"), "{text}");

        // A list cut short ends in its count, and the note follows.
        let reply = json!({"success": true, "rows": (0..1000).collect::<Vec<_>>()}).to_string();
        let text = shown("custom_tool", &preview(&reply));
        assert!(text.contains("rows: 0, 1, 2"), "{text}");
        assert!(text.contains("more items]"), "{text}");
        assert!(text.contains(note), "{text}");

        // A whole result says nothing of the kind.
        let text = shown("custom_tool", r#"{"success": true, "n": 1}"#);
        assert!(!text.contains(note), "{text}");
    }

    #[test]
    fn terminal_output_is_shown_as_printed() {
        let out =
            json!({"success": true, "output": "a  b\n\tc\n", "exit_code": 0, "duration_ms": 3});
        assert_eq!(
            done(
                "terminal",
                &json!({"command": "printf x"}),
                &out.to_string()
            ),
            vec!["  ✓ terminal  printf x  20ms", "    │ a  b", "    │  c"]
        );
    }

    #[test]
    fn a_failed_call_says_why_under_its_summary() {
        let out = json!({"success": false, "error": "the command exited with status 2.",
                         "hint": "Look at the output.", "output": "boom", "exit_code": 2});
        let card = ToolCard {
            name: "terminal",
            arguments: &json!({"command": "make"}),
            status: &ToolStatus::Stored { success: false },
            output: &out.to_string(),
            expanded: false,
            raw: false,
            approved_by: None,
            diffs: &[],
        };
        assert_eq!(
            plain(&card, 60),
            vec![
                "  ✗ terminal  make",
                "    the command exited with status 2.",
                "    │ boom"
            ]
        );
    }

    #[test]
    fn read_and_search_results_say_how_much_came_back() {
        let read = json!({"success": true, "path": "/abs/src/main.rs", "content": "     1\tfn main() {}\n",
                          "start_line": 1, "end_line": 1, "total_lines": 1});
        assert_eq!(
            done(
                "read_file",
                &json!({"path": "src/main.rs"}),
                &read.to_string()
            )[0],
            "  ✓ read_file  src/main.rs — 1 line  20ms"
        );
        let search = json!({"success": true, "count": 2, "matches": ["a.rs:1: foo", "b.rs:9: foo"],
                            "truncated": true, "hint": "More results exist."});
        assert_eq!(
            done(
                "search_files",
                &json!({"pattern": "foo"}),
                &search.to_string()
            ),
            vec![
                "  ✓ search_files  \"foo\" — 2 matches (more exist)  20ms",
                "    │ a.rs:1: foo",
                "    │ b.rs:9: foo"
            ]
        );
    }

    #[test]
    fn other_fields_read_as_key_value_lines() {
        let out = json!({"success": true, "count": 2, "items": [{"id": "a", "tags": ["x", "y"]}],
                         "note_text": "two\nlines"});
        assert_eq!(
            done("custom_tool", &json!({}), &out.to_string()),
            vec![
                "  ✓ custom_tool  20ms",
                "    │ count: 2",
                "    │ items:",
                "    │   - id: a",
                "    │     tags: x, y",
                "    │ note text:",
                "    │   two",
                "    │   lines",
                "    (ctrl-o collapses)",
            ]
        );
    }

    #[test]
    fn raw_shows_the_json_and_plain_text_stays_text() {
        let out = json!({"success": true, "output": "hi"}).to_string();
        let card = ToolCard {
            name: "mcp__docs__fetch",
            arguments: &json!({"url": "u"}),
            status: &ToolStatus::Stored { success: true },
            output: &out,
            expanded: true,
            raw: true,
            approved_by: None,
            diffs: &[],
        };
        let lines = plain(&card, 60);
        assert!(lines[0].ends_with("· raw JSON"), "{lines:?}");
        assert_eq!(lines[1..3], ["    │ {", "    │   \"success\": true,"]);
        assert_eq!(
            done("mcp__docs__fetch", &json!({}), "not json\nat all"),
            vec![
                "  ✓ mcp__docs__fetch  20ms",
                "    │ not json",
                "    │ at all"
            ]
        );
    }
}
