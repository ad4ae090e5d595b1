//! Skills that need setup before they are used: which skills a prompt
//! (`/name`, `/skill id`) and the `-s` preloads name, and, for `knack run`,
//! one line on stderr per skill saying which variables to set and where.
//! Which variables are missing is `skill_core::setup`'s rule; the TUI asks
//! for them in a masked prompt (`tui/secret_prompt.rs`) instead.

use agent_loop::invocation::invoked_skills;
use skill_core::setup::{ENV_FILE_DISPLAY, SetupNeed, setup_needs};

use crate::context::Context;

/// The line `knack run` prints for a skill that loads without its variables.
pub(crate) fn missing_line(need: &SetupNeed<'_>, env_path: &std::path::Path) -> String {
    let several = need.missing.len() > 1;
    format!(
        "knack: skill '{}' needs {} {}, which {} not set; it loads without {} and the model is told. \
         Add {} to {ENV_FILE_DISPLAY} ({}) or export {} before running.",
        need.skill.name,
        if several {
            "the variables"
        } else {
            "the variable"
        },
        need.names(),
        if several { "are" } else { "is" },
        if several { "them" } else { "it" },
        if several { "them" } else { "it" },
        env_path.display(),
        if several { "them" } else { "it" },
    )
}

/// Headless: one stderr line per invoked or preloaded skill with missing
/// variables. Never asks for a value: there may be no one to answer.
pub(crate) fn report_missing(ctx: &Context, prompt: &str, preloads: &[String]) {
    let env = ctx.home.env_file();
    let env_path = ctx.home.env_path();
    ctx.with_skills(|set| {
        for need in setup_needs(invoked_skills(set, prompt, preloads), &env) {
            eprintln!("{}", missing_line(&need, &env_path));
        }
    });
}
