//! `knack prompt show`: the system prompt a new session in this directory
//! would get, built by the same code the agent loop uses.

use prompt_builder::{
    Platform, PromptInputs, SessionFacts, build_system_prompt, tools_for_toolsets,
};

use crate::cli::PromptCommand;
use crate::context::Context;
use crate::exit;
use crate::output::{bold, dim, print_json};

pub fn run(cmd: PromptCommand) -> anyhow::Result<u8> {
    match cmd {
        PromptCommand::Show(flag) => show(flag.json),
    }
}

fn show(json: bool) -> anyhow::Result<u8> {
    let ctx = Context::load()?;
    let toolsets = ctx.config.agent.toolsets.clone();
    let model = std::env::var("KNACK_MODEL")
        .ok()
        .filter(|m| !m.trim().is_empty())
        .or_else(|| ctx.config.model.name.clone())
        .unwrap_or_else(|| "unset".to_owned());
    let inputs = PromptInputs {
        home: ctx.home.clone(),
        system_message: ctx.config.agent.system_message.clone(),
        config: ctx.config.clone(),
        cwd: ctx.cwd.clone(),
        session: SessionFacts {
            session_id: "preview".into(),
            started: prompt_builder::utc_date(std::time::SystemTime::now()),
            model,
        },
        platform: Platform::Cli,
        tools: tools_for_toolsets(&toolsets),
        toolsets,
    };
    let (prompt, warnings) = ctx.with_skills(|set| build_system_prompt(&inputs, set));
    for warning in &warnings {
        eprintln!("knack: warning: {warning}");
    }
    if json {
        print_json(&prompt.to_json());
        return Ok(exit::OK);
    }
    for (i, layer) in prompt.layers.iter().enumerate() {
        if i > 0 {
            println!();
        }
        println!(
            "{}",
            bold(&format!("── {} {} ", layer.index, layer.name))
                + &dim(&format!("({} chars)", layer.chars()))
        );
        println!("{}", layer.text);
    }
    Ok(exit::OK)
}
