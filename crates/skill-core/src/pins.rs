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

/// The qualified ids of every pinned skill, or why the pins file cannot be
/// read (a missing file pins nothing). A damaged file is never read as
/// empty: the error names it, and its bytes are kept as `.pins.json.damaged`.
pub fn read_pins(home: &KnackHome) -> io::Result<BTreeSet<String>> {
    let path = pins_path(home);
    match knack_config::state_file::read_json::<PinsFile>(
        &path,
        "fix it, or delete it to unpin every skill",
    ) {
        Ok(file) => Ok(file.map(|f| f.pinned).unwrap_or_default()),
        Err(e) => Err(io::Error::new(io::ErrorKind::InvalidData, e.to_string())),
    }
}

/// What the write rules know about one skill's pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinStatus {
    Pinned,
    NotPinned,
    /// The pins file cannot be read; the skill is treated as pinned (a rule
    /// that protects the user's choice fails closed), and this says why.
    Unknown(String),
}

impl PinStatus {
    /// Whether a write that a pin forbids must be refused.
    pub fn protects(&self) -> bool {
        !matches!(self, PinStatus::NotPinned)
    }

    /// The refusal for `action` ("deleted", "archived", …) on `name`, when
    /// the pin (or an unreadable pins file) forbids it.
    pub fn refusal(&self, name: &str, action: &str) -> Option<String> {
        match self {
            PinStatus::NotPinned => None,
            PinStatus::Pinned => Some(format!("'{name}' is pinned, so it cannot be {action}")),
            PinStatus::Unknown(why) => Some(format!(
                "'{name}' cannot be {action}: the pins file cannot be read, so every skill counts as pinned ({why})"
            )),
        }
    }
}

/// The pin status of `qualified_id`, failing closed on a damaged pins file.
pub fn pin_status(home: &KnackHome, qualified_id: &str) -> PinStatus {
    match read_pins(home) {
        Ok(pins) if pins.contains(qualified_id) => PinStatus::Pinned,
        Ok(_) => PinStatus::NotPinned,
        Err(e) => {
            tracing::warn!(error = %e, "every skill counts as pinned");
            PinStatus::Unknown(e.to_string())
        }
    }
}

/// Whether `qualified_id` is in a readable pins file (for display and for
/// resolving names; the write rules use [`pin_status`], which fails closed).
pub fn is_pinned(home: &KnackHome, qualified_id: &str) -> bool {
    pin_status(home, qualified_id) == PinStatus::Pinned
}

/// Pins or unpins `qualified_id`; returns whether anything changed.
/// Serialized by a lock, so two `knack skills pin` at once keep both pins.
pub fn set_pinned(home: &KnackHome, qualified_id: &str, pin: bool) -> io::Result<bool> {
    let path = pins_path(home);
    let _lock = lock::lock_skill(&home.skills_dir(), &path)?;
    // A file that does not read is never replaced: the pins in it would be lost.
    let mut pins = read_pins(home)?;
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
    fn pins_round_trip_and_a_broken_file_pins_nothing_and_is_never_overwritten() {
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
        assert_eq!(
            read_pins(&home).unwrap(),
            BTreeSet::from(["user:c".to_owned()])
        );
        std::fs::write(pins_path(&home), "{not json").unwrap();
        // A damaged file protects every skill and keeps a copy of itself.
        assert!(pin_status(&home, "user:c").protects());
        assert!(pin_status(&home, "user:never-pinned").protects());
        let refusal = pin_status(&home, "user:x").refusal("x", "deleted").unwrap();
        assert!(refusal.contains(".pins.json"), "{refusal}");
        assert_eq!(
            std::fs::read_to_string(pins_path(&home).with_file_name(".pins.json.damaged")).unwrap(),
            "{not json"
        );
        let err = set_pinned(&home, "user:d", true).unwrap_err();
        assert!(err.to_string().contains("is not valid JSON"), "{err}");
        assert_eq!(
            std::fs::read_to_string(pins_path(&home)).unwrap(),
            "{not json",
            "a broken pins file is left for the user to mend"
        );
    }
}
