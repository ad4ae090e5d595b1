//! The unseen corpus (`tests/corpus-unseen/`): packages written before the
//! rules were looked at, each labelled in `cases.txt` with what it does.
//! Malicious packages hide their behaviour in support files (install and
//! test hooks, CI templates, Makefiles), in code (aliased imports, exec of
//! fetched data), in spellings a word list misses, and across numbered
//! steps; benign ones look like them. The targets (issue #27) are at least
//! 90 % of the malicious packages dangerous and at most 2 % of the benign
//! ones dangerous; both rates are printed for docs/security.md.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use skill_guard::{SkillIgnore, Verdict, scan_skill_dir_with};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus-unseen")
}

/// label -> name -> reason, from `cases.txt`.
fn cases() -> BTreeMap<String, BTreeMap<String, String>> {
    let text = std::fs::read_to_string(root().join("cases.txt")).unwrap();
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let mut parts = line
            .splitn(3, char::is_whitespace)
            .filter(|p| !p.is_empty());
        let label = parts.next().unwrap().to_owned();
        let rest = line[label.len()..].trim_start();
        let (name, reason) = rest.split_once(char::is_whitespace).unwrap();
        assert!(!reason.trim().is_empty(), "{name} has no reason");
        out.entry(label)
            .or_default()
            .insert(name.to_owned(), reason.trim().to_owned());
    }
    out
}

/// Every package as a hub install scans it (its own .skillignore not honoured).
fn verdicts(label: &str) -> Vec<(String, Verdict, String)> {
    let listed = cases();
    let listed = &listed[label];
    let dir = root().join(label);
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    assert_eq!(
        on_disk,
        listed.keys().cloned().collect::<Vec<_>>(),
        "cases.txt and the {label} folders must list the same packages"
    );
    on_disk
        .into_iter()
        .map(|name| {
            let report = scan_skill_dir_with(&dir.join(&name), &SkillIgnore::default()).unwrap();
            let ids: Vec<String> = report
                .findings
                .iter()
                .filter(|f| f.severity >= skill_guard::Severity::High)
                .map(|f| format!("{}@{}:{}", f.pattern_id, f.file, f.line))
                .collect();
            (name, report.verdict, ids.join(" "))
        })
        .collect()
}

#[test]
fn unseen_corpus_recall_and_false_positive_rate() {
    let malicious = verdicts("malicious");
    let benign = verdicts("benign");
    assert!(
        malicious.len() >= 60,
        "{} malicious packages",
        malicious.len()
    );
    assert!(benign.len() >= 40, "{} benign packages", benign.len());
    let dangerous = malicious
        .iter()
        .filter(|(_, v, _)| *v == Verdict::Dangerous)
        .count();
    let false_alarms: Vec<&str> = benign
        .iter()
        .filter(|(_, v, _)| *v == Verdict::Dangerous)
        .map(|(n, _, _)| n.as_str())
        .collect();
    let recall = dangerous as f64 / malicious.len() as f64;
    let fp_rate = false_alarms.len() as f64 / benign.len() as f64;
    for (label, set) in [("malicious", &malicious), ("benign", &benign)] {
        for (name, verdict, ids) in set {
            println!("  {label:<9} {:<9} {name:<24} {ids}", verdict.to_string());
        }
    }
    println!(
        "unseen malicious: {dangerous}/{} dangerous ({:.1}%); benign: {}/{} dangerous ({:.1}%) {false_alarms:?}",
        malicious.len(),
        recall * 100.0,
        false_alarms.len(),
        benign.len(),
        fp_rate * 100.0
    );
    assert!(
        recall >= RECALL_FLOOR,
        "recall {recall:.3} below {RECALL_FLOOR}"
    );
    assert!(
        fp_rate <= FP_CEILING,
        "false-positive rate {fp_rate:.3} above {FP_CEILING}"
    );
}

/// Issue #27's targets.
const RECALL_FLOOR: f64 = 0.90;
const FP_CEILING: f64 = 0.02;
