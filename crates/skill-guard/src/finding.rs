//! The vocabulary of a scan: severities, categories, findings, verdicts and trust levels.
//! Every name here is part of the public contract (Display and serde spell them the same way).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::Error;

/// How bad a finding is. Ordered: `Low < Medium < High < Critical`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }

    /// One step milder; `Low` stays `Low`.
    pub fn milder(self) -> Severity {
        match self {
            Severity::Critical => Severity::High,
            Severity::High => Severity::Medium,
            Severity::Medium | Severity::Low => Severity::Low,
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Severity {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "low" => Ok(Severity::Low),
            "medium" => Ok(Severity::Medium),
            "high" => Ok(Severity::High),
            "critical" => Ok(Severity::Critical),
            other => Err(Error::UnknownName {
                kind: "severity",
                value: other.to_string(),
            }),
        }
    }
}

/// What kind of harm a finding points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThreatCategory {
    Exfiltration,
    PromptInjection,
    Destructive,
    Persistence,
    Obfuscation,
    Network,
    CredentialAccess,
    SupplyChain,
    PrivilegeEscalation,
    InvisibleUnicode,
    Structural,
}

impl ThreatCategory {
    pub fn as_str(self) -> &'static str {
        match self {
            ThreatCategory::Exfiltration => "exfiltration",
            ThreatCategory::PromptInjection => "prompt_injection",
            ThreatCategory::Destructive => "destructive",
            ThreatCategory::Persistence => "persistence",
            ThreatCategory::Obfuscation => "obfuscation",
            ThreatCategory::Network => "network",
            ThreatCategory::CredentialAccess => "credential_access",
            ThreatCategory::SupplyChain => "supply_chain",
            ThreatCategory::PrivilegeEscalation => "privilege_escalation",
            ThreatCategory::InvisibleUnicode => "invisible_unicode",
            ThreatCategory::Structural => "structural",
        }
    }
}

impl fmt::Display for ThreatCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing the scanner noticed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub pattern_id: String,
    pub severity: Severity,
    pub category: ThreatCategory,
    /// Path relative to the scanned root, `/`-separated.
    pub file: String,
    /// 1-based line; 0 for structural findings.
    pub line: usize,
    /// Trimmed snippet of the offending text, at most 120 characters.
    pub matched: String,
    pub description: String,
}

/// The overall judgement of a scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Safe,
    Caution,
    Dangerous,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Safe => "safe",
            Verdict::Caution => "caution",
            Verdict::Dangerous => "dangerous",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a skill came from, which decides how much risk we accept from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TrustLevel {
    Builtin,
    Trusted,
    Community,
    AgentCreated,
}

impl TrustLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            TrustLevel::Builtin => "builtin",
            TrustLevel::Trusted => "trusted",
            TrustLevel::Community => "community",
            TrustLevel::AgentCreated => "agent-created",
        }
    }
}

impl fmt::Display for TrustLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TrustLevel {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "builtin" => Ok(TrustLevel::Builtin),
            "trusted" => Ok(TrustLevel::Trusted),
            "community" => Ok(TrustLevel::Community),
            "agent-created" => Ok(TrustLevel::AgentCreated),
            other => Err(Error::UnknownName {
                kind: "trust level",
                value: other.to_string(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_display_and_serde() {
        assert_eq!(TrustLevel::AgentCreated.to_string(), "agent-created");
        assert_eq!(
            "agent-created".parse::<TrustLevel>().unwrap(),
            TrustLevel::AgentCreated
        );
        assert_eq!(
            serde_json::to_string(&TrustLevel::AgentCreated).unwrap(),
            "\"agent-created\""
        );
        assert_eq!(
            ThreatCategory::PromptInjection.to_string(),
            "prompt_injection"
        );
        assert_eq!(
            serde_json::to_string(&ThreatCategory::CredentialAccess).unwrap(),
            "\"credential_access\""
        );
        assert_eq!(
            serde_json::to_string(&Severity::Critical).unwrap(),
            "\"critical\""
        );
        assert_eq!(Verdict::Caution.to_string(), "caution");
        assert!(Severity::Low < Severity::Medium && Severity::High < Severity::Critical);
        assert_eq!("high".parse::<Severity>().unwrap(), Severity::High);
        assert!("severe".parse::<Severity>().is_err());
    }
}
