//! The skill system's core: the SKILL.md model, lenient parsing, write-side
//! validation, the one discovery engine, progressive disclosure and preprocessing.

mod beneath;
pub mod cache;
pub mod clock;
pub mod disclosure;
pub mod discovery;
pub mod duplicate;
pub mod frontmatter;
pub mod fuzzy_patch;
pub mod helper_command;
pub mod history;
pub mod injection;
pub mod manage;
pub mod pins;
pub mod preprocess;
pub mod roots;
pub mod search;
pub mod setup;
pub mod skill;
pub mod skill_set;
pub mod snapshot;
pub mod stamp;
pub mod tool_specs;
pub mod trigger;
pub mod validate;
pub mod visible_text;
mod walk;
pub mod watch;

pub use cache::DiscoveryCache;
pub use disclosure::{
    ListPage, ListedSkill, SkillListing, ViewContext, skill_listing, skill_view, skills_list,
    skills_list_page,
};
pub use discovery::{discover, doctor_report};
pub use frontmatter::{Conditions, EnvRequirement, Frontmatter};
pub use manage::archive::{ArchiveRecord, ArchivedSkill, Restored};
pub use manage::{
    Actor, ManageAction, ManageContext, Refused, SkillManageArgs, WriteOrigin, skill_manage,
    skill_manage_json,
};
pub use preprocess::{PreprocessOptions, TemplateValues};
pub use roots::{DiscoveryOptions, INSTALLED_PLUGINS_DIR, PLUGIN_NAMESPACE, SkillRoot};
pub use skill::{QualifiedId, Scope, Skill};
pub use skill_set::{DoctorEntry, EntryStatus, Gate, Resolution, RootReport, SkillSet};
pub use stamp::Fingerprint;
pub use tool_specs::{ToolSpec, tool_specs};
pub use walk::dot_folder_notices;

/// Whether discovery passes over a folder of this name: hidden ones (`.history`,
/// `.hub`, `.git`, ...) and the dependency folders in `walk::SKIPPED_DIRS`. Tools
/// that look for SKILL.md files themselves (`knack skills validate DIR`) skip the same.
pub fn is_skipped_dir(name: &str) -> bool {
    name.starts_with('.') || walk::SKIPPED_DIRS.contains(&name)
}

/// Errors from skill-core operations that touch the file system.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Config(#[from] knack_config::Error),
    #[error("cannot watch the skill folders: {0}")]
    Watch(String),
    /// Skill history: nothing recorded, an unknown version, a refused rollback.
    #[error("{0}")]
    History(String),
    /// An inline shell snippet (or another helper command) that did not run.
    #[error("{0}")]
    HelperCommand(String),
}

pub type Result<T> = std::result::Result<T, Error>;
