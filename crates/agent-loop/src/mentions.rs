//! `@path` file mentions: the one rule for what counts as a mention in a
//! user message, the expansion that attaches each mentioned file's text to
//! that message, and the list of files the TUI offers after `@`.
//!
//! Both frontends call it before a turn is sent (the TUI on Enter, `knack run`
//! before the session starts), so a bad mention is refused before any
//! request. It lives in the agent core rather than in the binary because the
//! read boundary it must honour (`tools::boundary`: knack's key files are
//! never attached) and the conversation's other markers are here, and the
//! TUI's replay reads the attachment format back through [`split_attachments`].
//!
//! The rule: an `@` starts a mention when it begins a word (the start of the
//! message, or after a space or one of `( [ { " ' <`) and is outside
//! backticks. So `bob@example.com`, `` `@decorator` `` and `@` alone are
//! text. The mention runs to the next space; trailing `.,;:!?)]}"'>` are not
//! part of it. A mention with a `/` or a `.` in it names a file, and a
//! missing one is an error; a bare word (`@alice`) is a mention only when a
//! file or folder of that name exists, and text otherwise.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Most bytes of one file attached to a message; a longer file is cut at a
/// line end and the header says how much was kept.
pub const MAX_FILE_BYTES: usize = 64 * 1024;
/// Most bytes the attachments of one message may add together.
pub const MAX_TOTAL_BYTES: usize = 256 * 1024;
/// Files larger than this are not read at all (read_file's limit too).
pub const MAX_READ_BYTES: u64 = 20 * 1024 * 1024;
/// Most files the completion list holds.
pub const MAX_CANDIDATES: usize = 5_000;

/// Starts every attachment block; [`split_attachments`] looks for it.
const BLOCK_START: &str = "\n\n[Attached file: ";
const FILE_END: &str = "\n</file>";
/// Characters that may follow a path in prose without being part of it.
const TRAILING: [char; 12] = ['.', ',', ';', ':', '!', '?', ')', ']', '}', '"', '\'', '>'];

/// One `@path` found in a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// Byte offset of the `@`.
    pub start: usize,
    /// Byte offset just after the path.
    pub end: usize,
    /// The path as written, without the `@` and trailing punctuation.
    pub path: String,
}

impl Mention {
    /// A `/` or a `.` makes it a path for sure: a missing file is an error.
    pub fn is_path_like(&self) -> bool {
        self.path.contains(['/', '.'])
    }
}

/// One file attached to a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// The path as the user wrote it.
    pub path: String,
    /// Lines in the whole file.
    pub lines: usize,
    /// Lines attached: fewer than `lines` when the file passed the cap.
    pub shown_lines: usize,
}

impl Attachment {
    /// `src/main.rs · 120 lines`, and how much was kept of a long file: the
    /// block's header, and what the TUI shows under the message.
    pub fn header(&self) -> String {
        let plural = if self.lines == 1 { "line" } else { "lines" };
        if self.shown_lines < self.lines {
            format!(
                "{} · {} {plural}, the first {} attached ({} KiB cap)",
                self.path,
                self.lines,
                self.shown_lines,
                MAX_FILE_BYTES / 1024
            )
        } else {
            format!("{} · {} {plural}", self.path, self.lines)
        }
    }
}

/// A message with its mentioned files attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    /// What is sent: the text as typed, then one block per file.
    pub text: String,
    pub attachments: Vec<Attachment>,
}

/// Why a message's mentions cannot be attached; each names the mention
/// and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MentionError {
    #[error(
        "@{path}: no such file in {cwd} (mentions are relative to the working directory; \
         put text that is not a file in backticks)"
    )]
    Missing { path: String, cwd: String },
    #[error("@{path} is a folder; mention the files in it one by one")]
    Folder { path: String },
    #[error("@{path} looks like a binary file ({bytes} bytes); only text files can be attached")]
    Binary { path: String, bytes: u64 },
    #[error("@{path} is one of knack's key files; it is never attached to a message")]
    Secret { path: String },
    #[error(
        "@{path} is {bytes} bytes, more than the 20 MiB a mention reads; \
         ask the agent to look at the part you need instead"
    )]
    TooBig { path: String, bytes: u64 },
    #[error(
        "the mentioned files add up to more than {} KiB; mention fewer of them \
         (each file is cut at {} KiB)",
        MAX_TOTAL_BYTES / 1024,
        MAX_FILE_BYTES / 1024
    )]
    TooMuch,
    #[error("@{path}: cannot read it ({reason})")]
    Unreadable { path: String, reason: String },
}

