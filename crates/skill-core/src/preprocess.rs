//! Preprocessing of a SKILL.md on view and on injection: template variables
//! (with the aliases other runtimes use), then inline shell when enabled,
//! each snippet run read-only in the sandbox (`helper_command`).

use std::path::Path;
use std::time::Duration;

use knack_config::{Config, KnackHome};

use crate::helper_command::{HelperConfinement, run_helper};

/// Output kept from one inline shell snippet.
pub const INLINE_SHELL_OUTPUT_CAP: usize = 4000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreprocessOptions {
    pub template_vars: bool,
    pub inline_shell: bool,
    pub inline_shell_timeout: Duration,
    /// Secret-looking variables inline shell snippets may still inherit
    /// (`agent.env_passthrough`, the same list the terminal tool uses).
    pub env_passthrough: Vec<String>,
    /// The sandbox inline shell snippets run in.
    pub confinement: HelperConfinement,
}

impl PreprocessOptions {
    pub fn from_config(home: &KnackHome, config: &Config) -> Self {
        let skills = &config.skills;
        Self {
            template_vars: skills.template_vars,
            inline_shell: skills.inline_shell,
            inline_shell_timeout: Duration::from_secs(skills.inline_shell_timeout),
            env_passthrough: config.agent.env_passthrough.clone(),
            confinement: HelperConfinement::for_config(home, config),
        }
    }
}

/// Values for the template variables; a `None` leaves the token as written.
#[derive(Debug, Clone, Default)]
pub struct TemplateValues<'a> {
    pub skill_dir: Option<&'a Path>,
    pub session_id: Option<&'a str>,
    /// What the user wrote after `/name` (Claude Code's `$ARGUMENTS`).
    pub arguments: Option<&'a str>,
    /// The plugin folder of a plugin's skill (`${CLAUDE_PLUGIN_ROOT}`).
    pub plugin_root: Option<&'a Path>,
}

/// The folder of the plugin a skill belongs to: its root, or the root's
/// parent when the root is the plugin's `skills/` folder (Claude Code's
/// layout). `None` for skills outside a plugin namespace.
pub fn plugin_root(skill: &crate::skill::Skill) -> Option<std::path::PathBuf> {
    if !matches!(skill.scope, crate::skill::Scope::Plugin(_)) {
        return None;
    }
    let mut root = skill.skill_dir.clone();
    for _ in skill.id.split('/') {
        root.pop();
    }
    if root.file_name().is_some_and(|n| n == "skills")
        && let Some(parent) = root.parent()
    {
        return Some(parent.to_path_buf());
    }
    Some(root)
}

pub fn preprocess(text: &str, values: &TemplateValues<'_>, options: &PreprocessOptions) -> String {
    let text = if options.template_vars {
        substitute_template_vars(text, values)
    } else {
        text.to_owned()
    };
    match (options.inline_shell, values.skill_dir) {
        (true, Some(dir)) => expand_inline_shell(&text, dir, options),
        _ => text,
    }
}

pub fn substitute_template_vars(text: &str, values: &TemplateValues<'_>) -> String {
    let dir = values.skill_dir.map(|d| d.to_string_lossy().into_owned());
    let mut out = text.to_owned();
    if let Some(dir) = &dir {
        for token in [
            "${KNACK_SKILL_DIR}",
            "${HERMES_SKILL_DIR}",
            "${CLAUDE_SKILL_DIR}",
        ] {
            out = out.replace(token, dir);
        }
    }
    if let Some(id) = values.session_id {
        for token in ["${KNACK_SESSION_ID}", "${HERMES_SESSION_ID}"] {
            out = out.replace(token, id);
        }
    }
    if let Some(root) = values.plugin_root {
        out = out.replace("${CLAUDE_PLUGIN_ROOT}", &root.to_string_lossy());
    }
    if let Some(arguments) = values.arguments {
        out = out
            .replace("${ARGUMENTS}", arguments)
            .replace("$ARGUMENTS", arguments);
    }
    out
}

/// Runs each single-line `` !`cmd` `` snippet in document order and puts its
/// output in place.
pub fn expand_inline_shell(text: &str, dir: &Path, options: &PreprocessOptions) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("!`") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('`') else { break };
        let command = &after[..end];
        if command.contains('\n') || command.trim().is_empty() {
            out.push_str(&rest[..start + 2]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..start]);
        out.push_str(&run_snippet(command, dir, options));
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

fn run_snippet(command: &str, dir: &Path, options: &PreprocessOptions) -> String {
    // The snippet's output goes to the model: it gets no keys, and it runs
    // read-only in the sandbox (a model could have written the skill).
    let run = run_helper(
        command,
        dir,
        options.inline_shell_timeout,
        &options.confinement,
        &options.env_passthrough,
        1024 * 1024,
    );
    let out = match run {
        Ok(out) => out,
        Err(e) => return format!("[inline shell {e}]"),
    };
    let Some(code) = out.code else {
        return format!(
            "[inline shell timed out after {}s: {command}]",
            options.inline_shell_timeout.as_secs()
        );
    };
    let output = if out.stdout.trim().is_empty() {
        out.stderr
    } else {
        out.stdout
    };
    let output = cap_output(output.trim_end());
    if code == 0 {
        output
    } else {
        format!("[inline shell failed with exit {code}: {output}]")
    }
}

