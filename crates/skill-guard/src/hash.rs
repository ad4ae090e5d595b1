//! The content hash of a skill directory: one SHA-256 over every file, in a fixed framing.
//! Same tree → same hash on every machine; any byte, name or link change → a new hash.

use std::path::Path;

use sha2::{Digest, Sha256};
use walkdir::WalkDir;

use crate::{Error, Result};

/// `sha256:<64 hex>` over every regular file and symlink under `dir`
/// (`.skillignore`d files included: the hash names the whole bundle).
///
/// Framing, per entry in ascending byte order of its relative path (`/`-separated, UTF-8):
/// a kind byte (`F` regular file, `L` symlink), the path bytes, a NUL, the
/// payload length as 8 bytes little-endian, then the payload (the file's
/// bytes, or the link target as written). Directories contribute only through
/// their files; permissions and times are not hashed.
pub fn content_hash(dir: &Path) -> Result<String> {
    if !dir.is_dir() {
        return Err(Error::NotADirectory(dir.to_path_buf()));
    }
    let mut entries = Vec::new();
    for entry in WalkDir::new(dir).follow_links(false).min_depth(1) {
        let entry = entry.map_err(|e| walk_error(dir, e))?;
        let kind = entry.file_type();
        let tag = if kind.is_symlink() {
            b'L'
        } else if kind.is_file() {
            b'F'
        } else {
            continue;
        };
        entries.push((relative(dir, entry.path()), tag, entry.into_path()));
    }
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut hasher = Sha256::new();
    for (rel, tag, path) in entries {
        let payload = if tag == b'L' {
            let target = std::fs::read_link(&path).map_err(|e| Error::io(&path, e))?;
            target.to_string_lossy().into_owned().into_bytes()
        } else {
            std::fs::read(&path).map_err(|e| Error::io(&path, e))?
        };
        hasher.update([tag]);
        hasher.update(rel.as_bytes());
        hasher.update([0u8]);
        hasher.update((payload.len() as u64).to_le_bytes());
        hasher.update(&payload);
    }
    let digest = hasher.finalize();
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest.iter() {
        out.push_str(&format!("{b:02x}"));
    }
    Ok(out)
}

/// `path` relative to `root`, `/`-separated.
pub(crate) fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

pub(crate) fn walk_error(root: &Path, e: walkdir::Error) -> Error {
    let path = e.path().unwrap_or(root).to_path_buf();
    let source = e
        .into_io_error()
        .unwrap_or_else(|| std::io::Error::other("filesystem loop while walking the skill"));
    Error::io(path, source)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (rel, body) in files {
            let p = dir.path().join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, body).unwrap();
        }
        dir
    }

    #[test]
    fn same_tree_gives_the_same_hash() {
        let files = [("SKILL.md", "# hi\n"), ("scripts/run.sh", "echo hi\n")];
        let a = content_hash(tree(&files).path()).unwrap();
        let b = content_hash(tree(&files).path()).unwrap();
        assert_eq!(a, b);
        assert!(a.starts_with("sha256:"));
        assert_eq!(a.len(), 7 + 64);
        assert!(
            a[7..]
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
    }

    #[test]
    fn creation_order_does_not_matter() {
        let a = tree(&[("b.txt", "2"), ("a/x.txt", "1"), ("a-c.txt", "3")]);
        let b = tree(&[("a-c.txt", "3"), ("a/x.txt", "1"), ("b.txt", "2")]);
        assert_eq!(
            content_hash(a.path()).unwrap(),
            content_hash(b.path()).unwrap()
        );
    }

    #[test]
    fn content_name_and_boundary_changes_change_the_hash() {
        let base = content_hash(tree(&[("SKILL.md", "abc"), ("n.txt", "de")]).path()).unwrap();
        let edited = content_hash(tree(&[("SKILL.md", "abd"), ("n.txt", "de")]).path()).unwrap();
        let renamed = content_hash(tree(&[("SKILL.md", "abc"), ("m.txt", "de")]).path()).unwrap();
        // Bytes moved across the file boundary must not collide.
        let shifted = content_hash(tree(&[("SKILL.md", "abcd"), ("n.txt", "e")]).path()).unwrap();
        assert_ne!(base, edited);
        assert_ne!(base, renamed);
        assert_ne!(base, shifted);
    }

    #[test]
    fn the_framing_is_exactly_as_documented() {
        let dir = tree(&[("a.txt", "hi")]);
        let mut h = Sha256::new();
        h.update(b"F");
        h.update(b"a.txt\0");
        h.update(2u64.to_le_bytes());
        h.update(b"hi");
        let expected: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            content_hash(dir.path()).unwrap(),
            format!("sha256:{expected}")
        );
    }

    #[test]
    fn a_missing_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(content_hash(&dir.path().join("nope")).is_err());
    }
}
