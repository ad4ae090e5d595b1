//! `knack skills publish`: a folder of skills written out as a static site in
//! the well-known index format, so a team can host its own hub anywhere.

use std::io::Write as _;
use std::path::Path;

use serde::Serialize;
use sha2::{Digest, Sha256};
use walkdir::WalkDir;

use crate::safe_tree::{rel_string, skills_in_tree};
use crate::{Error, Result};

/// Where the index and archives go below the site folder; the path the hub's
/// `well-known:` source reads first.
pub const WELL_KNOWN_DIR: &str = ".well-known/agent-skills";
/// The index file inside [`WELL_KNOWN_DIR`].
pub const INDEX_FILE: &str = "index.json";

/// One skill of a published index, as written to `index.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Published {
    pub name: String,
    /// Always `archive`: one `.tar.gz` per skill, support files included.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub description: String,
    /// Relative to the index, so the site can be served from any host.
    pub url: String,
    /// `sha256:<hex>` of the archive's bytes, checked before unpacking.
    pub digest: String,
}

/// Writes every skill under `dir` (the folder itself when it holds a
/// SKILL.md) into `out`: one archive each and the index listing them with
/// their digests. Every skill must pass the write rules and names must be
/// unique; nothing is written unless all do.
pub fn publish(dir: &Path, out: &Path) -> Result<Vec<Published>> {
    if !dir.is_dir() {
        return Err(Error::Invalid(format!(
            "{} is not a folder of skills",
            dir.display()
        )));
    }
    let found = skills_in_tree(dir);
    if found.is_empty() {
        return Err(Error::Invalid(format!(
            "{} holds no SKILL.md",
            dir.display()
        )));
    }
    let mut packed: Vec<(Published, Vec<u8>)> = Vec::new();
    for rel in found {
        let skill_dir = if rel.is_empty() {
            dir.to_path_buf()
        } else {
            dir.join(&rel)
        };
        let where_ = skill_dir.display().to_string();
        let validation = skill_core::validate::validate_skill_dir(&skill_dir);
        if !validation.is_valid() {
            return Err(Error::Invalid(format!(
                "{where_}: the skill breaks the rules: {}",
                validation.errors.join("; ")
            )));
        }
        let text = std::fs::read_to_string(skill_dir.join("SKILL.md"))
            .map_err(|e| Error::io(skill_dir.join("SKILL.md"), e))?;
        let valid = skill_core::validate::validate_skill_md(
            &text,
            skill_core::validate::SkillMdCheck::Existing,
        )
        .map_err(|v| Error::Invalid(format!("{where_}: {}", v.message)))?;
        if let Some((other, _)) = packed.iter().find(|(p, _)| p.name == valid.name) {
            return Err(Error::Collision(format!(
                "two skills are named '{}' ({where_} and the one published as {}); an index needs unique names",
                valid.name, other.url
            )));
        }
        let bytes = archive(&skill_dir, &valid.name)?;
        let digest = format!("sha256:{}", hex(&Sha256::digest(&bytes)));
        packed.push((
            Published {
                url: format!("{}.tar.gz", valid.name),
                name: valid.name,
                kind: "archive",
                description: valid.description,
                digest,
            },
            bytes,
        ));
    }
    packed.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    let site = out.join(WELL_KNOWN_DIR);
    std::fs::create_dir_all(&site).map_err(|e| Error::io(&site, e))?;
    for (entry, bytes) in &packed {
        write_atomic(&site, &entry.url, bytes)?;
    }
    let entries: Vec<Published> = packed.into_iter().map(|(p, _)| p).collect();
    let index = serde_json::json!({ "skills": entries });
    let text = serde_json::to_string_pretty(&index)
        .map_err(|e| Error::Invalid(format!("cannot write the index: {e}")))?;
    // Written last: a reader never sees an index naming archives not yet there.
    write_atomic(&site, INDEX_FILE, format!("{text}\n").as_bytes())?;
    Ok(entries)
}

/// A `.tar.gz` of `skill_dir` under the folder `name/`, the same bytes for
/// the same files (sorted, no times or owners), leaving out what the hub
/// leaves out on install (`.git`, `.knack-*`, tool caches).
fn archive(skill_dir: &Path, name: &str) -> Result<Vec<u8>> {
    let encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(encoder);
    let walker = WalkDir::new(skill_dir)
        .follow_links(false)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git");
    for entry in walker {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(skill_dir).to_path_buf();
            Error::io(path, e.into())
        })?;
        let rel = rel_string(skill_dir, entry.path());
        if skill_bundle::is_excluded(&rel) {
            continue;
        }
        let kind = entry.file_type();
        if kind.is_symlink() {
            return Err(Error::Unsafe(format!(
                "{} is a symbolic link; publish copies files only, so replace it with the file",
                entry.path().display()
            )));
        }
        if !kind.is_file() {
            continue;
        }
        let bytes = std::fs::read(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
        let executable = {
            use std::os::unix::fs::PermissionsExt as _;
            entry
                .metadata()
                .is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
        };
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(if executable { 0o755 } else { 0o644 });
        header.set_mtime(0);
        header.set_entry_type(tar::EntryType::Regular);
        let path = format!("{name}/{rel}");
        tar.append_data(&mut header, &path, &bytes[..])
            .map_err(|e| Error::io(entry.path(), e))?;
    }
    let encoder = tar.into_inner().map_err(|e| Error::io(skill_dir, e))?;
    encoder.finish().map_err(|e| Error::io(skill_dir, e))
}

fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| Error::io(dir, e))?;
    tmp.write_all(bytes).map_err(|e| Error::io(tmp.path(), e))?;
    let target = dir.join(name);
    tmp.persist(&target)
        .map_err(|e| Error::io(&target, e.error))?;
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn skill(dir: &Path, name: &str) {
        write(
            &dir.join(name).join("SKILL.md"),
            &format!(
                "---\nname: {name}\ndescription: Use when {name} is needed\n---\n# {name}\n\nSteps.\n"
            ),
        );
    }

    #[test]
    fn archives_are_reproducible_and_leave_knack_files_out() {
        let src = tempfile::tempdir().unwrap();
        skill(src.path(), "alpha");
        write(&src.path().join("alpha/references/api.md"), "api\n");
        write(&src.path().join("alpha/.knack-provenance.json"), "{}");
        let first = archive(&src.path().join("alpha"), "alpha").unwrap();
        let again = archive(&src.path().join("alpha"), "alpha").unwrap();
        assert_eq!(first, again);
        let mut names = Vec::new();
        let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(&first[..]));
        for entry in tar.entries().unwrap() {
            names.push(entry.unwrap().path().unwrap().display().to_string());
        }
        assert_eq!(names, ["alpha/SKILL.md", "alpha/references/api.md"]);
    }

    #[test]
    fn invalid_or_twin_skills_publish_nothing() {
        let src = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        skill(src.path(), "alpha");
        write(
            &src.path().join("beta/SKILL.md"),
            "---\nname: beta\n---\n\n",
        );
        assert!(matches!(
            publish(src.path(), out.path()),
            Err(Error::Invalid(_))
        ));
        std::fs::remove_dir_all(src.path().join("beta")).unwrap();
        skill(&src.path().join("team"), "alpha");
        assert!(matches!(
            publish(src.path(), out.path()),
            Err(Error::Collision(_))
        ));
        assert!(!out.path().join(WELL_KNOWN_DIR).exists());
    }
}
