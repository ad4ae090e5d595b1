//! Writing untrusted trees to disk: archive unpacking and folder copies that refuse
//! absolute paths, `..`, escaping links, special files, and packages over the size caps.

use std::fs;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use walkdir::WalkDir;

use crate::{Error, Result};

/// Caps on one package, from `hub.max_package_bytes` and `hub.max_package_files`.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_bytes: u64,
    pub max_files: usize,
}

/// Writes entries under `root`, keeping count of bytes and files.
struct TreeWriter<'a> {
    root: &'a Path,
    limits: Limits,
    bytes: u64,
    files: usize,
}

impl<'a> TreeWriter<'a> {
    fn new(root: &'a Path, limits: Limits) -> Self {
        Self {
            root,
            limits,
            bytes: 0,
            files: 0,
        }
    }

    fn count_file(&mut self, rel: &str) -> Result<()> {
        self.files += 1;
        if self.files > self.limits.max_files {
            return Err(Error::Unsafe(format!(
                "more than {} files (hub.max_package_files); stopped at '{rel}'",
                self.limits.max_files
            )));
        }
        Ok(())
    }

    fn too_big(&self) -> Error {
        Error::Unsafe(format!(
            "the unpacked size exceeds {} bytes (hub.max_package_bytes)",
            self.limits.max_bytes
        ))
    }

    /// Creates the parent folders of `rel`, refusing to pass through a symlink.
    fn prepare_parent(&self, rel: &Path) -> Result<PathBuf> {
        let mut current = self.root.to_path_buf();
        if let Some(parent) = rel.parent() {
            for part in parent.components() {
                current.push(part.as_os_str());
                match fs::symlink_metadata(&current) {
                    Ok(m) if m.file_type().is_symlink() => {
                        return Err(Error::Unsafe(format!(
                            "'{}' would be written through the link '{}'",
                            rel.display(),
                            current
                                .strip_prefix(self.root)
                                .unwrap_or(&current)
                                .display()
                        )));
                    }
                    Ok(m) if m.is_dir() => {}
                    Ok(_) => {
                        return Err(Error::Unsafe(format!(
                            "'{}' needs a folder where a file already is",
                            rel.display()
                        )));
                    }
                    Err(_) => fs::create_dir(&current).map_err(|e| Error::io(&current, e))?,
                }
            }
        }
        Ok(self.root.join(rel))
    }

    fn dir(&mut self, rel: &Path) -> Result<()> {
        let target = self.prepare_parent(rel)?;
        match fs::symlink_metadata(&target) {
            Ok(m) if m.is_dir() => Ok(()),
            Ok(_) => Err(Error::Unsafe(format!(
                "'{}' is both a folder and something else",
                rel.display()
            ))),
            Err(_) => fs::create_dir(&target).map_err(|e| Error::io(&target, e)),
        }
    }

    fn file(&mut self, rel: &Path, reader: &mut dyn Read, executable: bool) -> Result<()> {
        let name = rel.display().to_string();
        self.count_file(&name)?;
        let target = self.prepare_parent(rel)?;
        if fs::symlink_metadata(&target).is_ok() {
            return Err(Error::Unsafe(format!(
                "'{name}' appears twice in the package"
            )));
        }
        let mut out = fs::File::create(&target).map_err(|e| Error::io(&target, e))?;
        let mut buf = [0u8; 64 * 1024];
        loop {
            let n = reader.read(&mut buf).map_err(|e| Error::io(&target, e))?;
            if n == 0 {
                break;
            }
            self.bytes += n as u64;
            if self.bytes > self.limits.max_bytes {
                return Err(self.too_big());
            }
            out.write_all(&buf[..n])
                .map_err(|e| Error::io(&target, e))?;
        }
        if executable {
            set_executable(&target)?;
        }
        Ok(())
    }

    fn symlink(&mut self, rel: &Path, link_target: &Path) -> Result<()> {
        let name = rel.display().to_string();
        self.count_file(&name)?;
        if !link_stays_inside(rel, link_target) {
            return Err(Error::Unsafe(format!(
                "the link '{name}' points outside the skill (to '{}')",
                link_target.display()
            )));
        }
        let target = self.prepare_parent(rel)?;
        make_symlink(link_target, &target)
    }
}

