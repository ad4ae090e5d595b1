//! Unified diffs of file edits: what an approval for an edit shows, and what the edit
//! cards show after a `write_file` or `patch`. One format for both.

use std::path::Path;

use similar::TextDiff;

/// Lines of context around each change.
const CONTEXT_LINES: usize = 3;

/// The unified diff that turns `old` into `new`, headed with `path`. A new file (empty
/// `old`) is a diff of only added lines, so its head is what a reader sees first.
pub fn unified(path: &Path, old: &str, new: &str) -> String {
    let name = path.display().to_string();
    let old_name = if old.is_empty() {
        "/dev/null".to_owned()
    } else {
        format!("a/{}", name.trim_start_matches('/'))
    };
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(CONTEXT_LINES)
        .header(&old_name, &format!("b/{}", name.trim_start_matches('/')))
        .to_string()
}

/// Lines added and removed in a unified diff, for a one-line summary (`+3 -1`).
pub fn stat(diff: &str) -> (usize, usize) {
    diff.lines()
        .filter(|l| !l.starts_with("+++") && !l.starts_with("---"))
        .fold((0, 0), |(add, del), line| match line.as_bytes().first() {
            Some(b'+') => (add + 1, del),
            Some(b'-') => (add, del + 1),
            _ => (add, del),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_shows_its_lines_with_context() {
        let diff = unified(
            Path::new("/w/a.txt"),
            "one\ntwo\nthree\n",
            "one\n2\nthree\n",
        );
        assert!(diff.starts_with("--- a/w/a.txt\n+++ b/w/a.txt\n"), "{diff}");
        assert!(diff.contains("-two\n+2\n"), "{diff}");
        assert_eq!(stat(&diff), (1, 1));
    }

    #[test]
    fn a_new_file_is_all_additions_from_dev_null() {
        let diff = unified(Path::new("n.txt"), "", "a\nb\n");
        assert!(diff.starts_with("--- /dev/null\n+++ b/n.txt\n"), "{diff}");
        assert_eq!(stat(&diff), (2, 0));
    }
}
