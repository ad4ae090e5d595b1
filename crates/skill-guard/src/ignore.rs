//! `.skillignore`: gitignore-like globs that keep paths out of the scan.
//! `SKILL.md` at the skill root is never ignored, whatever the file says.

use std::path::Path;

use crate::{Error, Result};

/// Name of the ignore file at a skill's root.
pub const IGNORE_FILE: &str = ".skillignore";

/// One line of the ignore file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    glob: Vec<u8>,
    /// `!pattern`: re-include what an earlier rule excluded.
    negated: bool,
    /// A trailing `/`: only directories (and so everything under them).
    dir_only: bool,
    /// A leading `/` or a `/` inside: matched against the path from the root.
    anchored: bool,
}

/// The parsed ignore rules of one skill. Later rules win, as in git.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillIgnore {
    rules: Vec<Rule>,
}

impl SkillIgnore {
    /// Parses ignore-file text: one glob per line, `#` comments, blank lines
    /// skipped; `*` and `?` stay inside one path segment, `**` crosses them,
    /// `[abc]`/`[!a-z]` are classes, `!` negates, `/` anchors or marks a directory.
    pub fn parse(text: &str) -> SkillIgnore {
        let rules = text
            .lines()
            .map(|l| l.trim_end_matches('\r').trim_end())
            .filter(|l| !l.trim_start().is_empty() && !l.trim_start().starts_with('#'))
            .filter_map(|l| {
                let l = l.trim_start();
                let (negated, l) = match l.strip_prefix('!') {
                    Some(rest) => (true, rest),
                    None => (false, l.strip_prefix('\\').unwrap_or(l)),
                };
                let dir_only = l.ends_with('/');
                let l = l.trim_end_matches('/');
                let leading = l.starts_with('/');
                let l = l.trim_start_matches('/');
                if l.is_empty() {
                    return None;
                }
                Some(Rule {
                    glob: l.as_bytes().to_vec(),
                    negated,
                    dir_only,
                    anchored: leading || l.contains('/'),
                })
            })
            .collect();
        SkillIgnore { rules }
    }

    /// Reads `<dir>/.skillignore`; a missing file means no rules.
    pub fn load(dir: &Path) -> Result<SkillIgnore> {
        let path = dir.join(IGNORE_FILE);
        // Only a regular file holds rules: a FIFO there would block the read,
        // and with no rules every file is scanned (the safe direction).
        if std::fs::metadata(&path).is_ok_and(|m| !m.is_file()) {
            return Ok(SkillIgnore::default());
        }
        match std::fs::read(&path) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                Ok(SkillIgnore::parse(text.trim_start_matches('\u{feff}')))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(SkillIgnore::default()),
            Err(e) => Err(Error::io(path, e)),
        }
    }

    /// Whether the file at `rel` (relative, `/`-separated) is excluded.
    pub fn is_ignored(&self, rel: &str) -> bool {
        let rel = rel.trim_start_matches("./");
        if rel == "SKILL.md" {
            return false;
        }
        if rel == IGNORE_FILE {
            return true;
        }
        let mut ignored = false;
        for rule in &self.rules {
            if rule.matches(rel) {
                ignored = !rule.negated;
            }
        }
        ignored
    }
}

impl Rule {
    fn matches(&self, rel: &str) -> bool {
        let segments: Vec<&str> = rel.split('/').collect();
        let last = segments.len().saturating_sub(1);
        if self.anchored {
            // Any leading run of segments: the file itself, or a directory above it.
            let mut prefix_end = 0;
            for (i, seg) in segments.iter().enumerate() {
                prefix_end += seg.len() + usize::from(i > 0);
                let is_dir = i < last;
                if (is_dir || !self.dir_only)
                    && glob_match(&self.glob, &rel.as_bytes()[..prefix_end])
                {
                    return true;
                }
            }
            false
        } else {
            segments.iter().enumerate().any(|(i, seg)| {
                let is_dir = i < last;
                (is_dir || !self.dir_only) && glob_match(&self.glob, seg.as_bytes())
            })
        }
    }
}

