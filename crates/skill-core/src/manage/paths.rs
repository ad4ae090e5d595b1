//! Keeps every write inside its skill: support paths are checked by rule, then
//! walked on disk so no symbolic link can carry a write out of the folder.

use std::fs;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::beneath::{self, Base, DIR_FLAGS};
use crate::skill::SUPPORT_DIRS;
use crate::validate::validate_support_path;

/// Where one file of a skill goes: the deepest folder on its way that exists
/// (opened without following links), the folders still to create below it,
/// and the file's own name.
#[derive(Debug)]
pub(crate) struct FilePlace {
    pub dir: OwnedFd,
    pub missing: Vec<String>,
    pub name: String,
    /// The file's path, for messages and the review's viewed set.
    pub path: PathBuf,
}

impl FilePlace {
    /// SKILL.md (or another file directly in the skill folder).
    pub fn top(folder: &Base, name: &str) -> io::Result<Self> {
        Ok(Self {
            dir: folder.fd.try_clone()?,
            missing: Vec::new(),
            name: name.to_owned(),
            path: folder.real.join(name),
        })
    }

    /// Whether a regular file is there now.
    pub fn exists(&self) -> bool {
        self.missing.is_empty()
            && beneath::kind_at(self.dir.as_fd(), &self.name)
                .is_ok_and(|k| k == FileType::RegularFile)
    }

    /// The file's bytes, `None` when it does not exist; never through a link.
    pub fn read(&self) -> io::Result<Option<Vec<u8>>> {
        if !self.missing.is_empty() {
            return Ok(None);
        }
        match beneath::read_file_at(self.dir.as_fd(), &self.name) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Why a walk down a skill's folders stopped.
enum Stop {
    Link(usize),
    File(usize),
    Io(usize, io::Error),
}

/// Opens the existing folders of `parts` below `dir`, one at a time and never
/// through a link; returns the deepest one opened and how many parts that was.
fn walk_existing(dir: BorrowedFd<'_>, parts: &[&str]) -> Result<(OwnedFd, usize), Stop> {
    let mut cur = rustix::fs::openat(dir, ".", DIR_FLAGS, Mode::empty())
        .map_err(|e| Stop::Io(0, e.into()))?;
    for (i, part) in parts.iter().enumerate() {
        match rustix::fs::openat(&cur, *part, DIR_FLAGS | OFlags::NOFOLLOW, Mode::empty()) {
            Ok(fd) => cur = fd,
            Err(Errno::NOENT) => return Ok((cur, i)),
            Err(Errno::LOOP) => return Err(Stop::Link(i)),
            // O_NOFOLLOW with O_DIRECTORY: a link may also answer ENOTDIR.
            Err(Errno::NOTDIR) => {
                return Err(match beneath::kind_at(cur.as_fd(), part) {
                    Ok(FileType::Symlink) => Stop::Link(i),
                    _ => Stop::File(i),
                });
            }
            Err(e) => return Err(Stop::Io(i, e.into())),
        }
    }
    Ok((cur, parts.len()))
}

/// The place of support file `rel` (already checked by the path rules) in the
/// open skill folder: every part on the way is a real folder or missing, the
/// file itself is a regular file or missing; links are refused, by name.
pub(crate) fn support_place(folder: &Base, rel: &str) -> Result<FilePlace, String> {
    validate_support_path(rel).map_err(|v| v.message)?;
    if rel.chars().any(is_invisible) {
        return Err(format!(
            "the file path '{}' is not allowed: it contains invisible or direction-changing characters",
            rel.escape_debug()
        ));
    }
    let parts: Vec<&str> = rel.split('/').collect();
    let Some((name, folders)) = parts.split_last() else {
        return Err(format!("'{rel}' is not a file path"));
    };
    let shown = |i: usize| parts[..=i].join("/");
    let link = |i: usize| {
        format!(
            "'{}' is a symbolic link; skill files are never written or removed through links",
            shown(i)
        )
    };
    let (dir, existing) = match walk_existing(folder.fd.as_fd(), folders) {
        Ok(found) => found,
        Err(Stop::Link(i)) => return Err(link(i)),
        Err(Stop::File(i)) => {
            return Err(format!(
                "'{}' is a file, so it cannot hold '{rel}'",
                shown(i)
            ));
        }
        Err(Stop::Io(i, e)) => return Err(format!("cannot inspect '{}': {e}", shown(i))),
    };
    if existing == folders.len() {
        match beneath::kind_at(dir.as_fd(), name) {
            Ok(FileType::Symlink) => return Err(link(folders.len())),
            Ok(FileType::Directory) => return Err(format!("'{rel}' is a folder, not a file")),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot inspect '{rel}': {e}")),
        }
    }
    Ok(FilePlace {
        dir,
        missing: folders[existing..]
            .iter()
            .map(|p| (*p).to_owned())
            .collect(),
        name: (*name).to_owned(),
        path: folder.real.join(rel),
    })
}

/// Where a new skill `id` goes below the open root: the deepest existing
/// folder and the folders to create (the skill folder itself among them).
pub(crate) fn create_place(root: &Base, id: &str) -> Result<(OwnedFd, Vec<String>), String> {
    let parts: Vec<&str> = id.split('/').collect();
    let shown = |i: usize| root.real.join(parts[..=i].join("/"));
    match walk_existing(root.fd.as_fd(), &parts) {
        Ok((_, n)) if n == parts.len() => Err(format!(
            "a folder already exists at {}; choose another name or remove that folder",
            root.real.join(id).display()
        )),
        Ok((dir, n)) => Ok((dir, parts[n..].iter().map(|p| (*p).to_owned()).collect())),
        Err(Stop::Link(i)) => Err(format!(
            "{} is a symbolic link; new skills are only created in real folders of the user skills folder",
            shown(i).display()
        )),
        Err(Stop::File(i)) => Err(format!(
            "{} is a file, so no skill can be created there",
            shown(i).display()
        )),
        Err(Stop::Io(i, e)) => Err(format!("cannot inspect {}: {e}", shown(i).display())),
    }
}

/// Removes the empty folders `parts[..n]` for n from all down to one, below
/// the open folder `base`, stopping at the first that is not empty. Nothing
/// is followed: each parent is opened without links.
pub(crate) fn remove_empty_dirs_at(base: &Base, parts: &[&str]) {
    for n in (1..=parts.len()).rev() {
        let (name, parents) = (parts[n - 1], &parts[..n - 1]);
        let Ok(parent) = base.open_dir(&parents.join("/")) else {
            return;
        };
        if rustix::fs::unlinkat(&parent.fd, name, rustix::fs::AtFlags::REMOVEDIR).is_err() {
            return;
        }
        let _ = rustix::fs::fsync(&parent.fd);
    }
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
}
