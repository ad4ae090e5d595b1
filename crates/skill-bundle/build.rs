//! Compiles `skills/` and `optional-skills/` from the repository root into a
//! static table of files, with each skill's hash and the set hash precomputed.

#[path = "src/rules.rs"]
#[allow(dead_code)]
mod rules;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let repo = manifest_dir.join("../..");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/rules.rs");
    let mut out = String::new();
    for (tree, prefix) in [("skills", "BUNDLED"), ("optional-skills", "OPTIONAL")] {
        let root = repo.join(tree);
        // A directory here makes cargo rescan the whole tree, so added and
        // removed files rebuild the crate too, not only edited ones.
        println!("cargo:rerun-if-changed={}", root.display());
        emit_tree(&root, prefix, &mut out);
    }
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    if let Err(e) = std::fs::write(out_dir.join("bundle_data.rs"), out) {
        panic!("cannot write the bundle table: {e}");
    }
}

fn emit_tree(root: &Path, prefix: &str, out: &mut String) {
    let mut files: Vec<(String, PathBuf, Vec<u8>)> = Vec::new();
    if root.is_dir() {
        collect(root, root, &mut files);
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let _ = writeln!(
        out,
        "pub(crate) static {prefix}_FILES: &[(&str, &[u8])] = &["
    );
    for (rel, abs, _) in &files {
        let abs = abs.canonicalize().unwrap_or_else(|_| abs.clone());
        let _ = writeln!(
            out,
            "    ({rel:?}, include_bytes!({:?})),",
            abs.display().to_string()
        );
    }
    let _ = writeln!(out, "];");
    let ids = rules::skill_ids(files.iter().map(|f| f.0.as_str()));
    let _ = writeln!(
        out,
        "pub(crate) static {prefix}_SKILLS: &[(&str, &str)] = &["
    );
    for id in ids {
        let lead = format!("{id}/");
        let hash =
            rules::content_hash(files.iter().filter_map(|(rel, _, bytes)| {
                rel.strip_prefix(&lead).map(|r| (r, bytes.as_slice()))
            }));
        let _ = writeln!(out, "    ({id:?}, {hash:?}),");
    }
    let _ = writeln!(out, "];");
    let set = rules::set_hash(
        files
            .iter()
            .map(|(rel, _, bytes)| (rel.as_str(), bytes.as_slice())),
    );
    let _ = writeln!(out, "pub(crate) const {prefix}_SET_HASH: &str = {set:?};");
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf, Vec<u8>)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(rel) = path.strip_prefix(root) else {
            continue;
        };
        let rel = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        if rules::is_excluded(&rel) {
            continue;
        }
        // Symlinks are not followed: a bundle holds plain files only.
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            collect(root, &path, files);
        } else if meta.is_file() {
            match std::fs::read(&path) {
                Ok(bytes) => files.push((rel, path, bytes)),
                Err(e) => panic!("cannot read {}: {e}", path.display()),
            }
        }
    }
}
