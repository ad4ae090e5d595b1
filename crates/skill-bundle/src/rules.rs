//! The rules shared by the build script and the runtime: which files belong to
//! a bundle, where its skills are, and how a set of files is hashed.

use sha2::{Digest, Sha256};

/// Prefix of the files knack itself keeps inside a skill folder (provenance
/// sidecar, history). They never come from a bundle, so they are left out of
/// bundles and of every content hash: adding one must not look like an edit.
pub const KNACK_PRIVATE_PREFIX: &str = ".knack-";

/// Folders that tools create while a skill's scripts run; copying or hashing
/// them would make a skill look edited after it was merely used.
const RUNTIME_CACHE_DIRS: [&str; 5] = [
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".git",
];

/// Whether a `/`-separated relative path is left out of bundles and hashes.
pub fn is_excluded(rel: &str) -> bool {
    let mut parts = rel.split('/').peekable();
    while let Some(part) = parts.next() {
        if part.starts_with(KNACK_PRIVATE_PREFIX) || RUNTIME_CACHE_DIRS.contains(&part) {
            return true;
        }
        if parts.peek().is_none()
            && (part.ends_with(".pyc") || part.ends_with(".pyo") || part == ".DS_Store")
        {
            return true;
        }
    }
    false
}

/// One entry of a hashed tree: a regular file (payload = its bytes) or a
/// symlink (payload = its target as written).
#[derive(Debug, Clone, Copy)]
pub struct HashEntry<'a> {
    pub path: &'a str,
    pub is_link: bool,
    pub payload: &'a [u8],
}

/// `sha256:<64 hex>` over regular files given in any order.
///
/// The framing is the one `skill_guard::content_hash` uses for a folder, so a
/// freshly extracted bundled skill hashes the same under both: entries sorted
/// by their `/`-separated relative path (byte order); each contributes a kind
/// byte (`F` file, `L` symlink), its path, a NUL, the payload length as a
/// little-endian u64, then the payload. The length framing keeps two trees
/// from hashing alike by moving bytes between a name and a content.
pub fn content_hash<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> String {
    content_hash_entries(files.into_iter().map(|(path, payload)| HashEntry {
        path,
        is_link: false,
        payload,
    }))
}

/// [`content_hash`] for trees that may hold symlinks.
pub fn content_hash_entries<'a>(entries: impl IntoIterator<Item = HashEntry<'a>>) -> String {
    let mut sorted: Vec<HashEntry<'a>> = entries.into_iter().collect();
    sorted.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    let mut hasher = Sha256::new();
    for entry in sorted {
        hasher.update([if entry.is_link { b'L' } else { b'F' }]);
        hasher.update(entry.path.as_bytes());
        hasher.update([0u8]);
        hasher.update((entry.payload.len() as u64).to_le_bytes());
        hasher.update(entry.payload);
    }
    format!("sha256:{}", hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 0x0f) as usize] as char);
    }
    out
}

/// The skill ids of a tree, given its sorted file paths: the folder of every
/// `SKILL.md` that is not at the root and not nested inside another skill
/// (a SKILL.md under `references/` of a skill is an example, not a skill).
pub fn skill_ids<'a>(sorted_paths: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut candidates: Vec<&str> = sorted_paths
        .into_iter()
        .filter_map(|p| p.strip_suffix("/SKILL.md"))
        .collect();
    candidates.sort_unstable();
    let mut ids: Vec<String> = Vec::new();
    for dir in candidates {
        let nested = ids.iter().any(|outer| {
            dir.len() > outer.len()
                && dir.starts_with(outer.as_str())
                && dir.as_bytes()[outer.len()] == b'/'
        });
        if !nested {
            ids.push(dir.to_owned());
        }
    }
    ids
}

/// Version of the seeding rules, folded into the set hash so a knack release
/// that changes how seeding works re-runs a full sync once.
pub const SYNC_RULES_VERSION: &str = "knack-sync-1";

/// The hash of a whole tree plus the rules version: equal set hashes mean a
/// full sync against this tree has nothing new to do.
pub fn set_hash<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> String {
    let tree = content_hash(files);
    content_hash([(SYNC_RULES_VERSION, tree.as_bytes())])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excludes_private_files_and_runtime_caches_only() {
        assert!(is_excluded(".knack-provenance.json"));
        assert!(is_excluded("scripts/__pycache__/x.cpython.pyc"));
        assert!(is_excluded("scripts/tool.pyc"));
        assert!(is_excluded(".git/config"));
        assert!(!is_excluded("SKILL.md"));
        assert!(!is_excluded(".skillignore"));
        assert!(!is_excluded("references/pyc-notes.md"));
    }

    #[test]
    fn hash_ignores_order_but_not_framing() {
        let a = content_hash([("a", b"xy".as_slice()), ("b", b"".as_slice())]);
        let b = content_hash([("b", b"".as_slice()), ("a", b"xy".as_slice())]);
        assert_eq!(a, b);
        assert_eq!(a.len(), 7 + 64);
        // Moving a byte from the content into the name must change the hash.
        let c = content_hash([("ax", b"y".as_slice()), ("b", b"".as_slice())]);
        assert_ne!(a, c);
    }

    #[test]
    fn framing_matches_the_documented_layout() {
        let mut h = Sha256::new();
        h.update(b"F");
        h.update(b"a.txt\0");
        h.update(2u64.to_le_bytes());
        h.update(b"hi");
        let expected = format!("sha256:{}", hex(&h.finalize()));
        assert_eq!(content_hash([("a.txt", b"hi".as_slice())]), expected);
    }

    #[test]
    fn nested_skill_folders_are_not_skills() {
        let ids = skill_ids([
            "a/b/SKILL.md",
            "a/b/references/c/SKILL.md",
            "a/bc/SKILL.md",
            "SKILL.md",
        ]);
        assert_eq!(ids, ["a/b", "a/bc"]);
    }
}
