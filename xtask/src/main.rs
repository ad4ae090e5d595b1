//! `cargo xtask`: repository chores — synthetic skill trees and benchmarks.
//! Arguments are parsed by hand to keep the release build of this tool small.

mod bench;
mod gen_tree;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context as _, Result, bail};

const USAGE: &str = "\
usage:
  cargo xtask gen-tree --skills N [--seed S] [--external DIR] OUT
      write a deterministic synthetic skills tree into OUT (new or empty)
  cargo xtask bench [discovery|guard|sync|manage|prompt|agent|tui|diff|checkpoint|all] [--runs R] [--warmup W] [--seed S] [--keep] [--no-docs]
      time knack (whole processes and in-process measurements) and record the results
      in docs/performance.md";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Ok(false) means the chore ran but a benchmark missed its target.
fn run(args: &[String]) -> Result<bool> {
    let Some((command, rest)) = args.split_first() else {
        println!("{USAGE}");
        return Ok(true);
    };
    match command.as_str() {
        "gen-tree" => gen_tree_command(rest).map(|()| true),
        "bench" => bench::run(&bench::BenchArgs::parse(rest)?),
        "help" | "-h" | "--help" => {
            println!("{USAGE}");
            Ok(true)
        }
        other => bail!("unknown command '{other}'\n{USAGE}"),
    }
}

/// Pulls the value that must follow `flag`.
pub(crate) fn flag_value<'a>(
    iter: &mut impl Iterator<Item = &'a String>,
    flag: &str,
) -> Result<&'a str> {
    iter.next()
        .map(String::as_str)
        .with_context(|| format!("{flag} needs a value"))
}

pub(crate) fn parse_number<T: std::str::FromStr>(text: &str, flag: &str) -> Result<T> {
    text.replace('_', "")
        .parse()
        .map_err(|_| anyhow::anyhow!("{flag} expects a number, got '{text}'"))
}

fn gen_tree_command(args: &[String]) -> Result<()> {
    let mut skills: Option<usize> = None;
    let mut seed = 1u64;
    let mut external = None;
    let mut out = None;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--skills" => skills = Some(parse_number(flag_value(&mut iter, arg)?, arg)?),
            "--seed" => seed = parse_number(flag_value(&mut iter, arg)?, arg)?,
            "--external" => external = Some(PathBuf::from(flag_value(&mut iter, arg)?)),
            flag if flag.starts_with('-') => bail!("unknown option '{flag}'\n{USAGE}"),
            path if out.is_none() => out = Some(PathBuf::from(path)),
            extra => bail!("unexpected argument '{extra}'\n{USAGE}"),
        }
    }
    let skills = skills.with_context(|| format!("--skills N is required\n{USAGE}"))?;
    let out = out.with_context(|| format!("the OUT folder is required\n{USAGE}"))?;
    let started = Instant::now();
    let summary = gen_tree::generate(
        &out,
        &gen_tree::TreeSpec {
            skills,
            seed,
            external,
        },
    )?;
    println!(
        "{} in {:.2} s (seed {seed})",
        summary.line(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
