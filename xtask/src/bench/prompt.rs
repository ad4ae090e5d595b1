//! `bench prompt`: the skills index for 10,000 skills rendered in-process, and
//! `knack prompt show` as a whole process on a 10,000-skill home with a snapshot.

use std::fs;
use std::path::Path;

use anyhow::{Result, bail};

use super::discovery::{SETTLE, generated_home};
use super::{BenchArgs, Invocation, Row, Target, Workspace};

const SKILLS: usize = 10_000;
const INDEX_TARGET_MS: f64 = 20.0;
const SHOW_TARGET_MS: f64 = 60.0;

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    ws.build_release("knack")?;
    let knack = ws.release_binary("knack");
    let work = super::scratch_dir("prompt")?;
    let result = measure_all(ws, args, &knack, &work);
    super::finish_scratch_dir(&work, args.keep);
    result
}

fn measure_all(ws: &Workspace, args: &BenchArgs, knack: &Path, work: &Path) -> Result<bool> {
    let home = work.join("home");
    let skills_root = home.join("skills");
    generated_home(&home, SKILLS, args.seed, true)?;

    let mut rows = Vec::new();
    let output = ws.run_ignored_tests(
        "prompt-builder",
        &["--test", "all"],
        "bench_skills_index_10k",
        &[("KNACK_BENCH_SKILLS_ROOT", skills_root.display().to_string())],
    )?;
    let lines = super::parse_bench_lines(&output);
    let visible = super::bench_line(&lines, "index_visible_skills", &output)?.value;
    let chars = super::bench_line(&lines, "index_chars", &output)?.value;
    let uncached = super::bench_line(&lines, "index_render_uncached", &output)?;
    rows.push(Row::from_bench(
        "skills index block, 10,000 skills, in-process, cache cleared",
        uncached,
        Target::AtMostMs(INDEX_TARGET_MS),
    ));
    rows.push(Row::from_bench(
        "skills index block, 10,000 skills, in-process, cached",
        super::bench_line(&lines, "index_render_cached", &output)?,
        Target::None,
    ));
    rows.push(Row::from_bench(
        "whole system prompt (`build_system_prompt`), cache cleared",
        super::bench_line(&lines, "system_prompt_uncached", &output)?,
        Target::None,
    ));

    let show = Invocation {
        program: knack.to_path_buf(),
        args: vec!["prompt".into(), "show".into()],
        env: vec![
            ("KNACK_HOME".into(), home.display().to_string()),
            ("NO_COLOR".into(), "1".into()),
        ],
        env_remove_prefix: Some("KNACK_".into()),
        cwd: work.to_path_buf(),
    };
    // gen-tree finished long enough ago (the release test build) for knack to
    // trust the tree's mtimes, but make sure before relying on a snapshot.
    std::thread::sleep(SETTLE);
    let shown = show.capture()?;
    if !shown.contains("## Skills") {
        bail!("`knack prompt show` printed no skills index:\n{shown}");
    }
    let stats = show.measure(args.warmup, args.runs, &mut || Ok(()))?;
    let cache = home.join("cache");
    let has_snapshot = fs::read_dir(&cache).is_ok_and(|mut e| e.next().is_some());
    if !has_snapshot {
        eprintln!(
            "warning: no snapshot under {}; `prompt show` ran without one",
            cache.display()
        );
    }
    rows.push(Row::timed(
        "`prompt show`, 10,000-skill home, valid snapshot",
        &stats,
        Target::AtMostMs(SHOW_TARGET_MS),
    ));
    let peak_mb = stats.peak_rss_kib as f64 / 1024.0;
    rows.push(Row::new(
        "peak RSS, `prompt show` above",
        peak_mb,
        format!("{peak_mb:.1} MB"),
        String::new(),
        Target::None,
    ));

    let table = super::render_table(&rows);
    println!("\n{table}");
    let body = format!(
        "## System prompt\n\n\
In-process rows: prompt-builder's ignored test `bench_skills_index_10k` (release build) loads\n\
a `cargo xtask gen-tree` tree of 10,000 skills (seed {seed}; {visible} visible on Linux) once,\n\
then times `render_skills_index` with the default budget: the median of {n_uncached} calls with\n\
`clear_index_cache()` before each (rendering), and of the calls that hit the in-process LRU\n\
(*cached*: the cache key still hashes every skill). The block came to {chars} characters.\n\
Whole-process row: wall time of the release `knack prompt show` on a home holding that tree\n\
(`skills: {{scan_max_dirs: 100000, bundled_opt_out: true}}`), the median of {runs} runs after\n\
{warmup} warm-up runs; the warm-ups leave the discovery snapshot the timed runs read.\n\n\
{table}\n\
{provenance}\n\n\
Reproduce: `cargo xtask bench prompt` (the in-process rows alone, on a plain generated tree:\n\
`cargo test --release -p prompt-builder --test all -- --ignored bench_skills_index_10k --nocapture`).\n",
        seed = args.seed,
        n_uncached = uncached.samples.unwrap_or(0),
        runs = args.runs,
        warmup = args.warmup,
        provenance = super::provenance(&ws.root),
    );
    super::publish(ws, args, "prompt", &rows, &body)
}
