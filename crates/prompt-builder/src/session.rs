//! Layers 9 and 10: the facts of this session and a hint about the frontend.
//! Only the start date appears, never a time, so the prompt is stable all day.

use crate::inputs::{Platform, PromptInputs};

pub(crate) fn session_layer(inputs: &PromptInputs) -> String {
    let s = &inputs.session;
    format!(
        "## Session\nStarted: {}\nSession id: {}\nModel: {}\nWorking directory: {}",
        s.started.trim(),
        s.session_id.trim(),
        s.model.trim(),
        inputs.cwd.display()
    )
}

pub(crate) fn platform_layer(platform: Platform) -> String {
    let hint = match platform {
        Platform::Tui => {
            "You are in knack's interactive terminal interface. Replies are shown as \
Markdown in a terminal, so keep them compact. The user can run a skill directly \
by typing /name, and can interrupt you at any time."
        }
        Platform::Cli => {
            "You are running headless (`knack run`): nobody can answer questions while \
you work. Make sensible assumptions and state them, finish the task, and end \
with a short final answer. A script may read your output."
        }
        Platform::Review => {
            "This is a review after a finished task; the user is not watching. Decide \
whether something learned in the conversation deserves to be saved as a skill or \
a memory, do it, and end with one short line saying what you saved, or that \
nothing was worth saving."
        }
    };
    format!("## Interface: {}\n{hint}", platform.as_str())
}
