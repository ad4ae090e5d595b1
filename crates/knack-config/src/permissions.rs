//! Permission rules (`permissions.allow` / `permissions.deny`): what a tool call may do
//! without asking, or may never do. One grammar, parsed and matched here, used by the
//! approval gate, `knack permissions list` and the TUI's "always" choices.
//!
//! A rule names one kind of action and what it covers:
//!
//! - `terminal(cargo test)`: exactly this sandboxed command line;
//! - `terminal(cargo test:*)`: commands that start with these words (a simple command only:
//!   an allow rule never covers `cargo test; rm -rf x`);
//! - `outside_sandbox(…)`: the same for commands run outside the sandbox;
//! - `write(/var/tmp/out.txt)`, `write(/var/tmp:*)`: file writes outside the workspace;
//! - `web_fetch(docs.rs)`, `web_fetch(*.python.org)`: `web_fetch` by host;
//! - `mcp__server__tool`: every call to one MCP tool.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// `permissions`: rules that approve or refuse tool calls before anyone is asked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PermissionsConfig {
    /// Calls these rules cover run without asking.
    pub allow: Vec<String>,
    /// Calls these rules cover are refused, whatever else allows them.
    pub deny: Vec<String>,
}

impl PermissionsConfig {
    /// Every rule that does not parse, with why, as one message per rule.
    pub fn problems(&self) -> Vec<String> {
        let lists = [
            ("permissions.allow", &self.allow),
            ("permissions.deny", &self.deny),
        ];
        lists
            .into_iter()
            .flat_map(|(key, rules)| {
                rules.iter().filter_map(move |raw| {
                    PermissionRule::parse(raw)
                        .err()
                        .map(|why| format!("{key}: rule `{raw}` is not valid: {why}"))
                })
            })
            .collect()
    }
}

/// What a rule's argument covers: one exact value, or everything starting with a prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pattern {
    Exact(String),
    Prefix(String),
}

/// One parsed rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionRule {
    /// A terminal command; `outside` for runs outside the sandbox.
    Command { outside: bool, pattern: Pattern },
    /// A file write outside the workspace (path exact, or a folder and what is under it).
    Write(Pattern),
    /// `web_fetch` of a host; `subdomains` when written `*.host`.
    Fetch { host: String, subdomains: bool },
    /// Every call to one MCP tool (`mcp__server__tool`).
    McpTool(String),
}

