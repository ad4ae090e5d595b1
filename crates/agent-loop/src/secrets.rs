//! Secrets and the model: the environment variables a command run for the model must not
//! inherit, and the known secret values replaced by `[REDACTED:NAME]` before anything is stored or sent.
//!
//! The naming rule lives in `knack_config::secret_env` so prompt-builder and
//! skill-core (which cannot depend on this crate) scrub with the same rule.
//! Redaction is the backstop for what scrubbing cannot stop: a command that
//! reads `.env` or `/proc/<knack>/environ` prints a known value, and the value
//! is replaced before the result reaches `state.db`, the frontends or the model;
//! so is the password of any `scheme://user:password@host` URL, known or not.
//! It cannot catch a value the command transformed (base64, split, reversed).

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind};
use knack_config::{Config, KnackHome};
use regex::Regex;
use serde_json::{Map, Value};
use skill_core::SkillSet;

pub use knack_config::secret_env::{
    is_secret_name, scrub_std_command, secret_env_names, secret_env_names_here,
};

/// Values shorter than this are never redacted: replacing `true` or `8080`
/// everywhere would mangle ordinary output, and a short value is no real secret.
pub const MIN_SECRET_CHARS: usize = 8;

/// What a URL's password is replaced by.
pub const URL_PASSWORD_LABEL: &str = "[REDACTED:URL_PASSWORD]";

/// knack's own settings that `.env` may hold and that are no secrets (the
/// environment table of the CONTRACT): every other `.env` value is one.
const PUBLIC_SETTINGS: [&str; 7] = [
    "KNACK_BASE_URL",
    "KNACK_MODEL",
    "KNACK_WIRE",
    "KNACK_CONTEXT_WINDOW",
    "KNACK_LOG",
    "KNACK_HOME",
    "KNACK_BUNDLED_SKILLS",
];

/// `scheme://user:password@`: the password (group 2) up to the last `@`
/// before the host, so an unescaped `@` inside it is covered too.
static URL_PASSWORD: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s/:@]*:)([^\s/]+)@").ok());

/// Removes every secret variable of this process's environment (by
/// [`is_secret_name`], minus `passthrough`, i.e. `agent.env_passthrough`) from
/// what `cmd` will inherit. Call it on every command started for the model.
pub fn scrub_env(cmd: &mut tokio::process::Command, passthrough: &[String]) {
    for name in secret_env_names_here(passthrough) {
        cmd.env_remove(name);
    }
}

/// Known secret values and the names they came from, matched in one pass.
/// Built once per session; cheap to share through an `Arc`.
#[derive(Clone, Default)]
pub struct Redactor {
    /// `None` when there is nothing to redact, so `redact` costs nothing.
    matcher: Option<AhoCorasick>,
    /// The replacement for pattern `i`: `[REDACTED:NAME]`.
    labels: Vec<String>,
}

impl fmt::Debug for Redactor {
    // Never print the values themselves.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redactor")
            .field("labels", &self.labels)
            .finish()
    }
}

impl Redactor {
    /// A redactor for `(name, value)` pairs. Values shorter than
    /// [`MIN_SECRET_CHARS`] (after trimming) are skipped; a value listed
    /// twice keeps its first name. Longer values win over values they contain.
    pub fn new<I, N, V>(secrets: I) -> Self
    where
        I: IntoIterator<Item = (N, V)>,
        N: AsRef<str>,
        V: AsRef<str>,
    {
        let mut seen = HashSet::new();
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (name, value) in secrets {
            let value = value.as_ref().trim();
            if value.chars().count() < MIN_SECRET_CHARS || !seen.insert(value.to_owned()) {
                continue;
            }
            pairs.push((
                format!("[REDACTED:{}]", name.as_ref().trim()),
                value.to_owned(),
            ));
        }
        if pairs.is_empty() {
            return Self::default();
        }
        // Longest first, so the leftmost-longest search prefers the whole of a
        // secret that contains another one.
        pairs.sort_by_key(|(_, value)| std::cmp::Reverse(value.len()));
        let matcher = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(pairs.iter().map(|(_, value)| value.as_str()));
        match matcher {
            Ok(matcher) => Self {
                matcher: Some(matcher),
                labels: pairs.into_iter().map(|(label, _)| label).collect(),
            },
            Err(e) => {
                // Only a pattern set past aho-corasick's size limits gets here.
                tracing::error!(error = %e, "cannot build the secret redactor; tool output is not redacted");
                Self::default()
            }
        }
    }

