//! Finds the text a model meant when it quotes a file slightly wrong, and replaces it.
//! Knows nothing about skills: the agent's file `patch` tool uses the same engine.

use std::fmt;
use std::time::Duration;

use similar::TextDiff;

/// Similarity the lines between two anchors must reach for an anchored match.
pub const ANCHOR_MIDDLE_THRESHOLD: f32 = 0.8;
/// Lines scoring below this are not offered as "closest lines".
const HINT_THRESHOLD: f32 = 0.5;
const HINT_MAX_CANDIDATES: usize = 3;
const HINT_LINE_CHARS: usize = 100;
const AMBIGUOUS_LINES_SHOWN: usize = 10;

/// How a match was found; strategies are tried in this order and the first
/// one that finds anything decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    Exact,
    LineTrimmed,
    WhitespaceCollapsed,
    IndentationFlexible,
    EscapeNormalized,
    UnicodeNormalized,
    Anchored,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Exact => "exact",
            Strategy::LineTrimmed => "line-trimmed",
            Strategy::WhitespaceCollapsed => "whitespace-collapsed",
            Strategy::IndentationFlexible => "indentation-flexible",
            Strategy::EscapeNormalized => "escape-normalized",
            Strategy::UnicodeNormalized => "unicode-normalized",
            Strategy::Anchored => "anchored",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a patch could not be applied. Each message names the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    #[error("old_string is empty; quote the exact text to replace")]
    EmptyOld,
    #[error("old_string is only whitespace; quote some visible text to replace")]
    BlankOld,
    #[error("old_string and new_string are identical, so the patch would change nothing")]
    Unchanged,
    #[error(
        "old_string matches {count} places (lines {}); include more surrounding text to pick one, or set replace_all to change them all",
        join_lines(lines)
    )]
    Ambiguous { count: usize, lines: Vec<usize> },
    #[error(
        "old_string only matched loosely (by its first and last lines) in {count} places (lines {}); replace_all needs a closer match, so quote each place exactly",
        join_lines(lines)
    )]
    LooseReplaceAll { count: usize, lines: Vec<usize> },
    #[error(
        "old_string was not found in the file, not even after ignoring whitespace, escapes and typographic characters"
    )]
    NoMatch { hint: Option<String> },
}

impl PatchError {
    /// The closest lines of the file, for a failed search.
    pub fn hint(&self) -> Option<&str> {
        match self {
            PatchError::NoMatch { hint } => hint.as_deref(),
            _ => None,
        }
    }
}

fn join_lines(lines: &[usize]) -> String {
    let mut shown: Vec<String> = lines
        .iter()
        .take(AMBIGUOUS_LINES_SHOWN)
        .map(|l| l.to_string())
        .collect();
    if lines.len() > AMBIGUOUS_LINES_SHOWN {
        shown.push(format!("and {} more", lines.len() - AMBIGUOUS_LINES_SHOWN));
    }
    shown.join(", ")
}

/// A successful patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patched {
    pub content: String,
    pub replacements: usize,
    pub strategy: Strategy,
}

