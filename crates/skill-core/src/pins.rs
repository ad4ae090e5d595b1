//! Pinned skills: the user's "leave this one alone". A pinned skill cannot be
//! changed by the background review at all, nor deleted or archived by the
//! model in the foreground; the user pins and unpins with `knack skills pin`.
//!
//! The pins live in one small file, `skills/.pins.json`, keyed by qualified
//! id, and nowhere else. Not in state.db: the write rules that enforce a pin
//! live in `skill_manage`, which never opens the session store, and a rule
//! must read the one source of truth it enforces. Not inside the skill
//! folder either: a marker file there would change the skill's content hash
//! (history, sync's modified-check, the hub's lock) and a rollback would
//! quietly take a pin away or bring one back. Archive and restore keep a
//! skill's qualified id, so its pin survives both.

use std::collections::BTreeSet;
use std::io;
use std::path::PathBuf;

use knack_config::KnackHome;
use serde::{Deserialize, Serialize};

use crate::manage::{atomic, lock};

const PINS_FILE: &str = ".pins.json";

#[derive(Debug, Default, Serialize, Deserialize)]
struct PinsFile {
    #[serde(default)]
    pinned: BTreeSet<String>,
}

pub fn pins_path(home: &KnackHome) -> PathBuf {
    home.skills_dir().join(PINS_FILE)
}

/// The qualified ids of every pinned skill. A file that cannot be read or
/// parsed pins nothing, but says so in the log: a pin is a protection, and
/// losing one silently would be worse than a warning.
pub fn pinned(home: &KnackHome) -> BTreeSet<String> {
    let path = pins_path(home);
    match std::fs::read_to_string(&path) {
        Ok(text) => match serde_json::from_str::<PinsFile>(&text) {
            Ok(file) => file.pinned,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "the pinned skills file is not readable JSON; no skill counts as pinned");
                BTreeSet::new()
            }
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => BTreeSet::new(),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "cannot read the pinned skills file");
            BTreeSet::new()
        }
    }
}

pub fn is_pinned(home: &KnackHome, qualified_id: &str) -> bool {
    pinned(home).contains(qualified_id)
}

/// Pins or unpins `qualified_id`; returns whether anything changed.
/// Serialized by a lock, so two `knack skills pin` at once keep both pins.
pub fn set_pinned(home: &KnackHome, qualified_id: &str, pin: bool) -> io::Result<bool> {
    let path = pins_path(home);
    let _lock = lock::lock_skill(&home.skills_dir(), &path)?;
    let mut pins = pinned(home);
    let changed = if pin {
        pins.insert(qualified_id.to_owned())
    } else {
        pins.remove(qualified_id)
    };
    if changed {
        let mut text =
            serde_json::to_string_pretty(&PinsFile { pinned: pins }).map_err(io::Error::other)?;
        text.push('\n');
        atomic::write(&path, text.as_bytes())?;
    }
    Ok(changed)
}

/// The sentence a refusal ends with: how the user lifts the pin.
pub fn unpin_hint(name: &str) -> String {
    format!("The user pinned it; they can run `knack skills unpin {name}` if the change is wanted.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_round_trip_and_a_broken_file_pins_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let home = KnackHome::at(tmp.path());
        assert!(!is_pinned(&home, "user:a/b"));
        assert!(set_pinned(&home, "user:a/b", true).unwrap());
        assert!(
            !set_pinned(&home, "user:a/b", true).unwrap(),
            "already pinned"
        );
        assert!(set_pinned(&home, "user:c", true).unwrap());
        assert!(is_pinned(&home, "user:a/b"));
        assert!(set_pinned(&home, "user:a/b", false).unwrap());
        assert_eq!(pinned(&home), BTreeSet::from(["user:c".to_owned()]));
        std::fs::write(pins_path(&home), "{not json").unwrap();
        assert!(pinned(&home).is_empty());
    }
}
