//! Layer 1: who the agent is. `$KNACK_HOME/SOUL.md` when present, clean and
//! non-empty; otherwise knack's built-in identity.

use crate::inputs::PromptInputs;
use crate::screen::{Screened, cap_head_tail, screen, strip_bom};

/// SOUL.md is cut (head and tail kept) beyond this many characters.
pub const SOUL_MAX_CHARS: usize = 8_000;

/// The identity used when there is no usable SOUL.md.
pub const BUILT_IN_IDENTITY: &str = "\
You are knack, an AI agent that works in the user's terminal and files. You get \
things done with the tools you are given: you read and change files, run \
commands, and keep notes for later sessions. Your procedural memory is a library \
of skills: folders with a SKILL.md that record how tasks are done here. The user \
wrote some, some came from a hub, and you wrote others after earlier work.

Be direct and precise. Check instead of guessing, say plainly when something \
failed or when you are unsure, and keep the user's files and time safe: ask \
before doing anything destructive that the user did not ask for.";

pub(crate) fn layer(inputs: &PromptInputs, warnings: &mut Vec<String>) -> String {
    let path = inputs.home.soul_path();
    let text = match knack_config::regular_file::read(&path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return BUILT_IN_IDENTITY.to_owned();
        }
        Err(e) => {
            warnings.push(format!(
                "{} cannot be read ({e}); the built-in identity is used",
                path.display()
            ));
            return BUILT_IN_IDENTITY.to_owned();
        }
    };
    let text = strip_bom(&text).trim();
    if text.is_empty() {
        return BUILT_IN_IDENTITY.to_owned();
    }
    match screen(text, "SOUL.md") {
        Screened::Blocked(why) => {
            warnings.push(format!(
                "SOUL.md was not used because the guard flagged it ({why}); the built-in identity is used instead"
            ));
            return BUILT_IN_IDENTITY.to_owned();
        }
        Screened::Mild(why) => warnings.push(format!("SOUL.md has minor guard findings: {why}")),
        Screened::Clean => {}
    }
    let (capped, cut) = cap_head_tail(text, SOUL_MAX_CHARS, "SOUL.md");
    if cut {
        warnings.push(format!(
            "SOUL.md is longer than {SOUL_MAX_CHARS} characters; its middle was left out"
        ));
    }
    capped
}
