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
            let outcome = set_dotted(&home.config_path(), &key, &value)?;
            if let Some(reason) = &outcome.rewritten {
                // The user's comments are gone: tell them, and why, rather than silently.
                eprintln!(
                    "note: {} could not be edited in place ({reason}); it was rewritten and its comments were not kept",
                    home.config_path().display()
                );
            }
            print!("{key} = ");
            print_value(&get_dotted(&outcome.config, &key)?);
        }
    }
    Ok(exit::OK)
}

fn print_value(value: &Value) {
    match value {
        Value::String(s) => println!("{s}"),
        Value::Null => println!("null"),
        other => println!("{other}"),
    }
}