/// The action a tool call is about to take, as the rules see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action<'a> {
    /// A terminal command. `destructive` when it trips a destructive-command rule: then
    /// only an exact rule covers it, never a prefix.
    Command {
        command: &'a str,
        outside: bool,
        destructive: bool,
    },
    Write(&'a Path),
    Fetch(&'a str),
    McpTool(&'a str),
}

/// The suffix that makes a rule's argument a prefix.
const PREFIX_MARK: &str = ":*";

/// Shell characters that join, substitute or redirect commands. A command holding any of
/// them is not "simple": an allow prefix never covers it (only an exact rule does).
const COMPOUND: [&str; 10] = [";", "&", "|", "`", "$(", ">", "<", "\n", "\r", "${"];

impl PermissionRule {
    pub fn parse(raw: &str) -> Result<Self, String> {
        let raw = raw.trim();
        if raw.starts_with("mcp__") && !raw.contains('(') {
            return if raw.len() > "mcp__".len() && !raw.contains(char::is_whitespace) {
                Ok(Self::McpTool(raw.to_owned()))
            } else {
                Err("an MCP rule is the tool's whole name, e.g. mcp__github__create_issue".into())
            };
        }
        let Some((kind, rest)) = raw.split_once('(') else {
            return Err(
                "write it as KIND(ARGUMENT), e.g. terminal(cargo test:*) or web_fetch(docs.rs)"
                    .into(),
            );
        };
        let Some(argument) = rest.strip_suffix(')') else {
            return Err("the rule must end with `)`".into());
        };
        let argument = argument.trim();
        if argument.is_empty() || argument == PREFIX_MARK {
            return Err(
                "the argument is empty; a rule covers one thing, never a whole kind of action"
                    .into(),
            );
        }
        match kind.trim() {
            "terminal" | "outside_sandbox" => Ok(Self::Command {
                outside: kind.trim() == "outside_sandbox",
                pattern: pattern(argument),
            }),
            "write" => {
                let pattern = pattern(argument);
                let (Pattern::Exact(path) | Pattern::Prefix(path)) = &pattern;
                if !Path::new(path).is_absolute() {
                    return Err(format!("`{path}` is not an absolute path"));
                }
                Ok(Self::Write(pattern))
            }
            "web_fetch" => {
                let (host, subdomains) = match argument.strip_prefix("*.") {
                    Some(host) => (host, true),
                    None => (argument, false),
                };
                let valid = !host.is_empty()
                    && host
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':'));
                if !valid || !host.contains(|c: char| c.is_ascii_alphanumeric()) {
                    return Err(format!(
                        "`{argument}` is not a host name (write e.g. docs.rs or *.python.org)"
                    ));
                }
                Ok(Self::Fetch {
                    host: host.to_ascii_lowercase(),
                    subdomains,
                })
            }
            other => Err(format!(
                "unknown kind `{other}`; the kinds are terminal, outside_sandbox, write, \
                 web_fetch and mcp__<server>__<tool>"
            )),
        }
    }

    /// Whether this rule, in `permissions.allow`, lets `action` run unasked. Allow rules
    /// are read narrowly: a prefix covers only a simple command, never a destructive one.
    pub fn allows(&self, action: &Action<'_>) -> bool {
        match (self, action) {
            (
                Self::Command { outside, pattern },
                Action::Command {
                    command,
                    outside: action_outside,
                    destructive,
                },
            ) => {
                outside == action_outside
                    && match pattern {
                        Pattern::Exact(exact) => exact == command.trim(),
                        Pattern::Prefix(prefix) => {
                            !destructive && is_simple(command) && starts_with_words(command, prefix)
                        }
                    }
            }
            (Self::Write(pattern), Action::Write(path)) => match pattern {
                Pattern::Exact(exact) => Path::new(exact) == *path,
                Pattern::Prefix(dir) => path.starts_with(dir),
            },
            (Self::Fetch { host, subdomains }, Action::Fetch(asked)) => {
                host_matches(host, *subdomains, asked)
            }
            (Self::McpTool(name), Action::McpTool(asked)) => name == asked,
            _ => false,
        }
    }

    /// Whether this rule, in `permissions.deny`, refuses `action`. Deny rules are read
    /// broadly: a command is refused when any of its parts (split at `;`, `&&`, `|`, ...)
    /// matches, and the `outside` flag does not matter.
    pub fn denies(&self, action: &Action<'_>) -> bool {
        match (self, action) {
            (Self::Command { pattern, .. }, Action::Command { command, .. }) => {
                std::iter::once(command.trim())
                    .chain(command_parts(command))
                    .any(|part| match pattern {
                        Pattern::Exact(exact) => part == exact,
                        Pattern::Prefix(prefix) => starts_with_words(part, prefix),
                    })
            }
            _ => self.allows(action),
        }
    }

    /// Whether an "always" answer may save this rule for `action`: it must cover the
    /// action, be of its kind, and, for a run outside the sandbox, be exact (a prefix
    /// there is for a person to write by hand, never one keypress away).
    pub fn fits_answer_for(&self, action: &Action<'_>) -> bool {
        let exact_only = matches!(action, Action::Command { outside: true, .. });
        let is_prefix = matches!(
            self,
            Self::Command {
                pattern: Pattern::Prefix(_),
                ..
            } | Self::Write(Pattern::Prefix(_))
                | Self::Fetch {
                    subdomains: true,
                    ..
                }
        );
        self.allows(action) && !(exact_only && is_prefix)
    }
}

impl fmt::Display for PermissionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |p: &Pattern| match p {
            Pattern::Exact(v) => v.clone(),
            Pattern::Prefix(v) => format!("{v}{PREFIX_MARK}"),
        };
        match self {
            Self::Command { outside, pattern } => {
                let kind = if *outside {
                    "outside_sandbox"
                } else {
                    "terminal"
                };
                write!(f, "{kind}({})", show(pattern))
            }
            Self::Write(pattern) => write!(f, "write({})", show(pattern)),
            Self::Fetch { host, subdomains } => {
                let star = if *subdomains { "*." } else { "" };
                write!(f, "web_fetch({star}{host})")
            }
            Self::McpTool(name) => f.write_str(name),
        }
    }
}

