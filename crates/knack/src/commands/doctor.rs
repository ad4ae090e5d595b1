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
    let model = match ctx.model(&agent_loop::setup::ModelFlags::default()) {
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
    let sandbox_active = agent.sandbox != knack_config::SandboxMode::FullAccess && support.active();
    let namespaces = support.method == knack_sandbox::Method::Namespaces;
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
                    "method": support.method.name(),
                    "forced_fallback": support.forced_fallback,
                    "user_namespace": namespaces,
                    "mount_namespace": namespaces,
                    "pid_namespace": namespaces,
                    "landlock": support.filesystem,
                    "landlock_abi": support.landlock_abi,
                    "network_rules": support.network,
                    "signal_scoping": support.signals,
                    "abstract_socket_scoping": support.abstract_sockets,
                    "unix_socket_rules": support.unix_socket_paths,
                    "seccomp": support.seccomp,
                    "pids_limit": support.pids_limit.name(),
                    "pids_limit_detail": knack_sandbox::pids_limit_detail(),
                    "unix_sockets": agent.sandbox_unix_sockets,
                    "notice": support.degraded_reason(),
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
    for (layer, state) in sandbox_layers(&support) {
        println!("          {layer:<22} {state}");
    }
    if !agent.sandbox_unix_sockets.is_empty() {
        println!(
            "          unix sockets allowed   {}{}",
            agent.sandbox_unix_sockets.join(", "),
            if support.unix_socket_paths {
                ""
            } else {
                " (this kernel cannot hold commands to exactly these: any socket path is reachable)"
            }
        );
    }
    if agent.sandbox != knack_config::SandboxMode::FullAccess
        && let Some(why) = support.degraded_reason()
    {
        println!("          NOTICE: {why}");
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

/// Each layer of the command sandbox and whether this machine has it, for the text report.
fn sandbox_layers(support: &knack_sandbox::Support) -> Vec<(&'static str, String)> {
    let yes_no = |on: bool| if on { "yes" } else { "no" }.to_owned();
    let namespaces = support.method == knack_sandbox::Method::Namespaces;
    let method = match (support.method, support.forced_fallback) {
        (knack_sandbox::Method::Namespaces, _) => "namespaces".to_owned(),
        (knack_sandbox::Method::Narrowing, true) => format!(
            "fallback: narrowed Landlock roots (forced by {})",
            knack_sandbox::FORCE_FALLBACK_ENV
        ),
        (knack_sandbox::Method::Narrowing, false) => {
            "fallback: narrowed Landlock roots (this kernel refuses user namespaces)".to_owned()
        }
    };
    vec![
        ("method", method),
        ("user namespace", yes_no(namespaces)),
        ("mount namespace", yes_no(namespaces)),
        ("PID namespace", yes_no(namespaces)),
        (
            "Landlock",
            if support.filesystem {
                format!("ABI {}", support.landlock_abi)
            } else {
                "no".to_owned()
            },
        ),
        ("  TCP rules", yes_no(support.network)),
        ("  signal scoping", yes_no(support.signals)),
        ("  abstract sockets", yes_no(support.abstract_sockets)),
        ("  socket paths", yes_no(support.unix_socket_paths)),
        ("seccomp socket filter", yes_no(support.seccomp)),
        (
            "process limit",
            match knack_sandbox::pids_limit_detail() {
                Some(detail) => format!("{} ({detail})", support.pids_limit.name()),
                None => support.pids_limit.name().to_owned(),
            },
        ),
    ]
}
