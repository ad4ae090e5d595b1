//! Tests that keep the docs true to the binary: `docs/cli.md` is the `--help` of
//! every command rendered from `cli.rs`, and the README names every file knack writes.
//!
//! Regenerate docs/cli.md with `KNACK_BLESS=1 cargo test -p knack --bin knack cli_docs`.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::CommandFactory;

use crate::cli::Cli;

/// Help is rendered at a fixed width so the file does not depend on the
/// terminal that ran the test.
const WIDTH: usize = 100;

const PREAMBLE: &str = "\
# knack command line

Every command and flag of `knack`, as `knack <command> --help` prints it.
This file is generated from the clap definitions in `crates/knack/src/cli.rs`
and checked by a test; do not edit it by hand. After changing the CLI, run

```sh
KNACK_BLESS=1 cargo test -p knack --bin knack cli_docs
```

Exit codes: 0 success, 1 failed, 2 usage error, 3 configuration error, 130
interrupted (see `crates/knack/src/exit.rs`). Environment: `KNACK_HOME` (default `~/.knack`),
`KNACK_BASE_URL`, `KNACK_MODEL`, `KNACK_API_KEY`, `KNACK_WIRE`, `KNACK_CONTEXT_WINDOW`, `KNACK_LOG`, `NO_COLOR` (see docs/agent.md
and docs/config.md).
";

/// The whole of docs/cli.md.
pub(crate) fn render() -> String {
    let mut root = Cli::command().term_width(WIDTH);
    // Building resolves each subcommand's full name (`knack skills list`) for its usage line.
    root.build();
    let mut out = String::from(PREAMBLE);
    let mut contents = String::from("\n## Contents\n\n");
    let mut sections = String::new();
    walk(&mut root, &mut contents, &mut sections, 0);
    out.push_str(&contents);
    out.push_str(&sections);
    out
}

fn walk(cmd: &mut clap::Command, contents: &mut String, sections: &mut String, depth: usize) {
    let name = cmd
        .get_bin_name()
        .map(str::to_owned)
        .unwrap_or_else(|| cmd.get_name().to_owned());
    let anchor = name.replace(' ', "-");
    let _ = writeln!(contents, "{}- [`{name}`](#{anchor})", "  ".repeat(depth));
    let help = cmd.render_long_help().to_string();
    let help: Vec<&str> = help.lines().map(str::trim_end).collect();
    let _ = writeln!(
        sections,
        "\n## {name}\n\n```text\n{}\n```",
        help.join("\n").trim()
    );
    for sub in cmd.get_subcommands_mut() {
        // clap's own `help` subcommand says nothing the sections do not.
        if sub.get_name() == "help" {
            continue;
        }
        walk(sub, contents, sections, depth + 1);
    }
}

#[test]
fn cli_docs_match_the_clap_definitions() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli.md");
    let fresh = render();
    if std::env::var_os("KNACK_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == fresh,
        "docs/cli.md is out of date with crates/knack/src/cli.rs; \
         regenerate it with `KNACK_BLESS=1 cargo test -p knack --bin knack cli_docs`"
    );
}

#[test]
fn readme_names_everything_knack_writes_in_its_home() {
    let home = knack_config::KnackHome::at("/knack-home");
    let written = [
        home.config_path(),
        home.env_path(),
        home.soul_path(),
        home.memories_dir(),
        home.skills_dir(),
        home.hub_dir(),
        home.state_db(),
        home.cache_dir(),
        home.logs_dir(),
        home.evals_dir(),
        home.checkpoints_dir(),
        crate::tui::history_path(&home),
    ];
    let readme =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    for path in written {
        let name = path
            .strip_prefix(home.root())
            .unwrap()
            .display()
            .to_string();
        let dir_form = format!("`{name}/`");
        let file_form = format!("`{name}`");
        assert!(
            readme.contains(&dir_form) || readme.contains(&file_form),
            "README's list of what knack writes under $KNACK_HOME misses {name}"
        );
    }
}
