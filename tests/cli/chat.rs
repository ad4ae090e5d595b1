//! `knack chat` and bare `knack` outside a terminal: they refuse cleanly
//! instead of drawing a TUI into a pipe.

use super::common::Env;

#[test]
fn chat_without_a_terminal_is_a_usage_error() {
    let env = Env::new();
    env.knack()
        .args(["chat", "-s", "deploy"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("needs a terminal"));
}

#[test]
fn bare_knack_in_a_pipe_still_asks_for_a_command() {
    let env = Env::new();
    env.knack()
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no command given"));
}

#[test]
fn chat_help_lists_resume_and_skill_preloads() {
    let env = Env::new();
    let out = env.knack().args(["chat", "--help"]).output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--resume <ID>"), "{help}");
    assert!(help.contains("-s, --skill <SKILL>"), "{help}");
}
