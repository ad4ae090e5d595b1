//! A small `.env` reader: `KEY=VALUE` lines, `export` prefixes, quotes and comments.
//! Values are never placed into the process environment; callers look them up.

use std::collections::BTreeMap;

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
}
