//! Layers 3, 5 and 6: the external memory provider's block and the frozen
//! MEMORY.md / USER.md snapshots, each capped and screened by the guard.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::inputs::PromptInputs;
use crate::screen::{Screened, cut_with_ellipsis, screen, strip_bom};

/// A line holding only this separates entries in MEMORY.md and USER.md.
pub const MEMORY_ENTRY_DELIMITER: &str = "§";
/// The provider command is killed after this long; its layer stays empty.
pub const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);
/// At most this many characters of the provider's output enter the prompt.
pub const PROVIDER_OUTPUT_MAX_CHARS: usize = 4_000;

const MEMORY_HEADER: &str = "\
## Memory
Notes you saved in earlier sessions. This is a snapshot taken when the session \
started: changes you make with the memory tool are stored at once but appear \
here only in the next session.";

const USER_HEADER: &str = "\
## User profile
What you learned about the user in earlier sessions (a snapshot taken when this \
session started).";

const PROVIDER_HEADER: &str = "## Memory provider";

pub(crate) fn memory_layer(inputs: &PromptInputs, warnings: &mut Vec<String>) -> String {
    let path = inputs.home.memories_dir().join("MEMORY.md");
    snapshot_layer(
        &path,
        "MEMORY.md",
        "memory.memory_char_limit",
        inputs.config.memory.memory_char_limit,
        MEMORY_HEADER,
        warnings,
    )
}

pub(crate) fn user_profile_layer(inputs: &PromptInputs, warnings: &mut Vec<String>) -> String {
    let path = inputs.home.memories_dir().join("USER.md");
    snapshot_layer(
        &path,
        "USER.md",
        "memory.user_char_limit",
        inputs.config.memory.user_char_limit,
        USER_HEADER,
        warnings,
    )
}

/// Splits a memory file into its entries (trimmed, empty ones dropped).
pub fn split_entries(text: &str) -> Vec<String> {
    let mut entries = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        if line.trim() == MEMORY_ENTRY_DELIMITER {
            entries.push(std::mem::take(&mut current));
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    entries.push(current);
    entries
        .into_iter()
        .map(|e| e.trim().to_owned())
        .filter(|e| !e.is_empty())
        .collect()
}

fn snapshot_layer(
    path: &Path,
    file: &str,
    limit_key: &str,
    limit: usize,
    header: &str,
    warnings: &mut Vec<String>,
) -> String {
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return String::new(),
        Err(e) => {
            warnings.push(format!("{} cannot be read: {e}", path.display()));
            return String::new();
        }
    };
    let entries = split_entries(strip_bom(&text));
    if entries.is_empty() {
        return String::new();
    }
    let separator = format!("\n{MEMORY_ENTRY_DELIMITER}\n");
    let mut kept: Vec<String> = Vec::new();
    let mut note = None;
    let mut used = 0usize;
    let total = entries.len();
    for (i, entry) in entries.into_iter().enumerate() {
        let entry = match screen(&entry, file) {
            Screened::Blocked(why) => {
                warnings.push(format!(
                    "{file} entry {} was left out of the prompt: the guard flagged it ({why})",
                    i + 1
                ));
                format!("[entry {} blocked: the guard flagged it ({why})]", i + 1)
            }
            Screened::Mild(_) | Screened::Clean => entry,
        };
        let cost = entry.chars().count()
            + if kept.is_empty() {
                0
            } else {
                separator.chars().count()
            };
        if used + cost > limit {
            if kept.is_empty() {
                // A single oversized entry still shows its beginning.
                kept.push(cut_with_ellipsis(&entry, limit));
                used = limit;
                continue;
            }
            let left_out = total - kept.len();
            warnings.push(format!(
                "{file} is over {limit_key} ({limit} characters); {left_out} entries were left out of the prompt"
            ));
            note = Some(format!(
                "[{left_out} more entries left out: {file} is over its limit of {limit} characters]"
            ));
            break;
        }
        used += cost;
        kept.push(entry);
    }
    let mut layer = format!("{header}\n\n{}", kept.join(&separator));
    if let Some(note) = note {
        layer.push_str("\n\n");
        layer.push_str(&note);
    }
    layer
}

