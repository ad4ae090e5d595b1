//! `knack tool list|call`: run the agent's tools by hand, with the same JSON a
//! model would send and get back, through the same registry a session uses.

use agent_loop::tools::SkillWriteMode;
use agent_loop::{ToolContext, ToolRegistry};
use anyhow::Context as _;
use prompt_builder::Platform;
use serde_json::{Value, json};

use crate::cli::{ToolCallArgs, ToolCommand};
use crate::context::Context;
use crate::exit;
use crate::output::{ellipsize, print_json, print_table};

pub fn run(cmd: ToolCommand) -> anyhow::Result<u8> {
    match cmd {
        ToolCommand::List(flag) => list(flag.json),
        ToolCommand::Call(args) => call(args),
    }
}

/// Every built-in tool, whatever `agent.toolsets` enables: by hand, all are
/// callable; with `mcp`, the tools of the configured MCP servers after them.
async fn registry(ctx: &Context, mcp: bool) -> ToolRegistry {
    let all: Vec<String> = agent_loop::tools::TOOLSETS
        .iter()
        .map(|(set, _)| (*set).to_owned())
        .collect();
    let hub = if mcp {
        agent_loop::session::start_mcp_servers(&ctx.home, &ctx.config).await
    } else {
        None
    };
    agent_loop::setup::registry(&all, hub.as_ref())
}

/// A runtime for the MCP servers; they are started and stopped inside it.
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

fn list(json_out: bool) -> anyhow::Result<u8> {
    let ctx = Context::load()?;
    runtime()?.block_on(async move {
        let registry = registry(&ctx, true).await;
        print_list(&registry, json_out);
        Ok(exit::OK)
    })
}

fn print_list(registry: &ToolRegistry, json_out: bool) {
    if json_out {
        let items: Vec<Value> = registry
            .tools()
            .map(|t| {
                json!({
                    "name": t.name(),
                    "description": t.description(),
                    "parameters": t.parameters(),
                    "toolset": t.toolset().as_str(),
                    "mutating": t.is_mutating(),
                })
            })
            .collect();
        print_json(&Value::Array(items));
        return;
    }
    let rows: Vec<Vec<String>> = registry
        .tools()
        .map(|t| {
            vec![
                t.name().to_owned(),
                t.toolset().as_str().to_owned(),
                ellipsize(t.description(), 80),
            ]
        })
        .collect();
    print_table(&["TOOL", "TOOLSET", "DESCRIPTION"], &rows);
}

fn call(args: ToolCallArgs) -> anyhow::Result<u8> {
    let ctx = Context::load()?;
    // Servers start only for an MCP tool: a built-in tool should not wait for them.
    let mcp = args.name.starts_with("mcp__");
    let runtime = runtime()?;
    runtime.block_on(async move {
        let registry = registry(&ctx, mcp).await;
        call_with(ctx, &registry, args).await
    })
}

async fn call_with(
    ctx: Context,
    registry: &ToolRegistry,
    args: ToolCallArgs,
) -> anyhow::Result<u8> {
    if registry.get(&args.name).is_none() {
        if mcp_client_missing(&args.name, &ctx) {
            return Err(exit::usage(format!(
                "unknown tool '{}': no configured MCP server offers it (see `knack mcp list`)",
                args.name
            )));
        }
        let names = registry.names();
        let hint = crate::suggest::did_you_mean(
            &args.name,
            names.iter().copied(),
            &format!("the tools are: {}", names.join(", ")),
        );
        return Err(exit::usage(format!("unknown tool '{}'; {hint}", args.name)));
    }
    let raw = args.arguments.as_deref().unwrap_or("{}");
    let arguments: Value = serde_json::from_str(raw).map_err(|e| {
        exit::usage(format!(
            "the arguments are not valid JSON ({e}); pass one JSON object, e.g. '{{\"name\": \"x\"}}'"
        ))
    })?;
    if !arguments.is_object() {
        return Err(exit::usage(
            "the arguments must be a JSON object, e.g. '{\"name\": \"x\"}'",
        ));
    }
    let session_id = format!("cli-tool-{}", std::process::id());
    // A person at the command line writes skills as the user; flagged terminal
    // commands run only with agent.yolo, since nobody is asked here.
    let approver = ctx.session_setup(Platform::Cli).approver(None);
    let tool_ctx = ToolContext::new(ctx.home, ctx.config, ctx.cwd, session_id)
        .with_write_mode(SkillWriteMode::User)
        .with_approver(approver);
    let reply = registry
        .dispatch_value(&args.name, arguments, &tool_ctx)
        .await?;
    print_json(&reply.value);
    Ok(if reply.success() {
        exit::OK
    } else {
        exit::FAILED
    })
}

/// Whether `name` looks like an MCP tool name while config.yaml has servers.
fn mcp_client_missing(name: &str, ctx: &Context) -> bool {
    name.starts_with("mcp__") && !ctx.config.mcp_servers.is_empty()
}
