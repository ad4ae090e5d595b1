//! Scans skill directories and prints the human report for each.
//! `cargo run -p skill-guard --example scan_dir -- path/to/skill [more…]`

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut status = ExitCode::SUCCESS;
    for arg in std::env::args().skip(1) {
        match skill_guard::scan_skill_dir(Path::new(&arg)) {
            Ok(report) => println!("== {arg}\n{}", report.render()),
            Err(e) => {
                eprintln!("{arg}: {e}");
                status = ExitCode::FAILURE;
            }
        }
    }
    status
}