fn starts_word(previous: Option<char>) -> bool {
    previous.is_none_or(|c| c.is_whitespace() || matches!(c, '(' | '[' | '{' | '"' | '\'' | '<'))
}

/// Byte offsets of every `@` that starts a mention (outside backticks, at
/// the start of a word). Backtick runs open and close code as Markdown's do:
/// a run of n backticks closes only at the next run of n.
fn mention_starts(text: &str) -> Vec<usize> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut starts = Vec::new();
    let mut code_run = 0usize;
    let mut previous: Option<char> = None;
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        if c == '`' {
            let run = chars[i..].iter().take_while(|(_, c)| *c == '`').count();
            if code_run == 0 {
                code_run = run;
            } else if code_run == run {
                code_run = 0;
            }
            i += run;
            previous = Some('`');
            continue;
        }
        if c == '@' && code_run == 0 && starts_word(previous) {
            starts.push(at);
        }
        previous = Some(c);
        i += 1;
    }
    starts
}

/// Every mention in `text`, in order (see the module docs for the rule).
pub fn find(text: &str) -> Vec<Mention> {
    mention_starts(text)
        .into_iter()
        .filter_map(|start| {
            let after = &text[start + 1..];
            let token_len = after
                .find(|c: char| c.is_whitespace() || c == '`')
                .unwrap_or(after.len());
            let path = after[..token_len].trim_end_matches(TRAILING);
            (!path.is_empty() && !path.starts_with('@')).then(|| Mention {
                start,
                end: start + 1 + path.len(),
                path: path.to_owned(),
            })
        })
        .collect()
}

/// The mention being typed at the end of `input`, for completion: the byte
/// offset of its `@` and what follows it so far (maybe nothing).
pub fn typing_at_end(input: &str) -> Option<(usize, &str)> {
    let start = *mention_starts(input).last()?;
    let prefix = &input[start + 1..];
    (!prefix.contains(char::is_whitespace) && !prefix.contains('`')).then_some((start, prefix))
}

/// Attaches the text of every file `text` mentions. Paths are relative to
/// `cwd` (absolute paths and `~/` work too); `home` is knack's home, whose
/// key files are refused. A file mentioned twice is attached once.
pub fn expand(text: &str, cwd: &Path, home: &Path) -> Result<Expanded, MentionError> {
    let mut blocks = String::new();
    let mut attachments = Vec::new();
    let mut seen = BTreeSet::new();
    for mention in find(text) {
        let path = resolve(cwd, &mention.path);
        if !mention.is_path_like() && !path.exists() {
            continue; // `@alice`: a word, not a file
        }
        if !seen.insert(path.clone()) {
            continue;
        }
        let file = read_attachment(&mention.path, &path, cwd, home)?;
        blocks.push_str(&file.block);
        if blocks.len() > MAX_TOTAL_BYTES {
            return Err(MentionError::TooMuch);
        }
        attachments.push(file.attachment);
    }
    Ok(Expanded {
        text: format!("{text}{blocks}"),
        attachments,
    })
}

fn resolve(cwd: &Path, raw: &str) -> PathBuf {
    if let Some(rest) = raw.strip_prefix("~/")
        && let Some(home) = std::env::var_os("HOME")
    {
        return PathBuf::from(home).join(rest);
    }
    cwd.join(raw)
}

struct ReadAttachment {
    attachment: Attachment,
    block: String,
}

