//! `bench discovery`: whole `knack skills list/view` processes over generated
//! trees of 100, 1,000 and 10,000 skills, against SPEC's latency and memory targets.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context as _, Result, bail};

use super::{BenchArgs, Invocation, Row, Stats, Target, Workspace};
use crate::gen_tree::{self, TreeSpec, TreeSummary};

const SIZES: [usize; 3] = [100, 1_000, 10_000];
/// The default walk limit (5,000 folders) is below a 10,000-skill tree; the
/// bench raises it so every tree is discovered whole.
const SCAN_MAX_DIRS: usize = 100_000;

struct Tree {
    skills: usize,
    home: PathBuf,
    summary: TreeSummary,
}

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    ws.build_release("knack")?;
    let knack = ws.release_binary("knack");
    if !knack.is_file() {
        bail!("{} was not built", knack.display());
    }
    // Outside the repository, so project discovery finds nothing of ours.
    let work = std::env::temp_dir().join(format!("knack-bench-discovery-{}", std::process::id()));
    if work.exists() {
        fs::remove_dir_all(&work)?;
    }
    fs::create_dir_all(&work)?;
    let result = measure_all(ws, args, &knack, &work);
    if args.keep {
        println!("kept the trees under {}", work.display());
    } else if let Err(e) = fs::remove_dir_all(&work) {
        eprintln!("warning: cannot remove {}: {e}", work.display());
    }
    result
}

/// How a run finds the discovery snapshot knack keeps under `$KNACK_HOME/cache/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// The cache folder is deleted before each run: a full walk and parse.
    Cold,
    /// The snapshot written by the warm-up runs is reused.
    Warm,
}

impl Start {
    fn label(self) -> &'static str {
        match self {
            Self::Cold => "cold",
            Self::Warm => "warm",
        }
    }
}

fn measure_all(ws: &Workspace, args: &BenchArgs, knack: &Path, work: &Path) -> Result<bool> {
    let mut trees = Vec::new();
    let mut gen_note = String::new();
    for skills in SIZES {
        let home = work.join(format!("home-{skills}"));
        let (summary, took) = generated_home(&home, skills, args.seed, true)?;
        if skills == 10_000 {
            gen_note = format!(
                "gen-tree wrote the 10,000-skill tree in {:.2} s",
                took.as_secs_f64()
            );
        }
        trees.push(Tree {
            skills,
            home,
            summary,
        });
    }
    // knack refuses to snapshot a tree whose files changed in the last ~2 s
    // (their mtimes could still move unseen); let the fresh trees settle.
    std::thread::sleep(SETTLE);

    let invocation = |tree: &Tree, args: &[&str]| Invocation {
        program: knack.to_path_buf(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: vec![
            ("KNACK_HOME".into(), tree.home.display().to_string()),
            ("NO_COLOR".into(), "1".into()),
        ],
        env_remove_prefix: Some("KNACK_".into()),
        cwd: work.to_path_buf(),
    };

    let mut rows = Vec::new();
    let mut peak_10k = 0u64;
    for tree in &trees {
        let list = invocation(tree, &["skills", "list", "--json"]);
        check_list_count(&list, &tree.summary, false)?;
        let target = match tree.skills {
            100 => Target::AtMostMs(20.0),
            10_000 => Target::AtMostMs(150.0),
            _ => Target::None,
        };
        for start in [Start::Cold, Start::Warm] {
            let stats = measure(&list, tree, start, args)?;
            rows.push(time_row(
                format!(
                    "`skills list --json`, {} skills, {}",
                    thousands(tree.skills),
                    start.label()
                ),
                &stats,
                target,
            ));
            if tree.skills == 10_000 {
                peak_10k = peak_10k.max(stats.peak_rss_kib);
            }
        }
    }

    let big = trees
        .iter()
        .find(|t| t.skills == 10_000)
        .context("no 10,000-skill tree")?;
    let name = big
        .summary
        .sample_unique_name
        .clone()
        .context("the 10,000-skill tree has no unique visible name")?;
    let view = invocation(big, &["skills", "view", &name]);
    let shown = view.capture()?;
    if !shown.contains(&name) {
        bail!("`knack skills view {name}` did not show the skill:\n{shown}");
    }
    for start in [Start::Cold, Start::Warm] {
        let stats = measure(&view, big, start, args)?;
        peak_10k = peak_10k.max(stats.peak_rss_kib);
        rows.push(time_row(
            format!("`skills view <name>`, 10,000 skills, {}", start.label()),
            &stats,
            Target::AtMostMs(150.0),
        ));
    }
    let peak_mb = peak_10k as f64 / 1024.0;
    rows.push(Row::new(
        "peak RSS, list/view on 10,000 skills",
        peak_mb,
        format!("{peak_mb:.1} MB"),
        String::new(),
        Target::AtMostMb(100.0),
    ));

    // Last, because seeding adds the bundled skills to this tree for good.
    write_config(&big.home, false)?;
    let list = invocation(big, &["skills", "list", "--json"]);
    check_list_count(&list, &big.summary, true)?;
    std::thread::sleep(SETTLE);
    let stats = measure(&list, big, Start::Warm, args)?;
    rows.push(time_row(
        "`skills list --json`, 10,000 skills, warm, bundled seeding on".into(),
        &stats,
        Target::None,
    ));

    let table = super::render_table(&rows);
    println!("\n{table}");
    let passed = super::all_passed(&rows);
    if !args.no_docs {
        let body = doc_body(ws, args, &table, &gen_note);
        let path = super::write_doc_section(&ws.root, "discovery", &body)?;
        println!("updated {}", path.display());
    }
    Ok(passed)
}

pub(super) const SETTLE: std::time::Duration = std::time::Duration::from_millis(2500);

/// Limits raised so the whole tree is walked; seeding off unless asked, so the
/// figures are discovery's own.
pub(super) fn write_config(home: &Path, bundled_opt_out: bool) -> Result<()> {
    fs::write(
        home.join("config.yaml"),
        format!(
            "skills:\n  scan_max_dirs: {SCAN_MAX_DIRS}\n  bundled_opt_out: {bundled_opt_out}\n"
        ),
    )
    .with_context(|| format!("cannot write {}/config.yaml", home.display()))
}

/// `home/skills` filled by gen-tree with `skills` skills, and the bench config
/// written; prints the tree summary and returns it with the time it took.
pub(super) fn generated_home(
    home: &Path,
    skills: usize,
    seed: u64,
    bundled_opt_out: bool,
) -> Result<(gen_tree::TreeSummary, std::time::Duration)> {
    let started = Instant::now();
    let summary = gen_tree::generate(
        &home.join("skills"),
        &TreeSpec {
            skills,
            seed,
            external: None,
        },
    )?;
    let took = started.elapsed();
    println!(
        "gen-tree {skills}: {} in {:.2} s",
        summary.line(),
        took.as_secs_f64()
    );
    write_config(home, bundled_opt_out)?;
    Ok((summary, took))
}

fn measure(run: &Invocation, tree: &Tree, start: Start, args: &BenchArgs) -> Result<Stats> {
    let cache = tree.home.join("cache");
    let mut drop_cache = || -> Result<()> {
        if start == Start::Cold && cache.exists() {
            fs::remove_dir_all(&cache)
                .with_context(|| format!("cannot remove {}", cache.display()))?;
        }
        Ok(())
    };
    let stats = run.measure(args.warmup, args.runs, &mut drop_cache)?;
    if start == Start::Warm && !has_files(&cache) {
        eprintln!(
            "warning: no snapshot under {} after the warm-up runs; the warm figure is a cold one",
            cache.display()
        );
    }
    Ok(stats)
}

fn has_files(dir: &Path) -> bool {
    fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some())
}

