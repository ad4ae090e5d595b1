//! The adversarial corpus in `tests/corpus-adversarial/`: skills written to slip past the guard, and look-alike benign ones.
//! Every malicious skill must be blocked as an agent write (dangerous) by the pattern `expected.txt` names; no benign one may be.

use std::path::{Path, PathBuf};

use skill_guard::{
    ScanReport, Severity, SkillIgnore, Verdict, scan_skill_dir, scan_skill_dir_with,
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus-adversarial")
}

/// One line of `expected.txt`.
struct Case {
    label: String,
    name: String,
    pattern: Option<String>,
    hub: bool,
    reason: String,
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(root().join("expected.txt")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut parts = l.split_whitespace();
            let mut next = || parts.next().unwrap().to_string();
            let (label, name, pattern, scan) = (next(), next(), next(), next());
            let reason: Vec<&str> = parts.collect();
            assert!(matches!(scan.as_str(), "agent" | "hub"), "{l}");
            Case {
                label,
                name,
                pattern: (pattern != "-").then_some(pattern),
                hub: scan == "hub",
                reason: reason.join(" "),
            }
        })
        .collect()
}

fn scan(case: &Case) -> ScanReport {
    let dir = root().join(&case.label).join(&case.name);
    if case.hub {
        // As the hub scans a package: its own ignore file does not count.
        scan_skill_dir_with(&dir, &SkillIgnore::default()).unwrap()
    } else {
        scan_skill_dir(&dir).unwrap()
    }
}

#[test]
fn every_corpus_folder_is_listed_once_with_a_reason() {
    let cases = cases();
    for label in ["malicious", "benign"] {
        let mut on_disk: Vec<String> = std::fs::read_dir(root().join(label))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut listed: Vec<String> = cases
            .iter()
            .filter(|c| c.label == label)
            .map(|c| c.name.clone())
            .collect();
        listed.sort();
        assert_eq!(on_disk, listed, "{label}: folders and expected.txt differ");
    }
    for c in &cases {
        assert!(!c.reason.is_empty(), "{} has no reason", c.name);
        assert_eq!(c.pattern.is_some(), c.label == "malicious", "{}", c.name);
    }
}

#[test]
fn adversarial_skills_are_blocked_and_lookalikes_pass() {
    let cases = cases();
    let mut missed = Vec::new();
    let mut false_alarms = Vec::new();
    let (mut blocked, mut malicious, mut passed, mut benign, mut benign_safe) = (0, 0, 0, 0, 0);
    for case in &cases {
        let report = scan(case);
        let worst: Vec<String> = report
            .findings
            .iter()
            .filter(|f| f.severity >= Severity::High)
            .map(|f| format!("{}:{}:{}", f.pattern_id, f.line, f.severity))
            .collect();
        println!(
            "  {:<9} {:<9} {:<24} {}",
            case.label,
            report.verdict.to_string(),
            case.name,
            worst.join(" ")
        );
        match &case.pattern {
            Some(id) => {
                malicious += 1;
                let named = report
                    .findings
                    .iter()
                    .any(|f| &f.pattern_id == id && f.severity == Severity::Critical);
                if report.verdict == Verdict::Dangerous && named {
                    blocked += 1;
                } else {
                    missed.push(format!(
                        "{} (expected {id}: {})\n{}",
                        case.name,
                        case.reason,
                        report.render()
                    ));
                }
            }
            None => {
                benign += 1;
                if report.verdict == Verdict::Dangerous {
                    false_alarms.push(format!(
                        "{} ({})\n{}",
                        case.name,
                        case.reason,
                        report.render()
                    ));
                } else {
                    passed += 1;
                    benign_safe += usize::from(report.verdict == Verdict::Safe);
                }
            }
        }
    }
    println!(
        "adversarial corpus: {blocked}/{malicious} malicious blocked, {passed}/{benign} benign passed ({benign_safe} safe)"
    );
    assert!(
        malicious >= 30 && benign >= 20,
        "{malicious} malicious, {benign} benign"
    );
    assert!(missed.is_empty(), "not blocked:\n{}", missed.join("\n"));
    assert!(
        false_alarms.is_empty(),
        "benign flagged dangerous:\n{}",
        false_alarms.join("\n")
    );
}

#[test]
fn a_package_ignore_file_still_counts_for_the_user_own_scan() {
    // The same folder scanned as the user's own skill honours its ignore
    // file: only the hub refuses a package's say over its own scan.
    let case = cases().into_iter().find(|c| c.hub).unwrap();
    let dir = root().join(&case.label).join(&case.name);
    assert_eq!(scan_skill_dir(&dir).unwrap().verdict, Verdict::Safe);
    assert_eq!(scan(&case).verdict, Verdict::Dangerous);
}
