//! A small MCP server on stdio for knack's tests: tools that answer, fail, flood, sleep,
//! crash mid-call or announce a changed tool list, so each client path can be hit on purpose.
//!
//! `--hang` never answers `initialize`; `--exit` fails before the handshake; `--extra` adds
//! tools whose knack names collide or run past 64 characters. With `MCP_TEST_PID_FILE` set,
//! it writes its process id there.

use std::future::Future;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{MaybeSendFuture, RequestContext};
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

struct TestServer {
    extra: bool,
}

fn tools(extra: bool) -> Value {
    let mut list = base_tools();
    if extra && let Some(tools) = list["tools"].as_array_mut() {
        let none = json!({"type": "object", "properties": {}});
        for name in ["dup.name".to_owned(), "dup_name".to_owned(), "x".repeat(70)] {
            tools.push(json!({"name": name, "description": "An extra tool.", "inputSchema": none}));
        }
    }
    list
}

fn base_tools() -> Value {
    let text_arg =
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]});
    let none = json!({"type": "object", "properties": {}});
    json!({"tools": [
        {"name": "echo", "description": "Returns the text it is given.", "inputSchema": text_arg,
         "annotations": {"readOnlyHint": true}},
        {"name": "add", "description": "Adds two numbers.",
         "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}},
        {"name": "destroy", "description": "Pretends to delete something.", "inputSchema": none,
         "annotations": {"readOnlyHint": false, "destructiveHint": true}},
        {"name": "fail", "description": "Always reports an error.", "inputSchema": none,
         "annotations": {"readOnlyHint": true}},
        {"name": "huge", "description": "Returns a long text.",
         "inputSchema": {"type": "object", "properties": {"chars": {"type": "integer"}}},
         "annotations": {"readOnlyHint": true}},
        {"name": "image", "description": "Returns a tiny image.", "inputSchema": none,
         "annotations": {"readOnlyHint": true}},
        {"name": "slow", "description": "Never answers.", "inputSchema": none,
         "annotations": {"readOnlyHint": true}},
        {"name": "crash", "description": "Exits in the middle of the call.", "inputSchema": none,
         "annotations": {"readOnlyHint": true}},
        {"name": "pid", "description": "Returns the server's process id.", "inputSchema": none,
         "annotations": {"readOnlyHint": true}},
        {"name": "env", "description": "Returns an environment variable or (unset).",
         "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
         "annotations": {"readOnlyHint": true}},
        {"name": "change_tools", "description": "Announces that the tool list changed.", "inputSchema": none,
         "annotations": {"readOnlyHint": true}}
    ]})
}

fn text_result(text: impl Into<String>) -> Value {
    json!({"content": [{"type": "text", "text": text.into()}]})
}

impl TestServer {
    async fn run(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<Value, ErrorData> {
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        let str_arg = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
        Ok(match request.name.as_ref() {
            "echo" => text_result(
                str_arg("text")
                    .ok_or_else(|| ErrorData::invalid_params("echo needs `text`", None))?,
            ),
            "add" => {
                let num = |key: &str| args.get(key).and_then(Value::as_f64);
                let (Some(a), Some(b)) = (num("a"), num("b")) else {
                    return Err(ErrorData::invalid_params(
                        "add needs numbers `a` and `b`",
                        None,
                    ));
                };
                json!({"content": [{"type": "text", "text": format!("{}", a + b)}], "structuredContent": {"sum": a + b}})
            }
            "destroy" => text_result("destroyed"),
            "fail" => {
                json!({"content": [{"type": "text", "text": "the thing is broken"}], "isError": true})
            }
            "huge" => text_result(
                "x".repeat(args.get("chars").and_then(Value::as_u64).unwrap_or(200_000) as usize),
            ),
            "image" => {
                json!({"content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]})
            }
            "slow" => {
                std::future::pending::<()>().await;
                text_result("unreachable")
            }
            "crash" => std::process::exit(3),
            "pid" => text_result(std::process::id().to_string()),
            "env" => text_result(
                std::env::var(str_arg("name").unwrap_or_default())
                    .unwrap_or_else(|_| "(unset)".into()),
            ),
            "change_tools" => {
                let _ = context.peer.notify_tool_list_changed().await;
                text_result("announced")
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no tool named {other}"),
                    None,
                ));
            }
        })
    }
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("knack-mcp-test-server", "0.1.0"))
    }

    fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListToolsResult, ErrorData>> + MaybeSendFuture + '_ {
        std::future::ready(
            serde_json::from_value(tools(self.extra))
                .map_err(|e| ErrorData::internal_error(e.to_string(), None)),
        )
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let value = self.run(request, context).await?;
        let result: CallToolResult = serde_json::from_value(value)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(CallToolResponse::Complete(result))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--exit") {
        eprintln!("mcp-test-server: told to fail at start");
        std::process::exit(2);
    }
    if args.iter().any(|a| a == "--hang") {
        // Reads nothing and answers nothing: a server stuck before `initialize`.
        std::future::pending::<()>().await;
    }
    // Lets a test find this process after knack is gone.
    if let Ok(path) = std::env::var("MCP_TEST_PID_FILE") {
        std::fs::write(path, std::process::id().to_string())?;
    }
    let extra = args.iter().any(|a| a == "--extra");
    let service = TestServer { extra }.serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(())
}
