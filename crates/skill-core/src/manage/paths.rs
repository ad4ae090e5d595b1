//! Keeps every write inside its skill: support paths are checked by rule, then
//! walked on disk so no symbolic link can carry a write out of the folder.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::skill::SUPPORT_DIRS;
use crate::validate::validate_support_path;

/// A checked support-file target: `skill_dir` and `path` are canonical.
#[derive(Debug, Clone)]
pub(crate) struct SupportTarget {
    pub skill_dir: PathBuf,
    pub path: PathBuf,
}

/// Resolves `rel` inside `skill_dir`, refusing rule-breaking paths, links on
/// the way, and anything whose real location is not inside the skill.
pub(crate) fn support_target(skill_dir: &Path, rel: &str) -> Result<SupportTarget, String> {
    validate_support_path(rel).map_err(|v| v.message)?;
    if rel.chars().any(is_invisible) {
        return Err(format!(
            "the file path '{}' is not allowed: it contains invisible or direction-changing characters",
            rel.escape_debug()
        ));
    }
    let canon_skill = fs::canonicalize(skill_dir)
        .map_err(|e| format!("cannot open the skill folder {}: {e}", skill_dir.display()))?;
    let parts: Vec<&str> = rel.split('/').collect();
    let mut cur = canon_skill.clone();
    for (i, part) in parts.iter().enumerate() {
        cur.push(part);
        let shown = parts[..=i].join("/");
        match fs::symlink_metadata(&cur) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(format!(
                    "'{shown}' is a symbolic link; skill files are never written or removed through links"
                ));
            }
            Ok(meta) if i + 1 < parts.len() && !meta.is_dir() => {
                return Err(format!("'{shown}' is a file, so it cannot hold '{rel}'"));
            }
            Ok(meta) if i + 1 == parts.len() && meta.is_dir() => {
                return Err(format!("'{rel}' is a folder, not a file"));
            }
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => break,
            Err(e) => return Err(format!("cannot inspect '{shown}': {e}")),
        }
    }
    let path = canon_skill.join(rel);
    let mut existing = path.as_path();
    while !existing.exists() {
        match existing.parent() {
            Some(p) => existing = p,
            None => break,
        }
    }
    let real = fs::canonicalize(existing).map_err(|e| format!("cannot resolve '{rel}': {e}"))?;
    if !real.starts_with(&canon_skill) {
        return Err(format!("'{rel}' resolves outside the skill folder"));
    }
    Ok(SupportTarget {
        skill_dir: canon_skill,
        path,
    })
}

/// Zero-width and bidi characters hide what a path really says.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}' | '\u{00ad}')
}

/// Every file under the support folders, relative and sorted (for hints).
pub(crate) fn support_files(skill_dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let rel = format!("{rel}/{name}");
            match entry.file_type() {
                Ok(t) if t.is_dir() => walk(&entry.path(), &rel, out),
                Ok(t) if t.is_file() => out.push(rel),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    for dir in SUPPORT_DIRS {
        walk(&skill_dir.join(dir), dir, &mut out);
    }
    out.sort();
    out
}

/// Removes empty folders from `start` up to, not including, `stop`.
pub(crate) fn remove_empty_dirs(start: &Path, stop: &Path) {
    let mut cur = start;
    while cur != stop && cur.starts_with(stop) {
        if fs::remove_dir(cur).is_err() {
            break;
        }
        match cur.parent() {
            Some(p) => cur = p,
            None => break,
        }
    }
}

/// A skill name from a caller must be a name or id, never a path.
pub(crate) fn check_skill_query(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("the skill name is empty".into());
    }
    if name.contains('\0') {
        return Err("the skill name contains a NUL byte".into());
    }
    if name.starts_with('/') || name.starts_with('~') || name.contains('\\') {
        return Err(format!(
            "'{}' is a path; name the skill by its name or id (for example 'devops/deploy-k8s')",
            name.escape_debug()
        ));
    }
    if name.split(['/', ':']).any(|p| p == ".." || p == ".") {
        return Err(format!(
            "the skill name '{}' contains '.' or '..' parts",
            name.escape_debug()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn support_files_are_listed_sorted() {
        let dir = tempfile::tempdir().unwrap();
        for f in [
            "references/b.md",
            "references/a.md",
            "scripts/x/run.sh",
            "notes.md",
        ] {
            let p = dir.path().join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, "x").unwrap();
        }
        assert_eq!(
            support_files(dir.path()),
            ["references/a.md", "references/b.md", "scripts/x/run.sh"]
        );
    }

    #[test]
    fn empty_parents_are_removed_up_to_the_stop() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("a/b/c");
        fs::create_dir_all(&deep).unwrap();
        remove_empty_dirs(&deep, &dir.path().join("a"));
        assert!(dir.path().join("a").is_dir());
        assert!(!dir.path().join("a/b").exists());
    }
}
