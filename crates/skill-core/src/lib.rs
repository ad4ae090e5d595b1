//! The skill system's core: the SKILL.md model, lenient parsing, write-side
//! validation, the one discovery engine, progressive disclosure and preprocessing.

pub mod cache;
pub mod disclosure;
pub mod discovery;
pub mod frontmatter;
pub mod injection;
pub mod preprocess;
pub mod roots;
pub mod skill;
pub mod skill_set;
pub mod validate;

pub use cache::DiscoveryCache;
pub use disclosure::{ViewContext, skill_view, skills_list};
pub use discovery::{Fingerprint, discover};
pub use frontmatter::{Conditions, EnvRequirement, Frontmatter};
pub use preprocess::{PreprocessOptions, TemplateValues};
pub use roots::{DiscoveryOptions, SkillRoot};
pub use skill::{Scope, Skill};
pub use skill_set::{DoctorEntry, EntryStatus, Gate, Resolution, RootReport, SkillSet};

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
}

pub type Result<T> = std::result::Result<T, Error>;
