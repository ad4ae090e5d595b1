//! Skills enter the conversation as user messages: `/name text`, stacked
//! `/a /b text`, `/skill <id> text` and `-s` preloads. This module parses those
//! forms and renders the message; nothing here touches the system prompt.

use std::fmt::Write as _;

use knack_config::EnvFile;
use skill_core::disclosure::linked_files;
use skill_core::preprocess::{PreprocessOptions, TemplateValues, preprocess};
use skill_core::setup::{missing_env, setup_note};
use skill_core::{Resolution, Skill, SkillSet};

/// Most skills one message may invoke (`/a /b /c /d /e text`).
pub const MAX_STACKED_SKILLS: usize = 5;

/// How a skill reached the conversation; shown in `skill_loaded` events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvocationVia {
    Slash,
    Preload,
}

/// A user line split into the skills it invokes and the user's own text.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation<'a> {
    pub skills: Vec<&'a Skill>,
    pub text: String,
}

/// Why a slash line could not be turned into an invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvocationError {
    /// `/name` matches several skills; the user must pick a qualified id.
    Ambiguous {
        token: String,
        candidates: Vec<String>,
    },
    /// The skill exists but is hidden (platform or disabled).
    Unavailable {
        token: String,
        reason: String,
    },
    /// `/skill` without an id, or an id that matches nothing.
    NotFound {
        token: String,
    },
    TooMany,
}

impl std::fmt::Display for InvocationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InvocationError::Ambiguous { token, candidates } => write!(
                f,
                "/{token} matches more than one skill; use one of: {}",
                candidates
                    .iter()
                    .map(|c| format!("/skill {c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            InvocationError::Unavailable { token, reason } => {
                write!(f, "skill '{token}' cannot be used: {reason}")
            }
            InvocationError::NotFound { token } => write!(
                f,
                "no skill named '{token}'; `knack skills list` shows what is available"
            ),
            InvocationError::TooMany => write!(
                f,
                "at most {MAX_STACKED_SKILLS} skills can be invoked in one message"
            ),
        }
    }
}

/// Parses leading `/name` tokens. Returns `Ok(None)` when the line is not a
/// skill invocation (no leading slash, or the first token names no skill), so
/// it is sent to the model as written.
pub fn parse_invocation<'a>(
    line: &str,
    set: &'a SkillSet,
) -> Result<Option<Invocation<'a>>, InvocationError> {
    let trimmed = line.trim_start();
    if !trimmed.starts_with('/') {
        return Ok(None);
    }
    let mut skills: Vec<&Skill> = Vec::new();
    let mut rest = trimmed;
    while let Some(after_slash) = rest.strip_prefix('/') {
        let end = after_slash
            .find(char::is_whitespace)
            .unwrap_or(after_slash.len());
        let token = &after_slash[..end];
        let mut remainder = after_slash[end..].trim_start();
        let query = if token == "skill" {
            let id_end = remainder
                .find(char::is_whitespace)
                .unwrap_or(remainder.len());
            let id = &remainder[..id_end];
            if id.is_empty() {
                return Err(InvocationError::NotFound {
                    token: "skill".into(),
                });
            }
            remainder = remainder[id_end..].trim_start();
            id
        } else {
            token
        };
        if query.is_empty() {
            break;
        }
        match set.resolve(query) {
            Resolution::Found(skill) => {
                if skills.len() == MAX_STACKED_SKILLS {
                    return Err(InvocationError::TooMany);
                }
                if !skills
                    .iter()
                    .any(|s| s.qualified_id() == skill.qualified_id())
                {
                    skills.push(skill);
                }
            }
            Resolution::Ambiguous(candidates) => {
                return Err(InvocationError::Ambiguous {
                    token: query.to_owned(),
                    candidates: candidates.iter().map(|s| s.qualified_id()).collect(),
                });
            }
            Resolution::Gated(skill, gate) => {
                return Err(InvocationError::Unavailable {
                    token: query.to_owned(),
                    reason: match gate {
                        skill_core::Gate::Platform => format!(
                            "it does not support this platform (it lists {:?})",
                            skill.frontmatter.platforms
                        ),
                        skill_core::Gate::Disabled => "it is listed in skills.disabled".to_owned(),
                    },
                });
            }
            Resolution::NotFound if token == "skill" => {
                return Err(InvocationError::NotFound {
                    token: query.to_owned(),
                });
            }
            // A later unknown token is the user's text (e.g. a path like /tmp).
            Resolution::NotFound if !skills.is_empty() => break,
            Resolution::NotFound => return Ok(None),
        }
        rest = remainder;
    }
    Ok(Some(Invocation {
        skills,
        text: rest.trim().to_owned(),
    }))
}