pub(crate) fn provider_layer(inputs: &PromptInputs, warnings: &mut Vec<String>) -> String {
    let Some(command) = inputs
        .config
        .memory
        .provider_command
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty())
    else {
        return String::new();
    };
    let passthrough = &inputs.config.agent.env_passthrough;
    let output = match run_provider_in(command, &inputs.cwd, PROVIDER_TIMEOUT, passthrough) {
        Ok(out) => out,
        Err(e) => {
            warnings.push(e.to_string());
            return String::new();
        }
    };
    let output = strip_bom(&output).trim();
    if output.is_empty() {
        return String::new();
    }
    if let Screened::Blocked(why) = screen(output, "memory provider output") {
        warnings.push(format!(
            "the memory provider's output was left out: the guard flagged it ({why})"
        ));
        return String::new();
    }
    let capped = if output.chars().count() > PROVIDER_OUTPUT_MAX_CHARS {
        warnings.push(format!(
            "the memory provider printed more than {PROVIDER_OUTPUT_MAX_CHARS} characters; the rest was cut"
        ));
        let head: String = output.chars().take(PROVIDER_OUTPUT_MAX_CHARS).collect();
        format!("{head}\n[... output cut]")
    } else {
        output.to_owned()
    };
    format!("{PROVIDER_HEADER}\n\n{capped}")
}

/// [`run_provider_in`] with no secret variables passed through.
#[cfg(test)]
fn run_provider(command: &str, cwd: &Path, timeout: Duration) -> crate::Result<String> {
    run_provider_in(command, cwd, timeout, &[])
}

/// Runs `bash -c command` once and returns its stdout. Its output goes into
/// the system prompt, so the command gets no secret variables except those
/// in `passthrough` (`agent.env_passthrough`), like every command run for the model.
fn run_provider_in(
    command: &str,
    cwd: &Path,
    timeout: Duration,
    passthrough: &[String],
) -> crate::Result<String> {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new("bash");
    knack_config::secret_env::scrub_std_command(&mut cmd, passthrough);
    let mut child = cmd
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        // Its own process group, so a timeout can stop everything it started.
        .process_group(0)
        .spawn()
        .map_err(|e| crate::Error::Provider(format!("cannot start bash: {e}")))?;
    let stdout = child.stdout.take();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut out) = stdout {
            let _ = out.by_ref().take(1024 * 1024).read_to_end(&mut buf);
            let _ = std::io::copy(&mut out, &mut std::io::sink());
        }
        let _ = tx.send(buf);
    });
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let left = timeout
                    .saturating_sub(started.elapsed())
                    .max(Duration::from_millis(100));
                // A background grandchild may hold the pipe open; do not wait for it forever.
                let buf = rx.recv_timeout(left).unwrap_or_default();
                if !status.success() {
                    let code = status
                        .code()
                        .map_or("a signal".to_owned(), |c| c.to_string());
                    return Err(crate::Error::Provider(format!(
                        "`{command}` exited with {code}; the memory provider layer is empty"
                    )));
                }
                return Ok(String::from_utf8_lossy(&buf).into_owned());
            }
            Ok(None) if started.elapsed() >= timeout => {
                kill_group(child.id());
                let _ = child.kill();
                let _ = child.wait();
                return Err(crate::Error::Provider(format!(
                    "`{command}` did not finish within {}s; the memory provider layer is empty",
                    timeout.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => {
                return Err(crate::Error::Provider(format!("`{command}`: {e}")));
            }
        }
    }
}

/// Stops the provider's whole process group (no `unsafe` needed: `kill` does it).
fn kill_group(pid: u32) {
    let _ = Command::new("kill")
        .arg("-9")
        .arg("--")
        .arg(format!("-{pid}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_split_on_delimiter_lines_only() {
        let text = "first\nline two\n§\nsecond § inline\n  §  \n\n§\nthird\n";
        assert_eq!(
            split_entries(text),
            ["first\nline two", "second § inline", "third"]
        );
        assert!(split_entries("\n§\n").is_empty());
    }

    #[test]
    fn provider_output_failure_and_timeout() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            run_provider("echo hello", dir.path(), PROVIDER_TIMEOUT).unwrap(),
            "hello\n"
        );
        assert!(run_provider("exit 3", dir.path(), PROVIDER_TIMEOUT).is_err());
        // The ceiling is far above what a loaded machine adds to the 300 ms
        // timeout and below the 120 s the command would take if it were
        // waited for instead of killed.
        let started = Instant::now();
        let err = run_provider("sleep 120", dir.path(), Duration::from_millis(300)).unwrap_err();
        assert!(err.to_string().contains("did not finish"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(60));
    }
}
