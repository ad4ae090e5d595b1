//! What the builder needs to know about a session, and the table of which tools
//! each toolset registers (shared with the agent loop's tool registry).

use std::path::PathBuf;
use std::time::SystemTime;

use knack_config::{Config, KnackHome};

/// Which frontend runs the session; selects the platform hint (layer 10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Platform {
    Tui,
    Cli,
    Review,
}

impl Platform {
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Tui => "tui",
            Platform::Cli => "cli",
            Platform::Review => "review",
        }
    }
}

/// Facts about the session that go into layer 9. `started` is a date
/// (`YYYY-MM-DD`), never a finer time, so the prompt stays byte-stable all day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFacts {
    pub session_id: String,
    pub started: String,
    pub model: String,
}

/// Everything `build_system_prompt` reads besides the skill set.
#[derive(Debug, Clone)]
pub struct PromptInputs {
    pub home: KnackHome,
    pub config: Config,
    pub cwd: PathBuf,
    pub session: SessionFacts,
    pub platform: Platform,
    /// Names of the tools registered for the session.
    pub tools: Vec<String>,
    /// Names of the toolsets enabled for the session.
    pub toolsets: Vec<String>,
    /// The caller's system message (`--system`, else config `agent.system_message`).
    pub system_message: Option<String>,
}

/// The UTC calendar date of `time` as `YYYY-MM-DD` (the session's start date).
pub fn utc_date(time: SystemTime) -> String {
    skill_core::clock::utc_date(time)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn utc_dates() {
        let at = |secs: u64| utc_date(SystemTime::UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0), "1970-01-01");
        assert_eq!(at(951_782_400), "2000-02-29");
        assert_eq!(at(1_709_251_199), "2024-02-29");
        assert_eq!(at(1_735_689_600), "2025-01-01");
    }
}
