//! Reading the small JSON state files knack keeps beside the user's data
//! (skill pins, the hub lock, the hub's taps). The rule lives here, once:
//! a state file that exists but cannot be read is never treated as empty.
//! Reading it as empty would fail open (no pins, so a pinned skill may be
//! deleted; no lock, so hub skills look hand-made; no taps, so the next
//! write drops them). Instead the reader gets an error that names the file,
//! and a byte-for-byte copy is kept as `<file>.damaged` so a later write that
//! the user forces cannot lose what was in it.
//!
//! Only regular files are read (see [`crate::regular_file`]).

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::regular_file;

/// `path` read whole, at most `max` bytes; `Ok(None)` when it does not exist.
fn read_capped(path: &Path, max: u64) -> io::Result<Option<Vec<u8>>> {
    let file = match regular_file::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("it is larger than {max} bytes"),
        ));
    }
    Ok(Some(bytes))
}

/// Larger state files are refused rather than read into memory.
const MAX_STATE_BYTES: u64 = 64 * 1024 * 1024;

/// A state file that exists but could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{} {reason}{}; {hint}", path.display(), kept_note(kept.as_deref()))]
pub struct DamagedState {
    pub path: PathBuf,
    pub reason: String,
    /// Where the copy of the damaged bytes is (none when nothing was readable).
    pub kept: Option<PathBuf>,
    pub hint: String,
}

fn kept_note(kept: Option<&Path>) -> String {
    kept.map(|k| format!(" (a copy is kept at {})", k.display()))
        .unwrap_or_default()
}

/// The path a damaged `path` is copied to.
pub fn damaged_copy_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".damaged");
    path.with_file_name(name)
}

/// Reads and parses the JSON state file at `path`. `Ok(None)` when it does
/// not exist; an error naming the file when it exists but cannot be read or
/// parsed, after keeping a copy of its bytes at `<file>.damaged`. `hint`
/// tells the user how to recover (it ends the message).
pub fn read_json<T: DeserializeOwned>(path: &Path, hint: &str) -> Result<Option<T>, DamagedState> {
    let damaged = |reason: String, kept: Option<PathBuf>| DamagedState {
        path: path.to_path_buf(),
        reason,
        kept,
        hint: hint.to_owned(),
    };
    let bytes = match read_capped(path, MAX_STATE_BYTES) {
        Ok(None) => return Ok(None),
        Ok(Some(bytes)) => bytes,
        Err(e) => return Err(damaged(format!("cannot be read ({e})"), None)),
    };
    let parsed = std::str::from_utf8(&bytes)
        .map_err(|e| format!("is not valid UTF-8 ({e})"))
        .and_then(|text| {
            serde_json::from_str::<T>(text).map_err(|e| format!("is not valid JSON ({e})"))
        });
    match parsed {
        Ok(value) => Ok(Some(value)),
        Err(reason) => {
            let copy = damaged_copy_path(path);
            let kept = keep_copy(&copy, &bytes).then_some(copy);
            Err(damaged(reason, kept))
        }
    }
}

/// Writes the damaged bytes beside the file, unless the same bytes are
/// already there; whether a copy with these bytes now exists.
fn keep_copy(copy: &Path, bytes: &[u8]) -> bool {
    if matches!(read_capped(copy, MAX_STATE_BYTES), Ok(Some(existing)) if existing == bytes) {
        return true;
    }
    // Never write through something that is not a plain file (or nothing).
    if fs::symlink_metadata(copy).is_ok_and(|m| !m.is_file()) {
        return false;
    }
    fs::write(copy, bytes).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize, PartialEq)]
    struct Example {
        items: Vec<String>,
    }

    #[test]
    fn a_missing_file_is_none_and_a_good_one_parses() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        assert!(read_json::<Example>(&path, "fix it").unwrap().is_none());
        fs::write(&path, r#"{"items":["a"]}"#).unwrap();
        assert_eq!(
            read_json::<Example>(&path, "fix it").unwrap(),
            Some(Example {
                items: vec!["a".into()]
            })
        );
        assert!(!damaged_copy_path(&path).exists());
    }

    #[test]
    fn damaged_bytes_fail_with_the_path_and_are_kept_beside_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        for bytes in [&b"{not json"[..], &[0xff, 0xfe, 0x00, 0x9c][..], &b""[..]] {
            fs::write(&path, bytes).unwrap();
            let err = read_json::<Example>(&path, "restore it from a backup").unwrap_err();
            let text = err.to_string();
            assert!(text.contains(&path.display().to_string()), "{text}");
            assert!(text.contains("state.json.damaged"), "{text}");
            assert!(text.ends_with("restore it from a backup"), "{text}");
            assert_eq!(fs::read(damaged_copy_path(&path)).unwrap(), bytes);
            // The original stays where it was, so the next read fails too.
            assert_eq!(fs::read(&path).unwrap(), bytes);
        }
    }

    #[test]
    fn a_fifo_in_place_of_the_file_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &path,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        let err = read_json::<Example>(&path, "replace it").unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        assert!(err.kept.is_none());
        let folder = dir.path().join("dir.json");
        fs::create_dir(&folder).unwrap();
        assert!(read_json::<Example>(&folder, "replace it").is_err());
    }
}