fn set_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).map_err(|e| Error::io(path, e))
}

fn make_symlink(link_target: &Path, at: &Path) -> Result<()> {
    std::os::unix::fs::symlink(link_target, at).map_err(|e| Error::io(at, e))
}

/// A relative link target that, read from the link's folder, stays under the root.
fn link_stays_inside(link: &Path, target: &Path) -> bool {
    if target.is_absolute() {
        return false;
    }
    let mut depth: i64 = link.parent().map_or(0, |p| p.components().count() as i64);
    for c in target.components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            Component::RootDir | Component::Prefix(_) => return false,
        }
    }
    true
}

/// A package path: relative, no `..`, no root or drive; `.` segments dropped.
fn clean_relative(raw: &Path) -> Result<Option<PathBuf>> {
    let shown = raw.display().to_string();
    let mut out = PathBuf::new();
    for c in raw.components() {
        match c {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(Error::Unsafe(format!(
                    "the entry '{shown}' climbs out with '..'"
                )));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(Error::Unsafe(format!(
                    "the entry '{shown}' has an absolute path"
                )));
            }
        }
    }
    Ok((!out.as_os_str().is_empty()).then_some(out))
}

/// Unpacks a gzip'd tar stream into `dest` (which must exist and be empty).
pub fn unpack_tar_gz(reader: impl Read, dest: &Path, limits: Limits) -> Result<()> {
    let gz = flate2::read::GzDecoder::new(reader);
    let mut archive = tar::Archive::new(gz);
    let mut writer = TreeWriter::new(dest, limits);
    let entries = archive
        .entries()
        .map_err(|e| Error::Unsafe(format!("not a readable .tar.gz archive: {e}")))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| Error::Unsafe(format!("the archive is damaged: {e}")))?;
        let raw = entry
            .path()
            .map_err(|e| Error::Unsafe(format!("an entry has an unreadable name: {e}")))?
            .into_owned();
        let kind = entry.header().entry_type();
        // Headers that only carry metadata for other entries.
        if matches!(
            kind,
            tar::EntryType::XGlobalHeader | tar::EntryType::XHeader | tar::EntryType::GNULongName
        ) {
            continue;
        }
        let Some(rel) = clean_relative(&raw)? else {
            continue;
        };
        let shown = rel.display().to_string();
        match kind {
            tar::EntryType::Directory => writer.dir(&rel)?,
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                if entry.header().size().unwrap_or(0) > limits.max_bytes {
                    return Err(writer.too_big());
                }
                let exec = entry
                    .header()
                    .mode()
                    .map(|m| m & 0o111 != 0)
                    .unwrap_or(false);
                writer.file(&rel, &mut entry, exec)?;
            }
            tar::EntryType::Symlink => {
                let target = entry
                    .link_name()
                    .ok()
                    .flatten()
                    .map(|t| t.into_owned())
                    .ok_or_else(|| Error::Unsafe(format!("the link '{shown}' has no target")))?;
                writer.symlink(&rel, &target)?;
            }
            tar::EntryType::Link => {
                return Err(Error::Unsafe(format!(
                    "'{shown}' is a hard link; packages may not hold hard links"
                )));
            }
            tar::EntryType::Char | tar::EntryType::Block => {
                return Err(Error::Unsafe(format!("'{shown}' is a device file")));
            }
            tar::EntryType::Fifo => {
                return Err(Error::Unsafe(format!("'{shown}' is a named pipe")));
            }
            other => {
                return Err(Error::Unsafe(format!(
                    "'{shown}' has an entry type ({other:?}) that skills never need"
                )));
            }
        }
    }
    refuse_chained_links(dest)
}

