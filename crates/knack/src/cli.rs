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
    /// List the agent's tools or call one by hand with JSON arguments
    #[command(subcommand)]
    Tool(ToolCommand),
    /// Chat with the agent in the terminal UI (also `knack` alone in a terminal)
    Chat(ChatArgs),
    /// Inspect the system prompt a new session would get
    #[command(subcommand)]
    Prompt(PromptCommand),
    /// List, show, search and delete stored sessions
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Run one task headless: the answer on stdout, progress on stderr
    Run(RunArgs),
    /// Check the installation: home, config, model, and the command sandbox
    Doctor(DoctorArgs),
    /// Show the model providers configured in config.yaml
    #[command(subcommand)]
    Model(ModelCommand),
    /// Show the MCP servers of config.yaml and the tools they offer
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Show the permission rules that allow or refuse tool calls without asking
    #[command(subcommand)]
    Permissions(PermissionsCommand),
    /// Put back the files the last turn in this folder changed
    Undo,
    /// Measure skills: do they fire, do they help, does the agent learn
    #[command(subcommand)]
    Eval(EvalCommand),
}

#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// Does the right skill fire? FILE: a YAML list of {prompt, skill: NAME | none}
    Triggers {
        /// The triggers file
        file: PathBuf,
        #[command(flatten)]
        common: EvalArgs,
    },
    /// Does a skill help? Runs every task with the skill and with it hidden
    Skill {
        /// The skill to measure (from your library)
        name: String,
        /// A YAML list of {prompt, fixture (optional folder), verify (shell command)}
        #[arg(long, value_name = "FILE")]
        tasks: PathBuf,
        /// Runs per task and arm (per seed)
        #[arg(long, value_name = "N", default_value_t = 3)]
        runs: usize,
        #[command(flatten)]
        common: EvalArgs,
    },
    /// Does the agent learn? DIR holds task families (see docs/eval.md)
    Loop {
        /// A folder of families: <family>/family.yaml and <family>/<instance>/task.md
        dir: PathBuf,
        /// Arms to run, comma-separated: baseline, learning, curated
        #[arg(
            long,
            value_name = "A,B",
            value_delimiter = ',',
            default_value = "baseline,learning"
        )]
        arms: Vec<String>,
        /// Only these families, comma-separated (default: all)
        #[arg(long, value_name = "A,B", value_delimiter = ',')]
        families: Option<Vec<String>>,
        #[command(flatten)]
        common: EvalArgs,
    },
}

/// Flags every `knack eval` mode takes.
#[derive(Debug, Args, Clone)]
pub struct EvalArgs {
    /// Where the report goes (default: $KNACK_HOME/evals/<timestamp>-<mode>)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Agent runs at the same time
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub jobs: usize,
    /// Seeds (default: 5 for loop, rotating the instance order; 1 otherwise)
    #[arg(long, value_name = "N")]
    pub seeds: Option<usize>,
    /// Print where the report went and its summary as one JSON object
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub model: ModelArgs,
}

