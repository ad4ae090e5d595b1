//! The system prompt of a session: ten named layers rendered once, byte-stable,
//! from the home, the config, the working directory and the discovered skills.
//!
//! Nothing here calls a model. The agent loop builds the prompt once per session
//! with `build_system_prompt` and sends the same bytes on every request, so
//! providers can cache the prefix. Skill bodies never enter this prompt: they
//! reach the conversation as user messages (see docs/prompt.md).

mod context_files;
mod guidance;
mod identity;
mod inputs;
mod memory;
mod prompt;
mod screen;
mod session;
mod skills_index;

pub use context_files::{CONTEXT_FILE_MAX_CHARS, CONTEXT_FILE_NAMES};
pub use identity::{BUILT_IN_IDENTITY, SOUL_MAX_CHARS};
pub use inputs::{Platform, PromptInputs, SessionFacts, utc_date};
pub use memory::{
    MEMORY_ENTRY_DELIMITER, PROVIDER_OUTPUT_MAX_CHARS, PROVIDER_TIMEOUT,
    split_entries as split_memory_entries,
};
pub use prompt::{LayerKind, PromptLayer, SystemPrompt};
pub use skills_index::{
    IndexCoverage, IndexOptions, clear_index_cache, keep_index, kept_index, render_skills_index,
};

use skill_core::SkillSet;

/// Errors inside the builder. Building itself never fails: every problem
/// becomes a warning and the affected layer falls back or stays empty.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("memory provider command failed: {0}")]
    Provider(String),
}

pub type Result<T> = std::result::Result<T, Error>;

/// Builds the ten layers for a new session. Returns the prompt and the
/// warnings a frontend should show (blocked files, caps applied, failures).
pub fn build_system_prompt(
    inputs: &PromptInputs,
    skills: &SkillSet,
) -> (SystemPrompt, Vec<String>) {
    build_system_prompt_with_index(inputs, skills_index::layer(inputs, skills))
}

/// `build_system_prompt` with the skills index block already rendered (by
/// `render_skills_index`, or kept from an earlier process: `kept_index`).
pub fn build_system_prompt_with_index(
    inputs: &PromptInputs,
    skills_index: String,
) -> (SystemPrompt, Vec<String>) {
    let mut warnings = Vec::new();
    let mut layers = Vec::new();
    let mut push = |kind: LayerKind, text: String| {
        let text = text.trim().to_owned();
        if !text.is_empty() {
            layers.push(PromptLayer::new(kind, text));
        }
    };

    push(LayerKind::Identity, identity::layer(inputs, &mut warnings));
    push(LayerKind::Guidance, guidance::layer(&inputs.tools));
    push(
        LayerKind::MemoryProvider,
        memory::provider_layer(inputs, &mut warnings),
    );
    push(
        LayerKind::SystemMessage,
        inputs.system_message.clone().unwrap_or_default(),
    );
    push(
        LayerKind::Memory,
        memory::memory_layer(inputs, &mut warnings),
    );
    push(
        LayerKind::UserProfile,
        memory::user_profile_layer(inputs, &mut warnings),
    );
    push(LayerKind::SkillsIndex, skills_index);
    push(
        LayerKind::ContextFiles,
        context_files::layer(&inputs.cwd, &mut warnings),
    );
    push(LayerKind::Session, session::session_layer(inputs));
    push(
        LayerKind::Platform,
        session::platform_layer(inputs.platform),
    );

    (SystemPrompt { layers }, warnings)
}
