//! Skills that declare required secrets, end to end: `skill_view`'s readiness,
//! the Hermes `setup.collect_secrets` alias, the validate warning for a bad
//! name, and `knack run` loading such a skill with a setup note for the model
//! and a line on stderr, never a prompt.

use super::common::{Env, mock, run_cmd, stdout_json, success};
use test_support::ScriptedReply;

/// A variable no test machine sets.
const VAR: &str = "SKILL_TEST_FORECAST_TOKEN";

fn weather_skill(env: &Env) {
    env.write(
        "skills/weather/forecast/SKILL.md",
        &format!(
            "---\nname: forecast\ndescription: Use when asked for a weather forecast\n\
             required_environment_variables:\n  - name: {VAR}\n    prompt: Paste the forecast token\n    \
             help: Create one in the forecast service's settings.\n  - name: SKILL_TEST_FORECAST_UNITS\n    optional: true\n---\n\
             # Forecast\n\nCall the forecast API.\n"
        ),
    );
}

fn all_requests(server: &test_support::MockModelServer) -> String {
    server
        .chat_requests()
        .iter()
        .map(|r| r.raw_body.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn run_loads_a_skill_missing_its_secret_with_a_note_and_a_stderr_line() {
    let env = Env::new();
    weather_skill(&env);
    let server = mock();
    server.enqueue(ScriptedReply::text("I need a forecast token first."));
    let out = success(run_cmd(&env, &server).args(["run", "/forecast for Oslo"]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.contains(VAR))
        .unwrap_or_else(|| panic!("no line names {VAR}: {stderr}"));
    assert!(line.contains("skill 'forecast'"), "{line}");
    assert!(line.contains("$KNACK_HOME/.env"), "{line}");
    assert!(
        line.contains(&env.home_path(".env").display().to_string()),
        "{line}"
    );
    assert!(
        !line.contains("SKILL_TEST_FORECAST_UNITS"),
        "optional: {line}"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "I need a forecast token first."
    );

    let sent = server.chat_requests();
    assert_eq!(sent.len(), 1);
    let messages = sent[0].messages();
    let user = messages.last().unwrap()["content"].as_str().unwrap();
    assert!(user.contains("Call the forecast API."), "{user}");
    assert!(
        user.contains(&format!(
            "[Setup needed: this skill expects the environment variable {VAR} and it is not set."
        )),
        "{user}"
    );
    assert!(
        user.contains("Create one in the forecast service's settings."),
        "{user}"
    );
    assert!(
        !messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("Setup needed"),
        "the note is never in the system prompt"
    );
}

#[test]
fn a_preloaded_skill_gets_the_same_note_and_line() {
    let env = Env::new();
    weather_skill(&env);
    let server = mock();
    server.enqueue(ScriptedReply::text("ok"));
    let out = success(run_cmd(&env, &server).args(["run", "-s", "forecast", "hello"]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.lines().filter(|l| l.contains(VAR)).count(),
        1,
        "{stderr}"
    );
    let sent = server.chat_requests();
    let preload = sent[0].messages()[1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(preload.contains("preloaded the skill"), "{preload}");
    assert!(preload.contains("Setup needed"), "{preload}");
}

#[test]
fn a_secret_in_dotenv_makes_the_skill_ready_and_is_never_sent_or_logged() {
    let env = Env::new();
    weather_skill(&env);
    let secret = "fc-9Kd82-very-secret";
    env.write(".env", &format!("# keys\n{VAR}={secret}\n"));
    // A file that leaks the value, as a careless script's output would.
    std::fs::write(env.cwd.path().join("out.txt"), format!("token {secret}\n")).unwrap();
    let server = mock();
    server.enqueue(ScriptedReply::tool_calls([(
        "c1",
        "read_file",
        r#"{"path": "out.txt"}"#,
    )]));
    server.enqueue(ScriptedReply::text("Sunny."));
    // Everything logged, so the check below has something to look through.
    let out = success(
        run_cmd(&env, &server)
            .env("KNACK_LOG", "trace")
            .args(["run", "/forecast"]),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains(VAR), "nothing to set: {stderr}");
    let sent = all_requests(&server);
    assert!(!sent.contains("Setup needed"), "{sent}");
    assert!(sent.contains(&format!("token [REDACTED:{VAR}]")), "{sent}");
    assert!(!sent.contains(secret), "{sent}");

    let view = stdout_json(&success(
        env.knack().args(["skills", "view", "forecast", "--json"]),
    ));
    assert_eq!(view["readiness_status"], "available");
    assert!(view.get("setup_note").is_none(), "{view}");

    let log = std::fs::read_to_string(env.home_path("logs/knack.log")).unwrap();
    assert!(log.contains("model request"), "the run was logged: {log}");
    assert!(!log.contains(secret), "{log}");
    for entry in std::fs::read_dir(env.home.path()).unwrap().flatten() {
        if entry.file_name().to_string_lossy().starts_with("state.db") {
            let bytes = std::fs::read(entry.path()).unwrap();
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{} holds the secret",
                entry.path().display()
            );
        }
    }
}

#[test]
fn skill_view_reports_setup_for_the_hermes_alias_and_validate_warns_on_bad_names() {
    let env = Env::new();
    env.write(
        "skills/media/gif-search/SKILL.md",
        "---\nname: gif-search\ndescription: Use when the user wants a GIF\n\
         setup:\n  help: Get a key from the GIF service.\n  collect_secrets:\n    - env_var: SKILL_TEST_GIF_API_KEY\n      prompt: GIF API key\n      secret: true\n\
         required_environment_variables: [bad-name]\n---\n# GIF search\n\nSearch for GIFs.\n",
    );
    let view = stdout_json(&success(env.knack().args([
        "skills",
        "view",
        "gif-search",
        "--json",
    ])));
    assert_eq!(view["readiness_status"], "setup_needed");
    assert_eq!(
        view["missing_required_environment_variables"],
        serde_json::json!(["SKILL_TEST_GIF_API_KEY"])
    );
    let note = view["setup_note"].as_str().unwrap();
    assert!(note.contains("Get a key from the GIF service."), "{note}");

    let out = success(
        env.knack()
            .args(["skills", "validate"])
            .arg(env.home_path("skills/media/gif-search")),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("'bad-name' is not a valid variable name"),
        "{text}"
    );
}
