//! A small `.env` reader and writer: `KEY=VALUE` lines, `export` prefixes,
//! quotes and comments. Values are never placed into the process environment;
//! callers look them up.

use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvFile {
    vars: BTreeMap<String, String>,
}

impl EnvFile {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.vars.get(key).map(String::as_str)
    }

    /// Every `KEY=VALUE` pair of the file, by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The process environment first, then this file; empty values count as unset.
    pub fn lookup(&self, key: &str) -> Option<String> {
        std::env::var(key)
            .ok()
            .filter(|v| !v.is_empty())
            .or_else(|| self.get(key).filter(|v| !v.is_empty()).map(str::to_owned))
    }
}

pub fn parse_env_file(text: &str) -> EnvFile {
    let mut vars = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        if key.is_empty() {
            continue;
        }
        vars.insert(key.to_owned(), unquote(value.trim()).to_owned());
    }
    EnvFile { vars }
}

/// Whether `name` can be an environment variable a shell sets: ASCII
/// letters, digits and `_`, not starting with a digit.
pub fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Why a value cannot be saved to `.env`.
#[derive(Debug, thiserror::Error)]
pub enum SaveEnvError {
    #[error(
        "'{0}' is not a valid variable name (letters, digits and _, not starting with a digit)"
    )]
    BadName(String),
    #[error("the value of {0} holds a line break, which a .env line cannot carry")]
    MultiLine(String),
    #[error(transparent)]
    Io(#[from] crate::Error),
}

/// Sets `key` to `value` in the `.env` file at `path`: the line that set it
/// before is replaced (a later duplicate is dropped, since the last one
/// would win when read), every other line and comment is kept, and a new key
/// is appended. The file is replaced atomically and is 0600 afterwards.
pub fn save_env_value(path: &Path, key: &str, value: &str) -> Result<(), SaveEnvError> {
    if !is_env_name(key) {
        return Err(SaveEnvError::BadName(key.to_owned()));
    }
    if value.contains(['\n', '\r']) {
        return Err(SaveEnvError::MultiLine(key.to_owned()));
    }
    let old = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(crate::Error::io(path, e).into()),
    };
    let new = with_env_value(&old, key, value);
    crate::private::write_private(path, new.as_bytes()).map_err(|e| crate::Error::io(path, e))?;
    Ok(())
}

/// `text` with `key` set to `value` (see [`save_env_value`]).
fn with_env_value(text: &str, key: &str, value: &str) -> String {
    let line = format!("{key}={}", quote(value));
    let mut out = String::with_capacity(text.len() + line.len() + 1);
    let mut written = false;
    for old in text.lines() {
        if line_key(old) == Some(key) {
            if !written {
                out.push_str(&line);
                out.push('\n');
                written = true;
            }
            continue;
        }
        out.push_str(old);
        out.push('\n');
    }
    if !written {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The key a `.env` line sets, read the way [`parse_env_file`] reads it.
fn line_key(line: &str) -> Option<&str> {
    let line = line.trim();
    if line.starts_with('#') {
        return None;
    }
    let line = line.strip_prefix("export ").unwrap_or(line);
    let (key, _) = line.split_once('=')?;
    Some(key.trim())
}

/// A value as `.env` text that reads back exactly: bare when it is plain,
/// else in single quotes (nothing expands when a shell sources the file), or
/// in double quotes when it holds a single quote. The reader strips one pair
/// of matching outer quotes and nothing else, so every form round-trips.
fn quote(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@+=,%~".contains(c));
    if plain {
        value.to_owned()
    } else if !value.contains('\'') {
        format!("'{value}'")
    } else {
        format!("\"{value}\"")
    }
}

fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if value.len() >= 2 && value.starts_with(quote) && value.ends_with(quote) {
            return &value[1..value.len() - 1];
        }
    }
    // An unquoted value may carry a trailing comment.
    match value.find(" #") {
        Some(at) => value[..at].trim_end(),
        None => value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_plain_quoted_and_exported_values() {
        let env = parse_env_file(
            "# comment\nA=1\nexport B=\"two words\"\nC='x'\nD=plain # note\nbroken line\n=nokey\n",
        );
        assert_eq!(env.get("A"), Some("1"));
        assert_eq!(env.get("B"), Some("two words"));
        assert_eq!(env.get("C"), Some("x"));
        assert_eq!(env.get("D"), Some("plain"));
        assert_eq!(env.get("broken line"), None);
        assert_eq!(env.vars.len(), 4);
    }

    #[test]
    fn env_names_follow_the_shell_rule() {
        for ok in ["A", "_X", "API_KEY_2", "lower_case"] {
            assert!(is_env_name(ok), "{ok}");
        }
        for bad in ["", "2FA", "MY-KEY", "A B", "KEY=", "K\u{e9}Y", "$HOME"] {
            assert!(!is_env_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn saving_replaces_the_key_and_keeps_everything_else() {
        let old = "# keys\nexport API_TOKEN=old # was\nOTHER=1\n\nAPI_TOKEN=older\n# end";
        assert_eq!(
            with_env_value(old, "API_TOKEN", "new-value"),
            "# keys\nAPI_TOKEN=new-value\nOTHER=1\n\n# end\n",
            "the first line is replaced, the later duplicate dropped"
        );
        assert_eq!(
            with_env_value("OTHER=1", "NEW_KEY", "v"),
            "OTHER=1\nNEW_KEY=v\n"
        );
        assert_eq!(with_env_value("", "K", "v"), "K=v\n");
        assert_eq!(
            with_env_value("# API_TOKEN=commented\n", "API_TOKEN", "v"),
            "# API_TOKEN=commented\nAPI_TOKEN=v\n",
            "a comment is not a setting"
        );
    }

    #[test]
    fn saved_values_read_back_exactly() {
        for value in [
            "sk-live-123",
            "with space",
            "has #hash",
            " padded ",
            "it's",
            "both ' and \"",
            "$dollar`tick`",
            "",
            "\"quoted\"",
        ] {
            let text = with_env_value("", "K", value);
            assert_eq!(parse_env_file(&text).get("K"), Some(value), "{text}");
        }
    }

    #[test]
    fn saving_writes_a_private_file_and_refuses_what_cannot_be_stored() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        std::fs::write(&path, "# mine\nA=1\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        save_env_value(&path, "WEATHER_API_KEY", "abc 123").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# mine\nA=1\nWEATHER_API_KEY='abc 123'\n"
        );
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(matches!(
            save_env_value(&path, "BAD-NAME", "x"),
            Err(SaveEnvError::BadName(_))
        ));
        let err = save_env_value(&path, "K", "a\nb").unwrap_err();
        assert!(err.to_string().contains("line break"), "{err}");
        let fresh = dir.path().join("new/.env");
        save_env_value(&fresh, "K", "v").unwrap();
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "K=v\n");
    }
}
