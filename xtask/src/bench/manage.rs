//! `bench manage`: one `knack tool call skill_manage` patch as a whole process on
//! a 10,000-skill home; every run changes the skill's text, so every run writes.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use super::discovery::{SETTLE, generated_home};
use super::{BenchArgs, Invocation, Row, Stats, Target, Workspace};

const SKILLS: usize = 10_000;
const TARGET_MS: f64 = 30.0;

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    ws.build_release("knack")?;
    let knack = ws.release_binary("knack");
    let work = super::scratch_dir("manage")?;
    let result = measure_all(ws, args, &knack, &work);
    super::finish_scratch_dir(&work, args.keep);
    result
}

/// The revision marker the patches step through: `Bench revision 0007.`
fn marker(revision: usize) -> String {
    format!("Bench revision {revision:04}.")
}

fn patch_arguments(name: &str, old: &str, new: &str) -> String {
    let quote = |s: &str| {
        format!(
            "\"{}\"",
            s.replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('\n', "\\n")
        )
    };
    format!(
        "{{\"action\":\"patch\",\"name\":{},\"old_string\":{},\"new_string\":{}}}",
        quote(name),
        quote(old),
        quote(new)
    )
}

fn measure_all(ws: &Workspace, args: &BenchArgs, knack: &Path, work: &Path) -> Result<bool> {
    let home = work.join("home");
    let (summary, _) = generated_home(&home, SKILLS, args.seed, true)?;
    let name = summary
        .sample_unique_name
        .context("the generated tree has no skill with a unique name")?;
    let skill_md = skill_file(&home.join("skills"), &name)?;

    let call = |arguments: String| Invocation {
        program: knack.to_path_buf(),
        args: vec![
            "tool".into(),
            "call".into(),
            "skill_manage".into(),
            arguments,
        ],
        env: vec![
            ("KNACK_HOME".into(), home.display().to_string()),
            ("NO_COLOR".into(), "1".into()),
        ],
        env_remove_prefix: Some("KNACK_".into()),
        cwd: work.to_path_buf(),
    };

    // Let the new tree settle, then leave a snapshot behind, as any earlier
    // command on this home would have.
    std::thread::sleep(SETTLE);
    let mut list = call(String::new());
    list.args = vec!["skills".into(), "list".into(), "--json".into()];
    list.capture()?;

    // The first (untimed) patch adds the marker line the timed ones rewrite.
    let text = fs::read_to_string(&skill_md)?;
    let anchor = unique_line(&text)
        .with_context(|| format!("{} has no line that occurs once", skill_md.display()))?;
    let reply = call(patch_arguments(
        &name,
        &anchor,
        &format!("{anchor}\n\n{}", marker(0)),
    ))
    .capture()?;
    if !reply.contains("\"success\": true") && !reply.contains("\"success\":true") {
        bail!("the first patch of '{name}' did not succeed:\n{reply}");
    }

    let total = args.warmup + args.runs;
    let mut times = Vec::with_capacity(args.runs);
    let mut peak = 0;
    for revision in 0..total {
        let patch = call(patch_arguments(
            &name,
            &marker(revision),
            &marker(revision + 1),
        ));
        let (took, rss) = patch.run_once()?;
        if revision >= args.warmup {
            times.push(took);
            peak = peak.max(rss);
        }
    }
    let stats = Stats::from_samples(times, peak);
    let after = fs::read_to_string(&skill_md)?;
    if !after.contains(&marker(total)) {
        bail!(
            "{} does not hold `{}` after {total} patches: some run did not write",
            skill_md.display(),
            marker(total)
        );
    }

    let peak_mb = stats.peak_rss_kib as f64 / 1024.0;
    let rows = vec![
        Row::timed(
            "`tool call skill_manage` patch, 10,000-skill home",
            &stats,
            Target::AtMostMs(TARGET_MS),
        ),
        Row::new(
            "peak RSS, the patch runs above",
            peak_mb,
            format!("{peak_mb:.1} MB"),
            String::new(),
            Target::None,
        ),
    ];
    let table = super::render_table(&rows);
    println!("\n{table}");
    let body = format!(
        "## Skill writes\n\n\
Wall time of `knack tool call skill_manage '{{\"action\":\"patch\",…}}'` (release binary,\n\
spawn to exit, stdout to /dev/null): the median of {runs} runs after {warmup} warm-up runs, run\n\
back to back. The home holds a `cargo xtask gen-tree` tree of 10,000 skills (seed {seed}) in\n\
the user root, with `skills: {{scan_max_dirs: 100000, bundled_opt_out: true}}`, and a discovery\n\
snapshot written by one `skills list` before the first patch. Every run rewrites the line\n\
`Bench revision N.` of the same skill to `N+1`, so every run really writes (checked at the end).\n\n\
{table}\n\
{provenance}\n\n\
Reproduce: `cargo xtask bench manage` (add `--keep` to inspect the home).\n",
        runs = args.runs,
        warmup = args.warmup,
        seed = args.seed,
        provenance = super::provenance(&ws.root),
    );
    super::publish(ws, args, "manage", &rows, &body)
}

/// The SKILL.md of the skill whose folder is called `name`.
fn skill_file(root: &Path, name: &str) -> Result<PathBuf> {
    super::files_named(root, "SKILL.md")?
        .into_iter()
        .find(|p| {
            p.parent()
                .and_then(Path::file_name)
                .is_some_and(|f| f == name)
        })
        .with_context(|| format!("no folder named '{name}' holds a SKILL.md"))
}

/// A body line (last first) that occurs exactly once in `text`, to anchor the patch on.
fn unique_line(text: &str) -> Option<String> {
    let body = text.splitn(3, "---").nth(2).unwrap_or(text);
    body.lines()
        .rev()
        .map(str::trim_end)
        .filter(|l| l.trim().len() >= 8)
        .find(|l| text.matches(l).count() == 1)
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_arguments_are_json_with_escapes() {
        let json = patch_arguments("deploy", "say \"hi\"", "a\nb");
        assert_eq!(
            json,
            r#"{"action":"patch","name":"deploy","old_string":"say \"hi\"","new_string":"a\nb"}"#
        );
    }

    #[test]
    fn the_anchor_is_a_body_line_found_once() {
        let text = "---\nname: x\ndescription: y\n---\n# Deploy things\n\nStep one here.\nStep one here.\n";
        assert_eq!(unique_line(text).as_deref(), Some("# Deploy things"));
        assert_eq!(unique_line("---\nname: x\n---\nshort\n"), None);
    }
}
