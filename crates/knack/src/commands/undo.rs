//! `knack undo`: put back the files the last turn in this folder changed (any session),
//! from the checkpoint the turn left under `$KNACK_HOME/checkpoints/`.

use agent_loop::checkpoint::{self, Restored};

use crate::context::Context;
use crate::exit;

pub fn run() -> anyhow::Result<u8> {
    let ctx = Context::load_unseeded()?;
    let checkpoints = ctx.home.checkpoints_dir();
    let Some(turn) = checkpoint::turns(&checkpoints, &ctx.cwd, None)
        .into_iter()
        .next()
    else {
        return Err(exit::failed(format!(
            "nothing to undo: no turn changed files in {} (or it was undone already)",
            ctx.cwd.display()
        )));
    };
    let restored = checkpoint::undo(&turn);
    println!(
        "{}",
        checkpoint::describe_undo(&turn.manifest.title, &restored)
    );
    Ok(
        if restored.iter().any(|r| matches!(r, Restored::Left(..))) {
            exit::FAILED
        } else {
            exit::OK
        },
    )
}
