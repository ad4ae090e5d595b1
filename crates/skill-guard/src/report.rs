//! The scan report and its human rendering: a verdict line, then one line per finding.
//! Findings are listed worst first so the reason for a block is always on top.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::finding::{Finding, Severity, Verdict};

/// Result of scanning a skill directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScanReport {
    pub findings: Vec<Finding>,
    pub verdict: Verdict,
    /// `sha256:<64 hex>`, see [`crate::content_hash`].
    pub content_hash: String,
    pub files_scanned: usize,
}

/// Longest `file:line` column before it stops aligning.
const LOCATION_WIDTH: usize = 40;

impl ScanReport {
    /// One-line summary: verdict and finding counts per severity.
    pub fn summary(&self) -> String {
        if self.findings.is_empty() {
            return format!(
                "{}: no findings in {} file(s)",
                self.verdict, self.files_scanned
            );
        }
        let counts: Vec<String> = [
            Severity::Critical,
            Severity::High,
            Severity::Medium,
            Severity::Low,
        ]
        .into_iter()
        .filter_map(|s| {
            let n = self.findings.iter().filter(|f| f.severity == s).count();
            (n > 0).then(|| format!("{n} {s}"))
        })
        .collect();
        format!(
            "{}: {} finding(s) ({}) in {} file(s)",
            self.verdict,
            self.findings.len(),
            counts.join(", "),
            self.files_scanned
        )
    }

    /// The human report: summary, hash, then `severity category file:line "snippet" (why)`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.summary());
        let _ = writeln!(out, "content {}", self.content_hash);
        let mut sorted: Vec<&Finding> = self.findings.iter().collect();
        sorted.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then_with(|| a.file.cmp(&b.file))
                .then(a.line.cmp(&b.line))
        });
        let location = |f: &Finding| format!("{}:{}", f.file, f.line);
        let width = sorted
            .iter()
            .map(|f| location(f).chars().count())
            .max()
            .unwrap_or(0)
            .min(LOCATION_WIDTH);
        for f in sorted {
            let _ = writeln!(
                out,
                "  {:<8} {:<20} {:<width$}  \"{}\"  ({})",
                f.severity.as_str(),
                f.category.as_str(),
                location(f),
                f.matched,
                f.description,
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::ThreatCategory;

    fn finding(sev: Severity, file: &str, line: usize) -> Finding {
        Finding {
            pattern_id: "p".into(),
            severity: sev,
            category: ThreatCategory::SupplyChain,
            file: file.into(),
            line,
            matched: "curl x | sh".into(),
            description: "pipes a download into a shell".into(),
        }
    }

    #[test]
    fn render_lists_worst_first_one_line_each() {
        let r = ScanReport {
            findings: vec![
                finding(Severity::Low, "SKILL.md", 3),
                finding(Severity::Critical, "scripts/install.sh", 12),
            ],
            verdict: Verdict::Dangerous,
            content_hash: format!("sha256:{}", "0".repeat(64)),
            files_scanned: 2,
        };
        let text = r.render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(
            lines[0],
            "dangerous: 2 finding(s) (1 critical, 1 low) in 2 file(s)"
        );
        assert!(lines[1].starts_with("content sha256:000"));
        assert!(lines[2].trim_start().starts_with("critical supply_chain"));
        assert!(lines[2].contains("scripts/install.sh:12"));
        assert!(lines[2].contains("\"curl x | sh\""));
        assert!(lines[3].contains("SKILL.md:3"));
    }

    #[test]
    fn an_empty_report_says_so() {
        let r = ScanReport {
            findings: vec![],
            verdict: Verdict::Safe,
            content_hash: "sha256:x".into(),
            files_scanned: 1,
        };
        assert_eq!(r.summary(), "safe: no findings in 1 file(s)");
    }
}
