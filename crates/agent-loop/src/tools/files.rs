//! The `file` toolset: `read_file` (numbered line ranges), `write_file` (atomic),
//! `patch` (skill-core's fuzzy engine) and `search_files` (gitignore-aware regex or glob).
//! Paths resolve against the session's cwd, then through symlinks; `boundary` decides what
//! may be read or written (knack's own files never, skill folders only via skill_manage), and
//! every open goes through `beneath` (no link on the way), so the checked path is the one used.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use regex::RegexBuilder;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::beneath::{BeneathError, Root};
use super::boundary::{self, FileAccess};
use super::{Tool, ToolContext, ToolError, ToolFuture, Toolset, parameters_schema, parse_args};

/// Files larger than this are not read at all.
const MAX_READ_BYTES: u64 = 20 * 1024 * 1024;
const DEFAULT_LINE_LIMIT: usize = 500;
const MAX_LINE_LIMIT: usize = 2_000;
/// One very long line (minified code) is cut to this many characters.
const MAX_LINE_CHARS: usize = 2_000;
/// Total characters of numbered content one read returns.
const MAX_READ_CHARS: usize = 100_000;
/// Bytes sniffed for a NUL to call a file binary.
const BINARY_SNIFF_BYTES: usize = 8_192;
const DEFAULT_SEARCH_RESULTS: usize = 50;
const MAX_SEARCH_RESULTS: usize = 500;
const MAX_MATCH_LINE_CHARS: usize = 300;

pub struct ReadFile;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    /// File to read; relative paths start at the working directory.
    path: String,
    /// First line to show, counting from 1 (default 1).
    offset: Option<usize>,
    /// How many lines to show (default 500, at most 2000).
    limit: Option<usize>,
}

impl Tool for ReadFile {
    fn name(&self) -> &'static str {
        "read_file"
    }
    fn toolset(&self) -> Toolset {
        Toolset::File
    }
    fn description(&self) -> &'static str {
        "Read a text file with line numbers. Use offset and limit to page through long files; \
         the result says how many lines the file has."
    }
    fn parameters(&self) -> Value {
        parameters_schema::<ReadArgs>()
    }
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let args: ReadArgs = parse_args(self.name(), args)?;
            let (path, gate) = boundary::file_gate(ctx, &args.path, FileAccess::Read);
            let check = boundary::Check::plain(format!("read {}", path.display()));
            boundary::pass(ctx, check, gate).await?;
            blocking(move || read_lines(&path, args.offset, args.limit)).await
        })
    }
}

fn read_lines(
    path: &Path,
    offset: Option<usize>,
    limit: Option<usize>,
) -> Result<Value, ToolError> {
    let bytes = match read_resolved(path) {
        Err(BeneathError::IsDirectory(_)) => {
            return Err(ToolError::model_with_hint(
                format!("{} is a directory.", path.display()),
                "List files with search_files (mode \"files\") or the terminal.",
            ));
        }
        Err(e) => return Err(beneath_error("cannot read", &e)),
        Ok(Err(len)) => {
            return Err(ToolError::model_with_hint(
                format!(
                    "{} is {len} bytes, more than read_file handles ({MAX_READ_BYTES}).",
                    path.display(),
                ),
                "Look at parts of it with the terminal (head, tail, grep).",
            ));
        }
        Ok(Ok(bytes)) => bytes,
    };
    if looks_binary(&bytes) {
        return Err(ToolError::model(format!(
            "{} looks like a binary file ({} bytes); read_file shows text only.",
            path.display(),
            bytes.len()
        )));
    }
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    let start = offset.unwrap_or(1).max(1);
    let limit = limit.unwrap_or(DEFAULT_LINE_LIMIT).clamp(1, MAX_LINE_LIMIT);
    if start > total.max(1) {
        return Err(ToolError::model(format!(
            "offset {start} is past the end of {} ({total} lines).",
            path.display()
        )));
    }
    let mut content = String::new();
    let mut end = start.saturating_sub(1);
    let mut cut_by_size = false;
    for (i, line) in lines.iter().enumerate().skip(start - 1).take(limit) {
        let shown: String = if line.chars().count() > MAX_LINE_CHARS {
            let cut: String = line.chars().take(MAX_LINE_CHARS).collect();
            format!("{cut} [line cut]")
        } else {
            (*line).to_owned()
        };
        let numbered = format!("{:>6}\t{shown}\n", i + 1);
        if content.len() + numbered.len() > MAX_READ_CHARS && end >= start {
            cut_by_size = true;
            break;
        }
        content.push_str(&numbered);
        end = i + 1;
    }
    let mut out = json!({
        "success": true,
        "path": path.display().to_string(),
        "content": content,
        "start_line": start,
        "end_line": end,
        "total_lines": total,
    });
    if end < total {
        out["truncated"] = json!(true);
        out["hint"] = json!(format!(
            "{}Continue with offset {}.",
            if cut_by_size {
                "The size cap was reached. "
            } else {
                ""
            },
            end + 1
        ));
    }
    Ok(out)
}

