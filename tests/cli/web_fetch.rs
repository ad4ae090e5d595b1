//! `web_fetch` end to end against a small HTTP server on 127.0.0.1: refused without the
//! user's approval, allowed by a `web_fetch(HOST)` rule or `--yolo`, HTML arrives as
//! Markdown, and a redirect to another host is handed back instead of followed.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

use serde_json::{Value, json};
use test_support::ScriptedReply;

use super::common::{Env, mock, run_cmd, stdout_json, success};

const PAGE: &str = "<!doctype html><html><head><title>t</title></head><body>\
<h1>Release notes</h1><p>Version <b>2.0</b> adds <a href=\"/x\">streaming</a>.</p>\
<script>alert(1)</script></body></html>";

/// Serves every connection until the test ends: `/page` (HTML), `/plain` (text),
/// `/away` (a redirect to `localhost`, another host name for the same server).
fn serve() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request_line = String::new();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            reader.read_line(&mut request_line).unwrap_or_default();
            // Drain the headers.
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let path = request_line.split_whitespace().nth(1).unwrap_or("/");
            let (status, headers, body) = match path {
                "/page" => (
                    "200 OK",
                    "Content-Type: text/html; charset=utf-8\r\n".to_owned(),
                    PAGE,
                ),
                "/plain" => (
                    "200 OK",
                    "Content-Type: text/plain\r\n".to_owned(),
                    "just text",
                ),
                "/away" => (
                    "302 Found",
                    format!("Location: http://localhost:{port}/page\r\n"),
                    "",
                ),
                _ => ("404 Not Found", String::new(), "no"),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

fn fetch(env: &Env, url: &str) -> (Option<i32>, Value) {
    let out = env
        .knack()
        .args([
            "tool",
            "call",
            "web_fetch",
            &json!({ "url": url }).to_string(),
        ])
        .output()
        .unwrap();
    (out.status.code(), stdout_json(&out))
}

#[test]
fn an_unapproved_site_is_refused_and_a_rule_lets_it_in_as_markdown() {
    let port = serve();
    let url = format!("http://127.0.0.1:{port}/page");
    let env = Env::new();
    let (code, refused) = fetch(&env, &url);
    assert_eq!(code, Some(1), "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("did not approve"),
        "{refused}"
    );

    env.write(
        "config.yaml",
        "permissions:\n  allow:\n    - web_fetch(127.0.0.1)\n",
    );
    let (code, page) = fetch(&env, &url);
    assert_eq!(code, Some(0), "{page}");
    assert_eq!(page["url"], json!(url));
    let content = page["content"].as_str().unwrap();
    assert!(content.contains("# Release notes"), "{content}");
    assert!(content.contains("**2.0**"), "{content}");
    assert!(content.contains("[streaming](/x)"), "{content}");
    assert!(
        !content.contains("<p>") && !content.contains("alert(1)"),
        "{content}"
    );

    let (code, plain) = fetch(&env, &format!("http://127.0.0.1:{port}/plain"));
    assert_eq!(
        (code, plain["content"].as_str()),
        (Some(0), Some("just text"))
    );
}

#[test]
fn a_redirect_to_another_host_is_not_followed() {
    let port = serve();
    let env = Env::new();
    env.write(
        "config.yaml",
        "permissions:\n  allow:\n    - web_fetch(127.0.0.1)\n",
    );
    let (code, out) = fetch(&env, &format!("http://127.0.0.1:{port}/away"));
    assert_eq!(code, Some(1), "{out}");
    let error = out["error"].as_str().unwrap();
    assert!(
        error.contains(&format!("http://localhost:{port}/page")),
        "{error}"
    );
}

#[test]
fn a_deny_rule_holds_even_with_yolo_and_other_schemes_are_refused() {
    let port = serve();
    let env = Env::new();
    env.write(
        "config.yaml",
        "agent:\n  yolo: true\npermissions:\n  deny:\n    - web_fetch(127.0.0.1)\n",
    );
    let (code, out) = fetch(&env, &format!("http://127.0.0.1:{port}/page"));
    assert_eq!(code, Some(1), "{out}");
    assert!(out["error"].as_str().unwrap().contains("forbids"), "{out}");
    let (code, out) = fetch(&env, "file:///etc/passwd");
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out["error"].as_str().unwrap().contains("http and https"),
        "{out}"
    );
}

#[test]
fn headless_runs_refuse_unapproved_sites_unless_yolo() {
    let port = serve();
    let url = format!("http://127.0.0.1:{port}/page");
    let args = json!({ "url": url }).to_string();
    for (flags, allowed) in [(&[][..], false), (&["--yolo"][..], true)] {
        let env = Env::new();
        let server = mock();
        server.enqueue(ScriptedReply::tool_calls([(
            "c1",
            "web_fetch",
            args.as_str(),
        )]));
        server.enqueue(ScriptedReply::text("read it"));
        let mut cmd = run_cmd(&env, &server);
        cmd.arg("run").args(flags).arg("read the notes");
        success(&mut cmd);
        let requests = server.chat_requests();
        let tool = requests[1]
            .messages()
            .iter()
            .find(|m| m["role"] == "tool")
            .cloned()
            .unwrap();
        let result: Value = serde_json::from_str(tool["content"].as_str().unwrap()).unwrap();
        assert_eq!(result["success"], json!(allowed), "{flags:?}: {result}");
        if allowed {
            assert!(
                result["content"]
                    .as_str()
                    .unwrap()
                    .contains("Release notes")
            );
        }
    }
}
