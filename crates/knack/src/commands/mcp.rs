//! `knack mcp list|tools`: start the MCP servers of config.yaml as a session would, and
//! show which are ready, why the others are not, and the tools they offer.

use std::collections::BTreeMap;

use agent_loop::mcp_client::{McpHub, ServerState, StartOptions};
use anyhow::Context as _;
use knack_config::McpServerConfig;
use serde_json::{Value, json};

use crate::cli::McpCommand;
use crate::context::Context;
use crate::exit;
use crate::output::{ellipsize, print_json, print_table};

pub fn run(cmd: McpCommand) -> anyhow::Result<u8> {
    let ctx = Context::load_unseeded()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // The hub is dropped inside the runtime: stopping a child needs it.
    runtime.block_on(async move {
        match cmd {
            McpCommand::List(flag) => list(&ctx, flag.json).await,
            McpCommand::Tools { server, json } => tools(&ctx, server.as_deref(), json).await,
        }
    })
}

async fn start(ctx: &Context, servers: &BTreeMap<String, McpServerConfig>) -> McpHub {
    let options = StartOptions {
        env_passthrough: ctx.config.agent.env_passthrough.clone(),
        env_file: ctx.home.env_file(),
    };
    McpHub::start(servers, options).await
}

async fn list(ctx: &Context, json_out: bool) -> anyhow::Result<u8> {
    let hub = start(ctx, &ctx.config.mcp_servers).await;
    let statuses = hub.statuses();
    if json_out {
        let items: Vec<Value> = statuses
            .iter()
            .map(|s| {
                let mut item = json!({
                    "name": s.name,
                    "transport": s.transport.as_str(),
                    "status": s.state.as_str(),
                    "tools": s.tools,
                });
                if let (ServerState::Failed(reason), Value::Object(map)) = (&s.state, &mut item) {
                    map.insert("error".into(), Value::String(reason.clone()));
                }
                item
            })
            .collect();
        print_json(&Value::Array(items));
        return Ok(exit::OK);
    }
    if statuses.is_empty() {
        println!("No MCP servers are configured; add them under `mcp_servers` in config.yaml.");
        return Ok(exit::OK);
    }
    let rows: Vec<Vec<String>> = statuses
        .iter()
        .map(|s| {
            let error = match &s.state {
                ServerState::Failed(reason) => ellipsize(reason, 100),
                _ => String::new(),
            };
            vec![
                s.name.clone(),
                s.transport.as_str().to_owned(),
                s.state.as_str().to_owned(),
                s.tools.to_string(),
                error,
            ]
        })
        .collect();
    print_table(&["SERVER", "TRANSPORT", "STATUS", "TOOLS", "ERROR"], &rows);
    Ok(exit::OK)
}

async fn tools(ctx: &Context, server: Option<&str>, json_out: bool) -> anyhow::Result<u8> {
    let servers = match server {
        Some(name) => {
            let Some(config) = ctx.config.mcp_servers.get(name) else {
                let known: Vec<&str> = ctx.config.mcp_servers.keys().map(String::as_str).collect();
                return Err(exit::failed(if known.is_empty() {
                    format!("there is no MCP server named '{name}'; config.yaml has none")
                } else {
                    format!(
                        "there is no MCP server named '{name}'; config.yaml has: {}",
                        known.join(", ")
                    )
                }));
            };
            BTreeMap::from([(name.to_owned(), config.clone())])
        }
        None => ctx.config.mcp_servers.clone(),
    };
    let hub = start(ctx, &servers).await;
    if let Some(name) = server
        && let Some(status) = hub.statuses().into_iter().next()
    {
        match status.state {
            ServerState::Failed(reason) => {
                return Err(exit::failed(format!(
                    "the MCP server '{name}' is not running: {reason}"
                )));
            }
            ServerState::Disabled => {
                return Err(exit::failed(format!(
                    "the MCP server '{name}' is disabled (mcp_servers.{name}.enabled)"
                )));
            }
            ServerState::Ready => {}
        }
    }
    let tools = hub.tools();
    if json_out {
        let items: Vec<Value> = tools
            .iter()
            .map(|t| {
                json!({
                    "server": t.server,
                    "name": t.name,
                    "description": t.description,
                    "input_schema": t.input_schema,
                })
            })
            .collect();
        print_json(&Value::Array(items));
        return Ok(exit::OK);
    }
    let rows: Vec<Vec<String>> = tools
        .iter()
        .map(|t| {
            let model_name = agent_loop::mcp_client::qualified_name(&t.server, &t.name)
                .unwrap_or_else(|_| "(name too long)".to_owned());
            vec![
                t.server.clone(),
                t.name.clone(),
                model_name,
                ellipsize(&t.description, 60),
            ]
        })
        .collect();
    print_table(&["SERVER", "TOOL", "MODEL SEES", "DESCRIPTION"], &rows);
    Ok(exit::OK)
}
