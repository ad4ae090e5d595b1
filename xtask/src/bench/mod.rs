//! The benchmark harness: whole-process timing with per-child peak memory,
//! result tables, and the marked sections of docs/performance.md each group owns.

mod agent;
mod checkpoint;
mod client;
mod context;
mod diff_card;
mod discovery;
mod eval;
mod file_write;
mod guard;
mod hub;
mod learning;
mod library;
mod manage;
mod mcp;
mod prompt;
mod sandbox;
mod search;
mod sync;
mod tui;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, Result, bail};

use crate::{flag_value, parse_number};

/// Options shared by every benchmark group.
#[derive(Debug, Clone)]
pub struct BenchArgs {
    pub group: String,
    pub runs: usize,
    pub warmup: usize,
    pub seed: u64,
    /// Keep the generated trees instead of deleting them.
    pub keep: bool,
    /// Print only; leave docs/performance.md alone.
    pub no_docs: bool,
}

impl BenchArgs {
    pub fn parse(args: &[String]) -> Result<Self> {
        let mut parsed = Self {
            group: "all".into(),
            runs: 15,
            warmup: 2,
            seed: 1,
            keep: false,
            no_docs: false,
        };
        let mut iter = args.iter();
        while let Some(arg) = iter.next() {
            match arg.as_str() {
                "--runs" => parsed.runs = parse_number(flag_value(&mut iter, arg)?, arg)?,
                "--warmup" => parsed.warmup = parse_number(flag_value(&mut iter, arg)?, arg)?,
                "--seed" => parsed.seed = parse_number(flag_value(&mut iter, arg)?, arg)?,
                "--keep" => parsed.keep = true,
                "--no-docs" => parsed.no_docs = true,
                flag if flag.starts_with('-') => bail!("unknown bench option '{flag}'"),
                group => parsed.group = group.to_owned(),
            }
        }
        if parsed.runs == 0 {
            bail!("--runs must be at least 1");
        }
        Ok(parsed)
    }
}

/// A benchmark group: a name for the command line and the docs markers, and its runner.
struct Group {
    name: &'static str,
    run: fn(&Workspace, &BenchArgs) -> Result<bool>,
}

const GROUPS: &[Group] = &[
    Group {
        name: "discovery",
        run: discovery::run,
    },
    Group {
        name: "guard",
        run: guard::run,
    },
    Group {
        name: "sync",
        run: sync::run,
    },
    Group {
        name: "manage",
        run: manage::run,
    },
    Group {
        name: "prompt",
        run: prompt::run,
    },
    Group {
        name: "agent",
        run: agent::run,
    },
    Group {
        name: "tui",
        run: tui::run,
    },
    Group {
        name: "diff",
        run: diff_card::run,
    },
    Group {
        name: "checkpoint",
        run: checkpoint::run,
    },
    Group {
        name: "sandbox",
        run: sandbox::run,
    },
    Group {
        name: "file-write",
        run: file_write::run,
    },
    Group {
        name: "client",
        run: client::run,
    },
    Group {
        name: "context",
        run: context::run,
    },
    Group {
        name: "mcp",
        run: mcp::run,
    },
    Group {
        name: "library",
        run: library::run,
    },
    Group {
        name: "search",
        run: search::run,
    },
    Group {
        name: "hub",
        run: hub::run,
    },
    Group {
        name: "eval",
        run: eval::run,
    },
    Group {
        name: "learning",
        run: learning::run,
    },
];

/// Runs the named group (or all); false when some figure missed its target.
pub fn run(args: &BenchArgs) -> Result<bool> {
    let workspace = Workspace::locate()?;
    let selected: Vec<&Group> = match args.group.as_str() {
        "all" => GROUPS.iter().collect(),
        name => match GROUPS.iter().find(|g| g.name == name) {
            Some(g) => vec![g],
            None => {
                let names: Vec<&str> = GROUPS.iter().map(|g| g.name).collect();
                bail!(
                    "unknown benchmark group '{name}'; known: {}, all",
                    names.join(", ")
                )
            }
        },
    };
    let mut all_passed = true;
    for group in selected {
        println!("== bench {} ==", group.name);
        all_passed &= (group.run)(&workspace, args)?;
    }
    Ok(all_passed)
}

/// Where the repository and its build output live.
pub struct Workspace {
    pub root: PathBuf,
    pub target_dir: PathBuf,
    pub cargo: String,
}

