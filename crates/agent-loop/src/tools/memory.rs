//! The `memory` tool: add, replace or remove entries in `memories/MEMORY.md` (the agent's
//! notes) and `memories/USER.md` (the user profile), under character caps, scanned, locked, atomic.
//!
//! Writes land on disk at once; the system prompt's snapshot of these files
//! changes only in the next session (that keeps the prompt prefix stable).

use std::fs;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use skill_guard::{ScanScope, Severity};

use super::files::write_atomic;
use super::{Tool, ToolContext, ToolError, ToolFuture, Toolset, parameters_schema, parse_args};

/// The line that separates two entries in a memory file (owned by prompt-builder,
/// which reads these files into the prompt snapshot).
pub use prompt_builder::MEMORY_ENTRY_DELIMITER;

/// Characters of an entry quoted back in an ambiguity or overflow message.
const PREVIEW_CHARS: usize = 80;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemoryTarget {
    /// MEMORY.md: facts about the environment, projects and conventions.
    Memory,
    /// USER.md: who the user is and how they like to work.
    User,
}

impl MemoryTarget {
    pub fn file_name(self) -> &'static str {
        match self {
            MemoryTarget::Memory => "MEMORY.md",
            MemoryTarget::User => "USER.md",
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            MemoryTarget::Memory => "memory",
            MemoryTarget::User => "user",
        }
    }

    fn limit(self, config: &knack_config::MemoryConfig) -> usize {
        match self {
            MemoryTarget::Memory => config.memory_char_limit,
            MemoryTarget::User => config.user_char_limit,
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum MemoryAction {
    Add,
    Replace,
    Remove,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct MemoryArgs {
    /// add a new entry, replace an existing one, or remove one.
    action: MemoryAction,
    /// "memory" for your own notes (MEMORY.md), "user" for the user's profile (USER.md).
    target: MemoryTarget,
    /// The entry's text (add, replace).
    content: Option<String>,
    /// A piece of text that occurs in exactly one existing entry (replace, remove).
    old_text: Option<String>,
}

pub struct Memory;

impl Tool for Memory {
    fn name(&self) -> &'static str {
        "memory"
    }
    fn toolset(&self) -> Toolset {
        Toolset::Memory
    }
    fn description(&self) -> &'static str {
        "Keep durable notes across sessions: facts about the user's environment and conventions \
         (target memory) or about the user (target user). Not for task progress or logs. Space \
         is small, so keep entries short and replace stale ones; notes appear in the next session."
    }
    fn parameters(&self) -> Value {
        parameters_schema::<MemoryArgs>()
    }
    fn is_mutating(&self) -> bool {
        true
    }
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let args: MemoryArgs = parse_args(self.name(), args)?;
            let dir = ctx.home.memories_dir();
            let limit = args.target.limit(&ctx.config.memory);
            tokio::task::spawn_blocking(move || apply(&dir, &args, limit))
                .await
                .map_err(|e| ToolError::Fatal(format!("memory task failed: {e}")))?
        })
    }
}

/// One entry rule for the tool and the prompt snapshot: prompt-builder's.
pub use prompt_builder::split_memory_entries as parse_entries;

/// The file text for `entries`, without the final newline (the counted size).
fn joined(entries: &[String]) -> String {
    entries.join(&format!("\n{MEMORY_ENTRY_DELIMITER}\n"))
}

