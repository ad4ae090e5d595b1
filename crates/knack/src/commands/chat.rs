//! `knack chat` (and `knack` alone in a terminal): connects to an agent session
//! and runs the TUI, reconnecting when the user asks for `/new` or `/resume`.

use std::io::IsTerminal;

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
    // An unknown id is a usage error before the terminal is taken over.
    let args = ChatArgs {
        resume: match &args.resume {
            Some(id) => Some(super::run::resolve_session(&ctx, id)?),
            None => None,
        },
        ..args
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(chat(ctx, args))
}

async fn chat(ctx: Context, args: ChatArgs) -> anyhow::Result<u8> {
    let model = args.model;
    let mut options = ChatOptions {
        resume: args.resume,
        preload: args.skills,
        model: model.clone(),
    };
    let mut skills = SkillCatalog::new(ctx.discovery_options());
    loop {
        let (conn, info) = tui::connect_agent(&ctx, &options).await?;
        match tui::run_tui(conn, info, &mut skills, &ctx.home).await? {
            TuiExit::Quit => return Ok(exit::OK),
            TuiExit::NewSession => {
                options = ChatOptions {
                    model: model.clone(),
                    ..ChatOptions::default()
                }
            }
            TuiExit::Resume(id) => {
                options = ChatOptions {
                    resume: Some(id),
                    preload: Vec::new(),
                    model: model.clone(),
                }
            }
        }
    }
}
