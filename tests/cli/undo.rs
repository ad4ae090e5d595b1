//! `knack undo` end to end: a headless turn patches one file, writes a new one and runs a
//! command that edits a third; undo puts all three back, in and outside git, without
//! touching git's index. A second undo has nothing left.

use serde_json::json;
use test_support::{ScriptedReply, git_repo};

use super::common::{Env, mock, run_cmd, success};

/// One turn: a patch, a new file, then a command that rewrites `data.txt`.
fn changing_turn(env: &Env, cwd: &std::path::Path) {
    let server = mock();
    let patch = json!({"path": "notes.txt", "old_string": "alpha", "new_string": "ALPHA"});
    let write = json!({"path": "made/new.txt", "content": "fresh\n"});
    let command = json!({"command": "echo rewritten > data.txt"});
    server.enqueue(ScriptedReply::tool_calls([
        ("c1", "patch", patch.to_string().as_str()),
        ("c2", "write_file", write.to_string().as_str()),
        ("c3", "terminal", command.to_string().as_str()),
    ]));
    server.enqueue(ScriptedReply::text("changed"));
    success(
        run_cmd(env, &server)
            .current_dir(cwd)
            .args(["run", "--no-review", "change things"]),
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("notes.txt")).unwrap(),
        "ALPHA\n"
    );
    assert!(cwd.join("made/new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(cwd.join("data.txt")).unwrap(),
        "rewritten\n"
    );
}

fn assert_undone(env: &Env, cwd: &std::path::Path) {
    let out = success(env.knack().current_dir(cwd).arg("undo"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("change things"), "{text}");
    assert!(
        text.contains("notes.txt") && text.contains("data.txt"),
        "{text}"
    );
    assert!(
        text.contains("removed") && text.contains("new.txt"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("notes.txt")).unwrap(),
        "alpha\n"
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("data.txt")).unwrap(),
        "original\n"
    );
    assert!(!cwd.join("made/new.txt").exists());
    let again = env.knack().current_dir(cwd).arg("undo").output().unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("nothing to undo"));
}

#[test]
fn undo_restores_a_turns_files_outside_git() {
    let env = Env::new();
    let cwd = env.cwd.path().canonicalize().unwrap();
    std::fs::write(cwd.join("notes.txt"), "alpha\n").unwrap();
    std::fs::write(cwd.join("data.txt"), "original\n").unwrap();
    changing_turn(&env, &cwd);
    assert_undone(&env, &cwd);
}

#[test]
fn undo_restores_a_turns_files_in_git_and_leaves_the_index_alone() {
    let env = Env::new();
    let repo = git_repo(&[("notes.txt", "alpha\n"), ("data.txt", "original\n")]);
    let cwd = repo.path().canonicalize().unwrap();
    let index = std::fs::read(cwd.join(".git/index")).unwrap();
    changing_turn(&env, &cwd);
    assert_undone(&env, &cwd);
    assert_eq!(std::fs::read(cwd.join(".git/index")).unwrap(), index);
}