    /// The secrets this process knows of: every secret-named variable of the
    /// environment, the variable `model.api_key_env` names (whatever its
    /// name), and every value of `$KNACK_HOME/.env` except knack's own
    /// public settings (`KNACK_BASE_URL`, `KNACK_MODEL`, ...).
    pub fn from_environment(home: &KnackHome, config: &Config) -> Self {
        Self::new(environment_secrets(home, config, &HashSet::new()))
    }

    /// [`Self::from_environment`], plus the values of every variable a
    /// visible skill declares in `required_environment_variables`, whatever
    /// its name: the TUI asks for those in a masked prompt, so they are
    /// treated as secrets wherever they were set. The session rebuilds it
    /// before each turn, so a value saved mid-session is redacted from then on.
    pub fn for_session(home: &KnackHome, config: &Config, skills: &SkillSet) -> Self {
        let declared: HashSet<&str> = skills
            .visible()
            .into_iter()
            .flat_map(|s| &s.frontmatter.required_environment_variables)
            .map(|r| r.name.as_str())
            .collect();
        Self::new(environment_secrets(home, config, &declared))
    }

    /// Whether no known value is redacted (URL passwords always are).
    pub fn is_empty(&self) -> bool {
        self.matcher.is_none()
    }

    /// The names whose values are redacted (for diagnostics; never the values).
    pub fn names(&self) -> Vec<&str> {
        self.labels
            .iter()
            .map(|l| l.trim_start_matches("[REDACTED:").trim_end_matches(']'))
            .collect()
    }

    /// `text` with every known secret value replaced by `[REDACTED:NAME]`
    /// and every URL password by [`URL_PASSWORD_LABEL`]; borrowed (no copy)
    /// when nothing matched.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self.redact_values(text) {
            Cow::Borrowed(text) => redact_url_passwords(text),
            Cow::Owned(text) => Cow::Owned(redact_url_passwords(&text).into_owned()),
        }
    }

    fn redact_values<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let Some(matcher) = &self.matcher else {
            return Cow::Borrowed(text);
        };
        let mut matches = matcher.find_iter(text).peekable();
        if matches.peek().is_none() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for m in matches {
            out.push_str(&text[last..m.start()]);
            out.push_str(&self.labels[m.pattern().as_usize()]);
            last = m.end();
        }
        out.push_str(&text[last..]);
        Cow::Owned(out)
    }

    /// Redacts `text` in place; returns whether anything changed.
    pub fn redact_string(&self, text: &mut String) -> bool {
        match self.redact(text) {
            Cow::Borrowed(_) => false,
            Cow::Owned(redacted) => {
                *text = redacted;
                true
            }
        }
    }

    /// Redacts every string of a JSON value in place, object keys included;
    /// returns whether anything changed.
    pub fn redact_json(&self, value: &mut Value) -> bool {
        match value {
            Value::String(text) => self.redact_string(text),
            Value::Array(items) => items
                .iter_mut()
                .fold(false, |changed, item| self.redact_json(item) | changed),
            Value::Object(map) => {
                let mut changed = false;
                if map.keys().any(|k| matches!(self.redact(k), Cow::Owned(_))) {
                    // Rare: rebuild the map to rename keys, keeping their order.
                    let old = std::mem::take(map);
                    *map = old
                        .into_iter()
                        .map(|(k, v)| (self.redact(&k).into_owned(), v))
                        .collect::<Map<String, Value>>();
                    changed = true;
                }
                map.values_mut()
                    .fold(changed, |changed, item| self.redact_json(item) | changed)
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => false,
        }
    }
}

/// `text` with the password of every `scheme://user:password@host` replaced.
fn redact_url_passwords(text: &str) -> Cow<'_, str> {
    let Some(re) = URL_PASSWORD.as_ref() else {
        return Cow::Borrowed(text);
    };
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out: Option<String> = None;
    let mut last = 0;
    for caps in re.captures_iter(text) {
        let (Some(prefix), Some(password)) = (caps.get(1), caps.get(2)) else {
            continue;
        };
        if password.as_str() == URL_PASSWORD_LABEL {
            continue;
        }
        let buf = out.get_or_insert_with(|| String::with_capacity(text.len()));
        buf.push_str(&text[last..prefix.end()]);
        buf.push_str(URL_PASSWORD_LABEL);
        last = password.end();
    }
    match out {
        Some(mut buf) => {
            buf.push_str(&text[last..]);
            Cow::Owned(buf)
        }
        None => Cow::Borrowed(text),
    }
}