impl Workspace {
    fn locate() -> Result<Self> {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let root = manifest
            .parent()
            .context("xtask has no parent folder")?
            .to_path_buf();
        let target_dir = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .map(|p| if p.is_absolute() { p } else { root.join(p) })
            .unwrap_or_else(|| root.join("target"));
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        Ok(Self {
            root,
            target_dir,
            cargo,
        })
    }

    /// `cargo build --release -p <package>`, with cargo's own output on the terminal.
    pub fn build_release(&self, package: &str) -> Result<()> {
        println!("building {package} (release)…");
        let status = Command::new(&self.cargo)
            .args(["build", "--release", "-p", package])
            .current_dir(&self.root)
            .status()
            .with_context(|| format!("cannot run {}", self.cargo))?;
        if !status.success() {
            bail!("cargo build --release -p {package} failed ({status})");
        }
        Ok(())
    }

    pub fn release_binary(&self, name: &str) -> PathBuf {
        self.target_dir.join("release").join(name)
    }

    /// Runs the `#[ignore]`d tests matching `filter` in one of `package`'s test
    /// targets (`target`, e.g. `["--test", "all"]`) in release, one at a time,
    /// and returns what they printed. Cargo's own progress goes to the terminal.
    pub fn run_ignored_tests(
        &self,
        package: &str,
        target: &[&str],
        filter: &str,
        env: &[(&str, String)],
    ) -> Result<String> {
        println!("running {package}'s ignored `{filter}` test (release)…");
        let mut cmd = Command::new(&self.cargo);
        cmd.args(["test", "--release", "-p", package])
            .args(target)
            .args(["--", "--ignored", "--nocapture", "--test-threads=1", filter])
            .current_dir(&self.root)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit());
        // The caller's knack settings must not reach the measured code.
        remove_env_prefix(&mut cmd, "KNACK_");
        for (key, value) in env {
            cmd.env(key, value);
        }
        let output = cmd
            .output()
            .with_context(|| format!("cannot run {}", self.cargo))?;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if !output.status.success() {
            bail!(
                "cargo test --release -p {package} {} -- --ignored {filter} failed ({}):\n{stdout}",
                target.join(" "),
                output.status
            );
        }
        if !stdout.contains("1 passed") {
            bail!("no ignored test of {package} matched `{filter}`:\n{stdout}");
        }
        Ok(stdout)
    }
}

fn remove_env_prefix(cmd: &mut Command, prefix: &str) {
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with(prefix) {
            cmd.env_remove(key);
        }
    }
}

/// A scratch folder for one group, outside the repository so project discovery
/// finds nothing of ours; any leftover of an earlier run with this pid is removed.
pub fn scratch_dir(group: &str) -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("knack-bench-{group}-{}", std::process::id()));
    if dir.exists() {
        fs::remove_dir_all(&dir)?;
    }
    fs::create_dir_all(&dir)?;
    Ok(dir)
}

pub fn finish_scratch_dir(dir: &Path, keep: bool) {
    if keep {
        println!("kept the scratch files under {}", dir.display());
    } else if let Err(e) = fs::remove_dir_all(dir) {
        eprintln!("warning: cannot remove {}: {e}", dir.display());
    }
}

/// Every file called `name` under `dir`, in walk order (symlinks not followed).
pub fn files_named(dir: &Path, name: &str) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let entries =
            fs::read_dir(&next).with_context(|| format!("cannot read {}", next.display()))?;
        for entry in entries {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() && entry.file_name() == name {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    Ok(found)
}

/// A figure an example prints as a `BENCH name=…` line, with its row label and target.
pub struct ExampleFigure {
    pub name: String,
    pub label: String,
    pub target: Target,
}

impl ExampleFigure {
    pub fn new(name: impl Into<String>, label: impl Into<String>, target: Target) -> Self {
        Self {
            name: name.into(),
            label: label.into(),
            target,
        }
    }
}

/// Runs `cargo run --release -p <package> --example <example>`, turns its
/// `BENCH` lines into one row per figure, prints the table and (unless
/// `--no-docs`) writes the group's section of docs/performance.md, whose
/// text `section` makes from the example's output and the table.
pub fn run_example_group(
    ws: &Workspace,
    args: &BenchArgs,
    (package, example, group): (&str, &str, &str),
    figures: &[ExampleFigure],
    section: impl Fn(&str, &str) -> String,
) -> Result<bool> {
    println!("running {package}'s {example} example (release)…");
    let output = Command::new(&ws.cargo)
        .args(["run", "--release", "-p", package, "--example", example])
        .current_dir(&ws.root)
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("cannot run {}", ws.cargo))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        bail!(
            "the {example} example failed ({}):\n{stdout}",
            output.status
        );
    }
    let lines = parse_bench_lines(&stdout);
    let mut rows = Vec::new();
    for figure in figures {
        let line = bench_line(&lines, &figure.name, &stdout)?;
        rows.push(Row::from_bench(figure.label.clone(), line, figure.target));
    }
    let table = render_table(&rows);
    println!("\n{table}");
    if !args.no_docs {
        let body = format!(
            "{}\n{}\n\nReproduce: `cargo xtask bench {group}` (or `cargo run --release -p {package} --example {example}`).\n",
            section(&stdout, &table),
            provenance(&ws.root),
        );
        let path = write_doc_section(&ws.root, group, &body)?;
        println!("updated {}", path.display());
    }
    Ok(all_passed(&rows))
}

