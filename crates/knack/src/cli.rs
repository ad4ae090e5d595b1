//! The command line, as CONTRACT.md fixes it. Each subcommand's behaviour
//! lives in `commands/`; this file only declares shapes and help texts.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "knack",
    version,
    about = "An agent runtime whose heart is a skill system",
    long_about = "knack runs an AI agent that keeps its procedural memory as skills: folders with a SKILL.md, \
found by one discovery engine, shown to the model a little at a time, and written back by the agent itself.\n\n\
Home: $KNACK_HOME (default ~/.knack). Model: KNACK_BASE_URL, KNACK_MODEL, KNACK_API_KEY."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Find, read, check and manage skills
    #[command(subcommand)]
    Skills(SkillsCommand),
    /// Read and edit config.yaml
    #[command(subcommand)]
    Config(ConfigCommand),
}

#[derive(Debug, Subcommand)]
pub enum SkillsCommand {
    /// List the skills every surface sees, sorted by category and name
    List(ListArgs),
    /// Show a skill's SKILL.md (preprocessed) or one of its files
    View(ViewArgs),
    /// Explain what discovery did with every SKILL.md it saw
    Doctor(JsonFlag),
    /// Check skill folders against the write rules (all discovered skills by default)
    Validate(ValidateArgs),
}

#[derive(Debug, Args)]
pub struct JsonFlag {
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only skills in this category (and its sub-categories)
    #[arg(long)]
    pub category: Option<String>,
    /// Print the skills_list JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ViewArgs {
    /// A name, an id (category/name) or a qualified id (user:category/name)
    pub name: String,
    /// A file inside the skill, e.g. references/api.md
    #[arg(long = "file")]
    pub file: Option<String>,
    /// Print the skill_view JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// SKILL.md files, skill folders, or trees holding skills
    pub paths: Vec<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the path of config.yaml
    Path,
    /// Print the effective value of a dotted key (e.g. skills.disabled)
    Get { key: String },
    /// Set a dotted key; the value is read as YAML (true, 10, [a, b], text)
    Set { key: String, value: String },
}
