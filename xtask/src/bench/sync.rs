//! `bench sync`: `knack skills list` on a brand-new home (bundled skills seeded
//! by that run) as a whole process, and the no-op start-up sync in-process.

use std::fs;
use std::path::Path;

use anyhow::{Context as _, Result, bail};

use super::{BenchArgs, Invocation, Row, Target, Workspace};

const FRESH_TARGET_MS: f64 = 60.0;
const NOOP_TARGET_MS: f64 = 2.0;
const MANIFEST: &str = ".bundled_manifest";

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    ws.build_release("knack")?;
    let knack = ws.release_binary("knack");
    let work = super::scratch_dir("sync")?;
    let result = measure_all(ws, args, &knack, &work);
    super::finish_scratch_dir(&work, args.keep);
    result
}

fn measure_all(ws: &Workspace, args: &BenchArgs, knack: &Path, work: &Path) -> Result<bool> {
    let home = work.join("home");
    let list = Invocation {
        program: knack.to_path_buf(),
        args: vec!["skills".into(), "list".into()],
        env: vec![
            ("KNACK_HOME".into(), home.display().to_string()),
            ("NO_COLOR".into(), "1".into()),
        ],
        env_remove_prefix: Some("KNACK_".into()),
        cwd: work.to_path_buf(),
    };

    // One checked run first: the home must come out seeded, or the timing is of
    // something else.
    empty_home(&home)?;
    let shown = list.capture()?;
    let manifest = home.join("skills").join(MANIFEST);
    if !manifest.is_file() || shown.trim().is_empty() {
        bail!(
            "`knack skills list` on an empty home did not seed the bundled skills (no {})",
            manifest.display()
        );
    }
    let seeded = super::files_named(&home.join("skills"), "SKILL.md")?.len();

    let mut rows = Vec::new();
    let fresh = list.measure(args.warmup, args.runs, &mut || empty_home(&home))?;
    rows.push(Row::timed(
        "`skills list`, new empty home each run (bundled skills seeded)",
        &fresh,
        Target::AtMostMs(FRESH_TARGET_MS),
    ));
    let seeded_home = list.measure(args.warmup, args.runs, &mut || Ok(()))?;
    rows.push(Row::timed(
        "`skills list`, already seeded home (no-op sync, warm snapshot)",
        &seeded_home,
        Target::None,
    ));
    let peak_mb = fresh.peak_rss_kib.max(seeded_home.peak_rss_kib) as f64 / 1024.0;
    rows.push(Row::new(
        "peak RSS, `skills list` runs above",
        peak_mb,
        format!("{peak_mb:.1} MB"),
        String::new(),
        Target::None,
    ));

    let output = ws.run_ignored_tests("skill-sync", &["--test", "all"], "bench_noop_sync", &[])?;
    let lines = super::parse_bench_lines(&output);
    let hook = super::bench_line(&lines, "noop_seed_on_start", &output)?;
    rows.push(Row::from_bench(
        "no-op sync in-process: `seed_on_start` on a seeded home",
        hook,
        Target::AtMostMs(NOOP_TARGET_MS),
    ));
    let check = super::bench_line(&lines, "noop_sync_if_needed", &output)?;
    rows.push(Row::from_bench(
        "no-op sync in-process: `sync_if_needed` with the embedded bundle",
        check,
        Target::None,
    ));
    let hash_check = super::bench_line(&lines, "noop_is_current", &output)?;
    rows.push(Row::from_bench(
        "no-op sync in-process: `is_current` set-hash check alone",
        hash_check,
        Target::None,
    ));

    let table = super::render_table(&rows);
    println!("\n{table}");
    let body = format!(
        "## Bundled-skill seeding\n\n\
Whole-process rows: wall time of the release `knack` binary (spawn to exit, stdout to\n\
/dev/null), the median of {runs} runs after {warmup} warm-up runs. *New empty home*: before\n\
every run the `KNACK_HOME` folder is deleted and created empty, so each run seeds the\n\
{seeded} bundled skills and then discovers them with no snapshot (default config).\n\
The in-process rows come from skill-sync's ignored test `bench_noop_sync` (release build):\n\
the median of {samples} calls on a home seeded once before, each a single manifest read.\n\n\
{table}\n\
{provenance}\n\n\
Reproduce: `cargo xtask bench sync` (the in-process rows alone:\n\
`cargo test --release -p skill-sync --test all -- --ignored bench_noop_sync --nocapture`).\n",
        runs = args.runs,
        warmup = args.warmup,
        samples = hook.samples.unwrap_or(0),
        provenance = super::provenance(&ws.root),
    );
    super::publish(ws, args, "sync", &rows, &body)
}

/// Deletes `home` and makes it again, empty.
fn empty_home(home: &Path) -> Result<()> {
    if home.exists() {
        fs::remove_dir_all(home).with_context(|| format!("cannot remove {}", home.display()))?;
    }
    fs::create_dir_all(home).with_context(|| format!("cannot create {}", home.display()))
}