/// One `BENCH name=<value> <unit> [key=value…]` line printed by an in-process
/// measurement (an ignored test run in release).
#[derive(Debug, Clone, PartialEq)]
pub struct BenchLine {
    pub name: String,
    pub value: f64,
    pub unit: String,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub samples: Option<usize>,
}

impl BenchLine {
    fn parse(line: &str) -> Option<Self> {
        // libtest may print `test name ... ` on the same line first.
        let at = line.find("BENCH ")?;
        let mut words = line[at + "BENCH ".len()..].split_whitespace();
        let (name, value) = words.next()?.split_once('=')?;
        let mut parsed = Self {
            name: name.to_owned(),
            value: value.parse().ok()?,
            unit: words.next()?.to_owned(),
            min: None,
            max: None,
            samples: None,
        };
        for word in words {
            match word.split_once('=') {
                Some(("min", v)) => parsed.min = v.parse().ok(),
                Some(("max", v)) => parsed.max = v.parse().ok(),
                Some(("n", v)) => parsed.samples = v.parse().ok(),
                _ => {}
            }
        }
        Some(parsed)
    }

    /// The measured value with its unit; milliseconds get a precision that suits them.
    pub fn measured(&self) -> String {
        if self.unit == "ms" {
            fmt_ms(self.value)
        } else {
            format!("{} {}", self.value, self.unit)
        }
    }

    pub fn spread(&self) -> String {
        match (self.min, self.max) {
            (Some(lo), Some(hi)) if self.unit == "ms" => format!("{}–{}", fmt_ms(lo), fmt_ms(hi)),
            _ => String::new(),
        }
    }
}

pub fn parse_bench_lines(output: &str) -> Vec<BenchLine> {
    output.lines().filter_map(BenchLine::parse).collect()
}

/// The line called `name`, or an error quoting what was printed instead.
pub fn bench_line<'a>(lines: &'a [BenchLine], name: &str, output: &str) -> Result<&'a BenchLine> {
    lines
        .iter()
        .find(|l| l.name == name)
        .with_context(|| format!("the measurement printed no `BENCH {name}=` line:\n{output}"))
}

/// Milliseconds with three significant-ish digits: 0.042 ms, 1.57 ms, 23.4 ms.
pub fn fmt_ms(value: f64) -> String {
    if value < 1.0 {
        format!("{value:.3} ms")
    } else if value < 10.0 {
        format!("{value:.2} ms")
    } else {
        format!("{value:.1} ms")
    }
}

/// One command to time: a program, its arguments, environment and folder.
#[derive(Debug, Clone)]
pub struct Invocation {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Variables removed so the caller's own settings cannot leak in.
    pub env_remove_prefix: Option<String>,
    pub cwd: PathBuf,
}

