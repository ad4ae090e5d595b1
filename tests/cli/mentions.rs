//! `@path` mentions in `knack run`: the file's text reaches the model with
//! the message, and a mention that cannot be attached stops the run with
//! exit code 2 before any request.

use pretty_assertions::assert_eq;
use serde_json::json;
use test_support::ScriptedReply;

use super::common::{Env, mock, run_cmd, success, write_file};

#[test]
fn a_mentioned_file_reaches_the_request_with_its_path_and_line_count() {
    let env = Env::new();
    let server = mock();
    server.enqueue(ScriptedReply::text("Two things to do."));
    write_file(
        &env.cwd.path().join("notes/todo.md"),
        "- buy milk\n- fix the build\n",
    );
    let out = success(run_cmd(&env, &server).args([
        "run",
        "what is on @notes/todo.md? (mail bob@example.com if unsure)",
    ]));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Two things to do.\n");
    let reqs = server.chat_requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(
        reqs[0].messages()[1],
        json!({
            "role": "user",
            "content": "what is on @notes/todo.md? (mail bob@example.com if unsure)\n\n\
                        [Attached file: notes/todo.md · 2 lines]\n\
                        <file path=\"notes/todo.md\">\n- buy milk\n- fix the build\n</file>"
        })
    );
}

#[test]
fn a_missing_file_exits_2_before_any_request() {
    let env = Env::new();
    let server = mock();
    server.enqueue(ScriptedReply::text("never sent"));
    let out = run_cmd(&env, &server)
        .args(["run", "explain @src/mian.rs"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("@src/mian.rs: no such file"),
        "names the mention: {stderr}"
    );
    assert!(server.requests().is_empty(), "no request was made");
}

#[test]
fn knacks_key_files_and_binary_files_are_refused() {
    let env = Env::new();
    let server = mock();
    env.write(".env", "KNACK_API_KEY=sk-very-secret\n");
    std::fs::write(env.cwd.path().join("logo.png"), b"\x89PNG\0\0\0data").unwrap();
    let secret = format!("show @{}", env.home_path(".env").display());
    for (prompt, expected) in [
        (secret.as_str(), "one of knack's key files"),
        ("describe @logo.png", "looks like a binary file"),
    ] {
        let out = run_cmd(&env, &server)
            .args(["run", "--json", prompt])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{prompt}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(expected), "{prompt}: {stdout}");
        assert!(!stdout.contains("sk-very-secret"));
    }
    assert!(server.requests().is_empty(), "no request was made");
}