fn read_attachment(
    written: &str,
    path: &Path,
    cwd: &Path,
    home: &Path,
) -> Result<ReadAttachment, MentionError> {
    let name = || written.to_owned();
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(MentionError::Missing {
                path: name(),
                cwd: cwd.display().to_string(),
            });
        }
        Err(e) => {
            return Err(MentionError::Unreadable {
                path: name(),
                reason: e.to_string(),
            });
        }
    };
    if meta.is_dir() {
        return Err(MentionError::Folder { path: name() });
    }
    if crate::tools::boundary::is_secret_path(home, path) {
        return Err(MentionError::Secret { path: name() });
    }
    if meta.len() > MAX_READ_BYTES {
        return Err(MentionError::TooBig {
            path: name(),
            bytes: meta.len(),
        });
    }
    let bytes = std::fs::read(path).map_err(|e| MentionError::Unreadable {
        path: name(),
        reason: e.to_string(),
    })?;
    if crate::tools::looks_binary(&bytes) {
        return Err(MentionError::Binary {
            path: name(),
            bytes: meta.len(),
        });
    }
    let text = String::from_utf8_lossy(&bytes);
    let lines = text.lines().count();
    let kept = cut_at_line(&text, MAX_FILE_BYTES);
    let attachment = Attachment {
        path: written.to_owned(),
        lines,
        shown_lines: if kept.len() < text.len() {
            kept.lines().count()
        } else {
            lines
        },
    };
    let header = attachment.header();
    let newline = if kept.ends_with('\n') || kept.is_empty() {
        ""
    } else {
        "\n"
    };
    let block =
        format!("{BLOCK_START}{header}]\n<file path=\"{written}\">\n{kept}{newline}</file>");
    Ok(ReadAttachment { attachment, block })
}

/// The longest start of `text` within `cap` bytes that ends at a line end
/// (or at a character boundary when the first line alone is longer).
fn cut_at_line(text: &str, cap: usize) -> &str {
    if text.len() <= cap {
        return text;
    }
    let mut end = cap;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(newline) => &text[..=newline],
        None => &text[..end],
    }
}

/// Splits a stored user message into the text as typed and the header of
/// each attached file (`src/main.rs · 120 lines`), so a resumed transcript
/// shows what the user wrote rather than the files' contents.
pub fn split_attachments(message: &str) -> (&str, Vec<&str>) {
    let Some(first) = message.find(BLOCK_START) else {
        return (message, Vec::new());
    };
    let mut headers = Vec::new();
    let mut rest = &message[first..];
    while let Some(block) = rest.strip_prefix(BLOCK_START) {
        let Some((header, body)) = block.split_once("]\n") else {
            break;
        };
        headers.push(header);
        match body.find(FILE_END) {
            Some(end) => rest = &body[end + FILE_END.len()..],
            None => break,
        }
    }
    (&message[..first], headers)
}

