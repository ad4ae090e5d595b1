//! Input history shared by every TUI session: one JSON string per line in
//! `$KNACK_HOME/history`, newest last, trimmed to the last 500 entries.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub const MAX_ENTRIES: usize = 500;

#[derive(Debug, Default)]
pub struct InputHistory {
    entries: Vec<String>,
    path: Option<PathBuf>,
    /// Position while browsing with Up/Down; `None` = editing a new entry.
    cursor: Option<usize>,
    /// What was typed before browsing started, restored past the newest entry.
    draft: String,
}

impl InputHistory {
    #[cfg(test)]
    /// History kept only in memory (tests, or a home that cannot be written).
    pub fn in_memory(entries: Vec<String>) -> Self {
        Self {
            entries,
            ..Self::default()
        }
    }

    /// Loads the file at `path`; a missing or unreadable file is an empty history.
    pub fn load(path: &Path) -> Self {
        let entries = std::fs::read_to_string(path)
            .map(|text| {
                text.lines()
                    .filter_map(|line| serde_json::from_str::<String>(line).ok())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        let skip = entries.len().saturating_sub(MAX_ENTRIES);
        Self {
            entries: entries.into_iter().skip(skip).collect(),
            path: Some(path.to_owned()),
            ..Self::default()
        }
    }

    #[cfg(test)]
    pub fn entries(&self) -> &[String] {
        &self.entries
    }

    /// Records a sent entry (not repeating the newest) and persists the list.
    pub fn record(&mut self, entry: &str) {
        self.cursor = None;
        self.draft.clear();
        if entry.trim().is_empty() || self.entries.last().is_some_and(|e| e == entry) {
            return;
        }
        self.entries.push(entry.to_owned());
        if self.entries.len() > MAX_ENTRIES {
            let extra = self.entries.len() - MAX_ENTRIES;
            self.entries.drain(..extra);
        }
        if let Some(path) = &self.path
            && let Err(err) = self.save(path)
        {
            tracing::warn!("cannot save input history to {}: {err}", path.display());
        }
    }

    /// Rewrites the whole file through a temporary sibling, so a crash never
    /// leaves half a history; 0600, since what the user typed may hold secrets.
    fn save(&self, path: &Path) -> std::io::Result<()> {
        let mut text = String::new();
        for entry in &self.entries {
            let line = serde_json::to_string(entry).map_err(std::io::Error::other)?;
            writeln!(text, "{line}").map_err(std::io::Error::other)?;
        }
        knack_config::private::write_private(path, text.as_bytes())
    }

    /// The entry before the current one; `current` is what the input holds.
    pub fn older(&mut self, current: &str) -> Option<&str> {
        let next = match self.cursor {
            None if self.entries.is_empty() => return None,
            None => {
                self.draft = current.to_owned();
                self.entries.len() - 1
            }
            Some(0) => return None,
            Some(i) => i - 1,
        };
        self.cursor = Some(next);
        self.entries.get(next).map(String::as_str)
    }

    /// The entry after the current one, then the draft typed before browsing.
    pub fn newer(&mut self) -> Option<String> {
        let i = self.cursor?;
        if i + 1 < self.entries.len() {
            self.cursor = Some(i + 1);
            self.entries.get(i + 1).cloned()
        } else {
            self.cursor = None;
            Some(std::mem::take(&mut self.draft))
        }
    }

    /// Ctrl-R: the `skip`-th newest entry containing `query` (case-insensitive),
    /// each text once; an empty query matches nothing.
    pub fn search(&self, query: &str, skip: usize) -> Option<&str> {
        if query.is_empty() {
            return None;
        }
        let needle = query.to_lowercase();
        let mut seen = std::collections::HashSet::new();
        self.entries
            .iter()
            .rev()
            .filter(|entry| entry.to_lowercase().contains(&needle))
            .filter(|entry| seen.insert(entry.as_str()))
            .nth(skip)
            .map(String::as_str)
    }

    pub fn is_browsing(&self) -> bool {
        self.cursor.is_some()
    }

    pub fn stop_browsing(&mut self) {
        self.cursor = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn browsing_walks_back_and_returns_to_the_draft() {
        let mut h = InputHistory::in_memory(vec!["one".into(), "two".into()]);
        assert_eq!(h.older("dra"), Some("two"));
        assert_eq!(h.older("two"), Some("one"));
        assert_eq!(h.older("one"), None);
        assert_eq!(h.newer().as_deref(), Some("two"));
        assert_eq!(h.newer().as_deref(), Some("dra"));
        assert_eq!(h.newer(), None);
    }

    #[test]
    fn search_finds_the_newest_match_first_and_each_text_once() {
        let h = InputHistory::in_memory(vec![
            "deploy staging".into(),
            "fix the Build".into(),
            "deploy prod".into(),
            "deploy staging".into(),
        ]);
        assert_eq!(h.search("deploy", 0), Some("deploy staging"));
        assert_eq!(h.search("deploy", 1), Some("deploy prod"));
        // The older copy of "deploy staging" is not offered twice.
        assert_eq!(h.search("deploy", 2), None);
        assert_eq!(h.search("build", 0), Some("fix the Build"));
        assert_eq!(h.search("", 0), None);
        assert_eq!(h.search("nothing", 0), None);
    }

    #[test]
    fn persists_multiline_entries_and_keeps_the_last_500() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history");
        let mut h = InputHistory::load(&path);
        for i in 0..(MAX_ENTRIES + 20) {
            h.record(&format!("entry {i}\nsecond line"));
        }
        h.record("entry 519\nsecond line"); // a repeat of the newest is skipped
        let again = InputHistory::load(&path);
        assert_eq!(again.entries().len(), MAX_ENTRIES);
        assert_eq!(again.entries()[0], "entry 20\nsecond line");
        assert_eq!(
            again.entries().last().map(String::as_str),
            Some("entry 519\nsecond line")
        );
    }
}
