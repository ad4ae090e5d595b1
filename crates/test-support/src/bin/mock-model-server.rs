//! Serves a JSON script of model replies on 127.0.0.1 for end-to-end (tmux) tests.
//! Prints its base URL on stdout, then serves until killed.

use std::error::Error;
use std::io::Write as _;
use std::path::PathBuf;

use test_support::{MockModelServer, parse_script};

const USAGE: &str = "usage: mock-model-server SCRIPT.json [--port N] [--request-log FILE.jsonl]";

fn main() -> Result<(), Box<dyn Error>> {
    let mut script = None;
    let mut port = 0u16;
    let mut request_log = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => port = args.next().ok_or(USAGE)?.parse()?,
            "--request-log" => request_log = Some(PathBuf::from(args.next().ok_or(USAGE)?)),
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            _ if script.is_none() => script = Some(PathBuf::from(arg)),
            _ => return Err(USAGE.into()),
        }
    }
    let script = script.ok_or(USAGE)?;
    let text = std::fs::read_to_string(&script)
        .map_err(|err| format!("cannot read {}: {err}", script.display()))?;
    let entries =
        parse_script(&text).map_err(|err| format!("invalid script {}: {err}", script.display()))?;

    let server = MockModelServer::start_blocking_with(port, request_log)?;
    server.enqueue_script(entries);
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{}", server.base_url())?;
    stdout.flush()?;
    loop {
        std::thread::park();
    }
}
