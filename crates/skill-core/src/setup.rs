//! A skill's setup: which of the environment variables it declares
//! (`required_environment_variables`, or Hermes' `setup.collect_secrets`) are
//! still missing, and what the model is told about them. Every surface that
//! asks "is this skill ready?" (`skill_view`, an invocation, the TUI's masked
//! prompt, `knack run`'s stderr line) asks here, so they always agree.

use std::fmt::Write as _;

use knack_config::EnvFile;

use crate::frontmatter::EnvRequirement;
use crate::skill::Skill;

/// Where a missing variable may be set, as the user reads it.
pub const ENV_FILE_DISPLAY: &str = "$KNACK_HOME/.env";

/// The declared variables that block the skill: not optional, and neither
/// in the process environment nor in `$KNACK_HOME/.env` (an empty value
/// counts as unset). Declaration order, each name once.
pub fn missing_env<'a>(required: &'a [EnvRequirement], env: &EnvFile) -> Vec<&'a EnvRequirement> {
    let mut missing: Vec<&EnvRequirement> = Vec::new();
    for req in required {
        if req.optional || missing.iter().any(|m| m.name == req.name) {
            continue;
        }
        if env.lookup(&req.name).is_none() {
            missing.push(req);
        }
    }
    missing
}

/// The commands of `prerequisites.commands` that are not on `PATH`.
pub fn missing_commands(commands: &[String]) -> Vec<&str> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    commands
        .iter()
        .map(|c| c.trim())
        .filter(|c| !c.is_empty())
        .filter(|c| !on_path(c, &path))
        .collect()
}

/// Whether `command` is an executable file in one of `path`'s folders (or,
/// written with a slash, at that path).
fn on_path(command: &str, path: &std::ffi::OsStr) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    let executable = |p: &std::path::Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if command.contains('/') {
        return executable(std::path::Path::new(command));
    }
    std::env::split_paths(path).any(|dir| executable(&dir.join(command)))
}

/// One skill that cannot be used fully until some variables are set.
#[derive(Debug, Clone, PartialEq)]
pub struct SetupNeed<'a> {
    pub skill: &'a Skill,
    pub missing: Vec<&'a EnvRequirement>,
}

impl SetupNeed<'_> {
    /// The missing names, comma-separated, for messages.
    pub fn names(&self) -> String {
        self.missing
            .iter()
            .map(|r| r.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The skills among `skills` that have missing variables, in order, each once.
pub fn setup_needs<'a>(
    skills: impl IntoIterator<Item = &'a Skill>,
    env: &EnvFile,
) -> Vec<SetupNeed<'a>> {
    let mut needs: Vec<SetupNeed<'a>> = Vec::new();
    for skill in skills {
        if needs
            .iter()
            .any(|n| n.skill.qualified() == skill.qualified())
        {
            continue;
        }
        let missing = missing_env(&skill.frontmatter.required_environment_variables, env);
        if !missing.is_empty() {
            needs.push(SetupNeed { skill, missing });
        }
    }
    needs
}

/// What the model reads when a skill loads without its variables: which are
/// missing, where the user sets them, and that values must never be asked
/// for in the conversation (they would be stored and sent with it).
pub fn setup_note(missing: &[&EnvRequirement]) -> String {
    let names: Vec<&str> = missing.iter().map(|r| r.name.as_str()).collect();
    let mut note = format!(
        "Setup needed: this skill expects the environment variable{} {} and {} not set. \
         Tell the user what will not work without {}, and that they can set {} in {ENV_FILE_DISPLAY} \
         or in the environment; never ask them to paste a value into this conversation.",
        if names.len() == 1 { "" } else { "s" },
        names.join(", "),
        if names.len() == 1 {
            "it is"
        } else {
            "they are"
        },
        if names.len() == 1 { "it" } else { "them" },
        if names.len() == 1 { "it" } else { "them" },
    );
    for req in missing {
        if let Some(help) = req.help.as_deref().map(str::trim).filter(|h| !h.is_empty()) {
            let _ = write!(note, " {}: {help}", req.name);
        }
    }
    note
}

/// Whether `name` is one of knack's own settings (`KNACK_BASE_URL`,
/// `KNACK_MODEL`, …). A skill never asks for those: a skill the model wrote
/// could otherwise have the user's masked prompt point knack at another
/// server, with the user's key.
pub fn is_knack_setting(name: &str) -> bool {
    name.starts_with("KNACK_")
}

/// The warning for a declared name that is knack's own setting.
pub fn knack_setting_warning(name: &str) -> String {
    format!(
        "required_environment_variables: '{name}' is one of knack's own settings, \
         which a skill may not ask for; it is ignored (set it yourself in \
         $KNACK_HOME/.env or the environment if you mean to)"
    )
}

/// The warning for a declared name that no environment can hold.
pub fn bad_name_warning(name: &str) -> String {
    format!(
        "required_environment_variables: '{name}' is not a valid variable name \
         (use letters, digits and _, not starting with a digit); it is ignored"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn req(name: &str, optional: bool) -> EnvRequirement {
        EnvRequirement {
            name: name.into(),
            prompt: None,
            help: None,
            optional,
        }
    }

    #[test]
    fn only_unset_required_variables_are_missing() {
        let env = knack_config::parse_env_file("FROM_DOTENV=yes\nEMPTY_IN_DOTENV=\nPATH_TWIN=x\n");
        // PATH is set in every test process; the .env value is not needed.
        let required = [
            req("FROM_DOTENV", false),
            req("PATH", false),
            req("EMPTY_IN_DOTENV", false),
            req("SKILL_TEST_SURELY_UNSET_A", false),
            req("SKILL_TEST_SURELY_UNSET_B", true),
            req("SKILL_TEST_SURELY_UNSET_A", false),
        ];
        let missing: Vec<&str> = missing_env(&required, &env)
            .iter()
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(
            missing,
            vec!["EMPTY_IN_DOTENV", "SKILL_TEST_SURELY_UNSET_A"],
            "set ones, optional ones and repeats never block"
        );
        assert!(missing_env(&[], &env).is_empty());
    }

    #[test]
    fn the_note_names_the_variables_and_their_help_but_asks_for_no_value() {
        let mut key = req("WEATHER_API_KEY", false);
        key.help = Some("Get one at https://example.test/keys".into());
        let region = req("WEATHER_REGION", false);
        let note = setup_note(&[&key, &region]);
        assert!(
            note.contains("variables WEATHER_API_KEY, WEATHER_REGION and they are not set"),
            "{note}"
        );
        assert!(note.contains("$KNACK_HOME/.env"), "{note}");
        assert!(note.contains("never ask them to paste"), "{note}");
        assert!(
            note.ends_with("WEATHER_API_KEY: Get one at https://example.test/keys"),
            "{note}"
        );
        let one = setup_note(&[&region]);
        assert!(
            one.contains("variable WEATHER_REGION and it is not set"),
            "{one}"
        );
    }
}
