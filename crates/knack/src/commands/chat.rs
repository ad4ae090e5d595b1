//! `knack chat` (and `knack` alone in a terminal): connects to an agent session
//! and runs the TUI, reconnecting when the user asks for `/new` or `/resume`.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};

use anyhow::Context as _;

use crate::cli::ChatArgs;
use crate::context::Context;
use crate::exit;
use crate::tui::{self, ChatOptions, SkillCatalog, TuiExit};

/// True when both ends are a terminal, so a bare `knack` may open the TUI.
pub fn is_interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

pub fn run(args: ChatArgs) -> anyhow::Result<u8> {
    if !is_interactive() {
        return Err(exit::usage(
            "`knack chat` needs a terminal; use `knack run \"task\"` for scripts",
        ));
    }
    let ctx = Context::load()?;
    // An unknown id or skill is a usage error before the terminal is taken over.
    super::run::check_preloads(&ctx, &args.skills)?;
    let args = ChatArgs {
        resume: super::run::session_to_resume(&ctx, args.resume.as_deref(), args.continue_last)?,
        ..args
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(chat(ctx, args))
}

/// Exit code when the user cancels before the session starts (CONTRACT.md: interrupted).
const CANCELLED: u8 = 130;

async fn chat(ctx: Context, args: ChatArgs) -> anyhow::Result<u8> {
    let ctx = Arc::new(ctx);
    // `/model` changes these; the next session (`/new`, `/resume`) keeps them.
    let model = Arc::new(Mutex::new(args.model.flags()));
    let current = |model: &Mutex<agent_loop::setup::ModelFlags>| match model.lock() {
        Ok(flags) => flags.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    };
    let mode = args
        .mode
        .as_deref()
        .and_then(agent_protocol::ApprovalMode::from_name)
        .unwrap_or_default();
    let mut options = ChatOptions {
        resume: args.resume,
        preload: args.skills,
        model: current(&model),
        mode,
    };
    // A preload is rendered once, as the session starts: its secrets come first.
    if !tui::secret_prompt::ask_for_preloads(&ctx.home, ctx.discovery_options(), &options.preload)
        .await?
    {
        eprintln!("knack: cancelled; no session was started");
        return Ok(CANCELLED);
    }
    let mut skills = SkillCatalog::new(ctx.discovery_options());
    loop {
        let (conn, info) = tui::connect_agent(&ctx, &options).await?;
        let end = tui::run_tui(conn, info, &mut skills, &ctx, &model).await?;
        match end.exit {
            TuiExit::Quit => {
                // The terminal is restored by now: this stays on screen.
                println!("{}", end.summary);
                return Ok(exit::OK);
            }
            TuiExit::NewSession => {
                options = ChatOptions {
                    model: current(&model),
                    mode,
                    ..ChatOptions::default()
                }
            }
            TuiExit::Resume(id) => {
                options = ChatOptions {
                    resume: Some(id),
                    preload: Vec::new(),
                    model: current(&model),
                    mode,
                }
            }
        }
    }
}
