//! The `knack` binary: parses the command line, runs one command, and maps
//! every failure to the exit codes of CONTRACT.md.

mod cli;
mod commands;
mod context;
mod exit;
mod logging;
mod output;
mod tui;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    let code = match commands::dispatch(args) {
        Ok(code) => code,
        Err(err) => exit::report(&err),
    };
    ExitCode::from(code)
}
