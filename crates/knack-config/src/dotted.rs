//! `knack config get|set` with dotted keys (`skills.disabled`).
//! Values are read as YAML scalars or flow collections and checked against the
//! typed config before the file is edited (in place, see `yaml_edit`).

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

/// What [`set_dotted`] did to the file.
#[derive(Debug, Clone, PartialEq)]
pub struct SetOutcome {
    /// The config as it now reads.
    pub config: Config,
    /// `None` when only the changed key's line(s) were edited and the rest of
    /// the file (comments, blank lines, key order) is as the user left it.
    /// `Some(reason)` when the file could not be edited in place and was
    /// rewritten from its data instead, which drops its comments.
    pub rewritten: Option<String>,
}

/// Sets `key` in the config file at `path` and returns the new config. The
/// changed key is edited in the file's text so comments and layout survive;
/// only when that cannot be done safely (the key sits in a flow mapping, say)
/// is the whole file rewritten. Either way the file is only written when the
/// result reads back as a valid config holding exactly the intended data.
pub fn set_dotted(path: &Path, key: &str, raw_value: &str) -> Result<SetOutcome> {
    let defaults =
        serde_json::to_value(Config::default()).map_err(|e| invalid(key, e.to_string()))?;
    check_key(&defaults, key)?;
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io(path, e)),
    };
    // Validate the current file first so a broken file is reported, not overwritten.
    Config::parse(&text, path)?;
    let mut tree = read_tree(&text, path)?;
    let value = parse_value(raw_value);
    let rendered = crate::yaml_edit::render_value(raw_value, &value);
    insert(&mut tree, key, value);
    let config: Config =
        serde_json::from_value(tree.clone()).map_err(|e| invalid(key, e.to_string()))?;
    check_provider_exists(key, &config)?;

    let parts: Vec<&str> = key.split('.').collect();
    let edited = crate::yaml_edit::set_in_text(&text, &parts, &rendered)
        .map_err(|unsupported| unsupported.0)
        .and_then(|new_text| {
            // The line editor is a heuristic; the parser has the last word.
            let reads_back = read_tree(&new_text, path).is_ok_and(|t| t == tree)
                && Config::parse(&new_text, path).is_ok_and(|c| c == config);
            if reads_back {
                Ok(new_text)
            } else {
                Err("the edited text did not read back as the intended config".to_owned())
            }
        });
    let (yaml, rewritten) = match edited {
        Ok(new_text) => (new_text, None),
        Err(reason) => {
            let yaml = serde_saphyr::to_string(&tree).map_err(|e| invalid(key, e.to_string()))?;
            (yaml, Some(reason))
        }
    };
    write_atomic(path, &yaml)?;
    Ok(SetOutcome { config, rewritten })
}

/// Sections whose keys are names the user picks (`providers.<name>`), with
/// the defaults of one entry: their keys are not in the defaults' tree.
fn named_entry_defaults(section: &str) -> Option<Value> {
    match section {
        "providers" => serde_json::to_value(crate::ProviderConfig::default()).ok(),
        _ => None,
    }
}

/// Refuses a key no setting has, with the keys that exist at that level.
/// Under a named section any name is fine; the field after it must exist
/// (deeper parts, like `prices.input`, are checked by the typed config).
fn check_key(defaults: &Value, key: &str) -> Result<()> {
    if lookup(defaults, key).is_some() {
        return Ok(());
    }
    let parts: Vec<&str> = key.split('.').collect();
    let Some(entry) = parts
        .first()
        .and_then(|section| named_entry_defaults(section))
    else {
        return Err(unknown(key, defaults));
    };
    match parts.as_slice() {
        [_, name, ..] if name.trim().is_empty() => Err(invalid(key, "the name is empty".into())),
        [_, _] => Ok(()),
        [section, _, field, ..] => match entry.as_object() {
            Some(fields) if fields.contains_key(*field) => Ok(()),
            fields => Err(Error::UnknownKey {
                key: key.to_owned(),
                hint: format!(
                    "keys under '{section}.<name>' are: {}",
                    fields
                        .map(|f| f.keys().cloned().collect::<Vec<_>>().join(", "))
                        .unwrap_or_default()
                ),
            }),
        },
        _ => Err(unknown(key, defaults)),
    }
}

/// `model.provider` must name a profile that exists, or every session would
/// fail later with a less obvious error.
fn check_provider_exists(key: &str, config: &Config) -> Result<()> {
    if key != "model.provider" && key != "model" {
        return Ok(());
    }
    let Some(name) = config.model.provider.as_deref() else {
        return Ok(());
    };
    if config.providers.contains_key(name) {
        return Ok(());
    }
    let known: Vec<&str> = config.providers.keys().map(String::as_str).collect();
    let configured = if known.is_empty() {
        "no provider is configured".to_owned()
    } else {
        format!("configured: {}", known.join(", "))
    };
    Err(invalid(
        key,
        format!(
            "there is no provider '{name}' ({configured}) — add it first, e.g. \
`knack config set providers.{name}.wire chat` and `knack config set providers.{name}.base_url URL`"
        ),
    ))
}

