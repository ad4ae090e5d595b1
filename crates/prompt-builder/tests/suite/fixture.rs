//! A throwaway home and working directory, with helpers to add skills and files.

use std::fs;
use std::path::{Path, PathBuf};

use knack_config::{Config, KnackHome};

use super::default_tools;
use prompt_builder::{Platform, PromptInputs, SessionFacts, SystemPrompt, build_system_prompt};
use skill_core::{DiscoveryOptions, Scope, SkillRoot, SkillSet, discover};

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub config: Config,
    pub tools: Vec<String>,
    pub toolsets: Vec<String>,
    pub external: bool,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("home/skills")).unwrap();
        fs::create_dir_all(dir.path().join("work")).unwrap();
        let config = Config::default();
        let toolsets = config.agent.toolsets.clone();
        Self {
            tools: default_tools(),
            toolsets,
            config,
            dir,
            external: false,
        }
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub fn cwd(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    pub fn write(&self, path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// A skill under the user root at `rel` (`devops/deploy`), with extra frontmatter lines.
    pub fn skill(&self, rel: &str, description: &str, extra: &str) {
        let name = rel.rsplit('/').next().unwrap();
        self.write(
            &self.home().join("skills").join(rel).join("SKILL.md"),
            &format!(
                "---\nname: {name}\ndescription: {description}\n{extra}---\n# {name}\n\nSteps.\n"
            ),
        );
    }

    /// A skill in the external root (`external/` beside home).
    pub fn external_skill(&mut self, rel: &str, description: &str) {
        self.external = true;
        let name = rel.rsplit('/').next().unwrap();
        self.write(
            &self.dir.path().join("external").join(rel).join("SKILL.md"),
            &format!("---\nname: {name}\ndescription: {description}\n---\nBody.\n"),
        );
    }

    pub fn category_description(&self, category: &str, text: &str) {
        self.write(
            &self
                .home()
                .join("skills")
                .join(category)
                .join("DESCRIPTION.md"),
            &format!("---\ndescription: {text}\n---\n"),
        );
    }

    pub fn skill_set(&self) -> SkillSet {
        let mut roots = vec![SkillRoot {
            path: self.home().join("skills"),
            scope: Scope::User,
        }];
        if self.external {
            roots.push(SkillRoot {
                path: self.dir.path().join("external"),
                scope: Scope::External,
            });
        }
        let mut options = DiscoveryOptions::with_roots(roots);
        options.disabled = self.config.skills.disabled.clone();
        discover(&options).0
    }

    pub fn inputs(&self, platform: Platform) -> PromptInputs {
        PromptInputs {
            home: KnackHome::at(self.home()),
            config: self.config.clone(),
            cwd: self.cwd(),
            session: SessionFacts {
                session_id: "s-0001".into(),
                started: "2025-06-01".into(),
                model: "test-model".into(),
            },
            platform,
            tools: self.tools.clone(),
            toolsets: self.toolsets.clone(),
            system_message: None,
        }
    }

    pub fn build(&self) -> (SystemPrompt, Vec<String>) {
        build_system_prompt(&self.inputs(Platform::Cli), &self.skill_set())
    }

    /// Replaces this fixture's temporary paths so snapshots are machine-independent.
    pub fn redact(&self, text: &str) -> String {
        text.replace(&self.cwd().display().to_string(), "[CWD]")
            .replace(&self.home().display().to_string(), "[HOME]")
    }
}
