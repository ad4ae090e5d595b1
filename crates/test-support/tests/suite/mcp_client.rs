//! The MCP client (`mcp-client`) against the real rmcp server `mcp-test-server`: start,
//! filters, result mapping, timeouts, a crash mid-call and the restart, list_changed, cleanup.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use knack_config::{McpServerConfig, McpToolFilter};
use mcp_client::{Error, McpHub, ServerState, StartOptions};
use serde_json::{Map, Value, json};

fn server(args: &[&str]) -> McpServerConfig {
    McpServerConfig {
        command: Some(env!("CARGO_BIN_EXE_mcp-test-server").to_owned()),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        ..McpServerConfig::default()
    }
}

async fn hub(servers: &[(&str, McpServerConfig)]) -> McpHub {
    let servers: BTreeMap<String, McpServerConfig> = servers
        .iter()
        .map(|(name, config)| ((*name).to_owned(), config.clone()))
        .collect();
    McpHub::start(&servers, StartOptions::default()).await
}

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

#[tokio::test]
async fn healthy_broken_hanging_and_disabled_servers_are_each_reported() {
    let hang = McpServerConfig {
        startup_timeout_secs: 1,
        ..server(&["--hang"])
    };
    let off = McpServerConfig {
        enabled: false,
        ..server(&[])
    };
    let hub = hub(&[
        ("ok", server(&[])),
        ("broken", server(&["--exit"])),
        ("hang", hang),
        ("off", off),
    ])
    .await;
    let statuses = hub.statuses();
    let by_name = |name: &str| statuses.iter().find(|s| s.name == name).unwrap().clone();
    assert_eq!(by_name("ok").state, ServerState::Ready);
    assert_eq!(by_name("ok").tools, 11);
    let ServerState::Failed(reason) = by_name("broken").state else {
        panic!("broken is not failed")
    };
    assert!(reason.contains("told to fail at start"), "{reason}");
    let ServerState::Failed(reason) = by_name("hang").state else {
        panic!("hang is not failed")
    };
    assert!(reason.contains("within 1s"), "{reason}");
    assert_eq!(by_name("off").state, ServerState::Disabled);
    // The healthy server still answers.
    let out = hub
        .call("ok", "echo", args(json!({"text": "hi"})))
        .await
        .unwrap();
    assert_eq!(out.text, "hi");
}

#[tokio::test]
async fn include_and_exclude_filter_the_tools() {
    let only = McpServerConfig {
        tools: McpToolFilter {
            include: vec!["echo".into(), "add".into(), "pid".into()],
            exclude: vec!["pid".into()],
        },
        ..server(&[])
    };
    let hub = hub(&[("t", only)]).await;
    let names: Vec<String> = hub.tools().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["echo", "add"]);
    let err = hub.call("t", "pid", Map::new()).await.unwrap_err();
    assert_eq!(
        err,
        Error::UnknownTool {
            server: "t".into(),
            tool: "pid".into()
        }
    );
}