#[derive(Debug, Subcommand)]
pub enum PermissionsCommand {
    /// Every rule in force: what it covers, allow or deny, and where it is written
    List(JsonFlag),
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Start every configured server and show its transport, status and tool count
    List(JsonFlag),
    /// Show the tools of every server, or of one, with their input schemas
    Tools {
        /// A server name from `mcp_servers` in config.yaml
        server: Option<String>,
        /// Print JSON instead of a table
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// List the providers (name, wire, base URL, model); `*` marks the one in use
    List(JsonFlag),
}

#[derive(Debug, Args, Default)]
pub struct DoctorArgs {
    /// Print one JSON object instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The task; `-` (or nothing, with input piped in) reads it from stdin.
    /// A prompt starting with `/name` invokes skills as the TUI does.
    pub prompt: Option<String>,
    /// Print one JSON event per line instead of text
    #[arg(long)]
    pub json: bool,
    /// Preload a skill for the session (repeatable)
    #[arg(short = 's', long = "skill", value_name = "SKILL")]
    pub skills: Vec<String>,
    /// Continue a stored session (its id, or a unique start of it)
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,
    /// Continue the session last used in this directory
    #[arg(long = "continue", conflicts_with = "resume")]
    pub continue_last: bool,
    /// Stop after this many model requests in the turn (default: agent.max_iterations)
    #[arg(long, value_name = "N")]
    pub max_iterations: Option<u32>,
    /// Skip the self-improvement review after the answer
    #[arg(long)]
    pub no_review: bool,
    /// Extra system instructions for this session (layer 4 of the prompt)
    #[arg(long, value_name = "TEXT")]
    pub system: Option<String>,
    /// Run commands the terminal tool would ask about, without asking
    #[arg(long)]
    pub yolo: bool,
    /// How file edits are approved: ask-edits (each edit asks; headless, refused unless
    /// a rule allows it), auto-edits (the default), plan (read-only)
    #[arg(long, value_name = "MODE", value_parser = APPROVAL_MODES)]
    pub mode: Option<String>,
    #[command(flatten)]
    pub model: ModelArgs,
}

/// The names `--mode` takes (agent_protocol::ApprovalMode).
const APPROVAL_MODES: [&str; 3] = ["ask-edits", "auto-edits", "plan"];

/// Which provider and model a command talks to (`run`, `chat`, `sessions compact`).
#[derive(Debug, Args, Default, Clone, PartialEq, Eq)]
pub struct ModelArgs {
    /// Use this provider from config.yaml's providers instead of model.provider
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
    /// Send this model name (overrides KNACK_MODEL and the config)
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
}

impl ModelArgs {
    /// The flags as the session setup takes them.
    pub fn flags(&self) -> agent_loop::setup::ModelFlags {
        agent_loop::setup::ModelFlags {
            provider: self.provider.clone(),
            model: self.model.clone(),
        }
    }
}

#[derive(Debug, Args, Default)]
pub struct ChatArgs {
    /// Continue a stored session: its id or a unique start of it (see `knack sessions list`)
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,
    /// Continue the session last used in this directory
    #[arg(long = "continue", conflicts_with = "resume")]
    pub continue_last: bool,
    /// Preload a skill for the session (repeatable)
    #[arg(short = 's', long = "skill", value_name = "SKILL")]
    pub skills: Vec<String>,
    /// How file edits are approved at the start: ask-edits, auto-edits (the default) or
    /// plan (read-only); Shift-Tab cycles them in the TUI
    #[arg(long, value_name = "MODE", value_parser = APPROVAL_MODES)]
    pub mode: Option<String>,
    #[command(flatten)]
    pub model: ModelArgs,
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
    /// Seed and update the bundled skills now and report what changed
    Sync(JsonFlag),
    /// List bundled skills whose copy you changed (updates skip them)
    ListModified(JsonFlag),
    /// Show what a write changed in a skill (the latest by default); --bundled compares with the bundled version
    Diff(DiffArgs),
    /// Stop tracking your changes to a bundled skill, or --restore the bundled version
    Reset(ResetArgs),
    /// Stop seeding bundled skills (existing copies stay)
    OptOut,
    /// Seed bundled skills again
    OptIn,
    /// Show the versions skill_manage kept of a skill, with diffs
    History(HistoryArgs),
    /// Restore a skill to an earlier version (see `knack skills history`)
    Rollback(RollbackArgs),
    /// Every write to every skill, newest first: who made it and lines added/removed
    Log(LogArgs),
    /// How each skill is used: views, uses, patches, last use, state and pin
    Stats(StatsArgs),
    /// Move a skill into skills/.archive/, out of every surface (history keeps it)
    Archive(SkillNameArg),
    /// Bring an archived skill back exactly as it was
    Restore(SkillNameArg),
    /// The skills the agent wrote while skills.agent_writes is inbox, waiting for your say
    Inbox(InboxArgs),
    /// Protect a skill: the review may not change it, the model may not delete it
    Pin(SkillNameArg),
    /// Lift a pin (see `knack skills pin`)
    Unpin(SkillNameArg),
    /// Let the git repository holding PATH (default: here) add its project skills
    Trust(TrustArgs),
    /// Stop using the project skills of the repository holding PATH (default: here)
    Untrust(TrustArgs),
    /// Search the hub's sources (official skills and taps) for skills, or the installed ones (--local)
    Search(HubSearchArgs),
    /// List the skills the hub's sources offer, 20 per page
    Browse(HubBrowseArgs),
    /// Fetch and scan a skill without installing it
    Inspect(HubInspectArgs),
    /// Install a skill from the hub (official/…, git+…, github:…, well-known:…, marketplace:…, a URL or a path)
    Install(HubInstallArgs),
    /// Remove a skill the hub installed
    Uninstall(HubUninstallArgs),
    /// Tell which hub-installed skills changed upstream
    Check(HubCheckArgs),
    /// Re-install hub skills whose source changed
    Update(HubUpdateArgs),
    /// Rescan hub-installed skills and report verdict changes
    Audit(HubAuditArgs),
    /// Manage extra repositories the hub searches
    #[command(subcommand)]
    Tap(TapCommand),
    /// Write a folder of skills as a static hub site (well-known index with digests)
    Publish(PublishArgs),
}

#[derive(Debug, Args)]
pub struct PublishArgs {
    /// A skill folder, or a folder holding several skills
    pub dir: std::path::PathBuf,
    /// The site folder: SITE/.well-known/agent-skills/ receives the index and archives
    #[arg(long, value_name = "SITE")]
    pub out: std::path::PathBuf,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HubSearchArgs {
    /// Words that must all appear in the name, description or tags (with --local: words
    /// describing the task, ranked as the model's skills_search ranks them)
    pub query: String,
    /// all (default), official, taps, or a repository (github:o/r, git+URL, well-known:SITE)
    #[arg(long, value_name = "S", conflicts_with = "local")]
    pub source: Option<String>,
    /// Search the installed skills instead of the hub, as the model's skills_search does
    #[arg(long)]
    pub local: bool,
    /// With --local: at most this many results (default 10, at most 50)
    #[arg(long, value_name = "N", requires = "local")]
    pub limit: Option<usize>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HubBrowseArgs {
    /// all (default), official, taps, or a repository (github:o/r, git+URL, well-known:SITE)
    #[arg(long, value_name = "S")]
    pub source: Option<String>,
    /// Page number, from 1
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub page: usize,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HubInspectArgs {
    /// A skill identifier or the name of an official or tapped skill
    pub id: String,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HubInstallArgs {
    /// official/<category>/<name>, git+<url>[@ref][#subdir], github:owner/repo[/path][@ref],
    /// well-known:<site>#<name>, marketplace:<repository>[::<plugin>[/<skill>]], an https
    /// URL to a SKILL.md or .tar.gz, a local path, or a name
    pub id: String,
    /// Install under skills/<category>/ (default: the source's category, else none)
    #[arg(long, value_name = "C")]
    pub category: Option<String>,
    /// Accept a skill the trust policy blocks (never a dangerous outside skill)
    #[arg(long)]
    pub force: bool,
    /// Install every skill of a collection (a repository or folder holding several), each checked on its own
    #[arg(long)]
    pub all: bool,
    /// Install a skill that scans dangerous, from a source you named yourself (not a bare name); logged with the findings
    #[arg(long, conflicts_with = "all")]
    pub accept_dangerous: bool,
    /// Do not ask for confirmation
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct HubUninstallArgs {
    pub name: String,
    /// Do not ask for confirmation
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct HubCheckArgs {
    /// Only this skill (default: every hub-installed skill)
    pub name: Option<String>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HubUpdateArgs {
    /// Only this skill (default: every hub-installed skill)
    pub name: Option<String>,
    /// Accept an update the trust policy blocks (never a dangerous outside skill)
    #[arg(long)]
    pub force: bool,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HubAuditArgs {
    /// Only this skill (default: every hub-installed skill)
    pub name: Option<String>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum TapCommand {
    /// List the taps
    List(JsonFlag),
    /// Add a repository: owner/repo, github:owner/repo[/path], git+<url>, well-known:<site>
    Add { repo: String },
    /// Remove a tap
    Remove { repo: String },
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// A name, an id (category/name) or a qualified id; deleted skills too
    pub name: String,
    /// Print the versions as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Print the records as JSON
    #[arg(long)]
    pub json: bool,
    /// Order: most used first, most recently used first, or by name
    #[arg(long, value_enum, default_value_t = StatsSort::Uses)]
    pub sort: StatsSort,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StatsSort {
    Uses,
    // Spelled as the JSON field (CONTRACT.md); the kebab-case form works too.
    #[value(name = "last_used", alias = "last-used")]
    LastUsed,
    Name,
}

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// A folder inside the repository (default: the working directory)
    pub path: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct InboxArgs {
    #[command(subcommand)]
    pub command: Option<InboxCommand>,
    /// Print the list as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum InboxCommand {
    /// Show what accepting a skill would change in the library
    Diff(InboxNameArg),
    /// Move a skill from the inbox into the library (recorded as your write)
    Accept(InboxNameArg),
    /// Drop a skill from the inbox; the library is untouched
    Reject(InboxNameArg),
}

#[derive(Debug, Args)]
pub struct InboxNameArg {
    /// The skill's name, as `knack skills inbox` lists it
    pub name: String,
}

#[derive(Debug, Args)]
pub struct SkillNameArg {
    /// A name, an id (category/name) or a qualified id (user:category/name)
    pub name: String,
}

#[derive(Debug, Args)]
pub struct RollbackArgs {
    /// A name, an id (category/name) or a qualified id; deleted skills too
    pub name: String,
    /// The version to restore (the skill as it was before write N); default: undo the latest write
    #[arg(long, value_name = "N")]
    pub to: Option<usize>,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// A name, an id (category/name) or a qualified id; with --bundled, a bundled skill
    pub name: String,
    /// The write that produced version N, as `knack skills history` numbers it
    #[arg(long, value_name = "N", conflicts_with = "bundled")]
    pub version: Option<usize>,
    /// Compare your copy with the bundled version instead
    #[arg(long)]
    pub bundled: bool,
    /// Print the differences as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct LogArgs {
    /// Only writes newer than this: a duration (30m, 2h, 1d, 7d, 2w) or a UTC date (2026-12-01)
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Print the writes as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ResetArgs {
    /// A bundled skill: name or id (category/name)
    pub name: String,
    /// Replace your copy with the bundled version (your copy is kept under skills/.restore-backups/)
    #[arg(long)]
    pub restore: bool,
    #[arg(long)]
    pub json: bool,
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

#[derive(Debug, Subcommand)]
pub enum PromptCommand {
    /// Print the system prompt of a new session in the current directory, layer by layer
    Show(JsonFlag),
}

#[derive(Debug, Subcommand)]
pub enum ToolCommand {
    /// List the tools with their descriptions (--json adds the parameter schemas)
    List(JsonFlag),
    /// Call a tool; prints its JSON result and exits 0 on success, 1 on failure
    Call(ToolCallArgs),
}

#[derive(Debug, Args)]
pub struct ToolCallArgs {
    /// The tool's name, e.g. skill_view
    pub name: String,
    /// The arguments as one JSON object (default {})
    pub arguments: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// List stored sessions, newest first
    List(JsonFlag),
    /// Print a session's transcript (--json: its metadata and messages)
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Full-text search over the messages of every session
    Search {
        query: String,
        #[arg(long)]
        json: bool,
    },
    /// Delete a session and its messages
    Delete { id: String },
    /// Summarise a stored session's older history now, as the TUI's /compact does
    Compact {
        id: String,
        #[command(flatten)]
        model: ModelArgs,
    },
}
