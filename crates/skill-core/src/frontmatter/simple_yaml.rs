//! Fast reader for the small YAML subset that almost every SKILL.md frontmatter
//! is written in; it gives serde-saphyr's exact answer or declines (`None`).

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::value::{MapDeserializer, SeqDeserializer};
use serde::de::{self, Deserializer, IntoDeserializer, Visitor};

use super::RawFrontmatter;

/// Bigger texts are rare and not worth the risk of hitting a serde-saphyr
/// budget that this reader does not model.
const MAX_TEXT_BYTES: usize = 32 * 1024;
/// Far below serde-saphyr's depth budget and its 1024-char simple-key limit.
const MAX_DEPTH: usize = 16;
const MAX_KEY_BYTES: usize = 128;

/// The marker for "not in the subset": the caller then asks serde-saphyr.
#[derive(Debug)]
struct Decline;

type Res<T> = Result<T, Decline>;

/// One YAML node of the subset. Plain scalars keep their text so the
/// deserializer can decide, by what the target type asks for, whether YAML
/// would have typed them.
#[derive(Debug)]
enum Node<'a> {
    Plain(&'a str),
    /// Quoted or block scalars: always strings, whatever their text.
    Text(Cow<'a, str>),
    Seq(Vec<Node<'a>>),
    Map(Vec<(&'a str, Node<'a>)>),
}

/// Parses `yaml` when every line is in the subset, else returns `None`.
pub(super) fn parse(yaml: &str) -> Option<RawFrontmatter> {
    let entries = parse_tree(yaml)?;
    RawFrontmatter::deserialize(Node::Map(entries)).ok()
}

fn parse_tree(yaml: &str) -> Option<Vec<(&str, Node<'_>)>> {
    if yaml.len() > MAX_TEXT_BYTES || has_risky_char(yaml) {
        return None;
    }
    let lines = split_lines(yaml)?;
    let mut reader = Reader { lines, pos: 0 };
    let entries = reader.map(0, 0).ok()?;
    // Everything must have been consumed; a leftover line is outside the subset.
    match reader.peek_indent() {
        Ok(None) => Some(entries),
        _ => None,
    }
}

fn has_risky_char(yaml: &str) -> bool {
    // Byte scan first: most frontmatter is ASCII.
    yaml.bytes()
        .any(|b| (b < 0x20 && b != b'\n' && b != b'\r') || b == 0x7f)
        || (!yaml.is_ascii() && yaml.chars().any(is_risky_char))
}

/// Characters whose handling differs between YAML versions or parsers, or that
/// make the text invalid: tabs, controls, BOMs and Unicode line separators.
fn is_risky_char(c: char) -> bool {
    match c {
        '\n' | '\r' => false,
        '\t' | '\u{feff}' | '\u{2028}' | '\u{2029}' | '\u{fffe}' | '\u{ffff}' => true,
        c => c.is_control(),
    }
}

struct Line<'a> {
    indent: usize,
    /// The whole line without its line break.
    raw: &'a str,
    /// Whether a line break followed it (the last line of a text may lack one).
    terminated: bool,
}

impl<'a> Line<'a> {
    fn is_blank(&self) -> bool {
        self.indent == self.raw.len()
    }
    fn content(&self) -> &'a str {
        self.raw[self.indent..].trim_end_matches(' ')
    }
}

fn split_lines(yaml: &str) -> Option<Vec<Line<'_>>> {
    let mut lines = Vec::new();
    let mut rest = yaml;
    while !rest.is_empty() {
        let (line, terminated, next) = match rest.find('\n') {
            Some(i) => (&rest[..i], true, &rest[i + 1..]),
            None => (rest, false, ""),
        };
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.contains('\r') {
            return None;
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        lines.push(Line {
            indent,
            raw: line,
            terminated,
        });
        rest = next;
    }
    Some(lines)
}

struct Reader<'a> {
    lines: Vec<Line<'a>>,
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Skips blank lines and column-0 comments; the indent of the next line
    /// that carries content, or `None` at the end.
    /// True when the next line sits at `indent` (the block goes on), false
    /// when the input or the block ends; a deeper line is declined.
    fn continues_at(&mut self, indent: usize) -> Res<bool> {
        match self.peek_indent()? {
            Some(i) if i > indent => Err(Decline),
            Some(i) => Ok(i == indent),
            None => Ok(false),
        }
    }

    fn peek_indent(&mut self) -> Res<Option<usize>> {
        while let Some(line) = self.lines.get(self.pos) {
            if line.is_blank() {
                self.pos += 1;
            } else if line.content().starts_with('#') {
                // An indented comment may sit inside a multi-line scalar in
                // real YAML; only column-0 comments are surely comments here.
                if line.indent != 0 {
                    return Err(Decline);
                }
                self.pos += 1;
            } else {
                return Ok(Some(line.indent));
            }
        }
        Ok(None)
    }

    fn current(&self) -> Res<&Line<'a>> {
        self.lines.get(self.pos).ok_or(Decline)
    }

    /// A block mapping whose keys all sit at `indent`.
    fn map(&mut self, indent: usize, depth: usize) -> Res<Vec<(&'a str, Node<'a>)>> {
        if depth > MAX_DEPTH {
            return Err(Decline);
        }
        let mut entries: Vec<(&'a str, Node<'a>)> = Vec::new();
        loop {
            if !self.continues_at(indent)? {
                break;
            }
            let (key, rest) = split_key(self.current()?.content())?;
            // Duplicates are left to serde-saphyr's LastWins policy.
            if entries.iter().any(|(k, _)| *k == key) {
                return Err(Decline);
            }
            self.pos += 1;
            let node = if rest.is_empty() {
                self.nested(indent, depth)?
            } else {
                let node = self.inline_value(rest, indent)?;
                // A deeper line after a value is a continuation or an error.
                if self.peek_indent()?.is_some_and(|i| i > indent) {
                    return Err(Decline);
                }
                node
            };
            entries.push((key, node));
        }
        if entries.is_empty() {
            return Err(Decline);
        }
        Ok(entries)
    }

    /// The block node under `key:` written with nothing after the colon.
    fn nested(&mut self, key_indent: usize, depth: usize) -> Res<Node<'a>> {
        // No deeper line means a null value, which is left to serde-saphyr.
        let indent = self.peek_indent()?.ok_or(Decline)?;
        let starts_item = is_seq_item(self.current()?.content());
        if starts_item && indent >= key_indent {
            Ok(Node::Seq(self.seq(indent)?))
        } else if indent > key_indent {
            Ok(Node::Map(self.map(indent, depth + 1)?))
        } else {
            Err(Decline)
        }
    }

    /// A block sequence of scalar items at `indent`.
    fn seq(&mut self, indent: usize) -> Res<Vec<Node<'a>>> {
        let mut items = Vec::new();
        loop {
            if !self.continues_at(indent)? {
                break;
            }
            let content = self.current()?.content();
            if !is_seq_item(content) {
                // The parent decides whether this line may follow the list.
                break;
            }
            let item = content[1..].trim_start_matches(' ');
            let node = match item.as_bytes().first() {
                Some(b'"') => Node::Text(double_quoted_line(item)?),
                Some(b'\'') => Node::Text(single_quoted_line(item)?),
                _ => Node::Plain(check_block_plain(item)?),
            };
            items.push(node);
            self.pos += 1;
        }
        if items.is_empty() {
            return Err(Decline);
        }
        Ok(items)
    }

    /// The value written on the same line as its key.
    fn inline_value(&mut self, value: &'a str, key_indent: usize) -> Res<Node<'a>> {
        match value.as_bytes()[0] {
            b'"' => Ok(Node::Text(double_quoted_line(value)?)),
            b'\'' => Ok(Node::Text(single_quoted_line(value)?)),
            b'[' => Ok(Node::Seq(flow_seq(value)?)),
            b'|' | b'>' => self.block_scalar(value, key_indent),
            _ => Ok(Node::Plain(check_block_plain(value)?)),
        }
    }

    /// `|`, `|-`, `>` or `>-` with every content line at one indent, no blank
    /// line inside and no trailing spaces: the shapes where folding is trivial.
    fn block_scalar(&mut self, header: &str, key_indent: usize) -> Res<Node<'a>> {
        let (literal, strip) = match header {
            "|" => (true, false),
            "|-" => (true, true),
            ">" => (false, false),
            ">-" => (false, true),
            _ => return Err(Decline),
        };
        let first = self.current()?;
        if first.is_blank() || first.indent <= key_indent {
            return Err(Decline);
        }
        let indent = first.indent;
        let mut parts: Vec<&'a str> = Vec::new();
        let mut after_blank = false;
        while let Some(line) = self.lines.get(self.pos) {
            if line.is_blank() {
                // Spaces beyond the indent would be content in real YAML.
                if line.raw.len() > indent {
                    return Err(Decline);
                }
                after_blank = true;
            } else if line.indent < indent {
                break;
            } else if line.indent > indent || after_blank || !line.terminated {
                return Err(Decline);
            } else {
                let text = &line.raw[indent..];
                if text.ends_with(' ') {
                    return Err(Decline);
                }
                parts.push(text);
            }
            self.pos += 1;
        }
        let mut text = parts.join(if literal { "\n" } else { " " });
        if !strip {
            text.push('\n');
        }
        Ok(Node::Text(Cow::Owned(text)))
    }
}

