//! Real git repositories for hub tests: a fixed identity and no user or
//! system configuration, so they behave the same on every machine.

use std::path::Path;
use std::process::Command;

/// Runs `git ARGS` in `dir`; a failure fails the test with git's message.
pub fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output();
    match out {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => panic!("cannot run git {args:?}: {e}"),
    }
}

/// A new repository in a temp dir with `files` committed on branch `main`.
pub fn git_repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => panic!("cannot make a temp dir: {e}"),
    };
    git(dir.path(), &["init", "-q", "-b", "main"]);
    for (rel, body) in files {
        let path = dir.path().join(rel);
        if let Some(parent) = path.parent()
            && let Err(e) = std::fs::create_dir_all(parent)
        {
            panic!("cannot create {}: {e}", parent.display());
        }
        if let Err(e) = std::fs::write(&path, body) {
            panic!("cannot write {}: {e}", path.display());
        }
    }
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "initial"]);
    dir
}
