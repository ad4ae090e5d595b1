//! Prompt-builder behaviour from the outside: golden prompts, screening, caps, budget.
mod fixture;
mod golden;
mod index_scale;
mod index_timing;
mod layers;

/// The tool names of a default session, in registry order (the table lives
/// with the registry in agent-loop; the prompt only receives names).
pub fn default_tools() -> Vec<String> {
    [
        "skills_list",
        "skill_view",
        "skill_manage",
        "skills_search",
        "terminal",
        "read_file",
        "write_file",
        "patch",
        "search_files",
        "memory",
        "session_search",
    ]
    .map(String::from)
    .to_vec()
}