pub struct WriteFile;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    /// File to write; missing parent folders are created.
    path: String,
    /// The complete new content of the file.
    content: String,
}

impl Tool for WriteFile {
    fn name(&self) -> &'static str {
        "write_file"
    }
    fn toolset(&self) -> Toolset {
        Toolset::File
    }
    fn description(&self) -> &'static str {
        "Write a whole file, replacing what was there (parent folders are created). \
         For small changes to an existing file prefer patch."
    }
    fn parameters(&self) -> Value {
        parameters_schema::<WriteArgs>()
    }
    fn is_mutating(&self) -> bool {
        true
    }
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let args: WriteArgs = parse_args(self.name(), args)?;
            let (path, gate) = boundary::file_gate(ctx, &args.path, FileAccess::Write);
            // The diff is shown only when the user is asked; it is not worth reading the
            // old file otherwise.
            let diff = matches!(gate, boundary::Gate::Ask { .. }).then(|| {
                let old = std::fs::read_to_string(&path).unwrap_or_default();
                crate::edit_diff::unified(&path, &old, &args.content)
            });
            let check = boundary::Check::new(
                format!("write {}", path.display()),
                boundary::Subject::Write(path.clone()),
            )
            .with_diff(diff);
            boundary::pass(ctx, check, gate).await?;
            let target = WriteTarget::new(ctx, path);
            let checkpoint = Arc::clone(&ctx.checkpoint);
            let (result, diff) = blocking(move || {
                let root = target.open()?;
                // What the file held (read beneath the checked folder, like the write),
                // for undo and for the card's diff.
                let old = match root.read(&target.rel, MAX_READ_BYTES) {
                    Ok(Ok(bytes)) => {
                        record_for_undo(&checkpoint, &target.path, Old::Bytes(&bytes));
                        String::from_utf8(bytes).ok()
                    }
                    Ok(Err(_too_long)) => {
                        record_for_undo(&checkpoint, &target.path, Old::TooBig);
                        None
                    }
                    Err(_missing) => {
                        record_for_undo(&checkpoint, &target.path, Old::Missing);
                        Some(String::new())
                    }
                };
                let done = root
                    .replace(&target.rel, args.content.as_bytes())
                    .map_err(|e| beneath_error("cannot write", &e))?;
                let diff = old.map(|old| {
                    let old = if done.created { "" } else { old.as_str() };
                    crate::edit_diff::unified(&target.path, old, &args.content)
                });
                let result = json!({
                    "success": true,
                    "path": target.path.display().to_string(),
                    "bytes_written": args.content.len(),
                    "created": done.created,
                });
                Ok((result, diff.map(|d| (target.path, d))))
            })
            .await?;
            if let Some((path, diff)) = diff {
                super::call_record::record_diff(path, diff);
            }
            Ok(result)
        })
    }
}

pub struct Patch;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PatchArgs {
    /// File to change.
    path: String,
    /// The text to replace, quoted from the file with enough context to be unique.
    old_string: String,
    /// The replacement text.
    new_string: String,
    /// Replace every occurrence instead of exactly one (default false).
    replace_all: Option<bool>,
}