fn is_seq_item(content: &str) -> bool {
    content == "-" || content.starts_with("- ")
}

/// Splits `key: rest` for a simple key; `rest` is trimmed and may be empty.
fn split_key(content: &str) -> Res<(&str, &str)> {
    let colon = content.find(':').ok_or(Decline)?;
    let key = &content[..colon];
    let rest = &content[colon + 1..];
    if !is_simple_key(key) || !(rest.is_empty() || rest.starts_with(' ')) {
        return Err(Decline);
    }
    Ok((key, rest.trim_matches(' ')))
}

fn is_simple_key(key: &str) -> bool {
    let bytes = key.as_bytes();
    let Some(first) = bytes.first() else {
        return false;
    };
    key.len() <= MAX_KEY_BYTES
        && (first.is_ascii_alphabetic() || *first == b'_')
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
        && !is_null_word(key)
        && !is_bool_word(key)
}

fn is_null_word(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

/// The spellings serde-saphyr reads as booleans with `strict_booleans`.
fn is_bool_word(text: &str) -> bool {
    matches!(text, "true" | "True" | "TRUE" | "false" | "False" | "FALSE")
}

/// Characters that may not start a plain scalar, or that start one of the
/// other node kinds.
const INDICATORS: &[char] = &[
    '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`',
];

/// A one-line plain scalar in block context, returned unchanged when YAML
/// would read it as exactly this text (before any typing).
fn check_block_plain(text: &str) -> Res<&str> {
    let first = text.chars().next().ok_or(Decline)?;
    if INDICATORS.contains(&first)
        || text.starts_with("...")
        || text.contains(": ")
        || text.contains(" #")
        || text.ends_with(':')
        || is_null_word(text)
    {
        return Err(Decline);
    }
    Ok(text)
}

/// A double-quoted scalar that closes on its own line and uses no escapes.
fn double_quoted_line(value: &str) -> Res<Cow<'_, str>> {
    let body = value.strip_prefix('"').ok_or(Decline)?;
    let end = body.find('"').ok_or(Decline)?;
    let text = &body[..end];
    if text.contains('\\') || !body[end + 1..].trim_start_matches(' ').is_empty() {
        return Err(Decline);
    }
    Ok(Cow::Borrowed(text))
}

/// A single-quoted scalar that closes on its own line (`''` is one quote).
fn single_quoted_line(value: &str) -> Res<Cow<'_, str>> {
    let (text, rest) = single_quoted_prefix(value)?;
    if !rest.trim_start_matches(' ').is_empty() {
        return Err(Decline);
    }
    Ok(text)
}

/// Reads a single-quoted scalar at the start of `value`; returns its text and
/// what follows the closing quote.
fn single_quoted_prefix(value: &str) -> Res<(Cow<'_, str>, &str)> {
    let body = value.strip_prefix('\'').ok_or(Decline)?;
    let mut owned: Option<String> = None;
    let mut start = 0;
    let mut search = 0;
    loop {
        let at = search + body[search..].find('\'').ok_or(Decline)?;
        if body[at + 1..].starts_with('\'') {
            owned
                .get_or_insert_with(String::new)
                .push_str(&body[start..=at]);
            start = at + 2;
            search = at + 2;
            continue;
        }
        let text = match owned {
            Some(mut s) => {
                s.push_str(&body[start..at]);
                Cow::Owned(s)
            }
            None => Cow::Borrowed(&body[..at]),
        };
        return Ok((text, &body[at + 1..]));
    }
}

