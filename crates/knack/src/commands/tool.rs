//! `knack tool list|call`: run the agent's tools by hand, with the same JSON a
//! model would send and get back, through the same registry a session uses.

use std::sync::Arc;

use agent_loop::tools::SkillWriteMode;
use agent_loop::{AutoApprove, AutoDeny, ToolContext, ToolRegistry};
use anyhow::Context as _;
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

/// Every built-in tool, whatever `agent.toolsets` enables: by hand, all are callable.
fn registry() -> ToolRegistry {
    let all: Vec<String> = agent_loop::tools::TOOLSETS
        .iter()
        .map(|(set, _)| (*set).to_owned())
        .collect();
    ToolRegistry::for_toolsets(&all)
}

fn list(json_out: bool) -> anyhow::Result<u8> {
    let registry = registry();
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
        return Ok(exit::OK);
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
    Ok(exit::OK)
}

fn call(args: ToolCallArgs) -> anyhow::Result<u8> {
    let registry = registry();
    if registry.get(&args.name).is_none() {
        return Err(exit::usage(format!(
            "unknown tool '{}'; the tools are: {}",
            args.name,
            registry.names().join(", ")
        )));
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
    let ctx = Context::load()?;
    let yolo = ctx.config.agent.yolo;
    let session_id = format!("cli-tool-{}", std::process::id());
    // A person at the command line writes skills as the user; flagged terminal
    // commands run only with agent.yolo, since nobody is asked here.
    let tool_ctx = ToolContext::new(ctx.home, ctx.config, ctx.cwd, session_id)
        .with_write_mode(SkillWriteMode::User)
        .with_approver(if yolo {
            Arc::new(AutoApprove)
        } else {
            Arc::new(AutoDeny)
        });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let reply = runtime.block_on(registry.dispatch_value(&args.name, arguments, &tool_ctx))?;
    print_json(&reply.value);
    Ok(if reply.success() {
        exit::OK
    } else {
        exit::FAILED
    })
}
