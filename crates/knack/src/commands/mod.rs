//! Runs one parsed command and returns its exit code.

mod config;
mod skills;

use crate::cli::{Cli, Command};
use crate::exit;

pub fn dispatch(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Some(Command::Skills(cmd)) => skills::run(cmd),
        Some(Command::Config(cmd)) => config::run(cmd),
        None => Err(exit::usage(
            "no command given; try `knack skills list` or `knack --help`",
        )),
    }
}