impl Tool for Patch {
    fn name(&self) -> &'static str {
        "patch"
    }
    fn toolset(&self) -> Toolset {
        Toolset::File
    }
    fn description(&self) -> &'static str {
        "Replace a piece of text in a file. old_string must identify one place (or set \
         replace_all); small differences in whitespace, indentation or quoting are tolerated."
    }
    fn parameters(&self) -> Value {
        parameters_schema::<PatchArgs>()
    }
    fn is_mutating(&self) -> bool {
        true
    }
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let args: PatchArgs = parse_args(self.name(), args)?;
            let (path, gate) = boundary::file_gate(ctx, &args.path, FileAccess::Write);
            let diff = matches!(gate, boundary::Gate::Ask { .. })
                .then(|| crate::edit_diff::unified(&path, &args.old_string, &args.new_string));
            let check = boundary::Check::new(
                format!("patch {}", path.display()),
                boundary::Subject::Write(path.clone()),
            )
            .with_diff(diff);
            boundary::pass(ctx, check, gate).await?;
            let target = WriteTarget::new(ctx, path);
            let checkpoint = Arc::clone(&ctx.checkpoint);
            let (result, path, diff) = blocking(move || {
                let root = target.open()?;
                // Read and written through the same folder handle: the patch
                // applies to the file that was checked, and lands there.
                let bytes = match root.read(&target.rel, MAX_READ_BYTES) {
                    Ok(Ok(bytes)) => bytes,
                    Ok(Err(len)) => {
                        return Err(ToolError::model(format!(
                            "{} is {len} bytes, more than patch handles ({MAX_READ_BYTES}).",
                            target.path.display()
                        )));
                    }
                    Err(e) => return Err(beneath_error("cannot read", &e)),
                };
                record_for_undo(&checkpoint, &target.path, Old::Bytes(&bytes));
                let content = String::from_utf8(bytes).map_err(|_| {
                    ToolError::model(format!(
                        "{} is not UTF-8 text; patch changes text files only.",
                        target.path.display()
                    ))
                })?;
                let (patched, replacements) = skill_core::fuzzy_patch::apply(
                    &content,
                    &args.old_string,
                    &args.new_string,
                    args.replace_all.unwrap_or(false),
                )
                .map_err(|e| match e.hint() {
                    Some(hint) => ToolError::model_with_hint(e.to_string(), hint),
                    None => ToolError::model(e.to_string()),
                })?;
                root.replace(&target.rel, patched.as_bytes())
                    .map_err(|e| beneath_error("cannot write", &e))?;
                let diff = crate::edit_diff::unified(&target.path, &content, &patched);
                let result = json!({
                    "success": true,
                    "path": target.path.display().to_string(),
                    "replacements": replacements,
                });
                Ok((result, target.path, diff))
            })
            .await?;
            super::call_record::record_diff(path, diff);
            Ok(result)
        })
    }
}

pub struct SearchFiles;

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum SearchMode {
    /// Lines whose text matches the regular expression `pattern`.
    #[default]
    Content,
    /// Files whose path matches the glob `pattern`.
    Files,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// A regular expression (mode content) or a glob such as "*.rs" or "src/**/*.md" (mode files).
    pattern: String,
    /// Folder (or file) to search; default the working directory.
    path: Option<String>,
    /// "content" (default) searches inside files; "files" lists matching file paths.
    mode: Option<SearchMode>,
    /// In content mode, only search files matching this glob, e.g. "*.py".
    file_glob: Option<String>,
    /// Ignore case in content mode.
    case_insensitive: Option<bool>,
    /// Most results to return (default 50, at most 500).
    max_results: Option<usize>,
}