impl Action<'_> {
    /// The rule that covers exactly this action and nothing else ("always this one").
    pub fn exact_rule(&self) -> PermissionRule {
        match *self {
            Self::Command {
                command, outside, ..
            } => PermissionRule::Command {
                outside,
                pattern: Pattern::Exact(command.trim().to_owned()),
            },
            Self::Write(path) => {
                PermissionRule::Write(Pattern::Exact(path.to_string_lossy().into_owned()))
            }
            Self::Fetch(host) => PermissionRule::Fetch {
                host: host.to_ascii_lowercase(),
                subdomains: false,
            },
            Self::McpTool(name) => PermissionRule::McpTool(name.to_owned()),
        }
    }

    /// A prefix rule to offer (editable) for "always commands starting with …": the
    /// command's leading plain words (at most three). `None` where a prefix is never
    /// offered: runs outside the sandbox, destructive or compound commands, and
    /// actions that are not commands.
    pub fn suggested_prefix(&self) -> Option<PermissionRule> {
        let Self::Command {
            command,
            outside: false,
            destructive: false,
        } = *self
        else {
            return None;
        };
        if !is_simple(command) {
            return None;
        }
        let words: Vec<&str> = command
            .split_whitespace()
            .take_while(|w| {
                w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.=:/+@".contains(c))
            })
            .take(3)
            .collect();
        (!words.is_empty()).then(|| PermissionRule::Command {
            outside: false,
            pattern: Pattern::Prefix(words.join(" ")),
        })
    }
}

/// Where a project keeps its own rules, relative to its root (the git root, else the
/// working directory). Its deny rules always apply; its allow rules only once the
/// project is trusted (`skills.trusted_projects`), so a cloned repository cannot approve
/// anything for itself.
pub const PROJECT_FILE: &str = ".knack/permissions.yaml";

/// A project's rules file, if there is one: `{allow: [...], deny: [...]}`.
pub fn load_project(root: &Path) -> crate::Result<Option<PermissionsConfig>> {
    let path = root.join(PROJECT_FILE);
    // Only a regular file counts: a `.knack` that is a file, or a rules path that is a
    // folder or a link, is no rules file (a repository must not stop knack from starting).
    let regular = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file());
    if !regular {
        return Ok(None);
    }
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(crate::Error::io(&path, e)),
    };
    if text.trim().is_empty() {
        return Ok(Some(PermissionsConfig::default()));
    }
    let rules: PermissionsConfig =
        serde_saphyr::from_str(&text).map_err(|e| crate::Error::yaml(&path, &e))?;
    let problems: Vec<String> = rules
        .problems()
        .into_iter()
        .map(|p| p.replacen("permissions.", "", 1))
        .collect();
    if !problems.is_empty() {
        return Err(crate::Error::InvalidConfig {
            path,
            message: problems.join("; "),
        });
    }
    Ok(Some(rules))
}

/// Adds `rule` to `permissions.allow` in the config file at `path` (editing the file in
/// place, like `knack config set`); nothing changes when the rule is already there.
pub fn save_allow_rule(path: &Path, rule: &PermissionRule) -> crate::Result<()> {
    let config = crate::Config::load_file(path)?;
    let rule = rule.to_string();
    if config.permissions.allow.contains(&rule) {
        return Ok(());
    }
    let mut allow = config.permissions.allow;
    allow.push(rule);
    // A JSON array is a YAML flow sequence, and JSON quoting survives any command text.
    let value = serde_json::to_string(&allow).map_err(|e| crate::Error::InvalidValue {
        key: "permissions.allow".into(),
        message: e.to_string(),
    })?;
    crate::set_dotted(path, "permissions.allow", &value).map(|_| ())
}

fn pattern(argument: &str) -> Pattern {
    match argument.strip_suffix(PREFIX_MARK) {
        Some(prefix) => Pattern::Prefix(prefix.trim_end().to_owned()),
        None => Pattern::Exact(argument.to_owned()),
    }
}

/// No shell operator that could chain another command, substitute one or redirect output.
pub fn is_simple(command: &str) -> bool {
    !COMPOUND.iter().any(|op| command.contains(op))
}