fn apply(dir: &Path, args: &MemoryArgs, limit: usize) -> Result<Value, ToolError> {
    // Notes about the user and their environment are theirs alone: the
    // folder is 0700 and the files 0600.
    knack_config::private::create_dir_private(dir).map_err(|e| io_error(dir, &e))?;
    let path = dir.join(args.target.file_name());
    let lock_path = dir.join(".lock");
    let lock_file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(knack_config::private::FILE_MODE)
        .open(&lock_path)
        .map_err(|e| io_error(&lock_path, &e))?;
    // Held until this function returns: two sessions writing memory at once
    // must not lose each other's entries.
    lock_file.lock().map_err(|e| io_error(&lock_path, &e))?;

    let before = match fs::read_to_string(&path) {
        Ok(text) => parse_entries(&text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(io_error(&path, &e)),
    };
    let file = args.target.file_name();
    let mut entries = before.clone();
    let message = match args.action {
        MemoryAction::Add => {
            let content = new_content(args)?;
            if entries.contains(&content) {
                return Ok(report(
                    args.target,
                    &path,
                    &entries,
                    limit,
                    "That entry is already stored; nothing changed.",
                ));
            }
            entries.push(content);
            "Entry added."
        }
        MemoryAction::Replace => {
            let content = new_content(args)?;
            let index = find_entry(&entries, args.old_text.as_deref(), file)?;
            entries[index] = content;
            "Entry replaced."
        }
        MemoryAction::Remove => {
            let index = find_entry(&entries, args.old_text.as_deref(), file)?;
            entries.remove(index);
            "Entry removed."
        }
    };

    let used_before = joined(&before).chars().count();
    let used_after = joined(&entries).chars().count();
    // Shrinking is always allowed, even when a lowered cap is already exceeded.
    if used_after > limit && used_after > used_before {
        return Ok(json!({
            "success": false,
            "error": format!(
                "{file} would hold {used_after} characters, over its limit of {limit} (it holds {used_before} now)."
            ),
            "hint": "Replace or remove entries to make room (merge related notes, drop stale ones), then try again.",
            "current_entries": entries_preview(&before),
        }));
    }
    let mut text = joined(&entries);
    if !text.is_empty() {
        text.push('\n');
    }
    write_atomic(&path, text.as_bytes())?;
    // write_atomic keeps an existing file's mode; a file from before this
    // rule (or made by hand) may be world-readable.
    knack_config::private::set_private(&path).map_err(|e| io_error(&path, &e))?;
    Ok(report(args.target, &path, &entries, limit, message))
}

/// The trimmed, scanned text for an add or replace.
fn new_content(args: &MemoryArgs) -> Result<String, ToolError> {
    let content = args.content.as_deref().unwrap_or("").trim().to_owned();
    if content.is_empty() {
        return Err(ToolError::model(
            "content is required for add and replace, and must not be empty.",
        ));
    }
    if content
        .lines()
        .any(|line| line.trim() == MEMORY_ENTRY_DELIMITER)
    {
        return Err(ToolError::model_with_hint(
            format!(
                "content contains a line with only '{MEMORY_ENTRY_DELIMITER}', which separates entries."
            ),
            "Store one entry per call.",
        ));
    }
    let findings = skill_guard::scan_text(&content, "MEMORY.md", ScanScope::Context);
    if let Some(finding) = findings.iter().find(|f| f.severity >= Severity::High) {
        return Err(ToolError::model_with_hint(
            format!(
                "refused: the text matches the threat pattern '{}' ({}). Memory is loaded into every future prompt, so it must not carry instructions aimed at the model or ways to leak data.",
                finding.pattern_id, finding.description
            ),
            "Store plain facts only.",
        ));
    }
    Ok(content)
}

/// The index of the one entry containing `old_text`.
fn find_entry(entries: &[String], old_text: Option<&str>, file: &str) -> Result<usize, ToolError> {
    let needle = old_text.unwrap_or("").trim();
    if needle.is_empty() {
        return Err(ToolError::model(
            "old_text is required for replace and remove: quote part of the entry.",
        ));
    }
    let hits: Vec<usize> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.contains(needle))
        .map(|(i, _)| i)
        .collect();
    match hits.as_slice() {
        [] => Err(ToolError::model_with_hint(
            format!("no entry in {file} contains '{needle}'."),
            format!("Entries now: {}", entries_preview(entries).join(" | ")),
        )),
        [one] => Ok(*one),
        // Identical duplicates are one entry as far as the model can tell.
        [first, rest @ ..] if rest.iter().all(|i| entries[*i] == entries[*first]) => Ok(*first),
        many => Err(ToolError::model_with_hint(
            format!(
                "'{needle}' occurs in {} entries of {file}; quote more of the one you mean.",
                many.len()
            ),
            format!(
                "Matching entries: {}",
                many.iter()
                    .map(|i| preview(&entries[*i]))
                    .collect::<Vec<_>>()
                    .join(" | ")
            ),
        )),
    }
}

fn report(
    target: MemoryTarget,
    path: &Path,
    entries: &[String],
    limit: usize,
    message: &str,
) -> Value {
    json!({
        "success": true,
        "target": target.as_str(),
        "path": path.display().to_string(),
        "message": format!("{message} It takes effect in the next session."),
        "entry_count": entries.len(),
        "chars_used": joined(entries).chars().count(),
        "char_limit": limit,
    })
}

fn entries_preview(entries: &[String]) -> Vec<String> {
    entries.iter().map(|e| preview(e)).collect()
}

fn preview(entry: &str) -> String {
    let flat = entry.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > PREVIEW_CHARS {
        format!("{}…", flat.chars().take(PREVIEW_CHARS).collect::<String>())
    } else {
        flat
    }
}

fn io_error(path: &Path, e: &std::io::Error) -> ToolError {
    ToolError::model(format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_split_on_delimiter_lines_only() {
        let text = "first line\nstill first\n§\nsecond § inline\n  §  \n\n§\nthird\n";
        assert_eq!(
            parse_entries(text),
            ["first line\nstill first", "second § inline", "third"]
        );
        assert!(parse_entries("").is_empty());
        assert_eq!(joined(&["a".into(), "b".into()]), "a\n§\nb");
    }

    #[test]
    fn memory_files_are_owner_only_even_when_they_were_not() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("memories");
        let add = |content: &str| MemoryArgs {
            action: MemoryAction::Add,
            target: MemoryTarget::User,
            content: Some(content.to_owned()),
            old_text: None,
        };
        apply(&dir, &add("prefers short answers"), 1_000).unwrap();
        let file = dir.join("USER.md");
        assert_eq!((mode(&dir), mode(&file)), (0o700, 0o600));
        fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
        apply(&dir, &add("works in Rust"), 1_000).unwrap();
        assert_eq!(mode(&file), 0o600);
    }
}
