//! The `knack` binary: parses the command line, runs one command, and maps
//! every failure to the exit codes of CONTRACT.md.

mod cli;
mod commands;
mod context;
#[cfg(test)]
mod doc_checks;
mod exit;
mod logging;
mod output;
mod progress;
mod suggest;
mod terminal_text;
mod tui;

use std::process::ExitCode;

use clap::Parser;

/// Discovery of a large tree allocates and frees many small strings on
/// several threads; mimalloc does that at a fraction of the system
/// allocator's cost (see docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    quiet_on_closed_stdout();
    // Declared first so it is dropped last: the log's queued lines are written before exit.
    let _flush_logs = logging::FlushOnExit;
    let args = cli::Cli::parse();
    let code = match commands::dispatch(args) {
        Ok(code) => code,
        Err(err) => exit::report(&err),
    };
    ExitCode::from(code)
}

/// `knack skills list | head` closes our stdout early; printing then fails.
/// That is the reader's choice, not a crash: leave quietly, as other tools do
/// when SIGPIPE ends them (128 + 13).
fn quiet_on_closed_stdout() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default_hook(info);
    }));
}
