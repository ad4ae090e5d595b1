//! `knack config path|get|set`.

use knack_config::{Config, KnackHome, get_dotted, set_dotted};
use serde_json::Value;

use crate::cli::ConfigCommand;
use crate::exit;

pub fn run(cmd: ConfigCommand) -> anyhow::Result<u8> {
    let home = KnackHome::from_env()?;
    match cmd {
        ConfigCommand::Path => println!("{}", home.config_path().display()),
        ConfigCommand::Get { key } => {
            let config = Config::load(&home)?;
            print_value(&get_dotted(&config, &key)?);
        }
        ConfigCommand::Set { key, value } => {
            let config = set_key(&home, &key, &value)?;
            print!("{key} = ");
            print_value(&get_dotted(&config, &key)?);
        }
    }
    Ok(exit::OK)
}

/// Sets `key` in config.yaml (edited in place) and returns the config as it
/// now reads; every command that changes the user's config goes through here.
pub(super) fn set_key(home: &KnackHome, key: &str, value: &str) -> anyhow::Result<Config> {
    let outcome = set_dotted(&home.config_path(), key, value)?;
    if let Some(reason) = &outcome.rewritten {
        // The user's comments are gone: tell them, and why, rather than silently.
        eprintln!(
            "note: {} could not be edited in place ({reason}); it was rewritten and its comments were not kept",
            home.config_path().display()
        );
    }
    Ok(outcome.config)
}

fn print_value(value: &Value) {
    match value {
        Value::String(s) => println!("{s}"),
        Value::Null => println!("null"),
        other => println!("{other}"),
    }
}
