//! Skills at scale from the command line: `skills search --local`, the index
//! sized to the window with `prompt show` saying what it left out, `doctor`'s
//! notes, and a model finding an unlisted skill through `skills_search`.

use serde_json::json;
use test_support::{Layout, ScriptedReply, synthetic_skills, write_library};

use super::common::{Env, mock, run_cmd, stdout_json, success};

fn library(size: usize) -> (Env, Vec<test_support::SyntheticSkill>) {
    let env = Env::new();
    let skills = synthetic_skills(size, 17);
    write_library(&env.home_path("skills"), &skills, Layout::Nested(30)).unwrap();
    (env, skills)
}

#[test]
fn skills_search_local_ranks_installed_skills_like_the_tool() {
    let (env, skills) = library(300);
    let target = &skills[123];
    let out = success(env.knack().args([
        "skills",
        "search",
        &target.query,
        "--local",
        "--json",
        "--limit",
        "3",
    ]));
    let answer = stdout_json(&out);
    assert_eq!(answer["success"], json!(true));
    let results = answer["results"].as_array().unwrap();
    assert!(results.len() <= 3);
    assert_eq!(results[0]["name"], json!(target.name));
    assert!(
        results[0]["qualified_id"]
            .as_str()
            .unwrap()
            .starts_with("user:")
    );
    // People get a table.
    let out = success(
        env.knack()
            .args(["skills", "search", &target.query, "--local"]),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("NAME"), "{text}");
    assert!(text.contains(&target.name), "{text}");
    // --source is the hub's; with --local it is a usage error.
    env.knack()
        .args(["skills", "search", "x", "--local", "--source", "official"])
        .assert()
        .code(2);
}

#[test]
fn prompt_show_sizes_the_index_to_the_window_and_says_what_is_left_out() {
    let (env, _) = library(400);
    let out = success(
        env.knack()
            .args(["prompt", "show", "--json"])
            .env("KNACK_MODEL", "demo-model")
            .env("KNACK_CONTEXT_WINDOW", "32768"),
    );
    let json = stdout_json(&out);
    let layer = json["layers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "skills_index")
        .unwrap();
    let chars = layer["chars"].as_u64().unwrap();
    // 2 % of 32,768 tokens at four characters a token.
    assert!(chars <= 2_621, "{chars}");
    let text = layer["text"].as_str().unwrap();
    assert!(text.contains("- "), "never empty");
    assert!(text.contains("of 400 skills are not listed here"), "{text}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("of 400 skills are not listed in the model's skills index"),
        "{stderr}"
    );
    // A large window lists every skill, and nothing is said.
    let out = success(
        env.knack()
            .args(["prompt", "show", "--json"])
            .env("KNACK_MODEL", "demo-model")
            .env("KNACK_CONTEXT_WINDOW", "1000000"),
    );
    assert!(String::from_utf8(out.stderr).unwrap().is_empty());
}

#[test]
fn doctor_reports_the_index_and_missing_prerequisites() {
    let (env, _) = library(400);
    env.write(
        "skills/tools/notion/SKILL.md",
        "---\nname: notion\ndescription: Use when editing Notion\nrequires:\n  mcp: [notion]\nprerequisites:\n  commands: [knack-test-absent-command]\nallowed-tools: Read\n---\nBody.\n",
    );
    let out = success(
        env.knack()
            .args(["skills", "doctor", "--json"])
            .env("KNACK_MODEL", "demo-model")
            .env("KNACK_CONTEXT_WINDOW", "32768"),
    );
    let report = stdout_json(&out);
    let notices: Vec<&str> = report["notices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("of 401 skills are not listed")),
        "{notices:?}"
    );
    for expected in [
        "user:tools/notion needs commands not found on PATH: knack-test-absent-command",
        "user:tools/notion expects MCP server(s) not in config.yaml mcp_servers: notion",
        "user:tools/notion declares allowed-tools: Read",
    ] {
        assert!(
            notices.iter().any(|n| n.contains(expected)),
            "{expected}: {notices:?}"
        );
    }
}

#[test]
fn a_model_finds_a_skill_the_index_had_no_room_for() {
    let (env, skills) = library(400);
    // A skill the index of this window leaves out, as `prompt show` tells.
    let shown = success(
        env.knack()
            .args(["prompt", "show", "--json"])
            .env("KNACK_MODEL", "mock-model")
            .env("KNACK_CONTEXT_WINDOW", "32768"),
    );
    let shown = stdout_json(&shown)["text"].as_str().unwrap().to_owned();
    let target = skills
        .iter()
        .find(|s| {
            !shown.contains(&format!("- {}\n", s.name))
                && !shown.contains(&format!("- {}:", s.name))
        })
        .unwrap();
    let server = mock();
    let args = json!({"query": target.query}).to_string();
    server.enqueue(ScriptedReply::tool_calls([(
        "call_1",
        "skills_search",
        args.as_str(),
    )]));
    server.enqueue(ScriptedReply::text("found it"));
    success(
        run_cmd(&env, &server)
            .env("KNACK_CONTEXT_WINDOW", "32768")
            .args(["run", "--no-review", "do the thing"]),
    );
    let requests = server.chat_requests();
    let first = &requests[0];
    let system = first.messages()[0]["content"].as_str().unwrap();
    assert!(
        system.contains("skills_search(query)"),
        "the index names the tool"
    );
    assert!(
        !system.contains(&format!("- {}", target.name)),
        "the target is not in the index"
    );
    let tools: Vec<&str> = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"skills_search"), "{tools:?}");
    let second = &requests[1];
    assert_eq!(second.messages()[0], first.messages()[0], "prefix frozen");
    let result = second
        .messages()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    let result: serde_json::Value =
        serde_json::from_str(result["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["results"][0]["name"], json!(target.name), "{result}");
}
