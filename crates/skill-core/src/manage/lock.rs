//! One advisory lock per skill folder, held across read-modify-write, so two
//! processes writing the same skill take turns and never lose an update.

use std::fs::{self, File};
use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Held while a skill is being changed; dropping it releases the lock.
#[derive(Debug)]
pub struct SkillLock {
    _file: File,
    pub path: PathBuf,
}

/// Where the lock files live: outside the skill folders, so they never show
/// up in a skill's content, scan or hash.
pub fn locks_dir(skills_dir: &Path) -> PathBuf {
    skills_dir.join(".locks")
}

/// Blocks until this process holds the lock of `skill_dir`. The folder need
/// not exist yet (a skill being created is locked by its future path).
pub fn lock_skill(skills_dir: &Path, skill_dir: &Path) -> io::Result<SkillLock> {
    use rustix::fs::{Mode, OFlags};
    let dir = locks_dir(skills_dir);
    fs::create_dir_all(skills_dir)?;
    // `.locks` is opened beneath the root and never through a link, so a
    // planted link cannot make knack create files elsewhere.
    let root = crate::beneath::Base::open(skills_dir)?;
    let (locks, _) = crate::beneath::create_dirs_at(root.fd.as_fd(), &[".locks"])?;
    let name = format!("{}.lock", key(skill_dir));
    let path = dir.join(&name);
    let fd = rustix::fs::openat(
        &locks,
        name.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o644),
    )?;
    let file = File::from(fd);
    file.lock()?;
    Ok(SkillLock { _file: file, path })
}

/// A stable name for a folder: the hash of its path with every existing
/// ancestor resolved, so two spellings of one folder share a lock.
fn key(skill_dir: &Path) -> String {
    let normalized = normalize(skill_dir);
    let digest = Sha256::digest(normalized.to_string_lossy().as_bytes());
    digest.iter().take(12).map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut cur = path;
    loop {
        if let Ok(canon) = fs::canonicalize(cur) {
            let mut out = canon;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (cur.file_name(), cur.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                cur = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier};

    #[test]
    fn two_spellings_share_one_lock_file() {
        let home = tempfile::tempdir().unwrap();
        let skills = home.path().join("skills");
        fs::create_dir_all(skills.join("a")).unwrap();
        let one = lock_skill(&skills, &skills.join("a")).unwrap().path;
        let two = lock_skill(&skills, &skills.join("./a")).unwrap().path;
        assert_eq!(one, two);
        let missing = lock_skill(&skills, &skills.join("new/skill")).unwrap();
        assert!(missing.path.starts_with(locks_dir(&skills)));
    }

    #[test]
    fn the_lock_excludes_other_holders() {
        let home = tempfile::tempdir().unwrap();
        let skills = home.path().join("skills");
        let inside = Arc::new(AtomicUsize::new(0));
        let barrier = Arc::new(Barrier::new(4));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (skills, inside, barrier) = (skills.clone(), inside.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    for _ in 0..20 {
                        let _guard = lock_skill(&skills, &skills.join("s")).unwrap();
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                        std::thread::yield_now();
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }
}
