//! `.hub/audit.log`: one append-only line per hub event, so installs, refusals
//! and removals can be reviewed later with plain text tools.

use std::io::Write;
use std::path::Path;

use crate::{Error, Result};

pub const AUDIT_LOG_FILE: &str = "audit.log";

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditAction {
    Install,
    Update,
    Uninstall,
    Blocked,
    /// The user lifted a dangerous verdict with `--accept-dangerous`.
    Override,
}

impl AuditAction {
    pub fn as_str(self) -> &'static str {
        match self {
            AuditAction::Install => "INSTALL",
            AuditAction::Update => "UPDATE",
            AuditAction::Uninstall => "UNINSTALL",
            AuditAction::Blocked => "BLOCKED",
            AuditAction::Override => "OVERRIDE",
        }
    }
}

/// `<UTC time> <ACTION> <name> <source>:<trust> <verdict>[ <extra>]`, no newline.
/// Spaces and line breaks inside fields are replaced so a line always splits cleanly.
pub fn audit_line(
    at: std::time::SystemTime,
    action: AuditAction,
    name: &str,
    source: &str,
    trust: &str,
    verdict: &str,
    extra: &str,
) -> String {
    let field = |s: &str| -> String {
        let cleaned: String = s
            .chars()
            .map(|c| if c.is_whitespace() { '_' } else { c })
            .collect();
        if cleaned.is_empty() {
            "-".into()
        } else {
            cleaned
        }
    };
    let mut line = format!(
        "{} {} {} {}:{} {}",
        skill_core::clock::rfc3339(at),
        action.as_str(),
        field(name),
        field(source),
        field(trust),
        field(verdict)
    );
    let extra: String = extra
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if !extra.trim().is_empty() {
        line.push(' ');
        line.push_str(extra.trim());
    }
    line
}

/// Appends one line to `<hub_dir>/audit.log`.
pub fn append_audit_line(
    hub_dir: &Path,
    action: AuditAction,
    name: &str,
    source: &str,
    trust: &str,
    verdict: &str,
    extra: &str,
) -> Result<()> {
    std::fs::create_dir_all(hub_dir).map_err(|e| Error::io(hub_dir, e))?;
    let path = hub_dir.join(AUDIT_LOG_FILE);
    let line = audit_line(
        std::time::SystemTime::now(),
        action,
        name,
        source,
        trust,
        verdict,
        extra,
    );
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    file.write_all(format!("{line}\n").as_bytes())
        .map_err(|e| Error::io(&path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_have_the_fixed_shape_and_append() {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(86_400);
        assert_eq!(
            audit_line(
                at,
                AuditAction::Install,
                "a b",
                "git",
                "community",
                "safe",
                "sha256:1"
            ),
            "1970-01-02T00:00:00Z INSTALL a_b git:community safe sha256:1"
        );
        let dir = tempfile::tempdir().unwrap();
        append_audit_line(
            dir.path(),
            AuditAction::Blocked,
            "x",
            "url",
            "community",
            "dangerous",
            "2 findings\n",
        )
        .unwrap();
        append_audit_line(
            dir.path(),
            AuditAction::Uninstall,
            "x",
            "url",
            "community",
            "n/a",
            "",
        )
        .unwrap();
        let text = std::fs::read_to_string(dir.path().join(AUDIT_LOG_FILE)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].ends_with(" BLOCKED x url:community dangerous 2 findings"));
        assert!(lines[1].ends_with(" UNINSTALL x url:community n/a"));
    }
}