impl Invocation {
    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args).current_dir(&self.cwd);
        if let Some(prefix) = &self.env_remove_prefix {
            remove_env_prefix(&mut cmd, prefix);
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    pub fn describe(&self) -> String {
        let name = self
            .program
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        std::iter::once(name)
            .chain(self.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Runs once and returns stdout; a failing exit is an error.
    pub fn capture(&self) -> Result<String> {
        let output = self
            .command()
            .output()
            .with_context(|| format!("cannot run {}", self.program.display()))?;
        if !output.status.success() {
            bail!(
                "`{}` failed ({}): {}",
                self.describe(),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// Spawn to reap: wall time and the child's own peak RSS in KiB.
    fn run_once(&self) -> Result<(Duration, u64)> {
        let mut cmd = self.command();
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let started = Instant::now();
        let child = cmd
            .spawn()
            .with_context(|| format!("cannot run {}", self.program.display()))?;
        let (status, max_rss_kib) = reap::wait_with_peak_rss(child.id())?;
        let elapsed = started.elapsed();
        if !status.success() {
            bail!("`{}` failed ({status})", self.describe());
        }
        Ok((elapsed, max_rss_kib))
    }

    /// `warmup` untimed runs, then `runs` timed ones; `before_each` runs
    /// untimed ahead of every run (e.g. to drop a cache for a cold start).
    pub fn measure(
        &self,
        warmup: usize,
        runs: usize,
        before_each: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Stats> {
        for _ in 0..warmup {
            before_each()?;
            self.run_once()?;
        }
        let mut times = Vec::with_capacity(runs);
        let mut peak = 0;
        for _ in 0..runs {
            before_each()?;
            let (t, rss) = self.run_once()?;
            times.push(t);
            peak = peak.max(rss);
        }
        Ok(Stats::from_samples(times, peak))
    }
}

mod reap {
    //! Reaping a child with `wait4` to learn its own peak memory.
    //! std's `Child::wait` discards the usage record, and `getrusage(RUSAGE_CHILDREN)`
    //! reports the largest child ever reaped (cargo included), so neither can say
    //! how much one knack run used.

    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    /// Waits for `pid` (a child spawned by this process and not yet waited for).
    #[allow(unsafe_code)]
    pub fn wait_with_peak_rss(pid: u32) -> std::io::Result<(ExitStatus, u64)> {
        let pid = libc::pid_t::try_from(pid).map_err(std::io::Error::other)?;
        let mut status: libc::c_int = 0;
        // SAFETY: `rusage` is a plain C struct of integers, for which all-zero bytes
        // are a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: both out-pointers refer to live locals of the right types; wait4
            // only writes through them, and `pid` is our own unreaped child, so no
            // other waiter (std's `Child` is never waited on) can race for it.
            let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
            if reaped == pid {
                // Linux reports ru_maxrss in KiB.
                let rss = u64::try_from(usage.ru_maxrss).unwrap_or(0);
                return Ok((ExitStatus::from_raw(status), rss));
            }
            let err = std::io::Error::last_os_error();
            if err.kind() != std::io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
    }
}

/// Timing summary of one measured command.
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    pub median: Duration,
    pub min: Duration,
    pub max: Duration,
    pub peak_rss_kib: u64,
    pub runs: usize,
}

impl Stats {
    fn from_samples(mut times: Vec<Duration>, peak_rss_kib: u64) -> Self {
        times.sort();
        let n = times.len();
        let median = if n % 2 == 1 {
            times[n / 2]
        } else {
            (times[n / 2 - 1] + times[n / 2]) / 2
        };
        Self {
            median,
            min: times[0],
            max: times[n - 1],
            peak_rss_kib,
            runs: n,
        }
    }

    pub fn spread(&self) -> String {
        format!("{}–{}", ms(self.min), ms(self.max))
    }
}

pub fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// What a figure must reach.
#[derive(Debug, Clone, Copy)]
pub enum Target {
    AtMostMs(f64),
    AtMostMb(f64),
    AtLeastMbPerS(f64),
    /// Recorded for context; no promise attached.
    None,
}

impl Target {
    fn label(self) -> String {
        match self {
            Self::AtMostMs(v) => format!("≤ {v} ms"),
            Self::AtMostMb(v) => format!("≤ {v} MB"),
            Self::AtLeastMbPerS(v) => format!("≥ {v} MB/s"),
            Self::None => "—".into(),
        }
    }

    fn check(self, value: f64) -> Option<bool> {
        match self {
            Self::AtMostMs(v) | Self::AtMostMb(v) => Some(value <= v),
            Self::AtLeastMbPerS(v) => Some(value >= v),
            Self::None => None,
        }
    }
}

/// One line of a result table.
#[derive(Debug, Clone)]
pub struct Row {
    pub figure: String,
    pub measured: String,
    pub spread: String,
    pub target: Target,
    pub passed: Option<bool>,
}

impl Row {
    /// `value` is in the target's unit (ms, MB or MB/s).
    pub fn new(
        figure: impl Into<String>,
        value: f64,
        measured: String,
        spread: String,
        target: Target,
    ) -> Self {
        Self {
            figure: figure.into(),
            measured,
            spread,
            target,
            passed: target.check(value),
        }
    }
}

impl Row {
    /// A whole-process timing: the median against a target in ms.
    pub fn timed(figure: impl Into<String>, stats: &Stats, target: Target) -> Self {
        Self::new(
            figure,
            stats.median.as_secs_f64() * 1000.0,
            ms(stats.median),
            stats.spread(),
            target,
        )
    }

    /// An in-process figure from a `BENCH` line, judged in the line's own unit.
    pub fn from_bench(figure: impl Into<String>, line: &BenchLine, target: Target) -> Self {
        Self::new(figure, line.value, line.measured(), line.spread(), target)
    }
}

/// A Markdown table, readable as-is on a terminal too.
pub fn render_table(rows: &[Row]) -> String {
    let header = ["figure", "measured", "min–max", "target", "result"];
    let cells: Vec<[String; 5]> = rows
        .iter()
        .map(|r| {
            [
                r.figure.clone(),
                r.measured.clone(),
                r.spread.clone(),
                r.target.label(),
                match r.passed {
                    Some(true) => "pass".into(),
                    Some(false) => "FAIL".into(),
                    None => "info".into(),
                },
            ]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cols: &[String]| {
        let padded: Vec<String> = cols
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c}{}", " ".repeat(w - c.chars().count())))
            .collect();
        format!("| {} |\n", padded.join(" | "))
    };
    let mut out = line(&header.map(String::from));
    out.push_str(&line(&widths.map(|w| "-".repeat(w))));
    for row in &cells {
        out.push_str(&line(row));
    }
    out
}

pub fn all_passed(rows: &[Row]) -> bool {
    rows.iter().all(|r| r.passed != Some(false))
}

/// The host, so numbers from different machines are not compared blindly.
pub fn machine_line() -> String {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|k| format!(", Linux {}", k.trim()))
        .unwrap_or_default();
    // Other work on the host skews wall times; say how busy it was.
    let load = fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| {
            l.split_whitespace()
                .next()
                .map(|one| format!(", load average {one}"))
        })
        .unwrap_or_default();
    format!("{cores} cores (nproc), {cpu}{kernel}{load}")
}

/// Today's date in UTC as YYYY-MM-DD, from the system clock.
pub fn today_utc() -> String {
    let days = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or(0);
    let (y, m, d) = civil_from_days(days as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's method).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The short commit the numbers were taken at, if git is around (read-only).
pub fn git_revision(root: &Path) -> Option<String> {
    let out = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(root)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// When, where and at which commit numbers were taken: one sentence for the docs.
pub fn provenance(root: &Path) -> String {
    let revision = git_revision(root)
        .map(|r| {
            let dirty = if has_local_changes(root) {
                " plus uncommitted changes"
            } else {
                ""
            };
            format!(" at commit `{r}`{dirty}")
        })
        .unwrap_or_default();
    format!("Measured {}{revision} on {}.", today_utc(), machine_line())
}

/// Whether tracked files differ from HEAD (read-only: no index refresh is written).
fn has_local_changes(root: &Path) -> bool {
    Command::new("git")
        .args([
            "--no-optional-locks",
            "status",
            "--porcelain",
            "--untracked-files=no",
        ])
        .current_dir(root)
        .output()
        .is_ok_and(|out| out.status.success() && !out.stdout.is_empty())
}

/// Prints the table, writes the group's docs section unless `--no-docs`, and
/// says whether every judged figure met its target.
pub fn publish(
    ws: &Workspace,
    args: &BenchArgs,
    group: &str,
    rows: &[Row],
    body: &str,
) -> Result<bool> {
    if !args.no_docs {
        let path = write_doc_section(&ws.root, group, body)?;
        println!("updated {}", path.display());
    }
    Ok(all_passed(rows))
}

const DOC_HEADER: &str = "# Performance\n\n\
Numbers measured by `cargo xtask bench`. Each section below is rewritten by its\n\
benchmark group; edit outside the `bench:` markers only.\n";

/// Replaces (or appends) the section between `<!-- bench:<group>:start/end -->`.
pub fn write_doc_section(root: &Path, group: &str, body: &str) -> Result<PathBuf> {
    let path = root.join("docs").join("performance.md");
    let existing = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => DOC_HEADER.to_owned(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let updated = splice_section(&existing, group, body);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    fs::write(&path, updated).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

fn splice_section(doc: &str, group: &str, body: &str) -> String {
    let start = format!("<!-- bench:{group}:start -->");
    let end = format!("<!-- bench:{group}:end -->");
    let section = format!("{start}\n{}\n{end}", body.trim_end());
    match (doc.find(&start), doc.find(&end)) {
        (Some(s), Some(e)) if e > s => {
            format!("{}{section}{}", &doc[..s], &doc[e + end.len()..])
        }
        _ => {
            let mut out = doc.trim_end().to_owned();
            out.push_str("\n\n");
            out.push_str(&section);
            out.push('\n');
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_samples() {
        let ms = |v: u64| Duration::from_millis(v);
        let odd = Stats::from_samples(vec![ms(9), ms(1), ms(5)], 10);
        assert_eq!((odd.median, odd.min, odd.max), (ms(5), ms(1), ms(9)));
        let even = Stats::from_samples(vec![ms(4), ms(2), ms(8), ms(6)], 10);
        assert_eq!(even.median, ms(5));
    }

    #[test]
    fn sections_are_replaced_in_place_and_others_kept() {
        let doc = splice_section(DOC_HEADER, "discovery", "first");
        let doc = splice_section(&doc, "guard", "g1");
        let doc = splice_section(&doc, "discovery", "second");
        assert!(doc.starts_with("# Performance"));
        assert!(
            doc.contains("<!-- bench:discovery:start -->\nsecond\n<!-- bench:discovery:end -->")
        );
        assert!(!doc.contains("first"));
        assert!(doc.contains("g1"));
        assert!(doc.find("bench:discovery:start") < doc.find("bench:guard:start"));
    }

    #[test]
    fn bench_lines_are_parsed_and_others_skipped() {
        let out = "running 1 test\n\
test suite::bench_noop ... BENCH noop=0.0123 ms min=0.0100 max=0.2000 n=2000\n\
BENCH index_chars=11873 chars\n\
BENCH broken ms\n\
test x ... ok\n";
        let lines = parse_bench_lines(out);
        assert_eq!(lines.len(), 2);
        let noop = bench_line(&lines, "noop", out).unwrap();
        assert_eq!((noop.value, noop.unit.as_str()), (0.0123, "ms"));
        assert_eq!(
            (noop.min, noop.max, noop.samples),
            (Some(0.01), Some(0.2), Some(2000))
        );
        assert_eq!(noop.measured(), "0.012 ms");
        assert_eq!(noop.spread(), "0.010 ms–0.200 ms");
        let chars = bench_line(&lines, "index_chars", out).unwrap();
        assert_eq!((chars.value, chars.spread().as_str()), (11873.0, ""));
        assert!(bench_line(&lines, "missing", out).is_err());
    }

    #[test]
    fn milliseconds_keep_a_sensible_precision() {
        assert_eq!(fmt_ms(0.04217), "0.042 ms");
        assert_eq!(fmt_ms(1.5749), "1.57 ms");
        assert_eq!(fmt_ms(23.44), "23.4 ms");
    }

    #[test]
    fn dates_from_day_numbers() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_454), (2026, 1, 1));
    }

    #[test]
    fn targets_judge_in_the_right_direction() {
        let rows = [
            Row::new(
                "a",
                10.0,
                "10".into(),
                String::new(),
                Target::AtMostMs(20.0),
            ),
            Row::new(
                "b",
                60.0,
                "60".into(),
                String::new(),
                Target::AtLeastMbPerS(50.0),
            ),
            Row::new("c", 1.0, "1".into(), String::new(), Target::None),
        ];
        assert!(all_passed(&rows));
        let slow = Row::new(
            "d",
            151.0,
            "151".into(),
            String::new(),
            Target::AtMostMs(150.0),
        );
        assert_eq!(slow.passed, Some(false));
        assert!(render_table(&[slow]).contains("FAIL"));
    }

    #[test]
    // The child is reaped by `wait4`, which clippy cannot see.
    #[allow(clippy::zombie_processes)]
    fn wait4_reports_a_childs_own_memory() {
        let child = Command::new("true").spawn().unwrap();
        let (status, rss) = reap::wait_with_peak_rss(child.id()).unwrap();
        assert!(status.success());
        assert!(rss > 0 && rss < 1024 * 1024, "{rss} KiB");
    }
}
