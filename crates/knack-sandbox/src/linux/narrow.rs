//! The fallback where the kernel refuses user namespaces: a writable root that contains a
//! protected path is replaced by its entries, except the one leading to that path. Links
//! among the entries are never made roots (a link's target is writable only if it lies
//! beneath a root itself), so `vendor -> $HOME` cannot widen what a command may write.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use crate::resolve_existing_prefix;

use super::rules::open_entry;

/// Where the protected paths are on disk: the entry itself (a link stays a link) and, for a
/// link, where it leads; a `.git` file adds the git folder it names. Missing ones cannot be
/// narrowed around and are left out (see docs/security.md, "Fallback").
pub(crate) fn protected_locations(read_only: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for path in read_only {
        let place = crate::resolve_parent(path);
        let Ok(meta) = std::fs::symlink_metadata(&place) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            let target = resolve_existing_prefix(&place);
            if target.exists() {
                out.push(target);
            }
        } else if meta.is_file() && place.file_name().is_some_and(|n| n == ".git") {
            out.extend(super::mounts::git_dirs(&place));
        }
        out.push(place);
    }
    out.sort();
    out.dedup();
    out
}

/// The narrowed roots, opened without following links, and the folders that lost the
/// right to have entries created directly in them.
pub(crate) fn narrow(
    writable: &[PathBuf],
    protected: &[PathBuf],
) -> (Vec<(PathBuf, OwnedFd)>, Vec<PathBuf>) {
    let (roots, closed) = narrow_roots(writable, protected);
    let opened = roots
        .into_iter()
        .filter_map(|root| open_entry(&root).map(|fd| (root, fd)))
        .collect();
    (opened, closed)
}

fn narrow_roots(writable: &[PathBuf], protected: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut roots: Vec<PathBuf> = writable.to_vec();
    let mut closed = Vec::new();
    // The roots containing a protected path, one at a time, until none does.
    let containing = |roots: &[PathBuf]| {
        roots.iter().enumerate().find_map(|(i, root)| {
            protected
                .iter()
                .find(|p| p.starts_with(root))
                .map(|p| (i, p.clone()))
        })
    };
    while let Some((index, target)) = containing(&roots) {
        let root = roots.swap_remove(index);
        if root == target {
            continue;
        }
        // The entry of `root` on the way to `target`.
        let next = target
            .strip_prefix(&root)
            .ok()
            .and_then(|rest| rest.components().next())
            .map(|first| root.join(first));
        if let Ok(entries) = std::fs::read_dir(&root) {
            for entry in entries.flatten() {
                let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
                if is_link {
                    continue;
                }
                let path = entry.path();
                if Some(&path) == next.as_ref() {
                    if path != target && entry.file_type().is_ok_and(|t| t.is_dir()) {
                        roots.push(path);
                    }
                } else {
                    roots.push(path);
                }
            }
        }
        closed.push(root);
    }
    roots.sort();
    roots.dedup();
    closed.sort();
    closed.dedup();
    (roots, closed)
}

/// Whether a narrowed plan is needed at all: some protected location lies beneath a root.
pub(crate) fn needed(writable: &[PathBuf], protected: &[PathBuf]) -> bool {
    protected
        .iter()
        .any(|p| writable.iter().any(|root| Path::new(p).starts_with(root)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrowing_opens_every_sibling_on_the_way_but_not_the_protected_folder() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for sub in ["project/src", "project/.knack/skills", "other"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        std::fs::write(root.join("project/README.md"), "x").unwrap();
        let protected = root.join("project/.knack");
        let (roots, closed) = narrow_roots(
            std::slice::from_ref(&root),
            std::slice::from_ref(&protected),
        );
        assert_eq!(
            roots,
            vec![
                root.join("other"),
                root.join("project/README.md"),
                root.join("project/src")
            ]
        );
        assert_eq!(closed, vec![root.clone(), root.join("project")]);
        assert!(roots.iter().all(|r| !r.starts_with(&protected)));
    }

    #[test]
    fn a_link_among_the_entries_never_becomes_a_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.join(".knack")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("vendor")).unwrap();
        let protected = protected_locations(&[root.join(".knack")]);
        let (roots, _) = narrow_roots(std::slice::from_ref(&root), &protected);
        assert_eq!(roots, vec![root.join("src")]);
    }

    #[test]
    fn a_protected_link_is_narrowed_around_where_it_is_and_where_it_leads() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("real")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join(".knack")).unwrap();
        let protected = protected_locations(&[root.join(".knack")]);
        assert_eq!(protected, vec![root.join(".knack"), root.join("real")]);
    }
}
