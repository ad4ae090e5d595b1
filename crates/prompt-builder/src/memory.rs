//! Layers 3, 5 and 6: the external memory provider's block and the frozen
//! MEMORY.md / USER.md snapshots, each capped and screened by the guard.

use std::path::Path;
use std::time::Duration;

use skill_core::helper_command::{HelperConfinement, run_helper};

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
    let text = match knack_config::regular_file::read(path) {
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
    // The command may be a workspace script the model edited: read-only sandbox.
    let confinement = HelperConfinement::for_config(&inputs.home, &inputs.config);
    let output = match run_provider_in(
        command,
        &inputs.cwd,
        PROVIDER_TIMEOUT,
        &confinement,
        passthrough,
    ) {
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

/// [`run_provider_in`] unconfined, with no secret variables passed through.
#[cfg(test)]
fn run_provider(command: &str, cwd: &Path, timeout: Duration) -> crate::Result<String> {
    run_provider_in(command, cwd, timeout, &HelperConfinement::Unconfined, &[])
}

/// Runs `bash -c command` once and returns its stdout. Its output goes into
/// the system prompt, so the command gets no secret variables except those
/// in `passthrough` (`agent.env_passthrough`), like every command run for the
/// model, and runs as `confinement` says (read-only in the sandbox unless
/// the sandbox is off); nothing it starts outlives it.
fn run_provider_in(
    command: &str,
    cwd: &Path,
    timeout: Duration,
    confinement: &HelperConfinement,
    passthrough: &[String],
) -> crate::Result<String> {
    let out = run_helper(command, cwd, timeout, confinement, passthrough, 1024 * 1024)
        .map_err(|e| crate::Error::Provider(format!("`{command}`: {e}")))?;
    let Some(code) = out.code else {
        return Err(crate::Error::Provider(format!(
            "`{command}` did not finish within {}s; the memory provider layer is empty",
            timeout.as_secs()
        )));
    };
    if code != 0 {
        return Err(crate::Error::Provider(format!(
            "`{command}` exited with {code}; the memory provider layer is empty"
        )));
    }
    Ok(out.stdout)
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
        let started = std::time::Instant::now();
        let err = run_provider("sleep 120", dir.path(), Duration::from_millis(300)).unwrap_err();
        assert!(err.to_string().contains("did not finish"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(60));
    }

    #[test]
    fn the_provider_runs_read_only_in_the_sandbox() {
        let dir = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let confinement = HelperConfinement::for_config(
            &knack_config::KnackHome::at(home.path()),
            &knack_config::Config::default(),
        );
        let out = run_provider_in(
            "echo remembered",
            dir.path(),
            PROVIDER_TIMEOUT,
            &confinement,
            &[],
        );
        assert_eq!(out.unwrap(), "remembered\n");
        let err = run_provider_in(
            "echo x > planted.txt",
            dir.path(),
            PROVIDER_TIMEOUT,
            &confinement,
            &[],
        )
        .unwrap_err();
        assert!(err.to_string().contains("exited with"), "{err}");
        assert!(!dir.path().join("planted.txt").exists());
    }
}
