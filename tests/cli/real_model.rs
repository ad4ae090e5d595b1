//! Checks against a real model server (llama.cpp's server with a small model,
//! started by `../shared/tools/local-llm.sh start`). Ignored by default:
//! `KNACK_REAL_MODEL_URL=http://127.0.0.1:8088/v1 cargo test -p knack --test cli -- --ignored real_model`
//! The tool-call round trip against the same server is in agent-loop's tests.

use serde_json::Value;

use super::common::Env;

fn real_url() -> String {
    std::env::var("KNACK_REAL_MODEL_URL").unwrap_or_else(|_| "http://127.0.0.1:8088/v1".to_owned())
}

fn run_json(env: &Env, prompt: &str) -> (std::process::Output, Vec<Value>) {
    let out = env
        .knack()
        .env("KNACK_BASE_URL", real_url())
        .env("KNACK_MODEL", "smollm2")
        .args([
            "run",
            "--json",
            "--no-review",
            "--max-iterations",
            "3",
            prompt,
        ])
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (out, events)
}

/// A small home: only the skills toolset, so the prompt fits a 4k context.
fn small_home() -> Env {
    let env = Env::new();
    env.write("config.yaml", "agent:\n  toolsets: [skills]\n");
    env.skill(
        "dev/git-basics",
        "git-basics",
        "Use when committing with git",
    );
    env
}

#[test]
#[ignore = "needs a real model server on 127.0.0.1 (see docs/agent.md)"]
fn real_model_streams_a_reply() {
    let env = small_home();
    let (out, events) = run_json(
        &env,
        "What is the capital of France? Answer in one sentence.",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deltas = events
        .iter()
        .filter(|e| e["type"] == "assistant_delta")
        .count();
    assert!(deltas > 1, "the reply arrived in {deltas} streamed pieces");
    let answer = events
        .iter()
        .find(|e| e["type"] == "assistant_message")
        .unwrap();
    assert!(
        answer["text"].as_str().unwrap().contains("Paris"),
        "{answer}"
    );
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "usage" && e["prompt_tokens"].as_u64() > Some(0))
    );
}