/// Glob match over a whole string. `*`/`?` do not cross `/`; `**` does.
fn glob_match(pat: &[u8], text: &[u8]) -> bool {
    match pat.first() {
        None => text.is_empty(),
        Some(b'*') if pat.get(1) == Some(&b'*') => {
            // `**/` may also match zero directories.
            let rest = pat[2..].strip_prefix(b"/").unwrap_or(&pat[2..]);
            (0..=text.len())
                .any(|i| glob_match(rest, &text[i..]) || glob_match(&pat[2..], &text[i..]))
        }
        Some(b'*') => {
            let rest = &pat[1..];
            for i in 0..=text.len() {
                if glob_match(rest, &text[i..]) {
                    return true;
                }
                if text.get(i) == Some(&b'/') {
                    break;
                }
            }
            false
        }
        Some(b'?') => {
            matches!(text.first(), Some(&c) if c != b'/') && glob_match(&pat[1..], &text[1..])
        }
        Some(b'[') => match class_match(&pat[1..], text.first().copied()) {
            Some((true, used)) => glob_match(&pat[1 + used..], &text[1..]),
            Some((false, _)) => false,
            // An unclosed `[` is a literal.
            None => text.first() == Some(&b'[') && glob_match(&pat[1..], &text[1..]),
        },
        Some(b'\\') if pat.len() > 1 => {
            text.first() == Some(&pat[1]) && glob_match(&pat[2..], &text[1..])
        }
        Some(&c) => text.first() == Some(&c) && glob_match(&pat[1..], &text[1..]),
    }
}

/// Matches one byte against a class body (after `[`). Returns whether it
/// matched and how many pattern bytes the class used, or `None` if unclosed.
fn class_match(body: &[u8], c: Option<u8>) -> Option<(bool, usize)> {
    let close = body.iter().skip(1).position(|&b| b == b']')? + 1;
    let (negate, set) = match body.first() {
        Some(b'!') | Some(b'^') => (true, &body[1..close]),
        _ => (false, &body[..close]),
    };
    let Some(c) = c else {
        return Some((false, close + 1));
    };
    if c == b'/' {
        return Some((false, close + 1));
    }
    let mut hit = false;
    let mut i = 0;
    while i < set.len() {
        if i + 2 < set.len() && set[i + 1] == b'-' {
            hit |= set[i] <= c && c <= set[i + 2];
            i += 3;
        } else {
            hit |= set[i] == c;
            i += 1;
        }
    }
    Some((hit != negate, close + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_directories_anchors_and_negation() {
        let ig = SkillIgnore::parse(
            "# fixtures are samples\n\ndocs/\nrelease-notes.md\n*.jsonl\n/build\ntests/**/*.snap\n!docs/keep.md\nSKILL.md\n",
        );
        assert!(ig.is_ignored("docs/plans/x.md"));
        assert!(
            ig.is_ignored("nested/docs/x.md"),
            "unanchored dir matches at any depth"
        );
        assert!(
            !ig.is_ignored("docs"),
            "a dir-only rule does not match a file named docs"
        );
        assert!(ig.is_ignored("release-notes.md"));
        assert!(ig.is_ignored("sub/release-notes.md"));
        assert!(ig.is_ignored("fixtures/data.jsonl"));
        assert!(ig.is_ignored("build/out.txt"));
        assert!(
            !ig.is_ignored("src/build/out.txt"),
            "leading slash anchors to the root"
        );
        assert!(ig.is_ignored("tests/a/b/c.snap"));
        assert!(ig.is_ignored("tests/c.snap"), "** matches zero directories");
        assert!(!ig.is_ignored("docs/keep.md"), "negation re-includes");
        assert!(!ig.is_ignored("scripts/run.py"));
        assert!(!ig.is_ignored("SKILL.md"), "SKILL.md is never ignored");
        assert!(ig.is_ignored(".skillignore"));
    }

    #[test]
    fn star_stays_in_one_segment_and_classes_work() {
        let ig = SkillIgnore::parse("assets/*.png\nlog[0-9].txt\n");
        assert!(ig.is_ignored("assets/a.png"));
        assert!(!ig.is_ignored("assets/sub/a.png"));
        assert!(ig.is_ignored("log3.txt"));
        assert!(!ig.is_ignored("logx.txt"));
    }

    #[test]
    fn even_a_catch_all_keeps_skill_md() {
        let ig = SkillIgnore::parse("*\n");
        assert!(ig.is_ignored("scripts/x.sh"));
        assert!(!ig.is_ignored("SKILL.md"));
    }

    #[test]
    fn load_reads_the_file_or_defaults() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            SkillIgnore::load(dir.path()).unwrap(),
            SkillIgnore::default()
        );
        std::fs::write(dir.path().join(IGNORE_FILE), "\u{feff}junk/\n").unwrap();
        assert!(SkillIgnore::load(dir.path()).unwrap().is_ignored("junk/a"));
    }
}