impl Tool for SearchFiles {
    fn name(&self) -> &'static str {
        "search_files"
    }
    fn toolset(&self) -> Toolset {
        Toolset::File
    }
    fn description(&self) -> &'static str {
        "Search files under a folder, skipping what .gitignore excludes. Mode content \
         returns matching lines as path:line: text; mode files lists paths matching a glob."
    }
    fn parameters(&self) -> Value {
        parameters_schema::<SearchArgs>()
    }
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let args: SearchArgs = parse_args(self.name(), args)?;
            let raw = args.path.as_deref().unwrap_or(".");
            let (root, gate) = boundary::file_gate(ctx, raw, FileAccess::Read);
            let check = boundary::Check::plain(format!("search {}", root.display()));
            boundary::pass(ctx, check, gate).await?;
            let cwd = ctx.cwd.clone();
            let cancel = ctx.cancel.clone();
            // Key files under the home are skipped inside a folder search too,
            // by the same rule read_file follows.
            let secret_files = ctx.clone();
            let readable = move |path: &Path| !boundary::is_secret_file(&secret_files, path);
            blocking(move || search(&args, &root, &cwd, &cancel, &readable)).await
        })
    }
}

fn search(
    args: &SearchArgs,
    root: &Path,
    cwd: &Path,
    cancel: &tokio_util::sync::CancellationToken,
    readable: &dyn Fn(&Path) -> bool,
) -> Result<Value, ToolError> {
    if !root.exists() {
        return Err(ToolError::model(format!(
            "{} does not exist.",
            root.display()
        )));
    }
    let max = args
        .max_results
        .unwrap_or(DEFAULT_SEARCH_RESULTS)
        .clamp(1, MAX_SEARCH_RESULTS);
    let mode = args.mode.unwrap_or_default();
    let glob = match mode {
        SearchMode::Files => Some(args.pattern.as_str()),
        SearchMode::Content => args.file_glob.as_deref(),
    };
    let mut walker = ignore::WalkBuilder::new(root);
    walker.require_git(false).sort_by_file_name(|a, b| a.cmp(b));
    if let Some(glob) = glob.filter(|g| !g.trim().is_empty()) {
        let overrides = ignore::overrides::OverrideBuilder::new(root)
            .add(glob.trim())
            .and_then(|b| b.build())
            .map_err(|e| ToolError::model(format!("invalid glob '{glob}': {e}")))?;
        walker.overrides(overrides);
    }
    let regex = match mode {
        SearchMode::Content => Some(
            RegexBuilder::new(&args.pattern)
                .case_insensitive(args.case_insensitive.unwrap_or(false))
                .size_limit(1 << 22)
                .build()
                .map_err(|e| {
                    ToolError::model_with_hint(
                        format!("invalid regular expression: {e}"),
                        "Escape special characters such as ( ) [ ] . * + ? with a backslash.",
                    )
                })?,
        ),
        SearchMode::Files => None,
    };

    let mut results = Vec::new();
    let mut truncated = false;
    'walk: for entry in walker.build() {
        if cancel.is_cancelled() {
            break;
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) || !readable(entry.path()) {
            continue;
        }
        let shown = display_path(entry.path(), cwd);
        let Some(regex) = &regex else {
            if results.len() == max {
                truncated = true;
                break;
            }
            results.push(shown);
            continue;
        };
        // Listed without following links, and opened the same way: a folder
        // swapped for a link since the walk does not lead the read elsewhere.
        let Ok(file) = open_resolved(entry.path()) else {
            continue;
        };
        let mut reader = BufReader::new(file);
        if is_binary(&mut reader) {
            continue;
        }
        let mut line = Vec::new();
        let mut number = 0usize;
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            number += 1;
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\n', '\r']);
            if regex.is_match(text) {
                if results.len() == max {
                    truncated = true;
                    break 'walk;
                }
                let text: String = if text.chars().count() > MAX_MATCH_LINE_CHARS {
                    let cut: String = text.chars().take(MAX_MATCH_LINE_CHARS).collect();
                    format!("{cut}…")
                } else {
                    text.to_owned()
                };
                results.push(format!("{shown}:{number}: {text}"));
            }
        }
    }
    let key = match mode {
        SearchMode::Content => "matches",
        SearchMode::Files => "files",
    };
    let mut out = json!({"success": true, "count": results.len(), key: results});
    if truncated {
        out["truncated"] = json!(true);
        out["hint"] =
            json!("More results exist; narrow the pattern or the path, or raise max_results.");
    }
    Ok(out)
}