/// Why `-s NAME` cannot preload a skill. The session refuses with it, and
/// the frontends check the same before a session starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreloadError {
    /// Several skills answer to the name: the user must pick a qualified id.
    Ambiguous {
        name: String,
        candidates: Vec<String>,
    },
    /// The skill exists but is hidden (platform or `skills.disabled`).
    Hidden {
        name: String,
        skill: String,
    },
    NotFound {
        name: String,
    },
}

impl std::fmt::Display for PreloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PreloadError::Ambiguous { name, candidates } => write!(
                f,
                "-s {name} matches more than one skill; use one of: {}",
                candidates.join(", ")
            ),
            PreloadError::Hidden { name, skill } => write!(
                f,
                "-s {name}: skill '{skill}' is hidden on this machine (platform or skills.disabled)"
            ),
            PreloadError::NotFound { name } => write!(
                f,
                "-s {name}: no such skill; `knack skills list` shows what is available"
            ),
        }
    }
}

/// The skill `-s name` preloads.
pub fn resolve_preload<'a>(set: &'a SkillSet, name: &str) -> Result<&'a Skill, PreloadError> {
    match set.resolve(name) {
        Resolution::Found(skill) => Ok(skill),
        Resolution::Ambiguous(candidates) => Err(PreloadError::Ambiguous {
            name: name.to_owned(),
            candidates: candidates.iter().map(|s| s.qualified_id()).collect(),
        }),
        Resolution::Gated(skill, _) => Err(PreloadError::Hidden {
            name: name.to_owned(),
            skill: skill.name.clone(),
        }),
        Resolution::NotFound => Err(PreloadError::NotFound {
            name: name.to_owned(),
        }),
    }
}

/// The user message that carries invoked skills and the user's text.
/// Heads the user's own words after the skill blocks of an invocation (a
/// compaction carries the skills and summarises the words).
pub const USER_REQUEST_HEADING: &str = "User's request:";

/// The words that open every skill block of a `/skill` invocation.
const INVOKED_SKILL_WORDS: &str = "The user invoked the skill";

/// Whether a user message is a `/skill` invocation rendered by [`render_invocation`].
pub fn is_invocation(text: &str) -> bool {
    text.strip_prefix('[')
        .is_some_and(|rest| rest.starts_with(INVOKED_SKILL_WORDS))
}

/// `env` is `$KNACK_HOME/.env`: a skill whose declared variables are missing
/// from it and from the environment carries a setup note for the model.
pub fn render_invocation(
    invocation: &Invocation<'_>,
    via: InvocationVia,
    session_id: &str,
    options: &PreprocessOptions,
    env: &EnvFile,
) -> String {
    let mut out = String::new();
    // `$ARGUMENTS` in a slash-invoked skill is what the user wrote after it.
    let arguments = match via {
        InvocationVia::Slash => Some(invocation.text.as_str()),
        InvocationVia::Preload => None,
    };
    for skill in &invocation.skills {
        out.push_str(&render_skill_block(
            skill, via, session_id, options, env, arguments,
        ));
        out.push('\n');
    }
    match via {
        InvocationVia::Slash if invocation.text.is_empty() => {
            out.push_str("The user gave no further instruction: follow the skill above, asking if anything essential is missing.");
        }
        InvocationVia::Slash => {
            let _ = write!(out, "{USER_REQUEST_HEADING}\n{}", invocation.text);
        }
        InvocationVia::Preload => {
            out.push_str("These skills were preloaded for this session; apply them whenever they fit the task.");
        }
    }
    out
}