/// Replaces `old` by `new` in `content`; returns the new text and the number
/// of replacements.
pub fn apply(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<(String, usize), PatchError> {
    apply_detailed(content, old, new, replace_all).map(|p| (p.content, p.replacements))
}

/// Like [`apply`], also telling which strategy matched.
pub fn apply_detailed(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Patched, PatchError> {
    if old.is_empty() {
        return Err(PatchError::EmptyOld);
    }
    if old.trim().is_empty() {
        return Err(PatchError::BlankOld);
    }
    if old == new {
        return Err(PatchError::Unchanged);
    }
    let strategies: [(Strategy, Finder); 7] = [
        (Strategy::Exact, exact),
        (Strategy::LineTrimmed, line_trimmed),
        (Strategy::WhitespaceCollapsed, whitespace_collapsed),
        (Strategy::IndentationFlexible, indentation_flexible),
        (Strategy::EscapeNormalized, escape_normalized),
        (Strategy::UnicodeNormalized, unicode_normalized),
        (Strategy::Anchored, anchored),
    ];
    for (strategy, find) in strategies {
        let matches = find(content, old, new);
        if matches.is_empty() {
            continue;
        }
        if matches.len() > 1 && !replace_all {
            return Err(PatchError::Ambiguous {
                count: matches.len(),
                lines: line_numbers(content, &matches),
            });
        }
        if matches.len() > 1 && strategy == Strategy::Anchored {
            return Err(PatchError::LooseReplaceAll {
                count: matches.len(),
                lines: line_numbers(content, &matches),
            });
        }
        let replacements = matches.len();
        return Ok(Patched {
            content: splice(content, &matches),
            replacements,
            strategy,
        });
    }
    Err(PatchError::NoMatch {
        hint: closest_lines(content, old),
    })
}

/// One place to replace: a byte range of the content and its replacement.
#[derive(Debug, Clone)]
struct Match {
    start: usize,
    end: usize,
    replacement: String,
}

type Finder = fn(&str, &str, &str) -> Vec<Match>;

fn splice(content: &str, matches: &[Match]) -> String {
    let mut out = String::with_capacity(content.len());
    let mut at = 0;
    for m in matches {
        out.push_str(&content[at..m.start]);
        out.push_str(&m.replacement);
        at = m.end;
    }
    out.push_str(&content[at..]);
    out
}

fn line_numbers(content: &str, matches: &[Match]) -> Vec<usize> {
    matches
        .iter()
        .map(|m| content[..m.start].matches('\n').count() + 1)
        .collect()
}

fn exact(content: &str, old: &str, new: &str) -> Vec<Match> {
    content
        .match_indices(old)
        .map(|(start, hit)| Match {
            start,
            end: start + hit.len(),
            replacement: new.to_owned(),
        })
        .collect()
}

/// Content lines as byte ranges without their `\n`.
fn line_spans(content: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (i, b) in content.bytes().enumerate() {
        if b == b'\n' {
            spans.push((start, i));
            start = i + 1;
        }
    }
    spans.push((start, content.len()));
    spans
}

/// The pattern's lines, and whether it ended with a newline (then the
/// matched block takes its trailing newline too).
fn pattern_lines(old: &str) -> (Vec<&str>, bool) {
    match old.strip_suffix('\n') {
        Some(stripped) => (stripped.split('\n').collect(), true),
        None => (old.split('\n').collect(), false),
    }
}

/// Windows of whole lines whose lines equal the pattern's under `eq`,
/// non-overlapping, as (first line, last line) indices.
fn line_windows(
    content: &str,
    spans: &[(usize, usize)],
    pattern: &[&str],
    eq: &dyn Fn(&str, &str) -> bool,
) -> Vec<(usize, usize)> {
    let n = pattern.len();
    let mut found = Vec::new();
    if n == 0 || n > spans.len() {
        return found;
    }
    let mut i = 0;
    while i + n <= spans.len() {
        let hit = (0..n).all(|k| {
            let (s, e) = spans[i + k];
            eq(&content[s..e], pattern[k])
        });
        if hit {
            found.push((i, i + n - 1));
            i += n;
        } else {
            i += 1;
        }
    }
    found
}

/// The byte range covering lines `first..=last`, with the final newline when
/// the pattern had one.
fn block_range(
    content: &str,
    spans: &[(usize, usize)],
    first: usize,
    last: usize,
    with_newline: bool,
) -> (usize, usize) {
    let start = spans[first].0;
    let mut end = spans[last].1;
    if with_newline && content.as_bytes().get(end) == Some(&b'\n') {
        end += 1;
    }
    (start, end)
}

fn line_block_matches(
    content: &str,
    old: &str,
    eq: &dyn Fn(&str, &str) -> bool,
    replacement: &dyn Fn(&str) -> String,
) -> Vec<Match> {
    let (pattern, trailing) = pattern_lines(old);
    if pattern.iter().all(|l| l.trim().is_empty()) {
        return Vec::new();
    }
    let spans = line_spans(content);
    line_windows(content, &spans, &pattern, eq)
        .into_iter()
        .map(|(first, last)| {
            let (start, end) = block_range(content, &spans, first, last, trailing);
            Match {
                start,
                end,
                replacement: replacement(&content[start..end]),
            }
        })
        .collect()
}

fn line_trimmed(content: &str, old: &str, new: &str) -> Vec<Match> {
    line_block_matches(content, old, &|a, b| a.trim_end() == b.trim_end(), &|_| {
        new.to_owned()
    })
}

fn indentation_flexible(content: &str, old: &str, new: &str) -> Vec<Match> {
    let old_indent = common_indent(old);
    line_block_matches(content, old, &|a, b| a.trim() == b.trim(), &|region| {
        let target = leading_ws(region);
        reindent(new, &old_indent, target)
    })
}

fn leading_ws(line: &str) -> &str {
    let trimmed = line.trim_start_matches([' ', '\t']);
    &line[..line.len() - trimmed.len()]
}

/// The indentation shared by every non-blank line of `text`.
fn common_indent(text: &str) -> String {
    let mut common: Option<&str> = None;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let ws = leading_ws(line);
        common = Some(match common {
            None => ws,
            Some(c) => {
                let shared = c
                    .char_indices()
                    .zip(ws.chars())
                    .take_while(|((_, a), b)| a == b)
                    .last()
                    .map_or(0, |((i, a), _)| i + a.len_utf8());
                &c[..shared]
            }
        });
    }
    common.unwrap_or("").to_owned()
}

/// Moves `new` from the indentation the model used to the file's.
fn reindent(new: &str, old_indent: &str, target: &str) -> String {
    let new_indent = common_indent(new);
    let base = if new_indent.starts_with(old_indent) {
        old_indent
    } else {
        new_indent.as_str()
    };
    new.split('\n')
        .map(|line| {
            if line.trim().is_empty() {
                line.to_owned()
            } else {
                let rest = line.strip_prefix(base).unwrap_or(line.trim_start());
                format!("{target}{rest}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Text with, for every byte, the byte range of the original it came from,
/// so a match in normalized text maps back to the original.
struct Normalized {
    text: String,
    spans: Vec<(usize, usize)>,
}

impl Normalized {
    fn identity(s: &str) -> Self {
        let mut n = Normalized {
            text: String::with_capacity(s.len()),
            spans: Vec::with_capacity(s.len()),
        };
        for (i, c) in s.char_indices() {
            n.push(c, (i, i + c.len_utf8()));
        }
        n
    }

    fn push(&mut self, c: char, span: (usize, usize)) {
        self.text.push(c);
        for _ in 0..c.len_utf8() {
            self.spans.push(span);
        }
    }

    fn chars_with_spans(&self) -> impl Iterator<Item = (char, (usize, usize))> + '_ {
        self.text.char_indices().map(|(i, c)| (c, self.spans[i]))
    }

    fn collapse_whitespace(&self) -> Self {
        let mut out = Normalized {
            text: String::with_capacity(self.text.len()),
            spans: Vec::with_capacity(self.text.len()),
        };
        let mut run: Option<(usize, usize)> = None;
        for (c, span) in self.chars_with_spans() {
            if c == ' ' || c == '\t' {
                run = Some(match run {
                    None => span,
                    Some((s, _)) => (s, span.1),
                });
                continue;
            }
            if let Some(r) = run.take() {
                out.push(' ', r);
            }
            out.push(c, span);
        }
        if let Some(r) = run {
            out.push(' ', r);
        }
        out
    }

    fn fold_unicode(&self) -> Self {
        let mut out = Normalized {
            text: String::with_capacity(self.text.len()),
            spans: Vec::with_capacity(self.spans.len()),
        };
        for (c, span) in self.chars_with_spans() {
            match fold_char(c) {
                Folded::Same => out.push(c, span),
                Folded::To(s) => s.chars().for_each(|f| out.push(f, span)),
            }
        }
        out
    }

    /// Non-overlapping occurrences of `needle`, as original byte ranges.
    fn find_all(&self, needle: &str) -> Vec<(usize, usize)> {
        if needle.is_empty() {
            return Vec::new();
        }
        self.text
            .match_indices(needle)
            .map(|(s, hit)| (self.spans[s].0, self.spans[s + hit.len() - 1].1))
            .collect()
    }
}

enum Folded {
    Same,
    To(&'static str),
}

/// Typographic characters models and editors swap for plain ones.
fn fold_char(c: char) -> Folded {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}' | '\u{2032}' | '\u{ff07}' => {
            Folded::To("'")
        }
        '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{201f}' | '\u{2033}' | '\u{00ab}'
        | '\u{00bb}' | '\u{ff02}' => Folded::To("\""),
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' | '\u{fe58}' | '\u{fe63}' | '\u{ff0d}' => Folded::To("-"),
        '\u{2026}' => Folded::To("..."),
        '\u{00a0}'
        | '\u{1680}'
        | '\u{2000}'..='\u{200a}'
        | '\u{202f}'
        | '\u{205f}'
        | '\u{3000}' => Folded::To(" "),
        '\u{200b}' | '\u{200c}' | '\u{200d}' | '\u{2060}' | '\u{feff}' => Folded::To(""),
        _ => Folded::Same,
    }
}

fn fold_str(s: &str) -> String {
    Normalized::identity(s).fold_unicode().text
}

fn whitespace_collapsed(content: &str, old: &str, new: &str) -> Vec<Match> {
    let pattern = Normalized::identity(old).collapse_whitespace().text;
    if pattern.trim().is_empty() {
        return Vec::new();
    }
    Normalized::identity(content)
        .collapse_whitespace()
        .find_all(&pattern)
        .into_iter()
        .map(|(start, end)| Match {
            start,
            end,
            replacement: new.to_owned(),
        })
        .collect()
}

/// Backslash sequences a model writes when it escapes text twice.
const ESCAPES: [(&str, &str); 6] = [
    ("\\n", "\n"),
    ("\\t", "\t"),
    ("\\r", "\r"),
    ("\\\"", "\""),
    ("\\'", "'"),
    ("\\\\", "\\"),
];

/// Undoes the escape sequences listed in `kinds` (indices into ESCAPES).
fn unescape(s: &str, kinds: &[usize]) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    'outer: while !rest.is_empty() {
        if rest.starts_with('\\') {
            for &k in kinds {
                let (from, to) = ESCAPES[k];
                if let Some(after) = rest.strip_prefix(from) {
                    out.push_str(to);
                    rest = after;
                    continue 'outer;
                }
            }
        }
        let Some(c) = rest.chars().next() else { break };
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

fn escape_normalized(content: &str, old: &str, new: &str) -> Vec<Match> {
    let kinds: Vec<usize> = (0..ESCAPES.len())
        .filter(|&k| old.contains(ESCAPES[k].0))
        .collect();
    if kinds.is_empty() {
        return Vec::new();
    }
    // Undo every escape first; when the file really spells one of them with a
    // backslash, undoing a single kind may be what matches.
    let mut variants = vec![kinds.clone()];
    if kinds.len() > 1 {
        variants.extend(kinds.iter().map(|&k| vec![k]));
    }
    for used in variants {
        let found = escape_variant(content, old, new, &used);
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

fn escape_variant(content: &str, old: &str, new: &str, kinds: &[usize]) -> Vec<Match> {
    let pattern = unescape(old, kinds);
    if pattern == old || pattern.trim().is_empty() {
        return Vec::new();
    }
    // The replacement is unescaped the same way, except for sequences the
    // file itself spells with a backslash in the matched region.
    let replacement = |region: &str| {
        let keep: Vec<usize> = kinds
            .iter()
            .copied()
            .filter(|&k| !region.contains(ESCAPES[k].0))
            .collect();
        unescape(new, &keep)
    };
    let found: Vec<(usize, usize)> = content
        .match_indices(pattern.as_str())
        .map(|(s, hit)| (s, s + hit.len()))
        .collect();
    if !found.is_empty() {
        return found
            .into_iter()
            .map(|(start, end)| Match {
                start,
                end,
                replacement: replacement(&content[start..end]),
            })
            .collect();
    }
    line_block_matches(
        content,
        &pattern,
        &|a, b| a.trim_end() == b.trim_end(),
        &replacement,
    )
}

fn unicode_normalized(content: &str, old: &str, new: &str) -> Vec<Match> {
    let folded_old = Normalized::identity(old).fold_unicode();
    let folded_content = Normalized::identity(content).fold_unicode();
    let to_matches = |found: Vec<(usize, usize)>| -> Vec<Match> {
        found
            .into_iter()
            .map(|(start, end)| Match {
                start,
                end,
                replacement: new.to_owned(),
            })
            .collect()
    };
    if folded_old.text.trim().is_empty() {
        return Vec::new();
    }
    let found = folded_content.find_all(&folded_old.text);
    if !found.is_empty() {
        return to_matches(found);
    }
    let pattern = folded_old.collapse_whitespace().text;
    to_matches(folded_content.collapse_whitespace().find_all(&pattern))
}

/// Similarity of two texts in [0, 1], bounded in time for long inputs.
pub fn similarity(a: &str, b: &str) -> f32 {
    if a == b {
        return 1.0;
    }
    TextDiff::configure()
        .timeout(Duration::from_millis(100))
        .diff_chars(a, b)
        .ratio()
}

fn anchored(content: &str, old: &str, new: &str) -> Vec<Match> {
    let (pattern, trailing) = pattern_lines(old);
    let n = pattern.len();
    if n < 3 {
        return Vec::new();
    }
    let norm = |s: &str| fold_str(s).trim().to_owned();
    let first = norm(pattern[0]);
    let last = norm(pattern[n - 1]);
    if first.is_empty() || last.is_empty() {
        return Vec::new();
    }
    let middle = pattern[1..n - 1]
        .iter()
        .map(|l| norm(l))
        .collect::<Vec<_>>()
        .join("\n");
    let spans = line_spans(content);
    let lines: Vec<String> = spans.iter().map(|&(s, e)| norm(&content[s..e])).collect();
    let slack = (n / 4).max(2);
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i] != first {
            i += 1;
            continue;
        }
        let lowest = i + 2;
        let highest = (i + n - 1 + slack).min(lines.len().saturating_sub(1));
        let mut best: Option<(usize, f32)> = None;
        for j in lowest..=highest {
            if j >= lines.len() || lines[j] != last {
                continue;
            }
            let candidate = lines[i + 1..j].join("\n");
            let score = similarity(&middle, &candidate);
            if score >= ANCHOR_MIDDLE_THRESHOLD && best.is_none_or(|(_, b)| score > b) {
                best = Some((j, score));
            }
        }
        match best {
            Some((j, _)) => {
                let (start, end) = block_range(content, &spans, i, j, trailing);
                found.push(Match {
                    start,
                    end,
                    replacement: new.to_owned(),
                });
                i = j + 1;
            }
            None => i += 1,
        }
    }
    found
}

/// The lines most like the pattern's first line, with a line of context on
/// each side, for the "not found" hint.
fn closest_lines(content: &str, old: &str) -> Option<String> {
    let probe = old.lines().map(str::trim).find(|l| !l.is_empty())?;
    let probe = fold_str(probe);
    let lines: Vec<&str> = content.split('\n').collect();
    let mut scored: Vec<(usize, f32)> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i, similarity(&probe, &fold_str(l.trim()))))
        .filter(|&(_, s)| s >= HINT_THRESHOLD)
        .collect();
    if scored.is_empty() {
        return None;
    }
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(HINT_MAX_CANDIDATES);
    scored.sort_by_key(|&(i, _)| i);
    let blocks: Vec<String> = scored
        .iter()
        .map(|&(i, _)| {
            let from = i.saturating_sub(1);
            let to = (i + 1).min(lines.len() - 1);
            (from..=to)
                .map(|k| format!("  L{}: {}", k + 1, cut(lines[k], HINT_LINE_CHARS)))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    Some(format!(
        "The closest lines in the file are:\n{}\nQuote the text exactly as it appears there.",
        blocks.join("\n  ...\n")
    ))
}

fn cut(line: &str, max: usize) -> String {
    match line.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn patched(content: &str, old: &str, new: &str) -> Patched {
        apply_detailed(content, old, new, false).unwrap()
    }

    #[test]
    fn prechecks_name_the_rule() {
        assert_eq!(apply("abc", "", "x", false), Err(PatchError::EmptyOld));
        assert_eq!(apply("abc", " \n\t", "x", false), Err(PatchError::BlankOld));
        assert_eq!(apply("abc", "b", "b", false), Err(PatchError::Unchanged));
        assert!(PatchError::BlankOld.to_string().contains("whitespace"));
    }

    #[test]
    fn exact_replaces_one_occurrence() {
        let p = patched("alpha beta gamma", "beta", "BETA");
        assert_eq!(p.content, "alpha BETA gamma");
        assert_eq!((p.replacements, p.strategy), (1, Strategy::Exact));
    }

    #[test]
    fn exact_replace_all_counts() {
        let (out, n) = apply("a-a-a", "a", "b", true).unwrap();
        assert_eq!((out.as_str(), n), ("b-b-b", 3));
    }

    #[test]
    fn line_trimmed_ignores_trailing_whitespace() {
        let content = "one\ntwo   \nthree\r\nfour\n";
        let p = patched(content, "two\nthree\n", "2\n3\n");
        assert_eq!(p.strategy, Strategy::LineTrimmed);
        assert_eq!(p.content, "one\n2\n3\nfour\n");
    }

    #[test]
    fn whitespace_collapsed_ignores_runs_of_spaces_and_tabs() {
        let content = "run:\tcargo   test  --all\nnext";
        let p = patched(content, "cargo test --all", "cargo nextest run");
        assert_eq!(p.strategy, Strategy::WhitespaceCollapsed);
        assert_eq!(p.content, "run:\tcargo nextest run\nnext");
    }

    #[test]
    fn indentation_flexible_reindents_the_replacement() {
        let content = "steps:\n    - build\n    - test\nend\n";
        let p = patched(content, "- build\n- test", "- build\n- lint\n- test");
        assert_eq!(p.strategy, Strategy::IndentationFlexible);
        assert_eq!(
            p.content,
            "steps:\n    - build\n    - lint\n    - test\nend\n"
        );
    }

    #[test]
    fn escape_normalized_unescapes_double_escaped_text() {
        let content = "say \"hi\"\nthen\tgo\n";
        let p = patched(
            content,
            "say \\\"hi\\\"\\nthen\\tgo",
            "say \\\"bye\\\"\\nthen\\tstop",
        );
        assert_eq!(p.strategy, Strategy::EscapeNormalized);
        assert_eq!(p.content, "say \"bye\"\nthen\tstop\n");
    }

    #[test]
    fn escape_normalized_keeps_backslashes_the_file_uses() {
        // The file spells `\t` with a backslash; only the quotes were escaped twice.
        let content = "echo \"a\\tb\"\n";
        let p = patched(content, "echo \\\"a\\tb\\\"", "echo \\\"a\\tc\\\"");
        assert_eq!(p.strategy, Strategy::EscapeNormalized);
        assert_eq!(p.content, "echo \"a\\tc\"\n");
    }

    #[test]
    fn unicode_normalized_folds_quotes_dashes_ellipsis_and_spaces() {
        let content = "Don\u{2019}t \u{2014} wait\u{2026}\u{00a0}now\nrest";
        let p = patched(content, "Don't - wait... now", "Go now");
        assert_eq!(p.strategy, Strategy::UnicodeNormalized);
        assert_eq!(p.content, "Go now\nrest");
        // The file's own unicode outside the match is untouched.
        let content = "\u{201c}keep\u{201d} and \u{201c}change\u{201d}";
        let p = patched(content, "\"change\"", "\"changed\"");
        assert_eq!(p.content, "\u{201c}keep\u{201d} and \"changed\"");
    }

    #[test]
    fn anchored_matches_on_first_and_last_lines() {
        let content =
            "intro\n## Steps\n1. fetch the repository\n2. run the tests\n3. ship it\n## End\nouter";
        let old = "## Steps\n1. fetch the repo\n2. run the tests\n3. ship it!\n## End";
        let p = patched(content, old, "## Steps\n1. done\n## End");
        assert_eq!(p.strategy, Strategy::Anchored);
        assert_eq!(p.content, "intro\n## Steps\n1. done\n## End\nouter");
    }

    #[test]
    fn anchored_refuses_a_dissimilar_middle() {
        let content = "## Steps\ncompletely different words here\n## End";
        let old = "## Steps\n1. fetch the repo and build\n## End";
        assert!(matches!(
            apply(content, old, "x", false),
            Err(PatchError::NoMatch { .. })
        ));
    }

    #[test]
    fn ambiguity_lists_one_based_line_numbers() {
        let content = "a\nrepeat me\nb\nrepeat me\nc\nrepeat me\n";
        let err = apply(content, "repeat me", "x", false).unwrap_err();
        assert_eq!(
            err,
            PatchError::Ambiguous {
                count: 3,
                lines: vec![2, 4, 6]
            }
        );
        assert!(err.to_string().contains("lines 2, 4, 6"), "{err}");
        assert_eq!(
            apply(content, "repeat me", "x", true).unwrap(),
            ("a\nx\nb\nx\nc\nx\n".to_owned(), 3)
        );
    }

    #[test]
    fn ambiguity_found_by_a_fuzzy_strategy_also_reports_lines() {
        let content = "a\n    item one\nb\n\titem one\n";
        let err = apply(content, "item  one\n", "thing\n", false).unwrap_err();
        assert!(matches!(err, PatchError::Ambiguous { ref lines, .. } if *lines == vec![2, 4]));
    }

    #[test]
    fn anchored_replace_all_with_several_matches_is_refused() {
        let block = "BEGIN\nsome text line\nEND\n";
        let content = format!("{block}{block}");
        let err = apply(&content, "BEGIN\nsome txt line\nEND", "x", true).unwrap_err();
        assert!(matches!(err, PatchError::LooseReplaceAll { count: 2, .. }));
    }

    #[test]
    fn no_match_hint_shows_the_closest_lines_with_numbers() {
        let content =
            "# Title\n\nRun the deploy script with --dry-run first.\nThen check the logs.\n";
        let err = apply(content, "Run the deploy scrip with --dryrun", "x", false).unwrap_err();
        let hint = err.hint().unwrap();
        assert!(
            hint.contains("L3: Run the deploy script with --dry-run first."),
            "{hint}"
        );
        assert!(hint.contains("L4: Then check the logs."), "{hint}");
        let err = apply(content, "zzzz qqqq", "x", false).unwrap_err();
        assert_eq!(err.hint(), None);
    }

    #[test]
    fn strategies_are_tried_in_order() {
        // The exact text exists once, and a whitespace variant elsewhere:
        // exact wins and touches only its own place.
        let content = "a  b\na b\n";
        let p = patched(content, "a b", "X");
        assert_eq!(p.strategy, Strategy::Exact);
        assert_eq!(p.content, "a  b\nX\n");
    }

    mod props {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

            #[test]
            fn never_panics(content in "(?s)[a-c \\t\\n\\\\\"'\u{2019}\u{2014}\u{a0}é…]{0,60}",
                            old in "(?s)[a-c \\t\\n\\\\\"'\u{2019}\u{2014}\u{a0}é…]{0,12}",
                            new in "(?s)[a-c \\n\\\\é]{0,12}",
                            all in any::<bool>()) {
                let _ = apply(&content, &old, &new, all);
            }

            #[test]
            fn never_panics_on_any_text(content in any::<String>(), old in any::<String>(), new in any::<String>()) {
                let _ = apply(&content, &old, &new, false);
            }

            #[test]
            fn exact_matches_behave_like_replacen(prefix in "[a-z \\n]{0,20}", old in "[a-z]{1,6}",
                                                  suffix in "[a-z \\n]{0,20}", new in "[A-Z]{0,6}") {
                let content = format!("{prefix}{old}{suffix}");
                prop_assume!(old != new);
                let count = content.matches(old.as_str()).count();
                let all = apply(&content, &old, &new, true).unwrap();
                prop_assert_eq!(all, (content.replace(old.as_str(), &new), count));
                if count == 1 {
                    prop_assert_eq!(
                        apply(&content, &old, &new, false).unwrap(),
                        (content.replacen(old.as_str(), &new, 1), 1)
                    );
                } else {
                    let is_ambiguous = matches!(apply(&content, &old, &new, false), Err(PatchError::Ambiguous { .. }));
                    prop_assert!(is_ambiguous);
                }
            }
        }
    }
}
