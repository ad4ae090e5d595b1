//! The skills shipped in this repository, as compiled into the binary: each
//! one must validate, pass the guard, and follow the house format.

use std::path::Path;

use skill_bundle::BundleTree;
use skill_guard::Verdict;

const SECTIONS: [&str; 4] = ["when to use", "procedure", "pitfalls", "verification"];

/// Installs every skill of `tree` into a temp folder the way seeding does and
/// returns the problems found, one line each.
fn check_tree(label: &str, tree: &BundleTree) -> Vec<String> {
    let root = tempfile::tempdir().unwrap();
    let mut problems = Vec::new();
    for skill in tree.skills() {
        skill_sync::disk::install(
            root.path(),
            tree,
            skill,
            skill_sync::disk::Replaced::Discard,
        )
        .unwrap();
        let dir = root.path().join(&skill.id);
        for p in check_skill(&dir) {
            problems.push(format!("{label}/{}: {p}", skill.id));
        }
    }
    problems
}

const BUNDLED_DESCRIPTION_CHARS: usize = 60;

fn check_skill(dir: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let validation = skill_core::validate::validate_skill_dir(dir);
    problems.extend(validation.errors.iter().map(|e| format!("invalid: {e}")));

    let text = std::fs::read_to_string(dir.join("SKILL.md")).unwrap_or_default();
    let parsed = match skill_core::frontmatter::parse_skill_md(&text) {
        Ok(p) => p,
        Err(e) => {
            problems.push(format!("frontmatter unreadable: {e:?}"));
            return problems;
        }
    };
    let fm = &parsed.frontmatter;
    let description = fm.description.as_deref().unwrap_or_default();
    if !description.starts_with("Use when") {
        problems.push(format!(
            "description does not start with \"Use when\": {description:?}"
        ));
    }
    let chars = description.chars().count();
    // Bundled skills hold themselves to a tighter line than the write rule.
    if chars > BUNDLED_DESCRIPTION_CHARS {
        problems.push(format!(
            "description is {chars} chars (max 60): {description:?}"
        ));
    }
    let body = &text[parsed.body_offset.min(text.len())..];
    let headings: Vec<String> = body
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').trim().to_lowercase())
        .collect();
    for section in SECTIONS {
        if !headings.iter().any(|h| h.starts_with(section)) {
            problems.push(format!("missing section \"{section}\""));
        }
    }

    match skill_guard::scan_skill_dir(dir) {
        Ok(report) => {
            let note = fm
                .metadata
                .as_ref()
                .and_then(|m| m.pointer("/knack/guard_note"))
                .and_then(|v| v.as_str())
                .filter(|s| !s.trim().is_empty());
            let findings = || {
                report
                    .findings
                    .iter()
                    .map(|f| format!("{} {}:{} {:?}", f.pattern_id, f.file, f.line, f.matched))
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            match report.verdict {
                Verdict::Safe => {}
                Verdict::Caution if note.is_some() => {}
                Verdict::Caution => problems.push(format!(
                    "guard says caution with no metadata.knack.guard_note: {}",
                    findings()
                )),
                Verdict::Dangerous => {
                    problems.push(format!("guard says dangerous: {}", findings()))
                }
            }
        }
        Err(e) => problems.push(format!("guard could not scan: {e}")),
    }
    problems
}

#[test]
fn every_shipped_skill_validates_passes_the_guard_and_follows_the_format() {
    let mut problems = check_tree("skills", skill_bundle::bundled());
    problems.extend(check_tree("optional-skills", skill_bundle::optional()));
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_shipped_sets_are_large_enough() {
    let bundled = skill_bundle::bundled();
    let categories: std::collections::BTreeSet<&str> = bundled
        .skills()
        .iter()
        .filter_map(|s| s.category())
        .collect();
    assert!(
        bundled.skills().len() >= 12,
        "{} bundled skills",
        bundled.skills().len()
    );
    assert!(categories.len() >= 5, "categories: {categories:?}");
    assert!(skill_bundle::optional().skills().len() >= 8);
    // No skill is both bundled and optional: the hub and seeding would fight.
    for skill in bundled.skills() {
        assert!(
            skill_bundle::optional().skill(&skill.id).is_none(),
            "{}",
            skill.id
        );
    }
}

/// The checker itself must catch what it is meant to catch.
#[test]
fn the_format_check_rejects_bad_skills_and_honours_guard_notes() {
    let dir = tempfile::tempdir().unwrap();
    let skill = dir.path().join("sloppy");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: sloppy\ndescription: Handles many many different things in a very long sentence that goes on and on\n---\n# Sloppy\n## Procedure\nDo it.\n",
    )
    .unwrap();
    let problems = check_skill(&skill);
    assert!(
        problems.iter().any(|p| p.contains("Use when")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.contains("max 60")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.contains("\"pitfalls\"")),
        "{problems:?}"
    );
    assert!(
        !problems.iter().any(|p| p.contains("\"procedure\"")),
        "{problems:?}"
    );

    // Invisible Unicode is a high finding: caution, unless explained.
    let body = "# Hidden\n## When to use\nx\n## Procedure\nre\u{200b}ad\n## Pitfalls\nx\n## Verification\nx\n";
    let hidden = dir.path().join("hidden");
    std::fs::create_dir_all(&hidden).unwrap();
    let unexplained = format!("---\nname: hidden\ndescription: Use when testing\n---\n{body}");
    std::fs::write(hidden.join("SKILL.md"), &unexplained).unwrap();
    let problems = check_skill(&hidden);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("caution"), "{problems:?}");
    let explained = format!(
        "---\nname: hidden\ndescription: Use when testing\nmetadata:\n  knack:\n    guard_note: the zero-width space is the example\n---\n{body}"
    );
    std::fs::write(hidden.join("SKILL.md"), explained).unwrap();
    assert!(check_skill(&hidden).is_empty());
}
