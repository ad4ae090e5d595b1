//! docs/config.md names every key of `Config`: a key added to the struct
//! without a line in the docs fails here, and so does a documented key that no longer exists.
// A test binary: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::PathBuf;

use knack_config::{Config, McpServerConfig, Prices, ProviderConfig};
use serde_json::Value;

/// Every dotted key of `value`; a mapping that is empty by default (a map the
/// user fills in) is a key of its own.
fn keys(prefix: &str, value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.insert(key.clone());
                keys(&key, v, out);
            }
        }
        _ => {}
    }
}

/// The keys config.yaml accepts, with `<name>` standing for a provider's or an MCP server's name.
fn struct_keys() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    keys(
        "",
        &serde_json::to_value(Config::default()).unwrap(),
        &mut out,
    );
    let provider = serde_json::to_value(ProviderConfig::default()).unwrap();
    keys("providers.<name>", &provider, &mut out);
    let prices = serde_json::to_value(Prices::default()).unwrap();
    keys("providers.<name>.prices", &prices, &mut out);
    let server = serde_json::to_value(McpServerConfig::default()).unwrap();
    keys("mcp_servers.<name>", &server, &mut out);
    out
}

/// The keys in the first column of the docs' tables.
fn documented_keys(docs: &str) -> BTreeSet<String> {
    docs.lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once('`').map(|(key, _)| key.to_owned()))
        .collect()
}

#[test]
fn every_config_key_is_documented_and_every_documented_key_exists() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/config.md");
    let docs = std::fs::read_to_string(&path).unwrap();
    let documented = documented_keys(&docs);
    let accepted = struct_keys();
    // Sections are headings, not table rows.
    let leaves: BTreeSet<&String> = accepted.iter().filter(|k| k.contains('.')).collect();
    let missing: Vec<&&String> = leaves
        .iter()
        .filter(|k| !documented.contains(**k))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/config.md does not document {missing:?}; add a row for each"
    );
    let stale: Vec<&String> = documented
        .iter()
        .filter(|k| !accepted.contains(*k) && k.as_str() != "providers")
        .collect();
    assert!(
        stale.is_empty(),
        "docs/config.md documents keys config.yaml does not accept: {stale:?}"
    );
}

#[test]
fn documented_defaults_match_for_plain_values() {
    // The default column of each plain (number, boolean, string) key agrees with Config::default().
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/config.md");
    let docs = std::fs::read_to_string(&path).unwrap();
    let defaults = serde_json::to_value(Config::default()).unwrap();
    for line in docs.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let key = cells[0].trim_start_matches("| ").trim_matches('`');
        if key.contains('<') || cells.len() < 4 {
            continue;
        }
        let Some(value) = key
            .split('.')
            .try_fold(&defaults, |node, part| node.get(part))
        else {
            continue;
        };
        let written = cells[2].trim().trim_matches('`');
        let expected = match value {
            Value::String(s) => s.clone(),
            Value::Number(_) | Value::Bool(_) | Value::Null => value.to_string(),
            _ => continue,
        };
        assert_eq!(written, expected, "default of {key} in docs/config.md");
    }
}
