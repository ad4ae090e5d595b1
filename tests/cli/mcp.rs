//! MCP servers end to end: `knack mcp list|tools`, `knack tool list|call` and `knack run`
//! against real servers: `mcp-test-server` (rmcp, from test-support) for precise cases and
//! the npm reference server `@modelcontextprotocol/server-everything` over stdio and HTTP.
//!
//! The npm server is found through `KNACK_TEST_MCP_EVERYTHING` (its `dist/index.js`), which
//! `.ci/run` installs and exports; without it those tests say loudly that they were skipped.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use test_support::{MockModelServer, ScriptedReply, check_invariants};

use super::common::{Env, stdout_json, success};

/// The rmcp test server: `KNACK_TEST_MCP_SERVER`, else built next to `knack`
/// (`cargo test --workspace` and `.ci/run` build it).
fn test_server() -> Option<String> {
    let path = std::env::var_os("KNACK_TEST_MCP_SERVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| assert_cmd::cargo::cargo_bin("knack").with_file_name("mcp-test-server"));
    if path.is_file() {
        return Some(path.to_string_lossy().into_owned());
    }
    eprintln!(
        "\n*** SKIPPED: {} is not built; run `cargo build -p test-support --bins` or set KNACK_TEST_MCP_SERVER ***\n",
        path.display()
    );
    None
}

/// `dist/index.js` of the npm reference server, when `.ci/run` installed it.
fn everything() -> Option<String> {
    match std::env::var("KNACK_TEST_MCP_EVERYTHING") {
        Ok(path) if std::path::Path::new(&path).is_file() => Some(path),
        _ => {
            eprintln!(
                "\n*** SKIPPED: KNACK_TEST_MCP_EVERYTHING is not set to server-everything's dist/index.js; .ci/run installs it with npm ***\n"
            );
            None
        }
    }
}

/// A config.yaml entry for the test server.
fn stdio_entry(name: &str, command: &str, extra: &str) -> String {
    format!("  {name}:\n    command: '{command}'\n{extra}")
}

fn config(entries: &[String]) -> String {
    format!("mcp_servers:\n{}", entries.concat())
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn mcp_list_reports_a_healthy_a_broken_and_a_disabled_server() {
    let Some(bin) = test_server() else { return };
    let env = Env::new();
    env.write(
        "config.yaml",
        &config(&[
            stdio_entry("good", &bin, ""),
            stdio_entry("broken", &bin, "    args: [--exit]\n"),
            stdio_entry("off", &bin, "    enabled: false\n"),
        ]),
    );
    let out = success(env.knack().args(["mcp", "list", "--json"]));
    let list = stdout_json(&out);
    assert_eq!(list.as_array().unwrap().len(), 3);
    assert_eq!(
        list[0],
        json!({"name": "broken", "transport": "stdio", "status": "failed", "tools": 0,
               "error": list[0]["error"].clone()})
    );
    let error = list[0]["error"].as_str().unwrap();
    assert!(error.contains("told to fail at start"), "{error}");
    assert_eq!(
        list[1],
        json!({"name": "good", "transport": "stdio", "status": "ready", "tools": 11})
    );
    assert_eq!(
        list[2],
        json!({"name": "off", "transport": "stdio", "status": "disabled", "tools": 0})
    );
    let text = success(env.knack().args(["mcp", "list"]));
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("good") && text.contains("ready"), "{text}");
}

#[test]
fn mcp_tools_filters_and_an_unknown_server_is_one_sentence() {
    let Some(bin) = test_server() else { return };
    let env = Env::new();
    env.write(
        "config.yaml",
        &config(&[stdio_entry(
            "t",
            &bin,
            "    tools: {include: [echo, add, pid], exclude: [pid]}\n",
        )]),
    );
    let out = success(env.knack().args(["mcp", "tools", "t", "--json"]));
    let tools = stdout_json(&out);
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo", "add"]);
    assert_eq!(tools[0]["server"], "t");
    assert_eq!(tools[0]["description"], "Returns the text it is given.");
    assert_eq!(tools[0]["input_schema"]["required"], json!(["text"]));

    let out = env.knack().args(["mcp", "tools", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim(),
        "knack: there is no MCP server named 'nope'; config.yaml has: t"
    );
    assert!(out.stdout.is_empty());

    // The filtered-out tool is not a tool at all.
    let out = env
        .knack()
        .args(["tool", "call", "mcp__t__pid"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn an_invalid_server_name_is_a_configuration_error() {
    let env = Env::new();
    env.write("config.yaml", "mcp_servers:\n  'my server': {command: x}\n");
    let out = env.knack().args(["mcp", "list"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(
        err.contains("'my server' may use only letters, digits, '_' and '-'"),
        "{err}"
    );
}

#[test]
fn tool_list_and_call_include_stdio_mcp_tools_with_approval_and_a_scrubbed_environment() {
    let Some(bin) = test_server() else { return };
    let env = Env::new();
    env.write(
        "config.yaml",
        &config(&[
            stdio_entry("t", &bin, "    env: {PLAIN_SETTING: visible}\n"),
            stdio_entry(
                "trusted",
                &bin,
                "    approval: never\n    tools: {include: [add]}\n",
            ),
        ]),
    );
    let out = success(env.knack().args(["tool", "list", "--json"]));
    let list = stdout_json(&out);
    let echo = list
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "mcp__t__echo")
        .expect("mcp__t__echo is listed");
    assert_eq!(echo["toolset"], "mcp");
    assert_eq!(echo["mutating"], false);
    assert_eq!(echo["parameters"]["required"], json!(["text"]));

    let out = success(
        env.knack()
            .args(["tool", "call", "mcp__t__echo", r#"{"text": "hello"}"#]),
    );
    assert_eq!(
        stdout_json(&out),
        json!({"output": "hello", "success": true})
    );

    // Not marked read-only: nobody is there to approve, so it is refused...
    let out = env
        .knack()
        .args(["tool", "call", "mcp__t__add", r#"{"a": 1, "b": 2}"#])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let refused = stdout_json(&out);
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("does not say it only reads"),
        "{refused}"
    );
    // ...unless the server is trusted with `approval: never`.
    let out =
        success(
            env.knack()
                .args(["tool", "call", "mcp__trusted__add", r#"{"a": 1, "b": 2}"#]),
        );
    assert_eq!(
        stdout_json(&out),
        json!({"output": "3", "structured_content": {"sum": 3.0}, "success": true})
    );

    // A server's own error is a failed result; bad arguments are the server's sentence.
    let out = env
        .knack()
        .args(["tool", "call", "mcp__t__fail"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout_json(&out)["error"],
        "mcp__t__fail reported an error: the thing is broken"
    );
    let out = env
        .knack()
        .args(["tool", "call", "mcp__trusted__add", r#"{"a": "x"}"#])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout_json(&out)["error"]
            .as_str()
            .unwrap()
            .contains("add needs numbers"),
    );

    // Secrets stay out of the server's environment; its own `env` gets in.
    let call_env = |name: &str| {
        let out = success(
            env.knack()
                .env("MY_SERVICE_TOKEN", "tok-0123456789abcdef")
                .args([
                    "tool",
                    "call",
                    "mcp__t__env",
                    &format!(r#"{{"name": "{name}"}}"#),
                ]),
        );
        stdout_json(&out)["output"].as_str().unwrap().to_owned()
    };
    assert_eq!(call_env("MY_SERVICE_TOKEN"), "(unset)");
    assert_eq!(call_env("PLAIN_SETTING"), "visible");
}

#[test]
fn names_too_long_or_taken_are_left_out() {
    let Some(bin) = test_server() else { return };
    let env = Env::new();
    env.write(
        "config.yaml",
        &config(&[stdio_entry("t", &bin, "    args: [--extra]\n")]),
    );
    let out = success(env.knack().args(["tool", "list", "--json"]));
    let names: Vec<String> = stdout_json(&out)
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names.iter().filter(|n| *n == "mcp__t__dup_name").count(), 1);
    assert!(names.iter().all(|n| n.len() <= 64), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("mcp__t__xxxx")));
    let log = std::fs::read_to_string(env.home_path("logs/knack.log")).unwrap_or_default();
    assert!(log.contains("is already taken"), "{log}");
    assert!(log.contains("longer than 64 characters"), "{log}");
}

fn run_cmd(env: &Env, server: &MockModelServer) -> assert_cmd::Command {
    let mut cmd = env.knack();
    cmd.env("KNACK_BASE_URL", server.base_url())
        .env("KNACK_MODEL", "mock-model")
        .timeout(std::time::Duration::from_secs(120));
    cmd
}

/// The `tool` messages of a request, as parsed JSON.
fn tool_results(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect()
}

#[test]
fn a_run_calls_two_mcp_tools_and_the_tools_never_change() {
    let Some(bin) = test_server() else { return };
    let env = Env::new();
    env.write(
        "config.yaml",
        &config(&[stdio_entry("t", &bin, "    approval: never\n")]),
    );
    let server = MockModelServer::start_blocking().unwrap();
    server.enqueue(ScriptedReply::tool_calls([
        ("c1", "mcp__t__echo", r#"{"text": "ping"}"#),
        ("c2", "mcp__t__add", r#"{"a": 40, "b": 2}"#),
    ]));
    server.enqueue(ScriptedReply::tool_calls([(
        "c3",
        "mcp__t__change_tools",
        "{}",
    )]));
    server.enqueue(ScriptedReply::text("done"));
    let out = success(run_cmd(&env, &server).args(["run", "--no-review", "use the tools"]));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "done");

    let reqs = server.chat_requests();
    assert_eq!(reqs.len(), 3);
    let results = tool_results(reqs[1].messages());
    assert_eq!(
        results,
        [
            json!({"output": "ping", "success": true}),
            json!({"output": "42", "structured_content": {"sum": 42.0}, "success": true}),
        ]
    );
    // The same tools, byte for byte, in every request, MCP tools included.
    let tools: Vec<String> = reqs.iter().map(|r| r.body["tools"].to_string()).collect();
    assert!(tools.iter().all(|t| *t == tools[0]));
    assert!(tools[0].contains("\"mcp__t__echo\""), "{}", tools[0]);
    // The announced change never changes the tool list (checked above); it may
    // become one user note. The notification travels apart from the call's answer,
    // so whether it lands before the next request is not fixed; the client's own
    // test (test-support, `list_changed_is_reported_once`) waits for it.
    let notes: Vec<&Value> = reqs[2]
        .messages()
        .iter()
        .filter(|m| {
            m["content"]
                .as_str()
                .is_some_and(|c| c.contains("[MCP tools update]"))
        })
        .collect();
    assert!(notes.len() <= 1, "{notes:?}");
    assert!(notes.iter().all(|m| m["role"] == "user"), "{notes:?}");
    check_invariants(&server.requests()).unwrap();
}

#[test]
fn a_server_crash_mid_call_fails_that_call_and_the_next_call_restarts_it() {
    let Some(bin) = test_server() else { return };
    let env = Env::new();
    env.write("config.yaml", &config(&[stdio_entry("t", &bin, "")]));
    let server = MockModelServer::start_blocking().unwrap();
    server.enqueue(ScriptedReply::tool_calls([("c1", "mcp__t__crash", "{}")]));
    server.enqueue(ScriptedReply::tool_calls([(
        "c2",
        "mcp__t__echo",
        r#"{"text": "back"}"#,
    )]));
    server.enqueue(ScriptedReply::text("ok"));
    success(run_cmd(&env, &server).args(["run", "--no-review", "crash it"]));
    let reqs = server.chat_requests();
    let results = tool_results(reqs[2].messages());
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["success"], false);
    assert!(
        results[0]["error"]
            .as_str()
            .unwrap()
            .contains("restarted on the next call"),
        "{}",
        results[0]
    );
    assert_eq!(results[1], json!({"output": "back", "success": true}));
}

#[test]
fn the_reference_server_over_stdio() {
    let Some(script) = everything() else { return };
    let env = Env::new();
    env.write(
        "config.yaml",
        &format!("mcp_servers:\n  every:\n    command: node\n    args: ['{script}']\n"),
    );
    let list = stdout_json(&success(env.knack().args(["mcp", "list", "--json"])));
    assert_eq!(list[0]["status"], "ready", "{list}");
    assert!(list[0]["tools"].as_u64().unwrap() > 3, "{list}");
    let out =
        success(
            env.knack()
                .args(["tool", "call", "mcp__every__echo", r#"{"message": "hi"}"#]),
        );
    assert_eq!(
        stdout_json(&out),
        json!({"output": "Echo: hi", "success": true})
    );
    let out = success(
        env.knack()
            .args(["tool", "call", "mcp__every__get-tiny-image"]),
    );
    let text = stdout_json(&out)["output"].as_str().unwrap().to_owned();
    assert!(text.contains("[image: image/png, "), "{text}");
}

/// server-everything in its Streamable HTTP mode on a free port, killed on drop.
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    fn start(script: &str) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new("node")
            .args([script, "streamableHttp"])
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Ready when it says it listens: an event, not a delay.
        let stderr = child.stderr.take().unwrap();
        let mut lines = BufReader::new(stderr).lines();
        let mut seen = Vec::new();
        loop {
            match lines.next() {
                Some(Ok(line)) if line.contains("listening on port") => break,
                Some(Ok(line)) => seen.push(line),
                _ => panic!("server-everything stopped before listening: {seen:?}"),
            }
        }
        // Keep draining so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_reference_server_over_streamable_http() {
    let Some(script) = everything() else { return };
    let http = HttpServer::start(&script);
    let env = Env::new();
    env.write(
        "config.yaml",
        &format!(
            "mcp_servers:\n  web:\n    url: '{}'\n    headers: {{X-Test: knack}}\n",
            http.url
        ),
    );
    let list = stdout_json(&success(env.knack().args(["mcp", "list", "--json"])));
    assert_eq!(list[0]["transport"], "http", "{list}");
    assert_eq!(list[0]["status"], "ready", "{list}");
    let out = success(env.knack().args([
        "tool",
        "call",
        "mcp__web__echo",
        r#"{"message": "over http"}"#,
    ]));
    assert_eq!(
        stdout_json(&out),
        json!({"output": "Echo: over http", "success": true})
    );
    let out = success(
        env.knack()
            .args(["tool", "call", "mcp__web__get-sum", r#"{"a": 2, "b": 5}"#])
            .env("KNACK_HOME", env.home.path()),
    );
    let out = stdout_json(&out);
    assert!(out["output"].as_str().unwrap().contains('7'), "{out}");
}

#[test]
fn ctrl_c_during_an_mcp_call_leaves_no_server_behind() {
    let Some(bin) = test_server() else { return };
    let env = Env::new();
    let pid_file = env.cwd.path().join("server.pid");
    env.write(
        "config.yaml",
        &config(&[stdio_entry(
            "t",
            &bin,
            &format!("    env: {{MCP_TEST_PID_FILE: '{}'}}\n", pid_file.display()),
        )]),
    );
    let server = MockModelServer::start_blocking().unwrap();
    server.enqueue(ScriptedReply::tool_calls([("c1", "mcp__t__slow", "{}")]));
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("knack"))
        .args(["run", "--json", "--no-review", "wait forever"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("KNACK_HOME", env.home.path())
        .env("KNACK_BUNDLED_SKILLS", env.bundle.path())
        .env("KNACK_BASE_URL", server.base_url())
        .env("KNACK_MODEL", "mock-model")
        .current_dir(env.cwd.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The call has begun when its event arrives; the server started before the session.
    let stdout = child.stdout.take().unwrap();
    let (began_tx, began_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let event: Value = serde_json::from_str(&line).unwrap_or_default();
            if event["type"] == "tool_call_begin" {
                let _ = began_tx.send(());
            }
        }
    });
    assert!(began_rx.recv().is_ok(), "the run ended before the MCP call");
    let server_pid = std::fs::read_to_string(&pid_file).unwrap();
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    reader.join().unwrap();

    if !std::path::Path::new("/proc/self/stat").exists() {
        eprintln!("no /proc here: cannot check that the MCP server is gone");
        return;
    }
    let stat = format!("/proc/{}/stat", server_pid.trim());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        // Gone, or a zombie its new parent has yet to reap: it runs no more.
        let running = std::fs::read_to_string(&stat)
            .map(|s| s.split_whitespace().nth(2).is_none_or(|state| state != "Z"))
            .unwrap_or(false);
        if !running {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "MCP server {server_pid} outlived knack"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn a_skill_that_requires_an_mcp_tool_shows_only_with_its_server() {
    let Some(bin) = test_server() else { return };
    let env = Env::new();
    env.write(
        "skills/echo-helper/SKILL.md",
        "---\nname: echo-helper\ndescription: Use when echoing through the MCP test server\nrequires_tools: [mcp__t__echo]\n---\n# Echo\n\nCall mcp__t__echo.\n",
    );
    env.write(
        "skills/echo-fallback/SKILL.md",
        "---\nname: echo-fallback\ndescription: Use when there is no echo tool\nfallback_for_tools: [mcp__t__echo]\n---\n# Fallback\n\nEcho by hand.\n",
    );
    let index = |env: &Env| {
        let prompt = stdout_json(&success(env.knack().args(["prompt", "show", "--json"])));
        prompt["text"].as_str().unwrap().to_owned()
    };
    let without = index(&env);
    assert!(!without.contains("echo-helper"), "{without}");
    assert!(without.contains("echo-fallback"), "{without}");

    env.write("config.yaml", &config(&[stdio_entry("t", &bin, "")]));
    let with = index(&env);
    assert!(with.contains("echo-helper"), "{with}");
    assert!(!with.contains("echo-fallback"), "{with}");

    // A session sees the same.
    let server = MockModelServer::start_blocking().unwrap();
    server.enqueue(ScriptedReply::text("ok"));
    success(run_cmd(&env, &server).args(["run", "--no-review", "hello"]));
    let system = server.chat_requests()[0].messages()[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(system.contains("echo-helper"), "{system}");
    assert!(!system.contains("echo-fallback"), "{system}");
}

#[test]
fn a_headless_run_says_which_server_did_not_start_and_goes_on() {
    let Some(bin) = test_server() else { return };
    let env = Env::new();
    env.write(
        "config.yaml",
        &config(&[
            stdio_entry("good", &bin, ""),
            stdio_entry("broken", &bin, "    args: [--exit]\n"),
        ]),
    );
    let server = MockModelServer::start_blocking().unwrap();
    server.enqueue(ScriptedReply::text("fine"));
    let out = success(
        env.knack()
            .env("KNACK_BASE_URL", server.base_url())
            .env("KNACK_MODEL", "mock-model")
            .args(["run", "--no-review", "hello"]),
    );
    let err = stderr(&out);
    assert!(err.contains("MCP server 'broken' did not start"), "{err}");
    assert!(!err.contains("'good'"), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "fine\n");
    // The healthy server's tools reached the request; the broken one's did not.
    let tools = server.requests()[0].body["tools"].to_string();
    assert!(tools.contains("mcp__good__"), "{tools}");
    assert!(!tools.contains("mcp__broken__"));
}