#[tokio::test]
async fn results_are_mapped_for_the_model() {
    let hub = hub(&[("t", server(&[]))]).await;
    let tools = hub.tools();
    let echo = tools.iter().find(|t| t.name == "echo").unwrap();
    assert!(echo.read_only);
    assert_eq!(echo.input_schema["required"], json!(["text"]));
    let destroy = tools.iter().find(|t| t.name == "destroy").unwrap();
    assert_eq!(
        (destroy.read_only, destroy.destructive),
        (false, Some(true))
    );

    let sum = hub
        .call("t", "add", args(json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert_eq!(sum.text, "5");
    assert_eq!(sum.structured, Some(json!({"sum": 5.0})));
    assert!(!sum.is_error);

    let failed = hub.call("t", "fail", Map::new()).await.unwrap();
    assert!(failed.is_error);
    assert_eq!(failed.text, "the thing is broken");

    let image = hub.call("t", "image", Map::new()).await.unwrap();
    assert_eq!(image.text, "[image: image/png, 8 bytes]");

    let huge = hub
        .call("t", "huge", args(json!({"chars": 300_000})))
        .await
        .unwrap();
    assert!(huge.text.chars().count() <= mcp_client::MAX_OUTPUT_CHARS + 100);
    assert!(huge.text.contains("characters left out"));

    let Error::Call { message, .. } = hub
        .call("t", "add", args(json!({"a": "x"})))
        .await
        .unwrap_err()
    else {
        panic!("invalid arguments should be a call error")
    };
    assert!(message.contains("add needs numbers"), "{message}");
}

#[tokio::test]
async fn a_crash_mid_call_fails_that_call_and_the_next_call_restarts_the_server() {
    let hub = hub(&[("t", server(&[]))]).await;
    let first_pid = hub.call("t", "pid", Map::new()).await.unwrap().text;
    let err = hub.call("t", "crash", Map::new()).await.unwrap_err();
    assert!(
        err.to_string().contains("restarted on the next call"),
        "{err}"
    );
    let second_pid = hub.call("t", "pid", Map::new()).await.unwrap().text;
    assert_ne!(first_pid, second_pid);
    assert_eq!(hub.statuses()[0].state, ServerState::Ready);
}

#[tokio::test]
async fn restarts_are_bounded() {
    let hub = hub(&[("t", server(&[]))]).await;
    // The first crash kills the started server; each later one a restarted one.
    for _ in 0..4 {
        assert!(hub.call("t", "crash", Map::new()).await.is_err());
    }
    let err = hub.call("t", "pid", Map::new()).await.unwrap_err();
    assert!(
        err.to_string().contains("already restarted 3 times"),
        "{err}"
    );
    assert!(matches!(hub.statuses()[0].state, ServerState::Failed(_)));
}

#[tokio::test]
async fn a_call_past_its_timeout_fails_and_the_server_still_answers() {
    let quick = McpServerConfig {
        tool_timeout_secs: 1,
        ..server(&[])
    };
    let hub = hub(&[("t", quick)]).await;
    let err = hub.call("t", "slow", Map::new()).await.unwrap_err();
    assert!(matches!(err, Error::Timeout { secs: 1, .. }), "{err}");
    assert!(err.to_string().contains("tool_timeout_secs"));
    let out = hub
        .call("t", "echo", args(json!({"text": "still here"})))
        .await
        .unwrap();
    assert_eq!(out.text, "still here");
}

#[tokio::test]
async fn list_changed_is_reported_once() {
    let hub = hub(&[("t", server(&[]))]).await;
    assert!(hub.take_list_changed().is_empty());
    hub.call("t", "change_tools", Map::new()).await.unwrap();
    // The notification travels on its own; wait for it, with a deadline only for failure.
    let deadline = Instant::now() + Duration::from_secs(30);
    let changed = loop {
        let changed = hub.take_list_changed();
        if !changed.is_empty() || Instant::now() > deadline {
            break changed;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(changed, ["t"]);
    assert!(hub.take_list_changed().is_empty());
    // The session's list stays what it was.
    assert_eq!(hub.tools().len(), 11);
}

#[tokio::test]
async fn dropping_the_hub_kills_the_server() {
    let hub = hub(&[("t", server(&[]))]).await;
    let pid = hub.call("t", "pid", Map::new()).await.unwrap().text;
    drop(hub);
    let stat = format!("/proc/{pid}/stat");
    if !std::path::Path::new("/proc/self/stat").exists() {
        eprintln!("no /proc here: cannot check that the server process is gone");
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        // Gone, or a zombie waiting to be reaped: either way it runs no more.
        let alive = std::fs::read_to_string(&stat)
            .map(|s| s.split_whitespace().nth(2).is_none_or(|state| state != "Z"))
            .unwrap_or(false);
        if !alive {
            break;
        }
        assert!(Instant::now() < deadline, "server {pid} still runs");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