fn render_skill_block(
    skill: &Skill,
    via: InvocationVia,
    session_id: &str,
    options: &PreprocessOptions,
    env: &EnvFile,
    arguments: Option<&str>,
) -> String {
    let raw = std::fs::read_to_string(&skill.path)
        .unwrap_or_else(|e| format!("(the skill file could not be read: {e})"));
    let body = skill_core::frontmatter::split_frontmatter(skill_core::frontmatter::strip_bom(&raw))
        .ok()
        .flatten()
        .map(|(_, offset)| skill_core::frontmatter::strip_bom(&raw)[offset..].to_owned())
        .unwrap_or_else(|| raw.clone());
    let plugin_root = skill_core::preprocess::plugin_root(skill);
    let values = TemplateValues {
        skill_dir: Some(&skill.skill_dir),
        session_id: Some(session_id),
        arguments,
        plugin_root: plugin_root.as_deref(),
    };
    let mut body = preprocess(&body, &values, options);
    skill_core::injection::warn_if_suspicious(&skill.qualified_id(), &body);
    skill_core::disclosure::cap_for_model(&mut body);
    let mut out = String::new();
    let how = match via {
        InvocationVia::Slash => INVOKED_SKILL_WORDS,
        InvocationVia::Preload => "The user preloaded the skill",
    };
    let _ = writeln!(
        out,
        "[{how} \"{}\" ({}). Its folder is {}.]",
        skill.name,
        skill.qualified_id(),
        skill.skill_dir.display()
    );
    out.push('\n');
    out.push_str(body.trim());
    out.push_str("\n\n");
    let missing = missing_env(&skill.frontmatter.required_environment_variables, env);
    if !missing.is_empty() {
        let _ = writeln!(out, "[{}]\n", setup_note(&missing));
    }
    let files = linked_files(&skill.skill_dir);
    if !files.is_empty() {
        out.push_str("Supporting files (read one with skill_view and file_path):\n");
        for list in files.values() {
            for f in list
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str())
            {
                let _ = writeln!(out, "- {f}");
            }
        }
    }
    out
}

/// The skills `line` invokes and `preloads` name, in that order. A line or
/// name that resolves to nothing adds nothing: the caller has refused it
/// already, or it is plain text.
pub fn invoked_skills<'a>(set: &'a SkillSet, line: &str, preloads: &[String]) -> Vec<&'a Skill> {
    let mut skills: Vec<&Skill> = preloads
        .iter()
        .filter_map(|name| match set.resolve(name) {
            Resolution::Found(skill) => Some(skill),
            _ => None,
        })
        .collect();
    if let Ok(Some(invocation)) = parse_invocation(line, set) {
        skills.extend(invocation.skills);
    }
    skills
}

#[cfg(test)]
mod tests {
    use super::*;
    use skill_core::{DiscoveryOptions, Scope, SkillRoot};

    fn set_with(skills: &[(&str, &str)]) -> (tempfile::TempDir, SkillSet) {
        let dir = tempfile::tempdir().unwrap();
        for (rel, name) in skills {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(&path).unwrap();
            std::fs::write(
                path.join("SKILL.md"),
                format!("---\nname: {name}\ndescription: Use when {name}\n---\n# {name}\nDo {name} in ${{KNACK_SKILL_DIR}} for ${{KNACK_SESSION_ID}}.\n"),
            )
            .unwrap();
        }
        let set = skill_core::discover(&DiscoveryOptions::with_roots(vec![SkillRoot {
            path: dir.path().to_path_buf(),
            scope: Scope::User,
        }]))
        .0;
        (dir, set)
    }

    #[test]
    fn plain_text_is_not_an_invocation() {
        let (_d, set) = set_with(&[("a/deploy", "deploy")]);
        assert_eq!(parse_invocation("deploy now", &set), Ok(None));
        assert_eq!(parse_invocation("/unknown thing", &set), Ok(None));
    }

    #[test]
    fn a_plugin_skill_is_invoked_as_plugin_colon_skill() {
        let dir = tempfile::tempdir().unwrap();
        for plugin in ["alpha", "beta"] {
            let path = dir.path().join(plugin).join("lint");
            std::fs::create_dir_all(&path).unwrap();
            std::fs::write(
                path.join("SKILL.md"),
                format!("---\nname: lint\ndescription: Use when {plugin} lints\n---\nLint.\n"),
            )
            .unwrap();
        }
        let set = skill_core::discover(&DiscoveryOptions::with_roots(vec![SkillRoot {
            path: dir.path().to_path_buf(),
            scope: Scope::Plugin(skill_core::PLUGIN_NAMESPACE.to_owned()),
        }]))
        .0;
        let inv = parse_invocation("/beta:lint the diff", &set)
            .unwrap()
            .unwrap();
        assert_eq!(inv.skills[0].qualified_id(), "plugin:beta/lint");
        assert_eq!(inv.text, "the diff");
        assert!(matches!(
            parse_invocation("/lint the diff", &set),
            Err(InvocationError::Ambiguous { .. })
        ));
    }

