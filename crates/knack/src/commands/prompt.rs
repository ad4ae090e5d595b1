//! `knack prompt show`: the system prompt a new session in this directory
//! would get, built by the same code the agent loop uses.

use agent_loop::session::SessionOptions;
use prompt_builder::{
    IndexCoverage, IndexOptions, Platform, PromptInputs, build_system_prompt_with_index,
    keep_index, kept_index, render_skills_index,
};
use skill_core::snapshot;

use crate::cli::PromptCommand;
use crate::context::Context;
use crate::exit;
use crate::output::{bold, dim, print_json};

pub fn run(cmd: PromptCommand) -> anyhow::Result<u8> {
    match cmd {
        PromptCommand::Show(flag) => show(flag.json),
    }
}

/// The skills index block. When the discovery snapshot still holds and an
/// earlier process kept the block rendered from it, neither the skill set nor
/// the block is built again: only the snapshot's stamps are checked.
fn skills_index(ctx: &Context, options: &IndexOptions) -> String {
    let discovery = ctx.discovery_options();
    let cache = ctx.home.cache_dir();
    if let Some(id) = snapshot::written_id(&discovery, &cache)
        && let Some(block) = kept_index(&id.hex(), options)
        && snapshot::still_valid(&discovery, &cache, id)
    {
        return block;
    }
    snapshot::with_skill_set_identified(&discovery, &cache, |set, id| {
        let block = render_skills_index(set, options);
        if let Some(id) = id {
            keep_index(&id.hex(), options, &block);
        }
        block
    })
}

/// The registry a new session here gets: the toolsets' tools, then the tools
/// of the configured MCP servers (started here, as a session would, and
/// stopped), so skills that require an MCP tool show exactly as they would in
/// a session. `skills doctor` passes `with_mcp: false` and assumes the built-in
/// tools only.
fn session_tools(ctx: &Context, with_mcp: bool) -> anyhow::Result<agent_loop::ToolRegistry> {
    let toolsets = &ctx.config.agent.toolsets;
    if !with_mcp || ctx.config.mcp_servers.is_empty() {
        return Ok(agent_loop::setup::registry(toolsets, None));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    Ok(runtime.block_on(async {
        let hub = agent_loop::session::start_mcp_servers(&ctx.home, &ctx.config).await;
        agent_loop::setup::registry(toolsets, hub.as_ref())
    }))
}

/// The options and prompt inputs of a new session here, with the model and
/// window the session would take (`None` where not configured).
fn preview_inputs(
    ctx: &Context,
    session_id: &str,
    system_message: Option<String>,
    with_mcp: bool,
) -> anyhow::Result<(PromptInputs, Option<u64>)> {
    // The same resolver a session uses, so the two never disagree.
    let (model, window) = agent_loop::setup::model_and_window(
        &ctx.home,
        &ctx.config,
        &agent_loop::setup::ModelFlags::default(),
    )?;
    let options = SessionOptions {
        system_message,
        ..ctx
            .session_setup(Platform::Cli)
            .options(model.unwrap_or_else(|| "unset".to_owned()))
    };
    let window = agent_loop::compaction::known_context_window(window, &options.model);
    let registry = session_tools(ctx, with_mcp)?;
    Ok((options.prompt_inputs(session_id, &registry), window))
}

/// What the skills index of a new session here would leave out, said for
/// people (`skills doctor`); `None` when it lists every skill in full. The
/// session's built-in tools are assumed (no MCP server is started).
pub fn index_notice(ctx: &Context, set: &skill_core::SkillSet) -> Option<String> {
    let (inputs, window) = preview_inputs(ctx, "doctor", None, false).ok()?;
    let options = IndexOptions::from_inputs(&inputs)
        .with_context_window(window, ctx.config.skills.index_budget_share)
        .with_uses(agent_loop::skill_usage::use_counts_in(&ctx.home));
    IndexCoverage::of_block(&render_skills_index(set, &options))?.notice()
}

fn show(json: bool) -> anyhow::Result<u8> {
    let ctx = Context::load()?;
    let (inputs, window) = preview_inputs(
        &ctx,
        "preview",
        ctx.config.agent.system_message.clone(),
        true,
    )?;
    // Ordered by the same usage records a new session reads.
    let options = IndexOptions::from_inputs(&inputs)
        .with_context_window(window, ctx.config.skills.index_budget_share)
        .with_uses(agent_loop::skill_usage::use_counts_in(&ctx.home));
    let index = skills_index(&ctx, &options);
    if let Some(notice) = IndexCoverage::of_block(&index).and_then(|c| c.notice()) {
        eprintln!("knack: note: {notice}");
    }
    let (prompt, warnings) = build_system_prompt_with_index(&inputs, index);
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
        // Layers hold memory, skill descriptions and the project's context files: text a
        // model or a repository wrote.
        println!("{}", crate::terminal_text::escape(&layer.text));
    }
    Ok(exit::OK)
}
