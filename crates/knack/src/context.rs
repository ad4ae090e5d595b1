//! What most commands need before they start: the home, the parsed config,
//! and the discovery options for the current working directory.

use std::path::PathBuf;

use agent_loop::setup::{ModelChoice, ModelFlags, SessionSetup};
use anyhow::Context as _;
use knack_config::{Config, KnackHome};
use prompt_builder::Platform;
use skill_core::{DiscoveryOptions, SkillSet};

pub struct Context {
    pub home: KnackHome,
    /// The user's config.yaml, with the project's permission rules merged in (see
    /// [`ProjectRules`]).
    pub config: Config,
    pub cwd: PathBuf,
    /// The project's `.knack/permissions.yaml`, if it has one.
    pub project_rules: Option<ProjectRules>,
}

/// A project's own permission rules and whether its allow rules apply.
pub struct ProjectRules {
    pub path: PathBuf,
    pub rules: knack_config::PermissionsConfig,
    /// Listed in `skills.trusted_projects`: only then do its allow rules apply.
    pub trusted: bool,
}

impl Context {
    /// Loads the context and first brings the bundled skills up to date
    /// (unless opted out), so every command that reads skills sees them.
    pub fn load() -> anyhow::Result<Self> {
        let ctx = Self::load_unseeded()?;
        ctx.seed_bundled();
        Ok(ctx)
    }

    /// Loads the context without seeding: for the commands that manage
    /// seeding themselves and report what it did.
    pub fn load_unseeded() -> anyhow::Result<Self> {
        let home = KnackHome::from_env()?;
        // Before anything is written: the home holds keys and conversations.
        let narrowed = home.ensure_private();
        crate::logging::init(&home.logs_dir());
        match narrowed {
            Ok(paths) => {
                for path in paths {
                    tracing::warn!(
                        path = %path.display(),
                        "other users could read this; narrowed it to owner-only access"
                    );
                }
            }
            // A home we cannot create fails the command at its first write,
            // with that write's error; read-only commands still work.
            Err(e) => tracing::warn!(error = %e, "cannot make the knack home private"),
        }
        let mut config = Config::load(&home)?;
        let cwd = std::env::current_dir().context("cannot read the working directory")?;
        let project_rules = project_rules(&config, &cwd)?;
        if let Some(project) = &project_rules {
            // Deny rules from anywhere only narrow; allow rules need a trusted project.
            config
                .permissions
                .deny
                .extend(project.rules.deny.iter().cloned());
            if project.trusted {
                config
                    .permissions
                    .allow
                    .extend(project.rules.allow.iter().cloned());
            }
        }
        Ok(Self {
            home,
            config,
            cwd,
            project_rules,
        })
    }

    /// Seeding stays silent unless something went wrong; a failure here never
    /// stops the command the user asked for.
    fn seed_bundled(&self) {
        match skill_sync::seed_on_start(&self.home, &self.config) {
            Ok(Some(report)) => {
                if report.changed_anything() {
                    tracing::info!(
                        added = report.added.len(),
                        updated = report.updated.len(),
                        "bundled skills seeded"
                    );
                }
                for problem in report.problems() {
                    eprintln!("knack: warning: {problem}");
                }
            }
            Ok(None) => {}
            Err(e) => eprintln!("knack: warning: bundled skills were not seeded: {e}"),
        }
    }

    /// What a session started here shares with every other way of starting one.
    pub fn session_setup(&self, platform: Platform) -> SessionSetup {
        SessionSetup::new(
            self.home.clone(),
            self.config.clone(),
            self.cwd.clone(),
            platform,
        )
    }

    /// The model `flags` pick and its client; a missing or wrong setting is
    /// exit code 3 (see `exit::report`).
    pub fn model(&self, flags: &ModelFlags) -> anyhow::Result<ModelChoice> {
        Ok(agent_loop::setup::resolve(&self.home, &self.config, flags)?)
    }

    pub fn discovery_options(&self) -> DiscoveryOptions {
        DiscoveryOptions::resolve(&self.home, &self.config, &self.cwd)
    }

    /// The skill set for this directory, from the disk snapshot under
    /// `cache/` when nothing changed since the last run (no parsing then).
    pub fn discover(&self) -> SkillSet {
        skill_core::snapshot::load_or_discover(&self.discovery_options(), &self.home.cache_dir())
    }

    /// `discover`, for a short command that uses the set and ends: a
    /// snapshot that needs rewriting is written meanwhile on another thread.
    pub fn with_skills<R>(&self, use_set: impl FnOnce(&SkillSet) -> R) -> R {
        skill_core::snapshot::with_skill_set(
            &self.discovery_options(),
            &self.home.cache_dir(),
            use_set,
        )
    }
}

/// The project's rules file (from the git root, else the working directory).
fn project_rules(config: &Config, cwd: &std::path::Path) -> anyhow::Result<Option<ProjectRules>> {
    let root = skill_core::roots::find_git_root(cwd).unwrap_or_else(|| cwd.to_path_buf());
    let Some(rules) = knack_config::permissions::load_project(&root)? else {
        return Ok(None);
    };
    Ok(Some(ProjectRules {
        path: root.join(knack_config::permissions::PROJECT_FILE),
        rules,
        trusted: skill_core::roots::is_trusted(&root, &config.skills.trusted_projects),
    }))
}
