//! Layer 8: project instructions (`AGENTS.md` and friends) from the git root
//! down to the working directory, each screened by the guard and capped.

use std::path::{Path, PathBuf};

use skill_core::roots::find_git_root;

use crate::screen::{Screened, cap_head_tail, screen, strip_bom};

/// File names read in every directory from the git root to the working
/// directory, in this order within a directory.
pub const CONTEXT_FILE_NAMES: [&str; 4] = ["AGENTS.md", ".knack.md", "CLAUDE.md", ".cursorrules"];
/// Each file keeps at most this many characters (head and tail).
pub const CONTEXT_FILE_MAX_CHARS: usize = 20_000;

const HEADER: &str = "\
## Project context
These files come from the project you are working in. Follow their instructions \
where they apply; a direct request from the user wins over them.";

/// Directories searched, outermost first: the git root down to `cwd`, or just
/// `cwd` outside a repository (a parent's AGENTS.md is never read then).
fn search_dirs(cwd: &Path) -> (PathBuf, Vec<PathBuf>) {
    match find_git_root(cwd) {
        Some(root) => {
            let mut dirs: Vec<PathBuf> = cwd
                .ancestors()
                .take_while(|d| d.starts_with(&root))
                .map(Path::to_path_buf)
                .collect();
            dirs.reverse();
            if dirs.is_empty() {
                dirs.push(cwd.to_path_buf());
            }
            (root, dirs)
        }
        None => (cwd.to_path_buf(), vec![cwd.to_path_buf()]),
    }
}

pub(crate) fn layer(cwd: &Path, warnings: &mut Vec<String>) -> String {
    let (base, dirs) = search_dirs(cwd);
    // Links are followed only while they stay inside the project: a CLAUDE.md
    // that points at ~/.aws/credentials must not reach the prompt.
    let boundary = base.canonicalize().unwrap_or_else(|_| base.clone());
    let mut sections: Vec<String> = Vec::new();
    // The same text under two names (CLAUDE.md linked to AGENTS.md) is shown once.
    let mut seen: Vec<String> = Vec::new();
    for dir in &dirs {
        for name in CONTEXT_FILE_NAMES {
            let path = dir.join(name);
            if !path.is_file() {
                continue;
            }
            let shown = path
                .strip_prefix(&base)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            let inside = path
                .canonicalize()
                .is_ok_and(|real| real.starts_with(&boundary));
            if !inside {
                warnings.push(format!(
                    "{shown} was not loaded into the prompt: it is a link that leads outside the project"
                ));
                continue;
            }
            let text = match knack_config::regular_file::read(&path) {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(e) => {
                    warnings.push(format!("{} cannot be read: {e}", path.display()));
                    continue;
                }
            };
            let text = strip_bom(&text).trim();
            if text.is_empty() || seen.iter().any(|s| s == text) {
                continue;
            }
            seen.push(text.to_owned());
            let body = match screen(text, name) {
                Screened::Blocked(why) => {
                    warnings.push(format!(
                        "{shown} was not loaded into the prompt: the guard flagged it ({why})"
                    ));
                    format!(
                        "[blocked: {shown} was not loaded because it looks like a prompt injection or exfiltration attempt ({why})]"
                    )
                }
                Screened::Mild(_) | Screened::Clean => {
                    let (capped, cut) = cap_head_tail(text, CONTEXT_FILE_MAX_CHARS, &shown);
                    if cut {
                        warnings.push(format!(
                            "{shown} is longer than {CONTEXT_FILE_MAX_CHARS} characters; its middle was left out of the prompt"
                        ));
                    }
                    capped
                }
            };
            sections.push(format!("### {shown}\n\n{body}"));
        }
    }
    if sections.is_empty() {
        return String::new();
    }
    format!("{HEADER}\n\n{}", sections.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn files_from_git_root_down_to_cwd_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let cwd = root.join("pkg/web");
        fs::create_dir_all(&cwd).unwrap();
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::write(root.join("AGENTS.md"), "root rules").unwrap();
        fs::write(root.join("pkg/CLAUDE.md"), "pkg rules").unwrap();
        fs::write(cwd.join(".cursorrules"), "web rules").unwrap();
        fs::write(cwd.join("AGENTS.md"), "root rules").unwrap();
        fs::write(dir.path().join("AGENTS.md"), "outside the repo").unwrap();
        let mut w = Vec::new();
        let text = layer(&cwd, &mut w);
        let a = text.find("### AGENTS.md").unwrap();
        let b = text.find("### pkg/CLAUDE.md").unwrap();
        let c = text.find("### pkg/web/.cursorrules").unwrap();
        assert!(a < b && b < c);
        assert!(!text.contains("outside the repo"));
        assert_eq!(text.matches("root rules").count(), 1);
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn without_a_repo_only_cwd_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("a");
        fs::create_dir_all(&cwd).unwrap();
        fs::write(dir.path().join("AGENTS.md"), "parent").unwrap();
        fs::write(cwd.join(".knack.md"), "here").unwrap();
        let text = layer(&cwd, &mut Vec::new());
        assert!(text.contains("### .knack.md\n\nhere"));
        assert!(!text.contains("parent"));
    }

    #[test]
    fn a_link_leading_outside_the_project_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        fs::create_dir_all(repo.join(".git")).unwrap();
        fs::create_dir_all(repo.join("docs")).unwrap();
        fs::write(dir.path().join("credentials"), "password=hunter2").unwrap();
        std::os::unix::fs::symlink(dir.path().join("credentials"), repo.join("CLAUDE.md")).unwrap();
        // A link that stays inside the project is fine.
        fs::write(repo.join("docs/rules.md"), "inside rules").unwrap();
        std::os::unix::fs::symlink(repo.join("docs/rules.md"), repo.join("AGENTS.md")).unwrap();
        let mut w = Vec::new();
        let text = layer(&repo, &mut w);
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("inside rules"), "{text}");
        assert!(
            w.iter()
                .any(|m| m.contains("CLAUDE.md") && m.contains("outside the project")),
            "{w:?}"
        );
    }
}