/// Copies the skill folder `src` into `dest` (created), without following links,
/// leaving out `.git`, caches and knack's own `.knack-*` files.
pub fn copy_tree(src: &Path, dest: &Path, limits: Limits) -> Result<()> {
    fs::create_dir_all(dest).map_err(|e| Error::io(dest, e))?;
    let mut writer = TreeWriter::new(dest, limits);
    let walker = WalkDir::new(src)
        .follow_links(false)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let rel = rel_string(src, e.path());
            !skill_bundle::is_excluded(&rel)
        });
    for entry in walker {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(src).to_path_buf();
            Error::io(path, e.into())
        })?;
        let rel = entry.path().strip_prefix(src).unwrap_or(entry.path());
        let Some(rel) = clean_relative(rel)? else {
            continue;
        };
        let kind = entry.file_type();
        if kind.is_dir() {
            writer.dir(&rel)?;
        } else if kind.is_symlink() {
            let target = fs::read_link(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
            writer.symlink(&rel, &target)?;
        } else if kind.is_file() {
            let meta = entry
                .metadata()
                .map_err(|e| Error::io(entry.path(), e.into()))?;
            if meta.len() > limits.max_bytes {
                return Err(writer.too_big());
            }
            // A file with a second name elsewhere is a hard link: its bytes
            // can be changed from outside the package after the scan, so a
            // local folder is held to the rule a tarball is.
            {
                use std::os::unix::fs::MetadataExt;
                if meta.nlink() > 1 {
                    return Err(Error::Unsafe(format!(
                        "'{}' is a hard link ({} names for one file); packages may not hold hard links, copy the file instead",
                        rel.display(),
                        meta.nlink()
                    )));
                }
            }
            let mut file = knack_config::regular_file::open(entry.path())
                .map_err(|e| Error::io(entry.path(), e))?;
            writer.file(&rel, &mut file, is_executable(&meta))?;
        } else {
            return Err(Error::Unsafe(format!(
                "'{}' is a special file (device, pipe or socket)",
                rel.display()
            )));
        }
    }
    refuse_chained_links(dest)
}

/// Refuses a link whose target passes through another link of the tree.
///
/// `link_stays_inside` reads `..` lexically, but the kernel resolves `..`
/// after a link from wherever that link leads: with `a/b -> ..`, the link
/// `a/c -> b/..` looks like `a` yet resolves above the root. Once no link
/// goes through another, lexical and real resolution agree. Run on the
/// finished tree, because a link may arrive before the link it goes through.
fn refuse_chained_links(root: &Path) -> Result<()> {
    for entry in WalkDir::new(root).follow_links(false).min_depth(1) {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(root).to_path_buf();
            Error::io(path, e.into())
        })?;
        if !entry.file_type().is_symlink() {
            continue;
        }
        let target = fs::read_link(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
        let mut at = entry.path().parent().unwrap_or(root).to_path_buf();
        let parts: Vec<Component> = target.components().collect();
        for (i, part) in parts.iter().enumerate() {
            match part {
                Component::Normal(name) => at.push(name),
                Component::ParentDir => {
                    at.pop();
                }
                Component::CurDir => {}
                // Absolute targets were refused when the link was written.
                Component::RootDir | Component::Prefix(_) => break,
            }
            let last = i + 1 == parts.len();
            if !last && fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(Error::Unsafe(format!(
                    "the link '{}' leads through the link '{}'; links may not pass through other links",
                    rel_string(root, entry.path()),
                    rel_string(root, &at)
                )));
            }
        }
    }
    Ok(())
}