/// A one-line flow sequence `[a, "b", 'c']` of scalars; `[]` is empty.
fn flow_seq(value: &str) -> Res<Vec<Node<'_>>> {
    let mut rest = value.strip_prefix('[').ok_or(Decline)?;
    let mut items = Vec::new();
    rest = rest.trim_start_matches(' ');
    if let Some(after) = rest.strip_prefix(']') {
        return if after.trim_start_matches(' ').is_empty() {
            Ok(items)
        } else {
            Err(Decline)
        };
    }
    loop {
        rest = rest.trim_start_matches(' ');
        let (node, after) = match rest.as_bytes().first() {
            Some(b'"') => {
                let body = &rest[1..];
                let end = body.find('"').ok_or(Decline)?;
                let text = &body[..end];
                if text.contains('\\') {
                    return Err(Decline);
                }
                (Node::Text(Cow::Borrowed(text)), &body[end + 1..])
            }
            Some(b'\'') => {
                let (text, after) = single_quoted_prefix(rest)?;
                (Node::Text(text), after)
            }
            _ => {
                let end = rest.find([',', ']']).ok_or(Decline)?;
                let text = rest[..end].trim_end_matches(' ');
                (Node::Plain(check_flow_plain(text)?), &rest[end..])
            }
        };
        items.push(node);
        let after = after.trim_start_matches(' ');
        if let Some(tail) = after.strip_prefix(']') {
            return if tail.trim_start_matches(' ').is_empty() {
                Ok(items)
            } else {
                Err(Decline)
            };
        }
        // A comma must be followed by another item: `[a, ]` is declined.
        rest = after.strip_prefix(',').ok_or(Decline)?;
    }
}

/// A plain item inside `[...]`: stricter than block context because flow
/// context gives `:`, `#`, brackets and braces extra meanings.
fn check_flow_plain(text: &str) -> Res<&str> {
    let first = text.chars().next().ok_or(Decline)?;
    if INDICATORS.contains(&first)
        || text.contains([':', '#', '[', ']', '{', '}', '"', '\''])
        || is_null_word(text)
    {
        return Err(Decline);
    }
    Ok(text)
}

/// Whether serde-saphyr would hand this plain scalar to an untyped target
/// (a `Value`, a list item) as a string; anything it might type as a number
/// or a boolean is declined.
fn is_untyped_plain(text: &str) -> bool {
    // Numbers start with a digit, sign or dot; letters-first words are
    // strings unless they spell a boolean.
    text.chars()
        .next()
        .is_some_and(|first| first.is_alphabetic() || first == '_' || first == '/')
        && !is_bool_word(text)
}

impl fmt::Display for Decline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("outside the fast YAML subset")
    }
}

impl std::error::Error for Decline {}

/// Any serde error on the fast path (a type mismatch, a typed scalar) only
/// means "ask serde-saphyr", which then gives the real answer or message.
impl de::Error for Decline {
    fn custom<T: fmt::Display>(_msg: T) -> Self {
        Decline
    }
}