/// `command` begins with `prefix`'s words, the last of them whole (`git status` covers
/// `git status -s`, not `git statusx`).
fn starts_with_words(command: &str, prefix: &str) -> bool {
    let command: Vec<&str> = command.split_whitespace().collect();
    let prefix: Vec<&str> = prefix.split_whitespace().collect();
    !prefix.is_empty() && command.len() >= prefix.len() && command[..prefix.len()] == prefix[..]
}

/// The simple commands inside a command line, for deny rules.
fn command_parts(command: &str) -> impl Iterator<Item = &str> {
    command
        .split([';', '&', '|', '\n', '(', ')', '`', '{', '}'])
        .map(|part| part.trim().trim_start_matches('$').trim())
        .filter(|part| !part.is_empty())
}

fn host_matches(host: &str, subdomains: bool, asked: &str) -> bool {
    let asked = asked.to_ascii_lowercase();
    asked == host
        || (subdomains
            && asked
                .strip_suffix(host)
                .is_some_and(|head| head.ends_with('.')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(raw: &str) -> PermissionRule {
        PermissionRule::parse(raw).unwrap()
    }

    fn cmd(command: &str) -> Action<'_> {
        Action::Command {
            command,
            outside: false,
            destructive: false,
        }
    }

    #[test]
    fn rules_print_as_they_parse() {
        for raw in [
            "terminal(cargo test)",
            "terminal(cargo test:*)",
            "outside_sandbox(echo hi > /var/tmp/x)",
            "write(/var/tmp/out.txt)",
            "write(/var/tmp:*)",
            "web_fetch(docs.rs)",
            "web_fetch(*.python.org)",
            "mcp__github__create_issue",
        ] {
            assert_eq!(rule(raw).to_string(), raw);
        }
    }

    #[test]
    fn bad_rules_say_what_to_write() {
        for (raw, says) in [
            ("terminal", "KIND(ARGUMENT)"),
            ("terminal()", "empty"),
            ("terminal(:*)", "empty"),
            ("shell(ls)", "unknown kind"),
            ("write(relative/path)", "absolute"),
            ("web_fetch(http://x/y)", "host name"),
            ("terminal(ls", "end with"),
        ] {
            let err = PermissionRule::parse(raw).unwrap_err();
            assert!(err.contains(says), "{raw}: {err}");
        }
    }

    #[test]
    fn an_exact_rule_covers_only_its_command() {
        let r = rule("terminal(python3 -m unittest)");
        assert!(r.allows(&cmd("python3 -m unittest")));
        assert!(r.allows(&cmd("  python3 -m unittest ")));
        assert!(!r.allows(&cmd("python3 -c 'import os'")));
        assert!(!r.allows(&cmd("python3 -m unittest; rm -rf x")));
    }

    #[test]
    fn a_prefix_covers_whole_words_of_simple_commands_only() {
        let r = rule("terminal(git status:*)");
        assert!(r.allows(&cmd("git status")));
        assert!(r.allows(&cmd("git status -s")));
        assert!(!r.allows(&cmd("git statusx")));
        assert!(!r.allows(&cmd("git push")));
        for chained in [
            "git status; rm -rf ~",
            "git status && curl x | sh",
            "git status $(rm x)",
            "git status > /etc/passwd",
            "git status `id`",
            "git status\nrm x",
        ] {
            assert!(!r.allows(&cmd(chained)), "{chained}");
        }
    }

    #[test]
    fn a_prefix_never_covers_a_destructive_command() {
        let r = rule("terminal(rm:*)");
        let destructive = Action::Command {
            command: "rm -rf /",
            outside: false,
            destructive: true,
        };
        assert!(!r.allows(&destructive));
        assert!(rule("terminal(rm -rf /)").allows(&destructive));
    }

    #[test]
    fn sandboxed_and_outside_rules_do_not_cover_each_other() {
        let outside = Action::Command {
            command: "ls",
            outside: true,
            destructive: false,
        };
        assert!(!rule("terminal(ls)").allows(&outside));
        assert!(rule("outside_sandbox(ls)").allows(&outside));
        assert!(!rule("outside_sandbox(ls)").allows(&cmd("ls")));
    }

    #[test]
    fn an_answer_for_an_outside_run_saves_only_an_exact_rule() {
        let outside = Action::Command {
            command: "echo hello > /var/tmp/x",
            outside: true,
            destructive: false,
        };
        assert!(outside.exact_rule().fits_answer_for(&outside));
        assert!(outside.suggested_prefix().is_none());
        // A hand-written prefix works, but no "always" answer can create one.
        let by_hand = rule("outside_sandbox(echo:*)");
        assert!(!by_hand.fits_answer_for(&outside));
        // And a rule that does not cover what was shown is never saved.
        assert!(!rule("terminal(cargo test:*)").fits_answer_for(&cmd("cargo build")));
        assert!(!rule("outside_sandbox(ls)").fits_answer_for(&cmd("ls")));
    }

    #[test]
    fn deny_rules_catch_any_part_of_a_command() {
        let r = rule("terminal(git push:*)");
        assert!(r.denies(&cmd("git push origin main")));
        assert!(r.denies(&cmd("make && git push")));
        assert!(r.denies(&cmd("echo $(git push)")));
        assert!(!r.denies(&cmd("git pull")));
        let outside = Action::Command {
            command: "git push",
            outside: true,
            destructive: false,
        };
        assert!(r.denies(&outside));
    }

    #[test]
    fn suggested_prefixes_stop_at_the_first_argument_that_is_not_plain() {
        let prefix = |c: &str| cmd(c).suggested_prefix().map(|r| r.to_string());
        assert_eq!(
            prefix("python3 -m unittest").as_deref(),
            Some("terminal(python3 -m unittest:*)")
        );
        assert_eq!(
            prefix("cargo test --workspace --all").as_deref(),
            Some("terminal(cargo test --workspace:*)")
        );
        assert_eq!(
            prefix("grep 'a b' file").as_deref(),
            Some("terminal(grep:*)")
        );
        assert_eq!(prefix("ls | sh"), None);
    }

    #[test]
    fn hosts_match_exactly_or_as_subdomains_when_starred() {
        assert!(rule("web_fetch(docs.rs)").allows(&Action::Fetch("DOCS.rs")));
        assert!(!rule("web_fetch(docs.rs)").allows(&Action::Fetch("evil-docs.rs")));
        assert!(!rule("web_fetch(docs.rs)").allows(&Action::Fetch("a.docs.rs")));
        let star = rule("web_fetch(*.python.org)");
        assert!(star.allows(&Action::Fetch("docs.python.org")));
        assert!(!star.allows(&Action::Fetch("evilpython.org")));
    }

    #[test]
    fn write_prefixes_are_whole_folders() {
        let r = rule("write(/var/tmp:*)");
        assert!(r.allows(&Action::Write(Path::new("/var/tmp/a/b"))));
        assert!(!r.allows(&Action::Write(Path::new("/var/tmpx/a"))));
    }

    #[test]
    fn saved_rules_keep_the_file_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, "# mine\nagent:\n  sandbox_network: false\n").unwrap();
        let tricky = rule("terminal(echo \"a: b\" 'c' #d:*)");
        save_allow_rule(&path, &tricky).unwrap();
        save_allow_rule(&path, &rule("web_fetch(docs.rs)")).unwrap();
        save_allow_rule(&path, &tricky).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# mine\n"), "{text}");
        let config = crate::Config::load_file(&path).unwrap();
        assert_eq!(
            config.permissions.allow,
            vec![tricky.to_string(), "web_fetch(docs.rs)".to_owned()]
        );
    }

    #[test]
    fn a_project_file_is_read_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load_project(dir.path()).unwrap(), None);
        std::fs::create_dir_all(dir.path().join(".knack")).unwrap();
        let file = dir.path().join(PROJECT_FILE);
        std::fs::write(&file, "deny:\n  - terminal(git push:*)\n").unwrap();
        let rules = load_project(dir.path()).unwrap().unwrap();
        assert_eq!(rules.deny, vec!["terminal(git push:*)".to_owned()]);
        std::fs::write(&file, "allow:\n  - terminal\n").unwrap();
        let err = load_project(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("permissions.yaml") && err.contains("`terminal`"),
            "{err}"
        );
    }

    #[test]
    fn config_problems_name_the_list_and_the_rule() {
        let config = PermissionsConfig {
            allow: vec!["terminal(ls)".into(), "bogus".into()],
            deny: vec!["terminal()".into()],
        };
        let problems = config.problems();
        assert_eq!(problems.len(), 2);
        assert!(problems[0].starts_with("permissions.allow: rule `bogus`"));
        assert!(problems[1].starts_with("permissions.deny: rule `terminal()`"));
    }
}
