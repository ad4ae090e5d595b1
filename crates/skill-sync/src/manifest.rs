//! `skills/.bundled_manifest`: which bundled skills were seeded, and the hash
//! each copy had when knack last wrote it. One `id:hash` line per skill.
//!
//! Layout (all lines optional, order free on read, sorted on write):
//! ```text
//! # knack bundled-skills manifest: <skill id>:<content hash as seeded>
//! # set:<hash of the whole bundled set the last complete sync used>
//! devops/docker-compose-debug:sha256:<64 hex>
//! ```
//! Other `#` lines and blank lines are ignored; any other malformed line makes
//! the manifest "corrupt", and sync then re-derives what the line lost.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use crate::{Error, Result};

pub const MANIFEST_FILE: &str = ".bundled_manifest";
const HEADER: &str = "# knack bundled-skills manifest: <skill id>:<content hash as seeded>";
const SET_PREFIX: &str = "# set:";

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    /// The set hash of the bundle the last complete, error-free sync used.
    pub set_hash: Option<String>,
    /// Skill id → hash of the copy knack seeded or last updated.
    pub entries: BTreeMap<String, String>,
}

/// What reading the manifest found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Loaded {
    Missing,
    Ok(Manifest),
    /// Some lines could not be read; the readable entries are kept.
    Corrupt {
        partial: Manifest,
        bad_lines: usize,
    },
}

impl Loaded {
    pub fn manifest(&self) -> Manifest {
        match self {
            Loaded::Missing => Manifest::default(),
            Loaded::Ok(m) | Loaded::Corrupt { partial: m, .. } => m.clone(),
        }
    }
}

pub fn read(skills_dir: &Path) -> Result<Loaded> {
    let path = skills_dir.join(MANIFEST_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Loaded::Missing),
        Err(e) => return Err(Error::io(path, e)),
    };
    Ok(parse(&bytes))
}

pub fn parse(bytes: &[u8]) -> Loaded {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Loaded::Corrupt {
            partial: Manifest::default(),
            bad_lines: 1,
        };
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut manifest = Manifest::default();
    let mut bad_lines = 0;
    for line in text.lines().map(str::trim) {
        if line.is_empty() {
            continue;
        }
        if let Some(set) = line.strip_prefix(SET_PREFIX) {
            let set = set.trim();
            if is_hash(set) {
                manifest.set_hash = Some(set.to_owned());
            } else {
                bad_lines += 1;
            }
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        match line.split_once(':') {
            Some((id, hash)) if is_skill_id(id.trim()) && is_hash(hash.trim()) => {
                manifest
                    .entries
                    .insert(id.trim().to_owned(), hash.trim().to_owned());
            }
            _ => bad_lines += 1,
        }
    }
    if bad_lines > 0 {
        Loaded::Corrupt {
            partial: manifest,
            bad_lines,
        }
    } else {
        Loaded::Ok(manifest)
    }
}

pub fn render(manifest: &Manifest) -> String {
    let mut out = String::new();
    out.push_str(HEADER);
    out.push('\n');
    if let Some(set) = &manifest.set_hash {
        out.push_str(SET_PREFIX);
        out.push_str(set);
        out.push('\n');
    }
    for (id, hash) in &manifest.entries {
        out.push_str(id);
        out.push(':');
        out.push_str(hash);
        out.push('\n');
    }
    out
}

/// Writes the manifest through a temp file and a rename, so a reader sees
/// the old or the new manifest, never half of one. Skips the write when the
/// file already holds exactly this text.
pub fn write(skills_dir: &Path, manifest: &Manifest) -> Result<()> {
    let path = skills_dir.join(MANIFEST_FILE);
    let text = render(manifest);
    if std::fs::read(&path).is_ok_and(|old| old == text.as_bytes()) {
        return Ok(());
    }
    std::fs::create_dir_all(skills_dir).map_err(|e| Error::io(skills_dir, e))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".bundled_manifest.")
        .tempfile_in(skills_dir)
        .map_err(|e| Error::io(skills_dir, e))?;
    tmp.write_all(text.as_bytes())
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| Error::io(tmp.path(), e))?;
    tmp.persist(&path).map_err(|e| Error::io(&path, e.error))?;
    Ok(())
}

/// `sha256:` followed by 64 lowercase hex digits.
fn is_hash(s: &str) -> bool {
    s.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// A relative `/`-separated path with no empty, `.` or `..` parts: ids come
/// from a file the user may edit and are joined to the skills folder.
pub fn is_skill_id(s: &str) -> bool {
    !s.is_empty()
        && !s.contains('\\')
        && s.split('/')
            .all(|part| !part.is_empty() && part != "." && part != ".." && !part.contains(':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(c: char) -> String {
        format!("sha256:{}", c.to_string().repeat(64))
    }

    #[test]
    fn round_trips() {
        let mut m = Manifest {
            set_hash: Some(h('a')),
            ..Manifest::default()
        };
        m.entries.insert("devops/x".into(), h('b'));
        m.entries.insert("data/y".into(), h('c'));
        let text = render(&m);
        assert!(text.lines().nth(2).unwrap().starts_with("data/y:"));
        assert_eq!(parse(text.as_bytes()), Loaded::Ok(m));
    }

    #[test]
    fn tolerates_bom_blank_lines_and_comments() {
        let text = format!("\u{feff}# hello\n\n  devops/x:{}  \n", h('d'));
        let Loaded::Ok(m) = parse(text.as_bytes()) else {
            panic!("should parse");
        };
        assert_eq!(m.entries["devops/x"], h('d'));
        assert_eq!(m.set_hash, None);
    }

    #[test]
    fn bad_lines_mark_it_corrupt_but_keep_good_entries() {
        let text = format!(
            "devops/x:{}\ngarbage\n../../etc:{}\ny:md5\n",
            h('e'),
            h('f')
        );
        match parse(text.as_bytes()) {
            Loaded::Corrupt { partial, bad_lines } => {
                assert_eq!(bad_lines, 3);
                assert_eq!(partial.entries.len(), 1);
            }
            other => panic!("expected corrupt, got {other:?}"),
        }
        assert!(matches!(parse(&[0xff, 0xfe, 0x00]), Loaded::Corrupt { .. }));
    }

    #[test]
    fn write_is_atomic_and_skips_identical_content() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = Manifest::default();
        m.entries.insert("a/b".into(), h('1'));
        write(dir.path(), &m).unwrap();
        let path = dir.path().join(MANIFEST_FILE);
        // A rewrite renames a new file into place, so the inode would change;
        // unlike the mtime, that needs no pause and no clock granularity.
        let inode = |p: &std::path::Path| {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(p).unwrap().ino()
        };
        let before = inode(&path);
        write(dir.path(), &m).unwrap();
        assert_eq!(inode(&path), before, "identical content was rewritten");
        let mut changed = m.clone();
        changed.entries.insert("c/d".into(), h('2'));
        write(dir.path(), &changed).unwrap();
        assert_ne!(inode(&path), before, "the inode shows a rewrite");
        write(dir.path(), &m).unwrap();
        assert_eq!(read(dir.path()).unwrap(), Loaded::Ok(m));
        let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "no temp file left behind");
    }
}