/// The parsed tree is fed to the same `Deserialize` impls serde-saphyr feeds,
/// so every `RawFrontmatter` field is read by one rule on both paths. The
/// only decision made here is the one a YAML parser makes: a plain scalar is
/// raw text when the target asks for a string, and typed when it asks for
/// anything (where this reader declines unless the text is surely a string).
impl<'de> Deserializer<'de> for Node<'_> {
    type Error = Decline;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Res<V::Value> {
        match self {
            Node::Plain(text) if is_untyped_plain(text) => visitor.visit_str(text),
            Node::Plain(_) => Err(Decline),
            Node::Text(Cow::Borrowed(text)) => visitor.visit_str(text),
            Node::Text(Cow::Owned(text)) => visitor.visit_string(text),
            Node::Seq(items) => visitor.visit_seq(SeqDeserializer::new(items.into_iter())),
            Node::Map(entries) => visitor.visit_map(MapDeserializer::new(entries.into_iter())),
        }
    }

    /// serde-saphyr hands a plain scalar over verbatim when asked for a
    /// string, so `1.10` and `no` need no typing check here. A list or map
    /// where text is wanted is left to serde-saphyr.
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Res<V::Value> {
        match self {
            Node::Plain(text) | Node::Text(Cow::Borrowed(text)) => visitor.visit_str(text),
            Node::Text(Cow::Owned(text)) => visitor.visit_string(text),
            Node::Seq(_) | Node::Map(_) => Err(Decline),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Res<V::Value> {
        self.deserialize_string(visitor)
    }

    /// Null values are declined while reading, so every node is present.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Res<V::Value> {
        visitor.visit_some(self)
    }

    // Unknown keys are skipped by serde, but their values must still be in the
    // subset: `ignored_any` goes through `deserialize_any` like the rest.
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

impl<'de, 'a> IntoDeserializer<'de, Decline> for Node<'a> {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::super::{
        Frontmatter, Scalar, parse_yaml, parse_yaml_with_saphyr, split_frontmatter, strip_bom,
    };
    use super::*;
    use pretty_assertions::assert_eq;
    use std::cell::Cell;
    use std::path::{Path, PathBuf};

    /// Asserts the fast path accepts `yaml` and agrees with serde-saphyr,
    /// including the key order of `metadata`.
    fn assert_same(yaml: &str) -> RawFrontmatter {
        let fast = parse(yaml).unwrap_or_else(|| panic!("declined:\n{yaml}"));
        assert_agrees(yaml, &fast);
        fast
    }

    fn assert_agrees(yaml: &str, fast: &RawFrontmatter) {
        let slow = parse_yaml_with_saphyr(yaml)
            .unwrap_or_else(|e| panic!("accepted text serde-saphyr rejects ({e}):\n{yaml:?}"));
        assert_eq!(fast, &slow, "for {yaml:?}");
        let order = |raw: &RawFrontmatter| serde_json::to_string(&raw.metadata).unwrap();
        assert_eq!(order(fast), order(&slow), "metadata key order for {yaml:?}");
    }

    fn assert_declines(yamls: &[&str]) {
        for yaml in yamls {
            assert!(parse(yaml).is_none(), "accepted {yaml:?}");
        }
    }

    fn normalised(yaml: &str) -> Frontmatter {
        assert_same(yaml).normalise()
    }

    #[test]
    fn plain_scalars_keep_their_text_in_text_fields() {
        let fm = normalised(
            "name: no\ndescription: on\nversion: 1.10\nauthor: 0x1F\nlicense: true\ncategory: .inf\ncreated_by: ~agent\n",
        );
        assert_eq!(fm.name.as_deref(), Some("no"));
        assert_eq!(fm.description.as_deref(), Some("on"));
        assert_eq!(fm.version.as_deref(), Some("1.10"));
        assert_eq!(fm.author.as_deref(), Some("0x1F"));
        assert_eq!(fm.license.as_deref(), Some("true"));
        assert_eq!(fm.category.as_deref(), Some(".inf"));
        assert_eq!(fm.created_by.as_deref(), Some("~agent"));
    }

    #[test]
    fn plain_scalars_may_hold_inner_punctuation() {
        let fm = normalised(
            "description: Use when C#, a:b or [x] {y} it's \"ok\" - see http://x.y/z?q=1   \nname: a-b_c\n",
        );
        assert_eq!(
            fm.description.as_deref(),
            Some("Use when C#, a:b or [x] {y} it's \"ok\" - see http://x.y/z?q=1")
        );
        normalised("description: 日本語の説明 é ü\n");
    }

    #[test]
    fn quoted_scalars_are_read_without_escapes() {
        let raw = assert_same(
            "name: 'it''s'\ndescription: \"a: b # c, [d]\"\nversion: \"1.10\"\nauthor: ''\nlicense: \"null\"\n",
        );
        assert_eq!(raw.name, Some(Scalar("it's".into())));
        assert_eq!(raw.description, Some(Scalar("a: b # c, [d]".into())));
        assert_eq!(raw.author, Some(Scalar(String::new())));
        assert_eq!(raw.license, Some(Scalar("null".into())));
    }

    #[test]
    fn flow_sequences_of_words_and_quoted_items() {
        let fm = normalised(
            "tags: [a, b c, \"1.10\", 'x, y', \"true\"]\nplatforms: [ linux ,macos ]\nrelated_skills: []\n",
        );
        assert_eq!(fm.tags, vec!["a", "b c", "1.10", "x, y", "true"]);
        assert_eq!(fm.platforms, vec!["linux", "macos"]);
        assert!(fm.related_skills.is_empty());
    }

    #[test]
    fn comma_text_becomes_a_list() {
        let fm = normalised("tags: a, b\nplatforms: linux\nrequires_tools: \"x, y\"\n");
        assert_eq!(fm.tags, vec!["a", "b"]);
        assert_eq!(fm.platforms, vec!["linux"]);
        assert_eq!(fm.conditions.requires_tools, vec!["x", "y"]);
    }

    #[test]
    fn block_sequences_indented_and_compact() {
        let fm = normalised("tags:\n  - a\n  - 'b'\nplatforms:\n- linux\n- macos\nname: x\n");
        assert_eq!(fm.tags, vec!["a", "b"]);
        assert_eq!(fm.platforms, vec!["linux", "macos"]);
        assert_eq!(fm.name.as_deref(), Some("x"));
    }

    #[test]
    fn nested_metadata_keeps_key_order() {
        let raw = assert_same(
            "metadata:\n  zeta: z\n  knack:\n    tags: [k1, k2]\n    category: devops\n    requires_toolsets:\n    - web\n    extra:\n      deep: value\n  hermes:\n    related_skills:\n      - r1\n  alpha: a\nname: n\n",
        );
        let meta = serde_json::to_string(&raw.metadata).unwrap();
        assert!(meta.starts_with("{\"zeta\":\"z\",\"knack\""), "{meta}");
        let fm = raw.normalise();
        assert_eq!(fm.tags, vec!["k1", "k2"]);
        assert_eq!(fm.category.as_deref(), Some("devops"));
        assert_eq!(fm.conditions.requires_toolsets, vec!["web"]);
        assert_eq!(fm.related_skills, vec!["r1"]);
    }

    #[test]
    fn block_scalars_in_four_simple_styles() {
        let cases = [
            ("|", "one two\nthree\n"),
            ("|-", "one two\nthree"),
            (">", "one two three\n"),
            (">-", "one two three"),
        ];
        for (header, expected) in cases {
            let yaml = format!("description: {header}\n  one two\n  three\n\nname: x\n");
            let raw = assert_same(&yaml);
            assert_eq!(raw.description, Some(Scalar(expected.into())), "{header}");
        }
        // A `#` inside block text is content, not a comment.
        assert_same("metadata:\n  note: |\n    # heading\n    body\n# real comment\nname: x\n");
    }

    #[test]
    fn comments_blank_lines_and_crlf() {
        let fm = normalised("# lead\r\n\r\nname: x\r\n   \r\n# mid\r\ntags:\r\n  - a\r\n");
        assert_eq!(fm.name.as_deref(), Some("x"));
        assert_eq!(fm.tags, vec!["a"]);
        assert_same("name: x\ndescription: no newline at end");
    }

    #[test]
    fn unknown_keys_are_checked_then_ignored() {
        let fm =
            normalised("x-custom:\n  nested: [a, b]\n  more:\n  - c\nname: x\nsummary: anything\n");
        assert_eq!(fm.name.as_deref(), Some("x"));
    }

    #[test]
    fn env_names_as_list_or_text() {
        let fm = normalised("required_environment_variables:\n  - API_TOKEN\n  - REGION\n");
        let names: Vec<_> = fm
            .required_environment_variables
            .iter()
            .map(|e| e.name.as_str())
            .collect();
        assert_eq!(names, vec!["API_TOKEN", "REGION"]);
        let fm = normalised("required_environment_variables: A, B\n");
        assert_eq!(fm.required_environment_variables.len(), 2);
    }

    #[test]
    fn declines_values_yaml_would_type() {
        assert_declines(&[
            "tags: [1.10]\n",
            "tags: [true]\n",
            "tags: [False]\n",
            "tags: [a, -1]\n",
            "tags: [.5]\n",
            "tags:\n  - 1\n",
            "tags: 1.10\n",
            "platforms: TRUE\n",
            "metadata:\n  knack:\n    enabled: true\n",
            "metadata:\n  weight: 3\n",
            "required_environment_variables: [+x]\n",
            "x-unknown: 12\n",
        ]);
        // The reason: serde-saphyr turns these into numbers and bools.
        let slow = parse_yaml_with_saphyr("tags: [1.10, true]\n").unwrap();
        assert_eq!(slow.tags.0, vec!["1.1", "true"]);
    }

    #[test]
    fn declines_null_and_empty_values() {
        assert_declines(&[
            "name:\n",
            "name: ~\n",
            "name: null\n",
            "name: NULL\n",
            "name: x\nmetadata:\n",
            "metadata:\nname: x\n",
            "tags: [~]\n",
            "tags:\n  -\n",
            "tags: [a, , b]\n",
            "# only a comment\n",
        ]);
    }

    #[test]
    fn declines_colons_and_comments_inside_values() {
        assert_declines(&[
            "description: a: b\n",
            "description: ends with:\n",
            "name: a # trailing comment\n",
            "name: x #\n",
            "tags: [a:b]\n",
            "tags: [a#b]\n",
            "tags:\n  - a: b\n",
            "tags:\n  - a # c\n",
            "name: \"x\" # c\n",
        ]);
    }

    #[test]
    fn declines_duplicate_keys_at_any_level() {
        assert_declines(&[
            "name: a\nname: b\n",
            "metadata:\n  knack:\n    tags: [a]\n    tags: [b]\n",
            "metadata:\n  knack:\n    x: a\n  knack:\n    y: b\n",
        ]);
    }

    #[test]
    fn declines_odd_indentation_and_continuations() {
        assert_declines(&[
            "  name: x\n",
            "name: x\n  more text\n",
            "name: x\n\n  more text\n",
            "description: \"x\"\n  y\n",
            "metadata:\n  a: x\n   b: y\n",
            "metadata:\n   a: x\n  b: y\n",
            "tags:\n  - a\n   - b\n",
            "tags:\n  - a\n - b\n",
            "tags:\n  - a\n    b\n",
            "tags:\n  - a\n  b: c\n",
            "metadata:\n  a: x\n  # indented comment\n",
            "tags: a\n- b\n",
        ]);
    }

    #[test]
    fn declines_tabs_and_odd_characters() {
        assert_declines(&[
            "name:\tx\n",
            "name: x\ty\n",
            "\tname: x\n",
            "name: a\rb\n",
            "name: a\u{feff}\n",
            "name: a\u{2028}b\n",
            "name: a\u{85}b\n",
            "name: a\u{7}\n",
        ]);
    }

    #[test]
    fn declines_block_scalars_outside_the_simple_shape() {
        assert_declines(&[
            "description: |+\n  a\n",
            "description: >2\n   a\n",
            "description: | # c\n  a\n",
            "description: >\n  a\n\n  b\n",
            "description: >\n  a\n    b\n",
            "description: |\n  a  \n",
            "description: |\n\n  a\n",
            "description: |\nname: x\n",
            "description: |\n  a",
            "description: |\n  a\n     \n",
            "description: >\n  a\n b\n",
        ]);
    }

    #[test]
    fn declines_other_yaml_features() {
        assert_declines(&[
            "name: &a x\n",
            "name: *a\n",
            "name: !str x\n",
            "name: !!str 1\n",
            "metadata: {a: b}\n",
            "tags: [[a]]\n",
            "tags: [a, ]\n",
            "tags: [a,\n  b]\n",
            "tags: [a] b\n",
            "tags: {a}\n",
            "description: [a, b]\n",
            "name:\n  first: x\n",
            "name: \"a\\nb\"\n",
            "name: \"multi\n  line\"\n",
            "name: 'open\n",
            "name: x\n...\n",
            "--- x\nname: y\n",
            "%YAML 1.2\nname: x\n",
            "name: - x\n",
            "name: ? x\n",
            "name: @x\n",
            "name: `x`\n",
            "name: ...x\n",
            "name: ,x\n",
            "tags:\n  - - a\n",
            "tags:\n  - [a]\n",
            "required_environment_variables:\n  - name: X\n    optional: true\n",
        ]);
    }

    #[test]
    fn declines_keys_outside_the_simple_shape() {
        assert_declines(&[
            "\"name\": x\n",
            "'name': x\n",
            "name:x\n",
            "name : x\n",
            "na me: x\n",
            "1key: x\n",
            "true: x\n",
            "null: x\n",
            "-k: x\n",
            "? name\n: x\n",
            "<<: x\n",
            &format!("{}: x\n", "k".repeat(MAX_KEY_BYTES + 1)),
        ]);
    }

    /// A choice stream: proptest shrinks it toward zeros, which this generator
    /// reads as the plainest shapes.
    struct Choices<'a> {
        bytes: &'a [u8],
        pos: usize,
        /// Only shapes the fast path is meant to accept.
        simple: bool,
        /// How often near-miss shapes appear, in percent of their base odds.
        odd_rate: usize,
    }

    const TEXT_KEYS: &[&str] = &[
        "name",
        "description",
        "version",
        "author",
        "license",
        "compatibility",
        "category",
        "created_by",
    ];
    const LIST_KEYS: &[&str] = &[
        "platforms",
        "tags",
        "related_skills",
        "requires_toolsets",
        "fallback_for_toolsets",
        "requires_tools",
        "fallback_for_tools",
        "required_environment_variables",
    ];
    const OTHER_KEYS: &[&str] = &[
        "metadata", "knack", "hermes", "x-extra", "_private", "summary",
    ];
    const ODD_KEYS: &[&str] = &[
        "\"name\"", "na me", "1key", "true", "null", "-k", "name ", "'tags'", "?", "<<", "~",
    ];
    const WORDS: &[&str] = &[
        "alpha",
        "Beta",
        "web",
        "linux",
        "macos",
        "docker",
        "skill",
        "use",
        "when",
        "é",
        "日本",
        "a-b",
        "c_d",
        "x.y",
        "path/to",
        "_under",
        "/root",
        "inf",
        "nan",
        "Infinity",
        "yes",
        "no",
        "on",
        "off",
        "y",
        "n",
        "nULL",
        "trueish",
        "e5",
        "C#",
        "a:b",
        "http://x.y/z",
    ];
    const TEXT_ONLY_WORDS: &[&str] = &["1.0.3", "1.10", "0x1F", "1e3", ".5", "007", "true", "+1"];
    const ODD_WORDS: &[&str] = &[
        "1",
        "1.10",
        "-5",
        ".inf",
        "+1",
        "1_000",
        "0o17",
        "1e999",
        "true",
        "True",
        "FALSE",
        "~",
        "null",
        "NULL",
        "",
        "a: b",
        "a #b",
        "a:",
        ":",
        "#",
        "...",
        "---",
        "-x",
        "- x",
        "?x",
        "? x",
        "&a",
        "*a",
        "!t",
        "!!str",
        "%x",
        "@x",
        "`x`",
        "|",
        ">",
        ">-",
        "{a}",
        "[x]",
        "x]",
        "a,b",
        ",",
        "it's",
        "say \"hi\"",
        "'q'",
        "\"q\"",
        "'it''s'",
        "\"a\\nb\"",
        "\"un",
        "'un",
        "a\tb",
        "\u{2028}",
        "<<",
        "{",
        "}",
        "a\r",
        "-",
        "- - x",
    ];

    impl Choices<'_> {
        fn next(&mut self) -> usize {
            let b = self.bytes.get(self.pos).copied().unwrap_or(0);
            self.pos += 1;
            usize::from(b)
        }
        fn below(&mut self, n: usize) -> usize {
            self.next() % n
        }
        /// True with about `percent`% odds; a zero choice means false.
        fn chance(&mut self, percent: usize) -> bool {
            self.next() * 100 / 256 >= 100 - percent
        }
        fn pick<'w>(&mut self, items: &[&'w str]) -> &'w str {
            items[self.below(items.len())]
        }
        fn odd(&mut self, percent: usize) -> bool {
            !self.simple && self.chance(percent * self.odd_rate / 100)
        }

        fn word(&mut self, text_field: bool) -> String {
            if self.odd(20) {
                self.pick(ODD_WORDS).to_owned()
            } else if text_field && self.chance(20) {
                self.pick(TEXT_ONLY_WORDS).to_owned()
            } else {
                self.pick(WORDS).to_owned()
            }
        }

        fn words(&mut self, text_field: bool) -> String {
            let n = 1 + self.below(4);
            let sep = if self.chance(20) { ", " } else { " " };
            let mut parts: Vec<String> = (0..n).map(|_| self.word(text_field)).collect();
            if self.chance(3) {
                // Long enough to pass serde-saphyr's 1024-char key lookahead.
                parts.push("long".repeat(300));
            }
            parts.join(sep)
        }

        fn quoted(&mut self, text_field: bool) -> String {
            let body = self.words(text_field);
            if self.chance(50) {
                let body = if self.simple {
                    body.replace(['"', '\\'], "")
                } else {
                    body
                };
                format!("\"{body}\"")
            } else {
                format!("'{}'", body.replace('\'', "''"))
            }
        }

        fn scalar(&mut self, text_field: bool) -> String {
            if self.chance(25) {
                self.quoted(text_field)
            } else {
                self.words(text_field)
            }
        }

        fn item(&mut self, flow: bool) -> String {
            if self.chance(25) {
                return self.quoted(false);
            }
            let mut word = self.word(false);
            if self.simple && flow && word.contains(':') {
                word = "plain".into();
            }
            if self.simple && flow && word.contains('#') {
                word = "sharp".into();
            }
            word
        }

        fn flow_seq(&mut self) -> String {
            let n = self.below(5);
            let seps = [", ", ",", " , ", ",  "];
            let sep = seps[self.below(seps.len())];
            let items: Vec<String> = (0..n).map(|_| self.item(true)).collect();
            let mut text = format!("[{}", items.join(sep));
            if self.odd(5) {
                text.push_str(", ");
            }
            if self.odd(5) {
                text.push_str("\n  x");
            }
            text.push(']');
            text
        }

        fn key(&mut self, used: &mut Vec<String>) -> (String, bool) {
            for _ in 0..8 {
                let text_field = self.chance(50);
                let key = if self.odd(5) {
                    self.pick(ODD_KEYS)
                } else if text_field {
                    self.pick(TEXT_KEYS)
                } else if self.chance(50) {
                    self.pick(LIST_KEYS)
                } else {
                    self.pick(OTHER_KEYS)
                };
                if !self.simple || !used.iter().any(|k| k == key) {
                    used.push(key.to_owned());
                    return (key.to_owned(), text_field);
                }
            }
            let key = format!("k{}", used.len());
            used.push(key.clone());
            (key, false)
        }

        fn map(&mut self, indent: usize, depth: usize, out: &mut String) {
            let mut used = Vec::new();
            let n = 1 + self.below(5);
            for i in 0..n {
                let mut at = indent;
                if i > 0 && self.odd(4) {
                    at += 1;
                }
                if self.chance(10) {
                    out.push_str(if self.odd(30) {
                        "  # note\n"
                    } else {
                        "# note\n"
                    });
                }
                if self.chance(10) {
                    out.push('\n');
                }
                self.entry(at, depth, &mut used, out);
            }
        }

        fn entry(&mut self, indent: usize, depth: usize, used: &mut Vec<String>, out: &mut String) {
            let pad = " ".repeat(indent);
            let (key, text_field) = self.key(used);
            // Only top-level text fields keep number-like words as text.
            let text_field = text_field && depth == 0;
            let kinds = if self.odd(30) { 10 } else { 6 };
            match self.below(kinds) {
                0 => {
                    let value = self.scalar(text_field);
                    out.push_str(&format!("{pad}{key}: {value}\n"));
                }
                1 => {
                    let value = self.quoted(text_field);
                    out.push_str(&format!("{pad}{key}: {value}\n"));
                }
                2 if !text_field || !self.simple => {
                    let value = self.flow_seq();
                    out.push_str(&format!("{pad}{key}: {value}\n"));
                }
                3 if !text_field || !self.simple => {
                    out.push_str(&format!("{pad}{key}:\n"));
                    let mut at = if self.chance(30) { indent } else { indent + 2 };
                    if self.odd(10) {
                        at += 1;
                    }
                    for _ in 0..1 + self.below(3) {
                        let odd = if self.odd(5) { 1 } else { 0 };
                        let item = self.item(false);
                        out.push_str(&format!("{}- {item}\n", " ".repeat(at + odd)));
                    }
                }
                4 if depth < 3 && (!text_field || !self.simple) => {
                    out.push_str(&format!("{pad}{key}:\n"));
                    let step = if self.odd(20) { 1 + self.below(4) } else { 2 };
                    self.map(indent + step, depth + 1, out);
                }
                5 => {
                    let headers = ["|", "|-", ">", ">-", "|+", ">+", "|2", ">- # c"];
                    let header = headers[self.below(if self.simple { 4 } else { 8 })];
                    out.push_str(&format!("{pad}{key}: {header}\n"));
                    for i in 0..1 + self.below(3) {
                        let extra = if self.odd(10) { 1 } else { 0 };
                        if i > 0 && self.odd(10) {
                            out.push('\n');
                        }
                        let mut line = self.words(true);
                        if self.odd(10) {
                            line.push(' ');
                        }
                        if self.chance(5) {
                            line.insert_str(0, "# ");
                        }
                        out.push_str(&format!("{}{line}\n", " ".repeat(indent + 2 + extra)));
                    }
                    if self.chance(20) {
                        out.push('\n');
                    }
                }
                6 => {
                    let value = self.words(text_field);
                    let more = self.words(text_field);
                    out.push_str(&format!("{pad}{key}: {value}\n{pad}  {more}\n"));
                }
                7 => out.push_str(&format!("{pad}{key}:\n")),
                8 => {
                    let word = self.word(false);
                    out.push_str(&format!("{pad}{key}: {{a: {word}}}\n"));
                }
                9 => {
                    let word = self.word(false);
                    let mark = if self.chance(50) { "&anchor " } else { "*" };
                    out.push_str(&format!("{pad}{key}: {mark}{word}\n"));
                }
                _ => {
                    let value = self.words(text_field);
                    out.push_str(&format!("{pad}{key}: {value}\n"));
                }
            }
        }

        fn document(&mut self) -> String {
            self.odd_rate = [25, 50, 100][self.below(3)];
            let mut out = String::new();
            self.map(0, 0, &mut out);
            if self.odd(10) {
                out = out.replace('\n', "\r\n");
            }
            if self.odd(5) {
                let spaces: Vec<usize> = out.match_indices(' ').map(|(i, _)| i).collect();
                if !spaces.is_empty() {
                    let at = spaces[self.next() * spaces.len() / 256];
                    out.replace_range(at..=at, "\t");
                }
            }
            if self.odd(5) {
                out.pop();
            }
            out
        }
    }

    /// Runs the differential check over `count` generated texts; returns how
    /// many the fast path accepted.
    fn differential(seed: u64, count: usize, simple: bool) -> usize {
        let mut state = seed;
        let mut accepted = 0;
        for _ in 0..count {
            let bytes: Vec<u8> = (0..256)
                .map(|_| {
                    // SplitMix64: deterministic, no extra dependency.
                    state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                    let mut z = state;
                    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                    (z >> 56) as u8
                })
                .collect();
            let yaml = Choices {
                bytes: &bytes,
                pos: 0,
                simple,
                odd_rate: 0,
            }
            .document();
            if let Some(fast) = parse(&yaml) {
                assert_agrees(&yaml, &fast);
                accepted += 1;
            }
        }
        accepted
    }

    #[test]
    fn simple_generated_texts_are_accepted_and_agree() {
        let count = 3000;
        let accepted = differential(7, count, true);
        println!("simple grammar: {accepted}/{count} accepted");
        assert!(accepted * 100 >= count * 97, "{accepted}/{count}");
    }

    #[test]
    fn near_miss_generated_texts_agree_when_accepted() {
        let count = 3000;
        let accepted = differential(11, count, false);
        println!("near-miss grammar: {accepted}/{count} accepted");
        // Both outcomes must be exercised for the check to mean anything.
        assert!(accepted * 10 >= count, "{accepted}/{count}");
        assert!(accepted * 10 <= count * 9, "{accepted}/{count}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1500))]
        #[test]
        fn fast_path_never_disagrees(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
            simple in proptest::prelude::any::<bool>(),
        ) {
            let yaml = Choices { bytes: &bytes, pos: 0, simple, odd_rate: 0 }.document();
            if let Some(fast) = parse(&yaml) {
                assert_agrees(&yaml, &fast);
            }
        }

        #[test]
        fn fast_path_never_disagrees_on_noise(yaml in "[a-z_:\\[\\]{}\"' ,\\n\\-#&*!|>~.0-9]{0,120}") {
            if let Some(fast) = parse(&yaml) {
                assert_agrees(&yaml, &fast);
            }
        }
    }

    /// Frontmatters in the shapes `xtask gen-tree` writes and the ones seen in
    /// hand-written skills.
    const REALISTIC: &[&str] = &[
        "name: visualize-cache-2\ndescription: Helps the agent draft stale migrations and convert the tokenizer.\nversion: 2.6.18\ntags: [dataset]\nmetadata:\n  knack:\n    fallback_for_tools: [web_search]\n",
        "name: migration-scan-2\ndescription: Proven routine to archive multi-region caches. Covers partitioned dashboards, across noisy manuscripts.\nversion: 2.5.8\nauthor: Lin\ntags: \"tax\"\n",
        "name: bench-contract-4\ndescription: Use when you need to benchmark noisy queries, behind slow sensors.\nversion: 2.5.5\nauthor: ops team\nlicense: Apache-2.0\ntags: [compliance]\n",
        "name: audit-ledger\ndescription: \"Use when auditing ledgers, before you sync any versioned bucket.\"\nversion: 0.3.1\nplatforms: [linux, macos]\ntags: \"finance, audit\"\n",
        "name: fold-demo\ndescription: >-\n  Use when folding long descriptions over several lines of text\n  that wrap at seventy columns or so.\nversion: 1.0.0\nplatforms: [windows]\n",
        "description: Relies on the folder name.\nversion: 0.0.1\nplatforms: macos\n",
        "name: meta-heavy\ndescription: Tags live in metadata.\nversion: 1.2.3\nmetadata:\n  knack:\n    tags: [a, b, c]\n    related_skills: [other-skill]\n    requires_toolsets: [terminal]\n",
        "name: markdown-report\ndescription: Use when writing a structured Markdown report or write-up\nversion: 1.0.0\nauthor: knack\nlicense: MIT\nmetadata:\n  knack:\n    tags: [writing, markdown, report, documentation]\n    related_skills: [decision-record, paper-summary, release-notes]\n",
        "name: kubernetes-rollout\ndescription: Use when rolling out or rolling back a Kubernetes deploy\nversion: 1.0.0\nmetadata:\n  knack:\n    tags: [kubernetes, kubectl]\n    optional_reason: \"Needs kubectl and access to a cluster; irrelevant to most users.\"\n",
        "name: hermes-style\ndescription: Use when the Hermes layout applies.\nversion: 1.0.0\nauthor: Nous Research\nlicense: MIT\nmetadata:\n  hermes:\n    tags: [GitHub, Pull-Requests, Code-Review]\n    related_skills: [github-auth, github-issues]\n",
        "name: env-needs\ndescription: Needs a token.\nrequired_environment_variables:\n  - GITHUB_TOKEN\n  - REGION\n",
        "name: env-maps\ndescription: Needs a token with a prompt.\nrequired_environment_variables:\n  - name: API_KEY\n    prompt: Paste the key\n    optional: true\n",
        "name: quoted-name\ndescription: 'It''s quoted with single quotes.'\nversion: '1.10'\n",
        "name: literal\ndescription: |\n  First line.\n  Second line.\nversion: 2.0.0\n",
        "name: commented\n# a note for maintainers\ndescription: Has a comment line.\n\ntags:\n  - one\n  - two\n",
        "name: compact-list\ndescription: Compact block list.\ntags:\n- one\n- two\nplatforms:\n- linux\n",
        "name: conditions\ndescription: Top-level conditions.\nrequires_tools: [terminal, browser]\nfallback_for_toolsets: [web]\n",
        "name: yaml11\ndescription: Norway problem.\nversion: 1.10\ntags: [no, yes, on]\n",
        "name: numbers-in-tags\ndescription: Numbers get typed.\ntags: [2024, python3]\n",
        "name: colon-desc\ndescription: Use when: the colon breaks YAML\n",
        "name: trailing-comment # oops\ndescription: Comment after a value.\n",
        "name: created\ndescription: Written by the agent.\ncreated_by: agent\nmetadata:\n  knack:\n    created_by: agent\n    category: tooling\n",
        "name: unicode\ndescription: Beschreibung mit Umlauten äöü und 日本語.\nauthor: José\n",
        "name: crlf\r\ndescription: Windows line ends.\r\ntags: [a, b]\r\n",
        "name: empty-meta\ndescription: Empty metadata value.\nmetadata:\n",
        "name: flow-map\ndescription: Flow map metadata.\nmetadata: {knack: {tags: [x]}}\n",
        "name: anchors\ndescription: &d Shared text.\nsummary: *d\n",
        "name: url\ndescription: See https://example.com/docs?x=1#frag for details.\nhomepage: https://example.com\n",
        "name: multiline-plain\ndescription: Starts here\n  and continues here.\n",
        "name: compat\ndescription: Has compatibility.\ncompatibility: Requires Python 3.11+\nlicense: Apache-2.0\n",
        "name: double-quoted-tags\ndescription: Quoted tag items.\ntags: [\"a b\", \"c\"]\nrelated_skills: ['x', 'y']\n",
    ];

    fn agree_on(yaml: &str) -> bool {
        match parse(yaml) {
            Some(fast) => {
                assert_agrees(yaml, &fast);
                true
            }
            None => false,
        }
    }

    fn skill_files(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                skill_files(&path, out);
            } else if path.file_name().is_some_and(|n| n == "SKILL.md") {
                out.push(path);
            }
        }
    }

    fn frontmatters_under(dirs: &[PathBuf]) -> Vec<String> {
        let mut files = Vec::new();
        for dir in dirs {
            skill_files(dir, &mut files);
        }
        files.sort();
        files
            .iter()
            .filter_map(|path| {
                let text = std::fs::read_to_string(path).ok()?;
                let (yaml, _) = split_frontmatter(strip_bom(&text)).ok()??;
                Some(yaml.to_owned())
            })
            .collect()
    }

    /// The whole parse (fast path, then serde-saphyr) must give serde-saphyr's
    /// answer on every sample, and the fast path must agree wherever it answers.
    fn assert_whole_parse_agrees(yaml: &str) {
        agree_on(yaml);
        assert_eq!(
            parse_yaml(yaml),
            parse_yaml_with_saphyr(yaml),
            "for {yaml:?}"
        );
    }

    #[test]
    fn realistic_and_repo_frontmatters_agree() {
        for yaml in REALISTIC {
            assert_whole_parse_agrees(yaml);
        }
        let declined: Vec<&str> = REALISTIC.iter().copied().filter(|y| !agree_on(y)).collect();
        // Exactly the samples written to show features left to serde-saphyr
        // (maps inside lists, typed items, invalid YAML, comments after values,
        // null values, flow maps, anchors, continued plain scalars); every other one is read fast.
        let outside = [
            "env-maps",
            "numbers-in-tags",
            "colon-desc",
            "trailing-comment",
            "empty-meta",
            "flow-map",
            "anchors",
            "multiline-plain",
        ];
        let declined_names: Vec<&str> = declined
            .iter()
            .filter_map(|y| y.lines().next()?.strip_prefix("name: "))
            .map(|n| n.split(' ').next().unwrap_or(n))
            .collect();
        assert_eq!(declined_names, outside, "declined: {declined:#?}");

        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let repo = frontmatters_under(&[root.join("skills"), root.join("optional-skills")]);
        assert!(!repo.is_empty());
        for yaml in &repo {
            assert_whole_parse_agrees(yaml);
        }
        // The skills shipped with knack are all in the subset: a declined one
        // means the reader lost ground on real files.
        let declined: Vec<&String> = repo.iter().filter(|y| !agree_on(y)).collect();
        assert!(declined.is_empty(), "declined: {declined:#?}");
    }

    /// The field names `RawFrontmatter`'s derived `Deserialize` reads, caught
    /// from the list serde hands to `deserialize_struct`; a new field shows up
    /// here without anyone editing this test.
    fn raw_frontmatter_fields() -> &'static [&'static str] {
        struct FieldNames<'c>(&'c Cell<&'static [&'static str]>);

        impl<'de> Deserializer<'de> for FieldNames<'_> {
            type Error = Decline;
            fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Res<V::Value> {
                Err(Decline)
            }
            fn deserialize_struct<V: Visitor<'de>>(
                self,
                _name: &'static str,
                fields: &'static [&'static str],
                _visitor: V,
            ) -> Res<V::Value> {
                self.0.set(fields);
                Err(Decline)
            }
            serde::forward_to_deserialize_any! {
                bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
                bytes byte_buf option unit unit_struct newtype_struct seq tuple
                tuple_struct map enum identifier ignored_any
            }
        }

        let fields = Cell::new(&[][..]);
        assert!(RawFrontmatter::deserialize(FieldNames(&fields)).is_err());
        fields.get()
    }

    #[test]
    fn every_raw_frontmatter_field_is_read_on_the_fast_path() {
        let fields = raw_frontmatter_fields();
        for known in ["name", "tags", "required_environment_variables", "metadata"] {
            assert!(fields.contains(&known), "{known} missing from {fields:?}");
        }
        let mut all = String::new();
        for field in fields {
            // A letters-first plain word suits every field kind: text for a
            // text field, a one-item list for a list, a string for a value. A
            // new field whose type cannot take it needs its own sample here.
            let yaml = format!("{field}: word-{}\n", field.replace('_', "-"));
            let fast = assert_same(&yaml);
            assert_ne!(
                fast,
                RawFrontmatter::default(),
                "the fast path left `{field}` empty"
            );
            all.push_str(&yaml);
        }
        assert_same(&all);
    }

    /// serde-saphyr with duplicate keys as errors, timed as a possible first
    /// try before LastWins.
    fn saphyr_error_policy(yaml: &str) -> Result<RawFrontmatter, String> {
        let options = serde_saphyr::options! {
            strict_booleans: true,
            duplicate_keys: serde_saphyr::options::DuplicateKeyPolicy::Error,
            with_snippet: false,
        };
        serde_saphyr::from_str_with_options::<RawFrontmatter>(yaml, options)
            .map_err(|e| e.to_string())
    }

    /// Times the fast path against serde-saphyr alone. Point
    /// `KNACK_FRONTMATTER_TREE` at a skills tree (e.g. one from `xtask
    /// gen-tree`); without it the realistic samples are repeated.
    #[test]
    #[ignore = "timing report, run with --ignored --nocapture"]
    fn time_fast_path_against_saphyr() {
        use std::time::Instant;
        let texts = match std::env::var_os("KNACK_FRONTMATTER_TREE") {
            Some(dir) => frontmatters_under(&[PathBuf::from(dir)]),
            None => REALISTIC
                .iter()
                .cycle()
                .take(10_000)
                .map(|s| (*s).to_owned())
                .collect(),
        };
        assert!(!texts.is_empty());
        let accepted = texts.iter().filter(|y| agree_on(y)).count();
        let per = |start: Instant| start.elapsed().as_secs_f64() * 1e6 / texts.len() as f64;

        for round in 0..3 {
            let start = Instant::now();
            for yaml in &texts {
                std::hint::black_box(parse_yaml_with_saphyr(yaml).ok());
            }
            let slow = per(start);
            let start = Instant::now();
            for yaml in &texts {
                std::hint::black_box(super::super::parse_yaml(yaml).ok());
            }
            let combined = per(start);
            let start = Instant::now();
            for yaml in &texts {
                std::hint::black_box(parse(yaml));
            }
            let fast_only = per(start);
            let start = Instant::now();
            for yaml in &texts {
                std::hint::black_box(saphyr_error_policy(yaml).ok());
            }
            let error_policy = per(start);
            println!(
                "round {round}: {} texts, {accepted} accepted; serde-saphyr {slow:.2} us, fast path + fallback {combined:.2} us, fast path alone {fast_only:.2} us, serde-saphyr with DuplicateKeyPolicy::Error {error_policy:.2} us per frontmatter",
                texts.len()
            );
        }
    }
}