/// Files under `cwd` that a mention could name, as relative paths in name
/// order: the same walk as `search_files` (`.gitignore` and friends
/// honoured, hidden files skipped), at most [`MAX_CANDIDATES`].
pub fn candidates(cwd: &Path) -> Vec<String> {
    let mut walker = ignore::WalkBuilder::new(cwd);
    walker.require_git(false).sort_by_file_name(|a, b| a.cmp(b));
    walker
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|entry| {
            let rel = entry.path().strip_prefix(cwd).ok()?;
            Some(rel.to_string_lossy().into_owned())
        })
        .take(MAX_CANDIDATES)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn paths(text: &str) -> Vec<String> {
        find(text).into_iter().map(|m| m.path).collect()
    }

    #[test]
    fn mentions_start_words_outside_code_and_drop_trailing_punctuation() {
        assert_eq!(
            paths("look at @src/main.rs, then (@docs/a.md)."),
            ["src/main.rs", "docs/a.md"]
        );
        assert_eq!(paths("@README.md"), ["README.md"]);
        assert!(paths("mail bob@example.com about it").is_empty());
        assert!(paths("use `@decorator` and ```\n@fixture.py\n```").is_empty());
        assert!(paths("a lone @ sign and @@twice").is_empty());
        assert_eq!(paths("`code` then @after.txt"), ["after.txt"]);
    }

    #[test]
    fn completion_sees_only_a_mention_at_the_end() {
        assert_eq!(typing_at_end("read @src/ma"), Some((5, "src/ma")));
        assert_eq!(typing_at_end("@"), Some((0, "")));
        assert_eq!(typing_at_end("read @src/main.rs now"), None);
        assert_eq!(typing_at_end("bob@exa"), None);
        assert_eq!(typing_at_end("`@x"), None);
    }

    fn fixture() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("work");
        let home = dir.path().join("home");
        std::fs::create_dir_all(cwd.join("src")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(cwd.join("src/main.rs"), "fn main() {}\n// end\n").unwrap();
        (dir, cwd, home)
    }

    #[test]
    fn expansion_attaches_the_file_with_its_path_and_line_count() {
        let (_dir, cwd, home) = fixture();
        let out = expand("explain @src/main.rs and @src/main.rs", &cwd, &home).unwrap();
        assert_eq!(
            out.text,
            "explain @src/main.rs and @src/main.rs\n\n[Attached file: src/main.rs · 2 lines]\n\
             <file path=\"src/main.rs\">\nfn main() {}\n// end\n</file>"
        );
        assert_eq!(out.attachments.len(), 1, "attached once");
        let (typed, headers) = split_attachments(&out.text);
        assert_eq!(typed, "explain @src/main.rs and @src/main.rs");
        assert_eq!(headers, ["src/main.rs · 2 lines"]);
    }

    #[test]
    fn words_that_are_not_files_stay_text_and_missing_paths_are_errors() {
        let (_dir, cwd, home) = fixture();
        let out = expand("thanks @alice", &cwd, &home).unwrap();
        assert_eq!(out.text, "thanks @alice");
        let err = expand("see @src/mian.rs", &cwd, &home).unwrap_err();
        assert!(
            matches!(&err, MentionError::Missing { path, .. } if path == "src/mian.rs"),
            "{err}"
        );
        assert!(err.to_string().contains("no such file"), "{err}");
        let err = expand("see @src", &cwd, &home).unwrap_err();
        assert!(matches!(err, MentionError::Folder { .. }), "{err}");
    }

    #[test]
    fn binary_files_and_knacks_keys_are_refused() {
        let (_dir, cwd, home) = fixture();
        std::fs::write(cwd.join("logo.png"), b"\x89PNG\0\0data").unwrap();
        let err = expand("@logo.png", &cwd, &home).unwrap_err();
        assert!(matches!(err, MentionError::Binary { .. }), "{err}");
        std::fs::write(home.join(".env"), "KNACK_API_KEY=sk-secret\n").unwrap();
        std::fs::write(home.join("signing.pem"), "-----BEGIN-----\n").unwrap();
        for mention in [
            format!("@{}", home.join(".env").display()),
            format!("@{}", home.join("signing.pem").display()),
        ] {
            let err = expand(&mention, &cwd, &home).unwrap_err();
            assert!(matches!(err, MentionError::Secret { .. }), "{err}");
        }
        // The same names outside knack's home are ordinary files.
        std::fs::write(cwd.join("cert.pem"), "public\n").unwrap();
        assert!(expand("@cert.pem", &cwd, &home).is_ok());
    }

    #[test]
    fn long_files_are_cut_at_a_line_end_and_the_total_is_capped() {
        let (_dir, cwd, home) = fixture();
        let line = "x".repeat(99) + "\n";
        std::fs::write(cwd.join("big.log"), line.repeat(2_000)).unwrap();
        let out = expand("@big.log", &cwd, &home).unwrap();
        let shown = MAX_FILE_BYTES / 100;
        assert_eq!(
            out.attachments[0],
            Attachment {
                path: "big.log".into(),
                lines: 2_000,
                shown_lines: shown,
            }
        );
        assert!(out.text.contains(&format!(
            "big.log · 2000 lines, the first {shown} attached (64 KiB cap)"
        )));
        for name in ["a", "b", "c", "d", "e"] {
            std::fs::write(cwd.join(format!("{name}.log")), line.repeat(700)).unwrap();
        }
        let err = expand("@a.log @b.log @c.log @d.log @e.log", &cwd, &home).unwrap_err();
        assert_eq!(err, MentionError::TooMuch);
    }

    #[test]
    fn candidates_skip_ignored_and_hidden_files() {
        let (_dir, cwd, _home) = fixture();
        std::fs::write(cwd.join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(cwd.join("target")).unwrap();
        std::fs::write(cwd.join("target/out.bin"), "x").unwrap();
        std::fs::write(cwd.join("notes.md"), "x").unwrap();
        assert_eq!(candidates(&cwd), ["notes.md", "src/main.rs"]);
    }
}