fn is_executable(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

pub(crate) fn rel_string(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The hash the lock records: the guard's framing over every file and link,
/// leaving out knack's own `.knack-*` files and tool caches, so an installed
/// skill hashes the same as the package it came from.
pub fn tree_hash(dir: &Path) -> Result<String> {
    let mut entries: Vec<(String, bool, Vec<u8>)> = Vec::new();
    for entry in WalkDir::new(dir).follow_links(false).min_depth(1) {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(dir).to_path_buf();
            Error::io(path, e.into())
        })?;
        let rel = rel_string(dir, entry.path());
        if skill_bundle::is_excluded(&rel) {
            continue;
        }
        let kind = entry.file_type();
        if kind.is_symlink() {
            let target = fs::read_link(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
            entries.push((
                rel,
                true,
                target.to_string_lossy().into_owned().into_bytes(),
            ));
        } else if kind.is_file() {
            let bytes = fs::read(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
            entries.push((rel, false, bytes));
        }
    }
    Ok(skill_bundle::content_hash_entries(entries.iter().map(
        |(path, is_link, payload)| skill_bundle::HashEntry {
            path,
            is_link: *is_link,
            payload,
        },
    )))
}

/// Relative paths of every file and link in `dir`, sorted, without knack's own files.
pub(crate) fn file_list(dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = WalkDir::new(dir)
        .follow_links(false)
        .min_depth(1)
        .into_iter()
        .flatten()
        .filter(|e| !e.file_type().is_dir())
        .map(|e| rel_string(dir, e.path()))
        .filter(|rel| !skill_bundle::is_excluded(rel))
        .collect();
    files.sort();
    files
}

/// Folders holding a SKILL.md under `root` (not descending into a skill, nor
/// into dot-folders unless no other folder holds one), as `/`-separated
/// paths relative to `root` ("" for the root).
pub(crate) fn skills_in_tree(root: &Path) -> Vec<String> {
    let visible = skills_below(root, false);
    if !visible.is_empty() {
        return visible;
    }
    // Some collections keep every skill under dot-folders (`skills/.curated`,
    // `.system`); when nothing else is there, those are the collection.
    skills_below(root, true)
}

/// Folders never searched for skills, even when dot-folders are.
fn never_searched(name: &str) -> bool {
    matches!(name, ".git" | ".hg" | ".svn" | "node_modules") || name.starts_with(".knack")
}

fn skills_below(root: &Path, dot_folders: bool) -> Vec<String> {
    let mut found = Vec::new();
    let mut walker = WalkDir::new(root)
        .follow_links(false)
        .max_depth(6)
        .sort_by_file_name()
        .into_iter();
    while let Some(Ok(entry)) = walker.next() {
        if !entry.file_type().is_dir() {
            continue;
        }
        let skipped = entry.depth() > 0
            && entry
                .file_name()
                .to_str()
                .is_some_and(|n| never_searched(n) || (!dot_folders && n.starts_with('.')));
        if skipped {
            walker.skip_current_dir();
            continue;
        }
        if entry.path().join("SKILL.md").is_file() {
            found.push(rel_string(root, entry.path()));
            walker.skip_current_dir();
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            max_bytes: 1024,
            max_files: 4,
        }
    }

    fn gz_tar(build: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        build(&mut b);
        let raw = b.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&raw).unwrap();
        gz.finish().unwrap()
    }

    fn add_file(b: &mut tar::Builder<Vec<u8>>, path: &str, body: &[u8]) {
        let mut h = tar::Header::new_gnu();
        h.set_size(body.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        // set_path refuses '..', so write the name bytes directly as an attacker would.
        let name = &mut h.as_old_mut().name;
        name[..path.len()].copy_from_slice(path.as_bytes());
        h.set_cksum();
        b.append(&h, body).unwrap();
    }

    #[test]
    fn a_plain_archive_unpacks() {
        let data = gz_tar(|b| {
            add_file(b, "s/SKILL.md", b"---\nname: s\n---\nx\n");
            add_file(b, "s/scripts/run.sh", b"echo\n");
        });
        let dir = tempfile::tempdir().unwrap();
        unpack_tar_gz(&data[..], dir.path(), limits()).unwrap();
        assert!(dir.path().join("s/scripts/run.sh").is_file());
        assert_eq!(skills_in_tree(dir.path()), vec!["s".to_string()]);
    }

    #[test]
    fn traversal_absolute_and_caps_are_refused() {
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (gz_tar(|b| add_file(b, "../evil", b"x")), "'..'"),
            (gz_tar(|b| add_file(b, "/tmp/evil", b"x")), "absolute"),
            (
                gz_tar(|b| add_file(b, "big", &[b'a'; 2000])),
                "max_package_bytes",
            ),
            (
                gz_tar(|b| {
                    for i in 0..5 {
                        add_file(b, &format!("f{i}"), b"x");
                    }
                }),
                "max_package_files",
            ),
        ];
        for (data, expect) in cases {
            let dir = tempfile::tempdir().unwrap();
            let err = unpack_tar_gz(&data[..], dir.path(), limits()).unwrap_err();
            assert!(err.to_string().contains(expect), "{err} lacks {expect}");
        }
    }

    #[test]
    fn links_must_stay_inside() {
        assert!(link_stays_inside(Path::new("a/b"), Path::new("../c")));
        assert!(!link_stays_inside(Path::new("a/b"), Path::new("../../c")));
        assert!(!link_stays_inside(Path::new("b"), Path::new("/etc/passwd")));
        let escaping = gz_tar(|b| {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Symlink);
            h.set_size(0);
            h.set_path("s/passwd").unwrap();
            h.set_link_name("/etc/passwd").unwrap();
            h.set_cksum();
            b.append(&h, std::io::empty()).unwrap();
        });
        let dir = tempfile::tempdir().unwrap();
        let err = unpack_tar_gz(&escaping[..], dir.path(), limits()).unwrap_err();
        assert!(err.to_string().contains("points outside"), "{err}");
    }

    fn add_link(b: &mut tar::Builder<Vec<u8>>, path: &str, target: &str) {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Symlink);
        h.set_size(0);
        h.set_path(path).unwrap();
        h.set_link_name(target).unwrap();
        h.set_cksum();
        b.append(&h, std::io::empty()).unwrap();
    }

    // Found with the hub_unpack fuzz target's oracle (every link must resolve
    // inside the package): each link is inside when read lexically, but `..`
    // after the link `a/b` climbs from the root, not from `a`.
    #[test]
    fn a_link_through_another_link_cannot_climb_out() {
        for order in [["a/b", "a/c"], ["a/c", "a/b"]] {
            let data = gz_tar(|b| {
                for path in order {
                    let target = if path == "a/b" { ".." } else { "b/.." };
                    add_link(b, path, target);
                }
            });
            let dir = tempfile::tempdir().unwrap();
            let dest = dir.path().join("dest");
            fs::create_dir(&dest).unwrap();
            let err = unpack_tar_gz(&data[..], &dest, limits()).unwrap_err();
            assert!(
                err.to_string().contains("pass through other links"),
                "{err}"
            );
        }
        // A link to a link (not through it) stays allowed.
        let data = gz_tar(|b| {
            add_file(b, "s/SKILL.md", b"x");
            add_link(b, "s/one", "SKILL.md");
            add_link(b, "s/two", "one");
        });
        let dir = tempfile::tempdir().unwrap();
        unpack_tar_gz(&data[..], dir.path(), limits()).unwrap();
        assert_eq!(fs::read(dir.path().join("s/two")).unwrap(), b"x");
    }

    #[test]
    fn writing_through_an_inner_link_is_refused() {
        let data = gz_tar(|b| {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Symlink);
            h.set_size(0);
            h.set_path("here").unwrap();
            h.set_link_name(".").unwrap();
            h.set_cksum();
            b.append(&h, std::io::empty()).unwrap();
            add_file(b, "here/x", b"x");
        });
        let dir = tempfile::tempdir().unwrap();
        let err = unpack_tar_gz(&data[..], dir.path(), limits()).unwrap_err();
        assert!(err.to_string().contains("through the link"), "{err}");
    }

    #[test]
    fn a_local_folder_with_a_hard_link_or_a_fifo_is_refused() {
        let outside = tempfile::tempdir().unwrap();
        let src = tempfile::tempdir().unwrap();
        fs::write(src.path().join("SKILL.md"), "x").unwrap();
        fs::write(outside.path().join("secret"), "s").unwrap();
        fs::hard_link(outside.path().join("secret"), src.path().join("notes.md")).unwrap();
        let dest = tempfile::tempdir().unwrap();
        let err = copy_tree(src.path(), &dest.path().join("out"), limits()).unwrap_err();
        assert!(
            err.to_string().contains("'notes.md' is a hard link"),
            "{err}"
        );

        let src = tempfile::tempdir().unwrap();
        fs::write(src.path().join("SKILL.md"), "x").unwrap();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            src.path().join("pipe"),
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        let err = copy_tree(src.path(), &dest.path().join("out2"), limits()).unwrap_err();
        assert!(err.to_string().contains("special file"), "{err}");
    }

    #[test]
    fn tree_hash_ignores_knack_sidecars_and_matches_the_guard() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("SKILL.md"), "hi").unwrap();
        let before = tree_hash(dir.path()).unwrap();
        assert_eq!(before, skill_guard::content_hash(dir.path()).unwrap());
        fs::write(dir.path().join(".knack-provenance.json"), "{}").unwrap();
        assert_eq!(before, tree_hash(dir.path()).unwrap());
        fs::write(dir.path().join("SKILL.md"), "hi!").unwrap();
        assert_ne!(before, tree_hash(dir.path()).unwrap());
    }
}
