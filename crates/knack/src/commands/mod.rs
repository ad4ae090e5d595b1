//! Runs one parsed command and returns its exit code.

mod chat;
mod config;
mod doctor;
mod eval;
mod history;
mod hub;
mod inbox;
mod library;
mod mcp;
pub(crate) mod model;
mod permissions;
mod prompt;
mod run;
mod sessions;
pub(crate) mod skill_setup;
mod skills;
mod sync;
mod tool;
mod trust;
pub(crate) mod undo;

use crate::cli::{Cli, Command};
use crate::exit;

pub fn dispatch(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Some(Command::Skills(cmd)) if sync::handles(&cmd) => sync::run(cmd),
        Some(Command::Skills(cmd)) if history::handles(&cmd) => history::run(cmd),
        Some(Command::Skills(cmd)) if hub::handles(&cmd) => hub::run(cmd),
        Some(Command::Tool(cmd)) => tool::run(cmd),
        Some(Command::Skills(cmd)) => skills::run(cmd),
        Some(Command::Config(cmd)) => config::run(cmd),
        Some(Command::Chat(args)) => chat::run(args),
        Some(Command::Prompt(cmd)) => prompt::run(cmd),
        Some(Command::Sessions(cmd)) => sessions::run(cmd),
        Some(Command::Run(args)) => run::run(args),
        Some(Command::Doctor(args)) => doctor::run(&args),
        Some(Command::Model(cmd)) => model::run(cmd),
        Some(Command::Mcp(cmd)) => mcp::run(cmd),
        Some(Command::Permissions(cmd)) => permissions::run(cmd),
        Some(Command::Undo) => undo::run(),
        Some(Command::Eval(cmd)) => eval::run(cmd),
        None if chat::is_interactive() => chat::run(crate::cli::ChatArgs::default()),
        None => Err(exit::usage(
            "no command given; try `knack skills list` or `knack --help`",
        )),
    }
}