    #[test]
    fn stacked_slash_skills_and_text() {
        let (_d, set) = set_with(&[("a/deploy", "deploy"), ("b/logs", "logs")]);
        let inv = parse_invocation("/deploy /logs roll out v2 to /tmp", &set)
            .unwrap()
            .unwrap();
        let names: Vec<&str> = inv.skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, vec!["deploy", "logs"]);
        assert_eq!(inv.text, "roll out v2 to /tmp");
        let inv = parse_invocation("/skill b/logs check", &set)
            .unwrap()
            .unwrap();
        assert_eq!(inv.skills[0].name, "logs");
        assert_eq!(inv.text, "check");
    }

    #[test]
    fn ambiguity_and_limits_refuse() {
        let (_d, set) = set_with(&[("a/dup", "dup"), ("b/dup", "dup")]);
        match parse_invocation("/dup go", &set) {
            Err(InvocationError::Ambiguous { candidates, .. }) => {
                assert_eq!(candidates, vec!["user:a/dup", "user:b/dup"])
            }
            other => panic!("{other:?}"),
        }
        let many: Vec<(String, String)> =
            (0..6).map(|i| (format!("s{i}"), format!("s{i}"))).collect();
        let refs: Vec<(&str, &str)> = many.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let (_d, set) = set_with(&refs);
        assert_eq!(
            parse_invocation("/s0 /s1 /s2 /s3 /s4 /s5 x", &set),
            Err(InvocationError::TooMany)
        );
        assert!(matches!(
            parse_invocation("/skill nope x", &set),
            Err(InvocationError::NotFound { .. })
        ));
    }

    #[test]
    fn rendered_message_carries_body_dir_and_text() {
        let (dir, set) = set_with(&[("a/deploy", "deploy")]);
        let inv = parse_invocation("/deploy ship it", &set).unwrap().unwrap();
        let opts = PreprocessOptions::from_config(
            &knack_config::KnackHome::at("/nonexistent-knack-home"),
            &knack_config::Config::default(),
        );
        let msg = render_invocation(
            &inv,
            InvocationVia::Slash,
            "sess-9",
            &opts,
            &EnvFile::default(),
        );
        let skill_dir = dir.path().join("a/deploy");
        assert!(
            msg.contains("invoked the skill \"deploy\" (user:a/deploy)"),
            "{msg}"
        );
        assert!(
            msg.contains(&format!("Do deploy in {} for sess-9.", skill_dir.display())),
            "{msg}"
        );
        assert!(
            !msg.contains("description: Use when"),
            "frontmatter is not repeated"
        );
        assert!(msg.ends_with("User's request:\nship it"));
        assert!(!msg.contains("Setup needed"), "{msg}");
    }

    #[test]
    fn a_skill_missing_its_variables_carries_a_setup_note() {
        let dir = tempfile::tempdir().unwrap();
        let skill_dir = dir.path().join("weather");
        std::fs::create_dir_all(&skill_dir).unwrap();
        std::fs::write(
            skill_dir.join("SKILL.md"),
            "---\nname: weather\ndescription: Use when asked about weather\nrequired_environment_variables:\n  - name: SKILL_TEST_WEATHER_KEY\n    help: Sign up at the weather service\n  - SKILL_TEST_WEATHER_REGION\n---\n# Weather\nCall the API.\n",
        )
        .unwrap();
        let set = skill_core::discover(&DiscoveryOptions::with_roots(vec![SkillRoot {
            path: dir.path().to_path_buf(),
            scope: Scope::User,
        }]))
        .0;
        let inv = parse_invocation("/weather today", &set).unwrap().unwrap();
        let opts = PreprocessOptions::from_config(
            &knack_config::KnackHome::at("/nonexistent-knack-home"),
            &knack_config::Config::default(),
        );
        let env = knack_config::parse_env_file("SKILL_TEST_WEATHER_REGION=eu\n");
        let msg = render_invocation(&inv, InvocationVia::Slash, "s", &opts, &env);
        assert!(
            msg.contains("[Setup needed: this skill expects the environment variable SKILL_TEST_WEATHER_KEY and it is not set."),
            "{msg}"
        );
        assert!(msg.contains("Sign up at the weather service"), "{msg}");
        assert!(
            !msg.contains("SKILL_TEST_WEATHER_REGION"),
            "set in .env: {msg}"
        );
        let ready = knack_config::parse_env_file(
            "SKILL_TEST_WEATHER_REGION=eu\nSKILL_TEST_WEATHER_KEY=k\n",
        );
        let msg = render_invocation(&inv, InvocationVia::Slash, "s", &opts, &ready);
        assert!(!msg.contains("Setup needed"), "{msg}");
    }
}
