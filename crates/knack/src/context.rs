//! What most commands need before they start: the home, the parsed config,
//! and the discovery options for the current working directory.

use std::path::PathBuf;

use anyhow::Context as _;
use knack_config::{Config, KnackHome};
use skill_core::{DiscoveryOptions, SkillSet};

pub struct Context {
    pub home: KnackHome,
    pub config: Config,
    pub cwd: PathBuf,
}

impl Context {
    pub fn load() -> anyhow::Result<Self> {
        let home = KnackHome::from_env()?;
        crate::logging::init(home.logs_dir());
        let config = Config::load(&home)?;
        let cwd = std::env::current_dir().context("cannot read the working directory")?;
        Ok(Self { home, config, cwd })
    }

    pub fn discovery_options(&self) -> DiscoveryOptions {
        DiscoveryOptions::resolve(&self.home, &self.config, &self.cwd)
    }

    pub fn discover(&self) -> SkillSet {
        skill_core::discover(&self.discovery_options()).0
    }
}
