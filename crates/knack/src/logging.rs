//! Logs go to `$KNACK_HOME/logs/knack.log`, never to the terminal, filtered
//! by `KNACK_LOG`. The file is opened only when something is logged, 0600 in a 0700 folder.

use std::path::PathBuf;

use tracing_subscriber::EnvFilter;

pub fn init(logs_dir: PathBuf) {
    let filter = EnvFilter::try_from_env("KNACK_LOG").unwrap_or_else(|_| EnvFilter::new("warn"));
    let path = logs_dir.join("knack.log");
    let writer = move || -> Box<dyn std::io::Write> {
        // Logs name paths, commands and errors of the user's sessions: owner only.
        match knack_config::private::open_append_private(&path) {
            Ok(file) => Box::new(file),
            Err(_) => Box::new(std::io::sink()),
        }
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(writer)
        .try_init();
}