fn time_row(figure: String, stats: &Stats, target: Target) -> Row {
    Row::new(
        figure,
        stats.median.as_secs_f64() * 1000.0,
        super::ms(stats.median),
        stats.spread(),
        target,
    )
}

/// A list that comes back short means the walk was cut or skills failed to
/// parse; timing it would measure the wrong thing.
/// `at_least`: other skills (the bundled ones) may come on top of the tree's.
fn check_list_count(list: &Invocation, summary: &TreeSummary, at_least: bool) -> Result<()> {
    let json = list.capture()?;
    let count = json_count(&json).context("`skills list --json` printed no \"count\"")?;
    let expected = summary.visible_on_linux;
    if count < expected || (!at_least && count > expected) {
        bail!(
            "`{}` listed {count} skills, the tree holds {expected} visible ones",
            list.describe(),
        );
    }
    Ok(())
}

/// The top-level `"count": N` of skills_list (the first such key; skills carry none).
fn json_count(json: &str) -> Option<usize> {
    let after = &json[json.find("\"count\"")? + "\"count\"".len()..];
    let after = after.trim_start().strip_prefix(':')?.trim_start();
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

pub(super) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn doc_body(ws: &Workspace, args: &BenchArgs, table: &str, gen_note: &str) -> String {
    format!(
        "## Discovery\n\n\
Whole-process wall time of the release `knack` binary (spawn to exit, stdout to /dev/null);\n\
*measured* is the median of {runs} runs after {warmup} warm-up runs. *Cold*: `$KNACK_HOME/cache/`\n\
is deleted before each run, so knack walks and parses the whole tree (and rewrites its snapshot);\n\
*warm*: the discovery snapshot from the previous run is reused. The OS page cache is warm\n\
in both. Peak RSS is each child's own `ru_maxrss` from `wait4`, the maximum over all\n\
10,000-skill runs. Trees come from `cargo xtask gen-tree` (seed {seed}) with\n\
`skills.scan_max_dirs: {SCAN_MAX_DIRS}` (the default 5,000 folders would cut the\n\
10,000-skill walk short) and `skills.bundled_opt_out: true`, except in the last row.\n\n\
{table}\n\
{provenance} {gen_note}.\n\n\
Reproduce: `cargo xtask bench discovery` (add `--runs N`, `--keep` to inspect the trees).\n",
        runs = args.runs,
        warmup = args.warmup,
        seed = args.seed,
        provenance = super::provenance(&ws.root),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_is_read_from_pretty_and_compact_json() {
        assert_eq!(
            json_count("{\n  \"success\": true,\n  \"count\": 9713,\n"),
            Some(9713)
        );
        assert_eq!(
            json_count("{\"success\":true,\"count\":12,\"skills\":[]}"),
            Some(12)
        );
        assert_eq!(json_count("{\"success\":false}"), None);
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(100), "100");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(10_000), "10,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
