//! `knack model list`: the provider profiles of the config, the one in use marked.
//! Which provider, model and key a session uses is `agent_loop::setup`'s to decide.

use serde_json::json;

use crate::cli::ModelCommand;
use crate::context::Context;
use crate::exit;
use crate::output::print_json;

pub fn run(cmd: ModelCommand) -> anyhow::Result<u8> {
    match cmd {
        ModelCommand::List(flag) => list(flag.json),
    }
}

/// `knack model list`: every provider profile, the one in use marked.
fn list(json: bool) -> anyhow::Result<u8> {
    let ctx = Context::load_unseeded()?;
    let rows: Vec<serde_json::Value> = agent_loop::setup::profiles(&ctx.home, &ctx.config)
        .into_iter()
        .map(|p| {
            json!({
                "name": p.name,
                "wire": p.wire,
                "base_url": p.base_url,
                "model": p.model,
                "context_window": p.context_window,
                "reasoning_effort": p.reasoning_effort,
                "thinking_budget": p.thinking_budget,
                "active": p.active,
            })
        })
        .collect();
    if json {
        print_json(&serde_json::Value::Array(rows));
        return Ok(exit::OK);
    }
    if rows.is_empty() {
        println!("no providers in config.yaml; the environment-only setup is used");
        println!("(KNACK_BASE_URL, KNACK_MODEL, KNACK_API_KEY, KNACK_WIRE)");
        return Ok(exit::OK);
    }
    for row in &rows {
        let text = |key: &str| row[key].as_str().unwrap_or("-").to_owned();
        let mark = if row["active"] == json!(true) {
            "*"
        } else {
            " "
        };
        let thinking = match (
            row["reasoning_effort"].as_str(),
            row["thinking_budget"].as_u64(),
        ) {
            (Some(effort), Some(budget)) => format!("  effort {effort}, thinking {budget} tokens"),
            (None, Some(budget)) => format!("  thinking {budget} tokens"),
            (Some(effort), None) => format!("  effort {effort}"),
            (None, None) => String::new(),
        };
        println!(
            "{mark} {:<14} {:<10} {:<36} {}{thinking}",
            text("name"),
            text("wire"),
            text("base_url"),
            text("model")
        );
    }
    Ok(exit::OK)
}
