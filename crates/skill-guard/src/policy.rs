//! Verdicts from findings, and the trust policy that turns a verdict into allow or block.
//! The table is fixed by the spec; `force` may lift a block but never a dangerous outside skill.

use serde::{Deserialize, Serialize};

use crate::finding::{Finding, Severity, TrustLevel, Verdict};

/// Any critical → dangerous; any high → caution; otherwise safe.
pub fn verdict_of(findings: &[Finding]) -> Verdict {
    match findings.iter().map(|f| f.severity).max() {
        Some(Severity::Critical) => Verdict::Dangerous,
        Some(Severity::High) => Verdict::Caution,
        _ => Verdict::Safe,
    }
}

/// What the caller may do with a scanned skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "decision")]
pub enum PolicyDecision {
    Allow,
    Block { reason: String },
}

impl PolicyDecision {
    pub fn is_allowed(&self) -> bool {
        matches!(self, PolicyDecision::Allow)
    }
}

/// Whether the table lets this verdict through for this source, before `force`.
fn table_allows(trust: TrustLevel, verdict: Verdict) -> bool {
    match trust {
        TrustLevel::Builtin => true,
        TrustLevel::Trusted | TrustLevel::AgentCreated => verdict != Verdict::Dangerous,
        TrustLevel::Community => verdict == Verdict::Safe,
    }
}

/// Applies the trust policy. `force` (the user's `--force`) lifts a block,
/// except a dangerous verdict on a trusted or community skill: code from
/// outside that scans dangerous is never installed.
pub fn decide(trust: TrustLevel, verdict: Verdict, force: bool) -> PolicyDecision {
    if table_allows(trust, verdict) {
        return PolicyDecision::Allow;
    }
    let hard = verdict == Verdict::Dangerous
        && matches!(trust, TrustLevel::Community | TrustLevel::Trusted);
    if force && !hard {
        return PolicyDecision::Allow;
    }
    let reason = if hard {
        format!("a {trust} skill that scans {verdict} is refused; --force cannot override this")
    } else {
        format!(
            "a {trust} skill must scan {} to be accepted, this one scans {verdict}; review the findings and use --force to accept it anyway",
            if trust == TrustLevel::Community {
                "safe"
            } else {
                "safe or caution"
            }
        )
    };
    PolicyDecision::Block { reason }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::ThreatCategory;
    use TrustLevel::*;
    use Verdict::*;

    fn allowed(trust: TrustLevel, verdict: Verdict, force: bool) -> bool {
        decide(trust, verdict, force).is_allowed()
    }

    #[test]
    fn builtin_row_allows_everything() {
        assert!(allowed(Builtin, Safe, false));
        assert!(allowed(Builtin, Caution, false));
        assert!(allowed(Builtin, Dangerous, false));
    }

    #[test]
    fn trusted_row_blocks_dangerous_even_with_force() {
        assert!(allowed(Trusted, Safe, false));
        assert!(allowed(Trusted, Caution, false));
        assert!(!allowed(Trusted, Dangerous, false));
        let d = decide(Trusted, Dangerous, true);
        match d {
            PolicyDecision::Block { reason } => assert!(reason.contains("cannot override")),
            PolicyDecision::Allow => panic!("force must not lift a dangerous trusted skill"),
        }
    }

    #[test]
    fn community_row_blocks_caution_unless_forced() {
        assert!(allowed(Community, Safe, false));
        assert!(!allowed(Community, Caution, false));
        assert!(allowed(Community, Caution, true));
        assert!(!allowed(Community, Dangerous, false));
        assert!(!allowed(Community, Dangerous, true));
        match decide(Community, Caution, false) {
            PolicyDecision::Block { reason } => assert!(reason.contains("--force")),
            PolicyDecision::Allow => panic!("caution community skill must be blocked"),
        }
    }

    #[test]
    fn agent_created_row_blocks_dangerous_but_force_lifts_it() {
        assert!(allowed(AgentCreated, Safe, false));
        assert!(allowed(AgentCreated, Caution, false));
        assert!(!allowed(AgentCreated, Dangerous, false));
        assert!(allowed(AgentCreated, Dangerous, true));
    }

    #[test]
    fn verdict_follows_the_worst_severity() {
        let f = |s| Finding {
            pattern_id: "x".into(),
            severity: s,
            category: ThreatCategory::Network,
            file: "a".into(),
            line: 1,
            matched: String::new(),
            description: String::new(),
        };
        assert_eq!(verdict_of(&[]), Safe);
        assert_eq!(verdict_of(&[f(Severity::Low), f(Severity::Medium)]), Safe);
        assert_eq!(verdict_of(&[f(Severity::Low), f(Severity::High)]), Caution);
        assert_eq!(
            verdict_of(&[f(Severity::High), f(Severity::Critical)]),
            Dangerous
        );
    }
}
