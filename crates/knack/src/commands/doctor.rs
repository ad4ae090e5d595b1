//! `knack doctor`: one look at the installation — the home and its modes, the config, the
//! model (asked for a one-word reply), and what the command sandbox can enforce on this machine.

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use agent_loop::model::{ChatMessage, ChatRequest, RequestPurpose, build_client};
use anyhow::Context as _;
use serde_json::json;

use crate::cli::DoctorArgs;
use crate::context::Context;
use crate::exit;

/// What the model check found: the model's name and how long the server took,
/// or the error with the exit code it stands for.
struct ModelCheck {
    model: Result<String, String>,
    /// `Some` once a request was sent: the answer's latency or its error.
    server: Option<Result<Duration, String>>,
    endpoint: Option<String>,
}

impl ModelCheck {
    /// 0 when the server answered; 3 when no model is configured; 1 when the request failed.
    fn exit_code(&self) -> u8 {
        match (&self.model, &self.server) {
            (Ok(_), Some(Ok(_))) => exit::OK,
            (Err(_), _) | (Ok(_), None) => exit::CONFIG,
            (Ok(_), Some(Err(_))) => exit::FAILED,
        }
    }
}

/// Resolves the model as a session would and sends it one tiny request —
/// the cheapest proof that the address, the key and the model name all work.
/// No retries: a doctor reports what it sees rather than waiting it out.
fn check_model(ctx: &Context) -> anyhow::Result<ModelCheck> {
    let flags = agent_loop::setup::ModelFlags::default();
    let resolution = match agent_loop::setup::resolve_settings(&ctx.home, &ctx.config, &flags) {
        Ok(resolution) => resolution,
        Err(e) => {
            return Ok(ModelCheck {
                model: Err(e.to_string()),
                server: None,
                endpoint: None,
            });
        }
    };
    let Some(model) = resolution.model.clone() else {
        // `resolve` words the missing-name error the way sessions do.
        let message = match ctx.model(&flags) {
            Err(e) => e.to_string(),
            Ok(_) => "no model name configured".to_owned(),
        };
        return Ok(ModelCheck {
            model: Err(message),
            server: None,
            endpoint: None,
        });
    };
    let mut settings = resolution.settings;
    settings.retry.max_retries = 0;
    // A short answer is enough; thinking would only make it slower and dearer.
    settings.max_output_tokens = Some(PROBE_MAX_TOKENS);
    settings.reasoning_effort = None;
    settings.thinking_budget = None;
    let endpoint = settings.base_url.clone();
    let client = match build_client(settings) {
        Ok(client) => client,
        Err(e) => {
            return Ok(ModelCheck {
                model: Err(e.to_string()),
                server: None,
                endpoint: Some(endpoint),
            });
        }
    };
    let request = ChatRequest {
        model: model.clone(),
        messages: vec![
            ChatMessage::system("This is a connection check."),
            ChatMessage::user("Reply with the single word: ok"),
        ],
        tools: None,
        purpose: RequestPurpose::Turn,
        session_id: format!("doctor-{}", std::process::id()),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let started = Instant::now();
    let outcome = runtime.block_on(client.stream_chat(&request, &mut |_| {}));
    let server = match outcome {
        Ok(_) => Ok(started.elapsed()),
        // The server answered; a reply cut by the tiny limit still proves the setup.
        Err(agent_loop::ModelError::EmptyReply { .. }) => Ok(started.elapsed()),
        Err(e) => Err(e.to_string()),
    };
    Ok(ModelCheck {
        model: Ok(model),
        server: Some(server),
        endpoint: Some(endpoint),
    })
}

/// The probe's output limit: some servers (OpenAI Responses) refuse less than 16.
const PROBE_MAX_TOKENS: u32 = 16;

pub fn run(args: &DoctorArgs) -> anyhow::Result<u8> {
    let ctx = Context::load_unseeded()?;
    let agent = &ctx.config.agent;
    let support = knack_sandbox::support();
    let check = check_model(&ctx)?;
    let model = &check.model;
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
                "server": check.server.as_ref().map(|answer| match answer {
                    Ok(latency) => json!({
                        "ok": true,
                        "endpoint": check.endpoint,
                        "latency_ms": u64::try_from(latency.as_millis()).unwrap_or(u64::MAX),
                    }),
                    Err(error) => json!({"ok": false, "endpoint": check.endpoint, "error": error}),
                }),
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
        return Ok(check.exit_code());
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
    match (model, &check.server) {
        (Ok(name), Some(Ok(latency))) => println!(
            "model     {name} at {} answered in {} ms",
            check.endpoint.as_deref().unwrap_or("-"),
            latency.as_millis()
        ),
        (Ok(name), Some(Err(e))) => {
            println!("model     {name}: the check request FAILED");
            println!("          {e}");
        }
        (Ok(name), None) => println!("model     {name} (not checked)"),
        (Err(e), _) => println!("model     not configured: {e}"),
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
    Ok(check.exit_code())
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
