//! `knack doctor`: one look at the installation — the home and its modes, the config, the
//! model, and what the command sandbox can enforce on this machine.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use crate::cli::DoctorArgs;
use crate::context::Context;

pub fn run(args: &DoctorArgs) -> anyhow::Result<u8> {
    let ctx = Context::load_unseeded()?;
    let agent = &ctx.config.agent;
    let support = knack_sandbox::support();
    let model = match super::model::resolve(&ctx, &super::model::ModelFlags::default()) {
        Ok(choice) => Ok(choice.model),
        Err(e) => Err(e.to_string()),
    };
    let home_mode = std::fs::metadata(ctx.home.root())
        .map(|m| m.permissions().mode() & 0o777)
        .ok();
    // No state.db yet means nothing recorded, not a problem.
    let usage = ctx
        .home
        .state_db()
        .exists()
        .then(|| agent_loop::skill_usage::check(&ctx.home));
    let sandbox_active =
        agent.sandbox != knack_config::SandboxMode::FullAccess && support.filesystem;
    if args.json {
        println!(
            "{}",
            json!({
                "home": ctx.home.root().display().to_string(),
                "home_mode": home_mode.map(|m| format!("{m:o}")),
                "model": model.as_ref().ok(),
                "model_error": model.as_ref().err(),
                "sandbox": {
                    "mode": agent.sandbox.name(),
                    "active": sandbox_active,
                    "network": agent.sandbox_network,
                    "landlock": support.filesystem,
                    "network_rules": support.network,
                    "signal_scoping": support.signals,
                    "mount_namespace": support.mount_namespace,
                },
                "approval": agent.approval.name(),
                "yolo": agent.yolo,
                "skill_usage": match &usage {
                    None => json!({"ok": true, "records": 0}),
                    Some(Ok(n)) => json!({"ok": true, "records": n}),
                    Some(Err(e)) => json!({"ok": false, "error": e}),
                },
            })
        );
        return Ok(0);
    }
    println!("home      {}", ctx.home.root().display());
    if let Some(mode) = home_mode {
        let note = if mode & 0o077 == 0 {
            ""
        } else {
            "  (others can read it: chmod 700)"
        };
        println!("          mode {mode:o}{note}");
    }
    match &model {
        Ok(name) => println!("model     {name}"),
        Err(e) => println!("model     not configured: {e}"),
    }
    println!(
        "sandbox   {} ({}), network {}",
        agent.sandbox.name(),
        if sandbox_active {
            "active"
        } else {
            "NOT active"
        },
        if agent.sandbox_network { "on" } else { "off" }
    );
    println!("          kernel: {}", support.describe());
    if !support.filesystem && agent.sandbox != knack_config::SandboxMode::FullAccess {
        println!("          every command will ask for approval (headless runs refuse them)");
    }
    println!(
        "approval  {}{}",
        agent.approval.name(),
        if agent.yolo {
            " (yolo: every ask is answered yes)"
        } else {
            ""
        }
    );
    match &usage {
        None => println!("usage     no skill usage recorded yet"),
        Some(Ok(n)) => println!("usage     {n} skill(s) with usage records"),
        Some(Err(e)) => {
            println!("usage     the skill usage records in state.db cannot be read: {e}");
            println!(
                "          commands keep working: stats show zero counts and new uses are not counted until the table is readable again"
            );
        }
    }
    Ok(0)
}