/// The `(name, value)` pairs [`Redactor::from_environment`] describes, plus
/// those of the `declared` names.
fn environment_secrets(
    home: &KnackHome,
    config: &Config,
    declared: &HashSet<&str>,
) -> Vec<(String, String)> {
    let key_var = config.model.api_key_env.trim();
    let is_key_var = |name: &str| {
        is_secret_name(name) || (!key_var.is_empty() && name == key_var) || declared.contains(name)
    };
    let mut secrets: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(name, value)| {
            let name = name.into_string().ok()?;
            let value = value.into_string().ok()?;
            is_key_var(&name).then_some((name, value))
        })
        .collect();
    // `.env` holds what the user keeps from everything else: every value
    // there counts, whatever its name, but knack's own public settings.
    let env_file = home.env_file();
    for (name, value) in env_file.iter() {
        if is_key_var(name) || !PUBLIC_SETTINGS.contains(&name) {
            secrets.push((name.to_owned(), value.to_owned()));
        }
    }
    secrets
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn known_values_are_replaced_and_short_ones_ignored() {
        let r = Redactor::new([
            ("KNACK_API_KEY", "sk-live-abcdef123456"),
            ("SHORT_TOKEN", "abc"),
            ("OTHER_TOKEN", "sk-live-abcdef123456-longer"),
            ("DUP_TOKEN", "sk-live-abcdef123456"),
        ]);
        assert_eq!(r.names(), vec!["OTHER_TOKEN", "KNACK_API_KEY"]);
        assert!(matches!(r.redact("nothing here abc"), Cow::Borrowed(_)));
        assert_eq!(
            r.redact("a=sk-live-abcdef123456 b=sk-live-abcdef123456-longer;"),
            "a=[REDACTED:KNACK_API_KEY] b=[REDACTED:OTHER_TOKEN];"
        );
        assert!(Redactor::default().is_empty());
        assert!(Redactor::new([("X_TOKEN", "  short  ")]).is_empty());
    }

    #[test]
    fn url_passwords_are_redacted_whoever_knows_them() {
        let r = Redactor::default();
        assert_eq!(
            r.redact("DATABASE_URL=postgres://app:s3cr3t-pw@db.internal:5432/app ok"),
            format!("DATABASE_URL=postgres://app:{URL_PASSWORD_LABEL}@db.internal:5432/app ok")
        );
        // An unescaped @ in the password, an empty user, two URLs on a line.
        assert_eq!(
            r.redact("redis://:p@ss@cache/0 and HTTPS://u:x@h/"),
            format!("redis://:{URL_PASSWORD_LABEL}@cache/0 and HTTPS://u:{URL_PASSWORD_LABEL}@h/")
        );
        // No password, or no user info: left alone.
        for text in [
            "https://example.com/a:b@c",
            "ssh://git@github.com/x",
            "http://host:8080/path",
            "a:b@c",
        ] {
            assert!(matches!(r.redact(text), Cow::Borrowed(_)), "{text}");
        }
        // Idempotent, so JSON redaction can say whether anything changed.
        let once = r.redact("mysql://root:hunter2@localhost").into_owned();
        assert!(matches!(r.redact(&once), Cow::Borrowed(_)), "{once}");
        let mut value = json!({"output": "git clone https://bob:tok3n@git.example/r"});
        assert!(r.redact_json(&mut value));
        assert!(!value.to_string().contains("tok3n"), "{value}");
        // Known values and URL passwords in one text.
        let r = Redactor::new([("MY_TOKEN", "abcdefgh12345")]);
        assert_eq!(
            r.redact("t=abcdefgh12345 u=ftp://me:pw123456@h"),
            format!("t=[REDACTED:MY_TOKEN] u=ftp://me:{URL_PASSWORD_LABEL}@h")
        );
    }

    #[test]
    fn json_strings_and_keys_are_redacted_in_place() {
        let r = Redactor::new([("MY_SERVICE_TOKEN", "tok-0123456789")]);
        let mut value = json!({
            "success": true,
            "output": "MY_SERVICE_TOKEN=tok-0123456789\n",
            "list": ["x", "tok-0123456789"],
            "tok-0123456789": 1,
            "n": 3
        });
        assert!(r.redact_json(&mut value));
        assert_eq!(
            value,
            json!({
                "success": true,
                "output": "MY_SERVICE_TOKEN=[REDACTED:MY_SERVICE_TOKEN]\n",
                "list": ["x", "[REDACTED:MY_SERVICE_TOKEN]"],
                "[REDACTED:MY_SERVICE_TOKEN]": 1,
                "n": 3
            })
        );
        assert!(!r.redact_json(&mut value), "nothing left to redact");
    }

    #[test]
    fn every_env_file_value_is_a_secret_but_knacks_public_settings() {
        let dir = tempfile::tempdir().unwrap();
        let home = KnackHome::at(dir.path());
        std::fs::write(
            home.env_path(),
            "KNACK_BASE_URL=http://127.0.0.1:8080/v1\nKNACK_MODEL=qwen2.5-7b-instruct-long-name\n\
             DB_PASSWORD=hunter2hunter2\nODD_THING=Zx81aB29cD47eF56gH30\nMY_LLM=llm-key-value-1\n\
             EDITOR_BIN=/usr/lib/x86_64-linux-gnu/thing\n",
        )
        .unwrap();
        let mut config = Config::default();
        config.model.api_key_env = "MY_LLM".into();
        let r = Redactor::from_environment(&home, &config);
        let names = r.names();
        // Every value, whatever its name or shape, but knack's public settings.
        for name in ["DB_PASSWORD", "ODD_THING", "MY_LLM", "EDITOR_BIN"] {
            assert!(names.contains(&name), "{name} missing from {names:?}");
        }
        for name in ["KNACK_BASE_URL", "KNACK_MODEL"] {
            assert!(!names.contains(&name), "{name} should stay visible");
        }
        assert!(!format!("{r:?}").contains("hunter2"), "Debug hides values");
    }

    #[test]
    fn values_of_variables_skills_declare_are_secrets_whatever_their_name() {
        let dir = tempfile::tempdir().unwrap();
        let home = KnackHome::at(dir.path().join("home"));
        let skills = dir.path().join("skills/weather");
        std::fs::create_dir_all(&skills).unwrap();
        std::fs::write(
            skills.join("SKILL.md"),
            "---\nname: weather\ndescription: Use for weather\nrequired_environment_variables: [WEATHER_SERVICE]\n---\nbody\n",
        )
        .unwrap();
        std::fs::create_dir_all(home.root()).unwrap();
        std::fs::write(home.env_path(), "WEATHER_SERVICE=plain words here\n").unwrap();
        let set = skill_core::discover(&skill_core::DiscoveryOptions::with_roots(vec![
            skill_core::SkillRoot {
                path: dir.path().join("skills"),
                scope: skill_core::Scope::User,
            },
        ]))
        .0;
        let config = Config::default();
        // In `.env` it is a secret anyway; declared, it is one wherever it is set.
        assert!(
            Redactor::from_environment(&home, &config)
                .names()
                .contains(&"WEATHER_SERVICE")
        );
        let r = Redactor::for_session(&home, &config, &set);
        assert_eq!(
            r.redact("got plain words here back"),
            "got [REDACTED:WEATHER_SERVICE] back"
        );
    }

    #[tokio::test]
    async fn a_scrubbed_command_does_not_inherit_secrets() {
        // The process environment cannot be changed here (set_var is unsafe),
        // so give the child what a parent with a token would pass down and
        // remove what the rule names; then the real scrub on top.
        let mut cmd = tokio::process::Command::new("env");
        cmd.env("MY_SERVICE_TOKEN", "leak-leak-leak")
            .env("GITHUB_TOKEN", "kept-by-passthrough")
            .env("PLAIN_VALUE", "visible-value");
        let vars = [
            ("MY_SERVICE_TOKEN", ""),
            ("GITHUB_TOKEN", ""),
            ("PLAIN_VALUE", ""),
        ];
        let passthrough = ["GITHUB_TOKEN".to_owned()];
        for name in secret_env_names(vars, &passthrough) {
            cmd.env_remove(name);
        }
        scrub_env(&mut cmd, &passthrough);
        let out = cmd.output().await.unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("PLAIN_VALUE=visible-value"), "{text}");
        assert!(text.contains("GITHUB_TOKEN=kept-by-passthrough"), "{text}");
        assert!(!text.contains("leak-leak-leak"), "{text}");
        for name in secret_env_names_here(&passthrough) {
            let name = name.to_string_lossy();
            assert!(!text.contains(&format!("\n{name}=")), "{name} inherited");
        }
    }
}
