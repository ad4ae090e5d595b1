//! Bad input on disk never hangs knack and never fails open: FIFOs where
//! files belong are skipped and reported, control characters never reach the
//! terminal or the prompt raw, damaged state files are errors naming them
//! (never read as empty), and config errors of any kind exit 3.
//! Every command runs with a timeout, so a hang fails the test fast.

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use test_support::ScriptedReply;

use super::common::{Env, mock, run_cmd, stdout_json};

const LIMIT: Duration = Duration::from_secs(60);

fn fifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        path,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
    )
    .unwrap();
}

fn run(env: &Env, args: &[&str]) -> (Option<i32>, String, String) {
    let out = env.knack().args(args).timeout(LIMIT).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_fifo_named_skill_md_is_skipped_by_every_reader_and_reported_by_doctor() {
    let env = Env::new();
    env.skill("good", "good", "Use when something good is needed");
    fifo(&env.home_path("skills/pipe/SKILL.md"));
    // An external folder holds one too.
    let external = tempfile::tempdir().unwrap();
    fifo(&external.path().join("ext-pipe/SKILL.md"));
    env.write(
        "config.yaml",
        &format!(
            "skills:\n  external_dirs:\n    - {}\n",
            external.path().display()
        ),
    );
    let skills = env.home_path("skills").display().to_string();
    let ext = external.path().display().to_string();
    for args in [
        &["skills", "list"][..],
        &["prompt", "show"],
        &["skills", "validate", &skills, &ext],
    ] {
        let (code, _, _) = run(&env, args);
        assert!(code.is_some(), "{args:?} was killed (a hang?)");
    }
    let (code, out, _) = run(&env, &["skills", "list"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("good"), "{out}");
    let (code, out, _) = run(&env, &["skills", "doctor"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.matches("is not a regular file").count() >= 2,
        "both FIFOs reported: {out}"
    );
}

#[test]
fn a_fifo_under_references_fails_skill_view_instead_of_hanging() {
    let env = Env::new();
    env.skill("good", "good", "Use when something good is needed");
    fifo(&env.home_path("skills/good/references/pipe.md"));
    let (code, _, err) = run(
        &env,
        &["skills", "view", "good", "--file", "references/pipe.md"],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
    // The skill itself still reads.
    let (code, out, _) = run(&env, &["skills", "view", "good"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("Steps for good"), "{out}");
}

#[test]
fn knack_run_with_a_fifo_in_the_library_reaches_the_model() {
    let env = Env::new();
    env.skill("good", "good", "Use when something good is needed");
    fifo(&env.home_path("skills/pipe/SKILL.md"));
    let server = mock();
    server.enqueue(ScriptedReply::text("done"));
    let out = run_cmd(&env, &server).args(["run", "hi"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    let body = sent[0].body.to_string();
    assert!(
        body.contains("Use when something good is needed"),
        "the index lists the readable skill"
    );
}

#[test]
fn escape_sequences_in_descriptions_never_reach_the_terminal_or_the_prompt() {
    let env = Env::new();
    env.write(
        "skills/esc/SKILL.md",
        "---\nname: esc\ndescription: \"Use when \\e[2J clearing \\e]52;c;aGVsbG8=\\a the \\u202e screen\"\n---\nBody \u{1b}[31m red.\n",
    );
    // A binary SKILL.md: its first body line becomes the description.
    std::fs::create_dir_all(env.home_path("skills/bin")).unwrap();
    std::fs::write(
        env.home_path("skills/bin/SKILL.md"),
        b"---\nname: bin\n---\n\x1b]0;owned\x07\x00\x01\x02 binary\n",
    )
    .unwrap();
    for args in [
        &["skills", "list"][..],
        &["prompt", "show"],
        &["skills", "view", "esc"],
    ] {
        let (code, out, err) = run(&env, args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        for raw in ['\u{1b}', '\u{7}', '\u{202e}', '\0', '\u{1}'] {
            assert!(!out.contains(raw), "{args:?} printed {raw:?}: {out:?}");
        }
        assert!(out.contains("^[") || args[1] == "view", "{args:?}: {out}");
    }
    // The model is sent the escaped text too.
    let server = mock();
    server.enqueue(ScriptedReply::text("ok"));
    let out = run_cmd(&env, &server).args(["run", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let body = serde_json::to_string(&server.requests()[0].body).unwrap();
    assert!(body.contains("^[[2J"), "escaped in the prompt");
    for raw in ["\\u001b", "\\u0007", "\u{202e}", "\\u0000"] {
        assert!(!body.contains(raw), "{raw} sent to the model");
    }
}

#[test]
fn damaged_hub_lock_and_taps_are_errors_naming_the_file_and_kept() {
    let env = Env::new();
    let noise: Vec<u8> = (0..400u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::create_dir_all(env.home_path(".hub")).unwrap();
    std::fs::write(env.home_path(".hub/lock.json"), &noise).unwrap();
    for args in [&["skills", "audit"][..], &["skills", "check"]] {
        let (code, out, err) = run(&env, args);
        assert_eq!(code, Some(1), "{args:?}: {out}{err}");
        assert!(err.contains("lock.json"), "{err}");
        assert!(!out.contains("No hub-installed skills"), "{out}");
    }
    assert_eq!(
        std::fs::read(env.home_path(".hub/lock.json.damaged")).unwrap(),
        noise
    );
    assert_eq!(
        std::fs::read(env.home_path(".hub/lock.json")).unwrap(),
        noise,
        "left in place"
    );

    env.write(".hub/taps.json", "{\"taps\": [{\"repo\": \"github:a/b\"}");
    let (code, out, err) = run(&env, &["skills", "tap", "list"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(err.contains("taps.json"), "{err}");
    assert!(!out.contains("No taps"), "{out}");
    let (code, _, _) = run(&env, &["skills", "tap", "add", "github:c/d"]);
    assert_eq!(code, Some(1), "a tap is never added over a damaged file");
    assert_eq!(
        std::fs::read_to_string(env.home_path(".hub/taps.json")).unwrap(),
        "{\"taps\": [{\"repo\": \"github:a/b\"}"
    );
}

#[test]
fn config_errors_of_any_kind_exit_3() {
    let env = Env::new();
    env.skill("good", "good", "Use when something good is needed");
    std::fs::write(
        env.home_path("config.yaml"),
        b"model:\n  default: \xff\xfe\n",
    )
    .unwrap();
    let (code, _, err) = run(&env, &["skills", "list"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("config.yaml") && err.contains("line 2"),
        "{err}"
    );
    std::fs::remove_file(env.home_path("config.yaml")).unwrap();
    fifo(&env.home_path("config.yaml"));
    let (code, _, err) = run(&env, &["skills", "list"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
}

#[test]
fn the_folder_cap_is_reported_on_stderr_and_by_doctor() {
    let env = Env::new();
    for i in 0..12 {
        env.skill(&format!("s{i:02}"), &format!("s{i:02}"), "Use when many");
    }
    env.write("config.yaml", "skills:\n  scan_max_dirs: 5\n");
    let (code, _, err) = run(&env, &["skills", "list"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("skills.scan_max_dirs"), "{err}");
    let out = env
        .knack()
        .args(["skills", "doctor", "--json"])
        .timeout(LIMIT)
        .output()
        .unwrap();
    let doctor = stdout_json(&out);
    let text = doctor.to_string();
    assert!(text.contains("skills.scan_max_dirs"), "{doctor:#}");
    let _ = json!(null);
}