/// Peeks at the start of a file for a NUL byte without consuming it.
fn is_binary(reader: &mut BufReader<fs::File>) -> bool {
    match reader.fill_buf() {
        Ok(buf) => looks_binary(buf),
        Err(_) => true,
    }
}

/// The one rule for "binary": a NUL byte near the start. `read_file`,
/// `search_files` and `@file` mentions all use it.
pub(crate) fn looks_binary(start: &[u8]) -> bool {
    start[..start.len().min(BINARY_SNIFF_BYTES)].contains(&0)
}

/// Paths under the working directory are shown relative to it.
fn display_path(path: &Path, cwd: &Path) -> String {
    path.strip_prefix(cwd)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// Where a checked write goes: the root it is made beneath
/// ([`boundary::write_root`]) and the path below it.
struct WriteTarget {
    path: PathBuf,
    root: PathBuf,
    rel: PathBuf,
}

impl WriteTarget {
    fn new(ctx: &ToolContext, path: PathBuf) -> Self {
        let root = boundary::write_root(ctx, &path);
        let rel = path.strip_prefix(&root).unwrap_or(&path).to_path_buf();
        Self { path, root, rel }
    }

    fn open(&self) -> Result<Root, ToolError> {
        Root::open(&self.root).map_err(|e| beneath_error("cannot write", &e))
    }
}

/// Reads the file at `path` (resolved: absolute, no links) whole, refusing a
/// link that appeared on the way since it was checked.
fn read_resolved(path: &Path) -> Result<Result<Vec<u8>, u64>, BeneathError> {
    let root = Root::open(Path::new("/"))?;
    root.read(path.strip_prefix("/").unwrap_or(path), MAX_READ_BYTES)
}

fn open_resolved(path: &Path) -> Result<fs::File, BeneathError> {
    let root = Root::open(Path::new("/"))?;
    root.open_file(path.strip_prefix("/").unwrap_or(path))
}

/// Replaces the file `path`, whose folder exists and is knack's own (the
/// memory files), through that folder's handle.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ToolError> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(ToolError::model(format!(
            "{} is not a file path.",
            path.display()
        )));
    };
    let dir = knack_sandbox::resolve_existing_prefix(dir);
    Root::open(&dir)
        .and_then(|root| root.replace(Path::new(name), bytes))
        .map(|_| ())
        .map_err(|e| beneath_error("cannot write", &e))
}

fn beneath_error(what: &str, e: &BeneathError) -> ToolError {
    match e {
        BeneathError::LinkAppeared(_) => ToolError::model_with_hint(
            format!("{what} {e}."),
            "File tools never follow a link that appears while they work. Check the path \
             (ls -la) and try again with the real location.",
        ),
        BeneathError::NoOpenat2 => ToolError::model_with_hint(
            format!("{what}: {e}."),
            "Use the terminal (sandboxed) to change the file, or ask the user.",
        ),
        BeneathError::IsDirectory(_) | BeneathError::NotRegular(_) | BeneathError::Io { .. } => {
            ToolError::model(format!("{what} {e}."))
        }
    }
}

/// Runs file-system work off the async threads.
/// What a file held before a file tool changed it.
enum Old<'a> {
    Bytes(&'a [u8]),
    Missing,
    TooBig,
}

/// Notes `path` as it is before this turn's first change to it, for undo. A failure
/// only costs the undo of this file, so it is logged, not returned.
fn record_for_undo(
    checkpoint: &Mutex<Option<crate::checkpoint::TurnRecorder>>,
    path: &Path,
    old: Old<'_>,
) {
    let mut guard = super::lock(checkpoint);
    let Some(recorder) = guard.as_mut() else {
        return;
    };
    let recorded = match old {
        Old::Bytes(bytes) => recorder.record(path, Some(bytes)),
        Old::Missing => recorder.record(path, None),
        Old::TooBig => recorder.record_too_big(path),
    };
    if let Err(e) = recorded {
        tracing::warn!(error = %e, path = %path.display(), "could not checkpoint a file before changing it");
    }
}

async fn blocking<F, T>(work: F) -> Result<T, ToolError>
where
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::Fatal(format!("file tool task failed: {e}")))?
}
