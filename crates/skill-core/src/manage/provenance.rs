//! Who created a skill, kept in a sidecar file beside SKILL.md so the author's
//! text stays untouched; the review may only maintain skills the agent created.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::atomic;

pub const PROVENANCE_FILE: &str = ".knack-provenance.json";

/// `created_by` is `user`, `agent`, `hub` or `bundled`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    pub created_by: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
}

/// The sidecar's record alone, when there is a readable one.
pub fn sidecar(skill_dir: &Path) -> Option<Provenance> {
    let text = std::fs::read_to_string(skill_dir.join(PROVENANCE_FILE)).ok()?;
    serde_json::from_str::<Provenance>(&text)
        .ok()
        .filter(|p| !p.created_by.trim().is_empty())
}

/// The sidecar's record, else the frontmatter's `created_by`, else `user`.
pub fn provenance(skill_dir: &Path) -> Provenance {
    if let Some(p) = sidecar(skill_dir) {
        return p;
    }
    let from_frontmatter = std::fs::read_to_string(skill_dir.join("SKILL.md"))
        .ok()
        .and_then(|text| {
            crate::frontmatter::parse_skill_md(crate::frontmatter::strip_bom(&text)).ok()
        })
        .and_then(|parsed| parsed.frontmatter.created_by)
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty());
    Provenance {
        created_by: from_frontmatter.unwrap_or_else(|| "user".to_owned()),
        created_at: None,
    }
}

/// Writes the sidecar (atomically). Hub and sync use it for what they install.
pub fn record_provenance(skill_dir: &Path, created_by: &str) -> std::io::Result<()> {
    atomic::write(
        &skill_dir.join(PROVENANCE_FILE),
        &provenance_text(created_by)?,
    )
}

/// `record_provenance` into an open skill folder (no link followed).
pub(crate) fn record_provenance_at(
    skill_dir: std::os::fd::BorrowedFd<'_>,
    created_by: &str,
) -> std::io::Result<()> {
    atomic::write_at(skill_dir, PROVENANCE_FILE, &provenance_text(created_by)?)
}

fn provenance_text(created_by: &str) -> std::io::Result<Vec<u8>> {
    let record = Provenance {
        created_by: created_by.to_owned(),
        created_at: Some(crate::clock::now_rfc3339()),
    };
    let mut text = serde_json::to_string_pretty(&record).map_err(std::io::Error::other)?;
    text.push('\n');
    Ok(text.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sidecar_then_frontmatter_then_user() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(provenance(dir.path()).created_by, "user");
        std::fs::write(
            dir.path().join("SKILL.md"),
            "---\nname: a\ndescription: d\ncreated_by: hub\n---\nbody\n",
        )
        .unwrap();
        assert_eq!(provenance(dir.path()).created_by, "hub");
        record_provenance(dir.path(), "agent").unwrap();
        let p = provenance(dir.path());
        assert_eq!(p.created_by, "agent");
        assert!(p.created_at.unwrap().ends_with('Z'));
        std::fs::write(dir.path().join(PROVENANCE_FILE), "not json").unwrap();
        assert_eq!(provenance(dir.path()).created_by, "hub");
    }
}
