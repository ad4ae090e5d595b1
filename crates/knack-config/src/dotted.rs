//! `knack config get|set` with dotted keys (`skills.disabled`).
//! Values are read as YAML scalars or flow collections and checked against the
//! typed config before the file is rewritten.

use std::path::Path;

use serde_json::Value;

use crate::{Config, Error, Result};

/// The effective value of `key` (file merged over defaults).
pub fn get_dotted(config: &Config, key: &str) -> Result<Value> {
    let tree = serde_json::to_value(config).map_err(|e| invalid(key, e.to_string()))?;
    lookup(&tree, key)
        .cloned()
        .ok_or_else(|| unknown(key, &tree))
}

/// Sets `key` in the config file at `path`, keeping its other keys, and returns
/// the new config. The file is only written when the result is a valid config.
pub fn set_dotted(path: &Path, key: &str, raw_value: &str) -> Result<Config> {
    let defaults =
        serde_json::to_value(Config::default()).map_err(|e| invalid(key, e.to_string()))?;
    if lookup(&defaults, key).is_none() {
        return Err(unknown(key, &defaults));
    }
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io(path, e)),
    };
    // Validate the current file first so a broken file is reported, not overwritten.
    Config::parse(&text, path)?;
    let mut tree: Value = if text.trim().is_empty() {
        Value::Object(Default::default())
    } else {
        serde_saphyr::from_str(&text).map_err(|e| Error::InvalidConfig {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?
    };
    let value = parse_value(raw_value);
    insert(&mut tree, key, value);
    let config: Config =
        serde_json::from_value(tree.clone()).map_err(|e| invalid(key, e.to_string()))?;
    let yaml = serde_saphyr::to_string(&tree).map_err(|e| invalid(key, e.to_string()))?;
    write_atomic(path, &yaml)?;
    Ok(config)
}

fn parse_value(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::String(raw.to_owned());
    }
    match serde_saphyr::from_str::<Value>(raw) {
        Ok(Value::Null) if raw.trim() != "null" && raw.trim() != "~" => {
            Value::String(raw.to_owned())
        }
        Ok(value) => value,
        Err(_) => Value::String(raw.to_owned()),
    }
}

fn lookup<'a>(tree: &'a Value, key: &str) -> Option<&'a Value> {
    key.split('.')
        .try_fold(tree, |node, part| node.as_object()?.get(part))
}

fn insert(tree: &mut Value, key: &str, value: Value) {
    let parts: Vec<&str> = key.split('.').collect();
    let mut node = tree;
    for part in &parts[..parts.len() - 1] {
        if !node.is_object() {
            *node = Value::Object(Default::default());
        }
        let Value::Object(map) = node else { return };
        node = map
            .entry((*part).to_owned())
            .or_insert_with(|| Value::Object(Default::default()));
    }
    if !node.is_object() {
        *node = Value::Object(Default::default());
    }
    if let (Value::Object(map), Some(last)) = (node, parts.last()) {
        map.insert((*last).to_owned(), value);
    }
}

/// config.yaml is rewritten atomically and 0600: it may name key variables
/// and servers the user would rather keep to themselves.
fn write_atomic(path: &Path, text: &str) -> Result<()> {
    crate::private::write_private(path, text.as_bytes()).map_err(|e| Error::io(path, e))
}

fn unknown(key: &str, tree: &Value) -> Error {
    let section = key.split('.').next().unwrap_or(key);
    let hint = match tree.get(section).and_then(Value::as_object) {
        Some(map) => format!(
            "keys under '{section}' are: {}",
            map.keys().cloned().collect::<Vec<_>>().join(", ")
        ),
        None => format!(
            "sections are: {}",
            tree.as_object()
                .map(|m| m.keys().cloned().collect::<Vec<_>>().join(", "))
                .unwrap_or_default()
        ),
    };
    Error::UnknownKey {
        key: key.to_owned(),
        hint,
    }
}

fn invalid(key: &str, message: String) -> Error {
    Error::InvalidValue {
        key: key.to_owned(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_then_get_round_trips_and_keeps_other_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, "model:\n  name: m1\n").unwrap();
        let cfg = set_dotted(&path, "skills.disabled", "[a, b]").unwrap();
        assert_eq!(cfg.skills.disabled, vec!["a", "b"]);
        assert_eq!(cfg.model.name.as_deref(), Some("m1"));
        let cfg = set_dotted(&path, "skills.inline_shell", "true").unwrap();
        assert!(cfg.skills.inline_shell);
        let reread = Config::load_file(&path).unwrap();
        assert_eq!(reread, cfg);
        assert_eq!(
            get_dotted(&reread, "skills.disabled").unwrap(),
            serde_json::json!(["a", "b"])
        );
    }

    #[test]
    fn strings_that_look_like_other_things_stay_strings_where_typed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        let cfg = set_dotted(&path, "model.name", "qwen2.5:0.5b").unwrap();
        assert_eq!(cfg.model.name.as_deref(), Some("qwen2.5:0.5b"));
    }

    #[test]
    fn unknown_key_and_bad_type_are_refused_without_writing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        assert!(matches!(
            set_dotted(&path, "skills.nope", "1"),
            Err(Error::UnknownKey { .. })
        ));
        assert!(matches!(
            set_dotted(&path, "skills.scan_max_depth", "deep"),
            Err(Error::InvalidValue { .. })
        ));
        assert!(!path.exists());
    }
}