fn cap_output(text: &str) -> String {
    match text.char_indices().nth(INLINE_SHELL_OUTPUT_CAP) {
        Some((at, _)) => format!("{}...[truncated]", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_arguments_and_plugin_root_are_substituted_when_known() {
        let v = TemplateValues {
            skill_dir: Some(Path::new("/p/skills/x")),
            arguments: Some("v2 to staging"),
            plugin_root: Some(Path::new("/p")),
            ..Default::default()
        };
        assert_eq!(
            substitute_template_vars(
                "ship $ARGUMENTS (${ARGUMENTS}) with ${CLAUDE_PLUGIN_ROOT}/bin and ${CLAUDE_SKILL_DIR}",
                &v
            ),
            "ship v2 to staging (v2 to staging) with /p/bin and /p/skills/x"
        );
        // Unknown values leave the tokens as written.
        let none = TemplateValues::default();
        assert_eq!(
            substitute_template_vars("$ARGUMENTS ${CLAUDE_PLUGIN_ROOT}", &none),
            "$ARGUMENTS ${CLAUDE_PLUGIN_ROOT}"
        );
    }

    fn opts(shell: bool) -> PreprocessOptions {
        PreprocessOptions {
            template_vars: true,
            inline_shell: shell,
            inline_shell_timeout: Duration::from_secs(2),
            env_passthrough: Vec::new(),
            confinement: HelperConfinement::Unconfined,
        }
    }

    #[test]
    fn template_vars_and_aliases() {
        let v = TemplateValues {
            skill_dir: Some(Path::new("/s/x")),
            session_id: Some("abc"),
            ..Default::default()
        };
        let out = substitute_template_vars(
            "${KNACK_SKILL_DIR} ${HERMES_SKILL_DIR} ${CLAUDE_SKILL_DIR} ${KNACK_SESSION_ID} ${HERMES_SESSION_ID} ${OTHER}",
            &v,
        );
        assert_eq!(out, "/s/x /s/x /s/x abc abc ${OTHER}");
    }

    #[test]
    fn unresolved_tokens_stay() {
        let v = TemplateValues::default();
        assert_eq!(
            substitute_template_vars("${KNACK_SESSION_ID}", &v),
            "${KNACK_SESSION_ID}"
        );
    }

    #[test]
    fn inline_shell_is_off_by_default_in_config() {
        let o = PreprocessOptions::from_config(
            &KnackHome::at("/nonexistent-home"),
            &knack_config::Config::default(),
        );
        assert!(!o.inline_shell);
        let dir = tempfile::tempdir().unwrap();
        let v = TemplateValues {
            skill_dir: Some(dir.path()),
            session_id: None,
            ..Default::default()
        };
        assert_eq!(preprocess("a !`echo hi` b", &v, &o), "a !`echo hi` b");
    }

    #[test]
    fn inline_shell_runs_in_order_in_the_skill_dir() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.txt"), "content").unwrap();
        let v = TemplateValues {
            skill_dir: Some(dir.path()),
            session_id: None,
            ..Default::default()
        };
        let out = preprocess("1 !`cat f.txt` 2 !`echo two` 3", &v, &opts(true));
        assert_eq!(out, "1 content 2 two 3");
    }

    #[test]
    fn inline_shell_failures_timeouts_stderr_and_cap() {
        let dir = tempfile::tempdir().unwrap();
        let v = TemplateValues {
            skill_dir: Some(dir.path()),
            session_id: None,
            ..Default::default()
        };
        let failed = preprocess("!`exit 3`", &v, &opts(true));
        assert!(
            failed.starts_with("[inline shell failed with exit 3"),
            "{failed}"
        );
        let err = preprocess("!`echo oops >&2`", &v, &opts(true));
        assert_eq!(err, "oops");
        let mut o = opts(true);
        o.inline_shell_timeout = Duration::from_millis(200);
        let slow = preprocess("!`sleep 5`", &v, &o);
        assert!(slow.starts_with("[inline shell timed out"), "{slow}");
        let big = preprocess("!`head -c 5000 /dev/zero | tr '\\0' x`", &v, &opts(true));
        assert!(big.ends_with("...[truncated]"));
        assert_eq!(big.len(), INLINE_SHELL_OUTPUT_CAP + "...[truncated]".len());
    }

    #[test]
    fn a_sandboxed_snippet_reads_but_cannot_write() {
        let dir = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.txt"), "content").unwrap();
        let v = TemplateValues {
            skill_dir: Some(dir.path()),
            session_id: None,
            ..Default::default()
        };
        let o = PreprocessOptions {
            confinement: HelperConfinement::for_config(
                &KnackHome::at(home.path()),
                &Config::default(),
            ),
            ..opts(true)
        };
        assert_eq!(preprocess("!`cat f.txt`", &v, &o), "content");
        let out = preprocess("!`echo x > made.txt && echo wrote`", &v, &o);
        assert!(out.starts_with("[inline shell failed"), "{out}");
        assert!(!dir.path().join("made.txt").exists());
    }

    #[test]
    fn templates_run_before_shell() {
        let dir = tempfile::tempdir().unwrap();
        let v = TemplateValues {
            skill_dir: Some(dir.path()),
            session_id: None,
            ..Default::default()
        };
        let out = preprocess("!`basename ${KNACK_SKILL_DIR}`", &v, &opts(true));
        assert_eq!(out, dir.path().file_name().unwrap().to_string_lossy());
    }
}