/// The file's data as a generic tree; an empty file is an empty mapping.
fn read_tree(text: &str, path: &Path) -> Result<Value> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    serde_saphyr::from_str(text).map_err(|e| Error::yaml(path, &e))
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
        let cfg = set_dotted(&path, "skills.disabled", "[a, b]")
            .unwrap()
            .config;
        assert_eq!(cfg.skills.disabled, vec!["a", "b"]);
        assert_eq!(cfg.model.name.as_deref(), Some("m1"));
        let cfg = set_dotted(&path, "skills.inline_shell", "true")
            .unwrap()
            .config;
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
        let cfg = set_dotted(&path, "model.name", "qwen2.5:0.5b")
            .unwrap()
            .config;
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

    #[test]
    fn provider_profiles_are_set_field_by_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, "# mine\nmodel:\n  name: m\n").unwrap();
        set_dotted(&path, "providers.claude.wire", "anthropic").unwrap();
        set_dotted(&path, "providers.claude.api_key_env", "ANTHROPIC_API_KEY").unwrap();
        set_dotted(&path, "providers.claude.prices.input", "3").unwrap();
        let cfg = set_dotted(&path, "model.provider", "claude")
            .unwrap()
            .config;
        let profile = &cfg.providers["claude"];
        assert_eq!(profile.wire, crate::Wire::Anthropic);
        assert_eq!(profile.api_key_env.as_deref(), Some("ANTHROPIC_API_KEY"));
        assert_eq!(profile.prices.map(|p| p.input), Some(3.0));
        assert_eq!(cfg.model.provider.as_deref(), Some("claude"));
        assert_eq!(Config::load_file(&path).unwrap(), cfg);
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .starts_with("# mine\n")
        );
        assert_eq!(
            get_dotted(&cfg, "providers.claude.wire").unwrap(),
            serde_json::json!("anthropic")
        );
    }

    #[test]
    fn bad_provider_keys_and_unknown_providers_are_refused_without_writing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(
            &path,
            "providers:\n  local:\n    base_url: http://127.0.0.1:1/v1\n",
        )
        .unwrap();
        let before = std::fs::read_to_string(&path).unwrap();
        let err = set_dotted(&path, "providers.claude.wrie", "anthropic").unwrap_err();
        assert!(
            matches!(&err, Error::UnknownKey { hint, .. } if hint.contains("wire") && hint.contains("api_key_env")),
            "{err}"
        );
        let err = set_dotted(&path, "providers.claude.wire", "anthropik").unwrap_err();
        assert!(matches!(err, Error::InvalidValue { .. }), "{err}");
        let err = set_dotted(&path, "model.provider", "nosuch")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("'nosuch'") && err.contains("configured: local"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
        // An existing one is accepted.
        let cfg = set_dotted(&path, "model.provider", "local").unwrap().config;
        assert_eq!(cfg.model.provider.as_deref(), Some("local"));
    }
}

#[cfg(test)]
mod layout_tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const COMMENTED: &str = "\
# knack config: mine, by hand

model:
  # the local server
  base_url: http://127.0.0.1:8080/v1
  name: small   # fast enough

skills:
  disabled:
    - old-one
  # keep the index small
  index_budget_chars: 4000

# the hub, last
hub:
  fetch_timeout_secs: 10
";

    #[test]
    fn set_keeps_comments_blank_lines_and_key_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, COMMENTED).unwrap();

        let out = set_dotted(&path, "model.name", "qwen2.5:0.5b").unwrap();
        assert_eq!(out.rewritten, None);
        let out = set_dotted(&path, "skills.disabled", "[a, b]").unwrap();
        assert_eq!(out.rewritten, None);
        let out = set_dotted(&path, "skills.inline_shell", "true").unwrap();
        assert_eq!(out.rewritten, None);
        let out = set_dotted(&path, "terminal.timeout_secs", "30").unwrap();
        assert_eq!(out.rewritten, None);

        let expected = "\
# knack config: mine, by hand

model:
  # the local server
  base_url: http://127.0.0.1:8080/v1
  name: qwen2.5:0.5b   # fast enough

skills:
  disabled: [a, b]
  # keep the index small
  index_budget_chars: 4000
  inline_shell: true

# the hub, last
hub:
  fetch_timeout_secs: 10
terminal:
  timeout_secs: 30
";
        assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
        let cfg = Config::load_file(&path).unwrap();
        assert_eq!(cfg, out.config);
        assert_eq!(cfg.model.name.as_deref(), Some("qwen2.5:0.5b"));
        assert_eq!(cfg.skills.disabled, vec!["a", "b"]);
        assert_eq!(cfg.skills.index_budget_chars, 4000);
        assert_eq!(cfg.terminal.timeout_secs, 30);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn values_that_need_quotes_are_quoted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, "# top\nagent:\n  system_message: hi\n").unwrap();
        let out = set_dotted(&path, "agent.system_message", "#1: be brief").unwrap();
        assert_eq!(out.rewritten, None);
        assert_eq!(
            out.config.agent.system_message.as_deref(),
            Some("#1: be brief")
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# top\nagent:\n  system_message: \"#1: be brief\"\n"
        );
    }

    #[test]
    fn a_flow_mapping_falls_back_to_a_rewrite_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, "# gone after the rewrite\nskills: {disabled: [a]}\n").unwrap();
        let out = set_dotted(&path, "skills.inline_shell", "true").unwrap();
        let reason = out.rewritten.unwrap();
        assert!(reason.contains("flow mapping"), "{reason}");
        let cfg = Config::load_file(&path).unwrap();
        assert_eq!(cfg.skills.disabled, vec!["a"]);
        assert!(cfg.skills.inline_shell);
    }

    #[test]
    fn a_broken_file_is_reported_with_its_path_not_input() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        let text = "model:\n  name: a\n   bad: [\n";
        std::fs::write(&path, text).unwrap();
        let err = set_dotted(&path, "model.name", "b")
            .unwrap_err()
            .to_string();
        assert!(!err.contains("<input>"), "{err}");
        assert!(err.contains(&format!("{}:", path.display())), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "untouched");

        let err = Config::parse("skills:\n  disabeld: [a]\n", Path::new("/h/config.yaml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("--> /h/config.yaml:2:"), "{err}");
        assert!(!err.contains("<input>"), "{err}");
    }
}
