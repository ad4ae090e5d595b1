//! The boundary around the model's tools, in one place: which folders a command or a file
//! write may change, which of knack's own files no tool may touch, and when the user is asked.
//!
//! Commands are confined by the operating system (`knack-sandbox`); the file tools check the
//! same roots themselves, on paths resolved through symlinks. The approval policy decides what
//! runs at once, what waits for the user, and what is refused outright.

use std::path::{Path, PathBuf};

use agent_protocol::ApprovalMode;
use knack_config::{Action, PermissionRule, SandboxMode};
use knack_sandbox::{SandboxPolicy, resolve_existing_prefix};

use super::context::lock;
use super::{ApprovalAsk, ApprovalDecision, ToolContext, ToolError};

/// Files under the home that `read_file` never returns: they hold keys.
const SECRET_FILE_NAMES: [&str; 1] = [".env"];
const SECRET_FILE_SUFFIXES: [&str; 3] = [".key", ".pem", ".env"];

/// What must happen before a tool call runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// Run without asking.
    Run,
    /// Run if a permission rule allows it, else ask the user (or, under
    /// `agent.approval: never`, refuse).
    Ask { reason: String },
    /// Do not run; the model is told why and how the user could allow it.
    Refuse { error: String, hint: String },
}

impl Gate {
    fn ask(reason: String) -> Self {
        Self::Ask { reason }
    }
}

/// What a gated call is about to do, as permission rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    Command {
        command: String,
        outside: bool,
        /// It trips a destructive-command rule: only an exact rule covers it.
        destructive: bool,
    },
    Write(PathBuf),
    Fetch(String),
    McpTool(String),
}

impl Subject {
    pub fn command(command: &str, outside: bool) -> Self {
        Self::Command {
            command: command.trim().to_owned(),
            outside,
            destructive: super::terminal::destructive_rule(command).is_some(),
        }
    }

    pub fn action(&self) -> Action<'_> {
        match self {
            Self::Command {
                command,
                outside,
                destructive,
            } => Action::Command {
                command,
                outside: *outside,
                destructive: *destructive,
            },
            Self::Write(path) => Action::Write(path),
            Self::Fetch(host) => Action::Fetch(host),
            Self::McpTool(name) => Action::McpTool(name),
        }
    }
}

/// One gated call: what the user sees, what rules match, and an edit's diff.
#[derive(Debug, Clone, Default)]
pub struct Check {
    pub display: String,
    pub subject: Option<Subject>,
    pub diff: Option<String>,
}

impl Check {
    pub fn new(display: impl Into<String>, subject: Subject) -> Self {
        Self {
            display: display.into(),
            subject: Some(subject),
            diff: None,
        }
    }

    /// A check no permission rule applies to (reads and searches).
    pub fn plain(display: impl Into<String>) -> Self {
        Self {
            display: display.into(),
            ..Self::default()
        }
    }

    pub fn with_diff(mut self, diff: Option<String>) -> Self {
        self.diff = diff;
        self
    }
}

/// The permission rule (user config, or an "always" answer this session) that settles
/// `action` in `list`, parsed on the way (config rules were checked when it was loaded).
fn matching_rule<'r>(
    rules: impl Iterator<Item = &'r String>,
    matches: impl Fn(&PermissionRule) -> bool,
) -> Option<String> {
    rules
        .filter_map(|raw| PermissionRule::parse(raw).ok())
        .find(|rule| matches(rule))
        .map(|rule| rule.to_string())
}

/// Lets the call through, or not: a `permissions.deny` rule refuses it whatever the gate
/// says; an allow rule (config or an earlier "always") runs what would ask; otherwise
/// the user is asked, and an "always" answer saves a rule that covers no more than what
/// was shown.
pub async fn pass(ctx: &ToolContext, check: Check, gate: Gate) -> Result<(), ToolError> {
    let permissions = &ctx.config.permissions;
    if let Some(subject) = &check.subject {
        let action = subject.action();
        if let Some(rule) = matching_rule(permissions.deny.iter(), |r| r.denies(&action)) {
            return Err(ToolError::model_with_hint(
                format!("refused: the user's permission rule `{rule}` forbids this."),
                "Do not retry it in another form; do something else or ask the user.",
            ));
        }
    }
    let reason = match gate {
        Gate::Run => return Ok(()),
        Gate::Refuse { error, hint } => return Err(ToolError::model_with_hint(error, hint)),
        Gate::Ask { reason } => reason,
    };
    let action = check.subject.as_ref().map(Subject::action);
    if let Some(action) = &action {
        let session_rules = lock(&ctx.approved_rules).clone();
        let allowed = matching_rule(permissions.allow.iter().chain(session_rules.iter()), |r| {
            r.allows(action)
        });
        if let Some(rule) = allowed {
            super::call_record::record_rule(&rule);
            return Ok(());
        }
    }
    let policy = ctx.config.agent.approval;
    if !policy.asks() {
        return Err(ToolError::model_with_hint(
            format!("refused without asking ({reason})."),
            format!(
                "agent.approval is `{}`, so nothing that needs approval runs. Find another \
                 way, or ask the user to run it themselves.",
                policy.name()
            ),
        ));
    }
    let ask = ApprovalAsk {
        subject: check.display.clone(),
        reason: reason.clone(),
        exact_rule: action.as_ref().map(|a| a.exact_rule().to_string()),
        prefix_rule: action
            .as_ref()
            .and_then(Action::suggested_prefix)
            .map(|r| r.to_string()),
        diff: check.diff.clone(),
    };
    let answer = ctx.approver.approve(&ask).await;
    if answer.decision == ApprovalDecision::ApproveAlways
        && let Some(action) = &action
    {
        remember(ctx, action, answer.rule.as_deref());
    }
    if super::approval::allows(answer.decision) {
        return Ok(());
    }
    match answer.message.as_deref().map(str::trim) {
        Some(message) if !message.is_empty() => Err(ToolError::model_with_hint(
            format!("refused: the user did not approve this ({reason}). The user says: {message}"),
            "Follow what the user said instead of retrying.",
        )),
        _ => Err(ToolError::model_with_hint(
            format!("refused: the user did not approve this ({reason})."),
            "Find a narrower way that stays inside the workspace, or ask the user to do it \
             themselves (a headless `knack run` approves only with --yolo or a \
             permissions.allow rule).",
        )),
    }
}

/// Saves the rule an "always" answer chose, for the session and in the user's config. A
/// rule that does not fit what was asked (wider in kind, a prefix for a run outside the
/// sandbox, or not covering it at all) is replaced by the exact rule: one keypress never
/// approves more than what was on screen.
fn remember(ctx: &ToolContext, action: &Action<'_>, chosen: Option<&str>) {
    let rule = chosen
        .and_then(|raw| PermissionRule::parse(raw).ok())
        .filter(|rule| rule.fits_answer_for(action))
        .unwrap_or_else(|| action.exact_rule());
    lock(&ctx.approved_rules).insert(rule.to_string());
    let path = ctx.home.config_path();
    if let Err(e) = knack_config::permissions::save_allow_rule(&path, &rule) {
        tracing::warn!(error = %e, rule = %rule, "could not save the permission rule; it holds for this session only");
    }
}

/// The sandbox a command of this session runs in, or `None` in `full-access`.
pub fn sandbox_policy(ctx: &ToolContext) -> Option<SandboxPolicy> {
    let agent = &ctx.config.agent;
    let writable_roots = match agent.sandbox {
        SandboxMode::FullAccess => return None,
        SandboxMode::ReadOnly => Vec::new(),
        SandboxMode::WorkspaceWrite => writable_roots(ctx),
    };
    Some(SandboxPolicy {
        writable_roots,
        read_only: protected_paths(ctx),
        hidden_files: secret_files(ctx),
        network: agent.sandbox_network,
        unix_sockets: agent
            .sandbox_unix_sockets
            .iter()
            .map(|raw| skill_core::roots::expand_path(raw, &ctx.cwd))
            .collect(),
        unrestricted_sockets: false,
        max_processes: (agent.sandbox_max_processes > 0).then_some(agent.sandbox_max_processes),
    })
}

/// The policy for a command the user let out of the sandbox (`outside_sandbox`, or any
/// command in `full-access`): everything writable and the network open, but knack's own
/// files stay read-only and the command's processes still end with it. `None` where this
/// kernel has no sandbox at all (the command then runs unconfined).
pub fn outside_sandbox_policy(ctx: &ToolContext) -> Option<SandboxPolicy> {
    knack_sandbox::support()
        .active()
        .then(|| SandboxPolicy::outside(protected_dirs(ctx)))
}

/// Where `workspace-write` lets commands and file tools write: the working
/// directory and the temp folders.
pub fn writable_roots(ctx: &ToolContext) -> Vec<PathBuf> {
    let mut roots = vec![ctx.cwd.clone(), std::env::temp_dir(), PathBuf::from("/tmp")];
    if Path::new("/dev/shm").is_dir() {
        roots.push(PathBuf::from("/dev/shm"));
    }
    roots
}

/// knack's own files: its home, and every project skill root (`.knack/`, `.agents/`, and
/// whatever else skill discovery reads) from the project's root (the git root, else the
/// working directory) down to the working directory — where discovery looks, whether the
/// folder exists yet or not. No tool writes them (skills change only through
/// `skill_manage`); commands see them read-only, and one that does not exist cannot be
/// created. Folders above the project root are not skill roots, so they are left alone
/// (masking them would leave placeholders all the way up to `/`).
pub fn protected_dirs(ctx: &ToolContext) -> Vec<PathBuf> {
    let mut dirs = vec![ctx.home.root().to_path_buf()];
    let project = skill_core::roots::find_git_root(&ctx.cwd).unwrap_or_else(|| ctx.cwd.clone());
    for ancestor in ctx
        .cwd
        .ancestors()
        .take_while(|dir| dir.starts_with(&project))
    {
        // The first folder of each project skill root discovery reads there: the whole
        // `.knack/` (it also holds project settings) and the whole `.agents/`.
        for skills in skill_core::roots::project_skill_dirs(ancestor, ancestor) {
            if let Some(first) = skills
                .strip_prefix(ancestor)
                .ok()
                .and_then(|rest| rest.components().next())
            {
                dirs.push(ancestor.join(first));
            }
        }
    }
    dirs.dedup();
    dirs
}

/// The start-up file or folder of the user's home (`$HOME`) that `path` (resolved) is or
/// lies in, if any.
fn startup_file(path: &Path) -> Option<PathBuf> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    let home = resolve_existing_prefix(Path::new(&home));
    HOME_STARTUP_FILES
        .iter()
        .map(|name| resolve_existing_prefix(&home.join(name)))
        .find(|file| path.starts_with(file))
}

/// Shell start-up files and tool settings in a home folder: what runs the next time the
/// user opens a shell or uses git and ssh. Protected when a writable root contains them.
const HOME_STARTUP_FILES: [&str; 15] = [
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".config/fish",
    ".gitconfig",
    ".config/git",
    ".ssh",
    ".inputrc",
];

/// What sandboxed commands see read-only beneath their writable roots: knack's own files
/// ([`protected_dirs`]), the `.git` places git would use from the working directory
/// ([`git_places`]; their hooks and config run when the user next uses git, and a
/// `gitdir:` file is followed by the sandbox), and the user's shell start-up files.
pub fn protected_paths(ctx: &ToolContext) -> Vec<PathBuf> {
    let mut paths = protected_dirs(ctx);
    paths.extend(git_places(&ctx.cwd));
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        let home = PathBuf::from(home);
        paths.extend(HOME_STARTUP_FILES.iter().map(|name| home.join(name)));
    }
    paths
}

/// The `.git` places commands must not change: every existing `.git` from `cwd` up, and
/// `cwd`'s own when it is missing (the sandbox masks it): one a command created there
/// would be the repository git uses from the working directory, hooks and
/// `core.fsmonitor` included. A masked one means `git init` needs a command outside the
/// sandbox. Missing ones elsewhere are not masked, so the placeholders stay inside the
/// workspace (see docs/security.md for what that leaves open).
pub fn git_places(cwd: &Path) -> Vec<PathBuf> {
    let mut places = vec![cwd.join(".git")];
    places.extend(
        cwd.ancestors()
            .skip(1)
            .map(|dir| dir.join(".git"))
            .filter(|git| std::fs::symlink_metadata(git).is_ok()),
    );
    places
}

/// Whether a file tool's write to `path` (resolved) would change what git runs or reads as
/// configuration: anything inside a `.git` (a folder or a `gitdir:` file) anywhere. A
/// repository nested in the workspace is run by git just the same once the user is in it.
fn is_git_path(path: &Path) -> bool {
    path.components().any(|part| part.as_os_str() == ".git")
}

/// knack's key files (`.env`, `*.key`, `*.pem` in its home and the folders directly in
/// it, skills aside): every sandboxed command reads them empty.
pub fn secret_files(ctx: &ToolContext) -> Vec<PathBuf> {
    let root = ctx.home.root();
    let mut files = vec![ctx.home.env_path()];
    let mut dirs = vec![root.to_path_buf()];
    if let Ok(entries) = std::fs::read_dir(root) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) && entry.path() != ctx.home.skills_dir()
            {
                dirs.push(entry.path());
            }
        }
    }
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_file()) && is_secret_path(root, &path) {
                files.push(path);
            }
        }
    }
    files.sort();
    files.dedup();
    files
}

/// Why commands are less confined here than the full sandbox would confine them (no user
/// namespaces, or no Landlock); said once per process in the log, and in every ask that
/// it causes.
pub fn sandbox_missing_reason() -> Option<String> {
    knack_sandbox::support().degraded_reason()
}

/// The gate for one terminal command.
pub fn command_gate(ctx: &ToolContext, command: &str, outside_sandbox: bool) -> Gate {
    let agent = &ctx.config.agent;
    let policy = agent.approval;
    if ctx.approval_mode() == ApprovalMode::Plan {
        if outside_sandbox {
            return plan_refusal("runs outside the sandbox");
        }
        if let Err(why) = super::read_only::check(command) {
            return plan_refusal(&format!("may change things ({why})"));
        }
    }
    if outside_sandbox && agent.sandbox != SandboxMode::FullAccess {
        return Gate::ask(
            "the command asks to run outside the sandbox, with the user's full rights".to_owned(),
        );
    }
    if agent.sandbox != SandboxMode::FullAccess
        && let Some(why) = sandbox_missing_reason()
    {
        return Gate::ask(format!(
            "commands run less confined than the full sandbox here: {why}"
        ));
    }
    if let Some(rule) = super::terminal::destructive_rule(command) {
        return Gate::ask(format!(
            "it matches the destructive-command pattern '{}' ({})",
            rule.id, rule.reason
        ));
    }
    if policy.approves_every_command()
        && let Err(why) = super::read_only::check(command)
    {
        return Gate::ask(format!(
            "agent.approval is `{}` and this is not a known read-only command ({why})",
            policy.name()
        ));
    }
    Gate::Run
}

/// The refusal for something that would change things while the user plans.
pub(crate) fn plan_refusal(what: &str) -> Gate {
    Gate::Refuse {
        error: format!("refused: the session is in plan mode (read-only) and this {what}."),
        hint: "Read and search as needed, then set out the plan: what you would change and \
               how. The user leaves plan mode with Shift-Tab (or --mode)."
            .to_owned(),
    }
}

/// What a file tool may do with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileAccess {
    Read,
    Write,
}

/// Resolves a file tool's path argument through symlinks and checks it
/// against the boundary. The returned path is the one to operate on, and only
/// through [`super::beneath`] (no link on the way), so what was checked is
/// what is touched even if the tree changes in between.
pub fn file_gate(ctx: &ToolContext, raw: &str, access: FileAccess) -> (PathBuf, Gate) {
    let path = resolve_existing_prefix(&ctx.resolve_path(raw));
    let gate = match access {
        FileAccess::Read => read_gate(ctx, &path),
        FileAccess::Write => write_gate(ctx, &path),
    };
    (path, gate)
}

/// The folder a write to `path` (resolved, passed by [`file_gate`]) is made
/// beneath: the writable root that holds it, or else (a write outside the
/// workspace the user approved, or `full-access`) its deepest existing folder.
/// Every part below it is opened without following links.
pub fn write_root(ctx: &ToolContext, path: &Path) -> PathBuf {
    let inside = writable_roots(ctx)
        .iter()
        .map(|root| resolve_existing_prefix(root))
        .filter(|root| path.starts_with(root))
        .max_by_key(|root| root.components().count());
    inside.unwrap_or_else(|| {
        path.ancestors()
            .skip(1)
            .find(|dir| dir.is_dir())
            .unwrap_or(Path::new("/"))
            .to_path_buf()
    })
}

/// Whether `path` (resolved) is one of knack's key files: `.env`, `*.key`,
/// `*.pem` beneath the home. No file tool reads them.
pub fn is_secret_file(ctx: &ToolContext, path: &Path) -> bool {
    is_secret_path(ctx.home.root(), path)
}

/// [`is_secret_file`] for callers without a tool context (an `@file`
/// mention is checked before any session exists): `home` is knack's home.
pub fn is_secret_path(home: &Path, path: &Path) -> bool {
    let path = resolve_existing_prefix(path);
    let home = resolve_existing_prefix(home);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let secret = SECRET_FILE_NAMES.contains(&name.as_str())
        || SECRET_FILE_SUFFIXES.iter().any(|s| name.ends_with(s));
    secret && path.starts_with(&home)
}

/// Whether `path` (resolved) is knack's own process in `/proc`: its
/// environment holds the keys, its open files the session store.
fn is_own_process(path: &Path) -> bool {
    let own = PathBuf::from(format!("/proc/{}", std::process::id()));
    path.starts_with(&own)
        || path.starts_with("/proc/self")
        || path.starts_with("/proc/thread-self")
}

fn read_gate(ctx: &ToolContext, path: &Path) -> Gate {
    if is_secret_file(ctx, path) {
        return Gate::Refuse {
            error: format!(
                "{} holds knack's keys; file tools do not read it.",
                path.display()
            ),
            hint: "Secrets stay out of the conversation. Ask the user if a setting must change."
                .to_owned(),
        };
    }
    if is_own_process(path) {
        return Gate::Refuse {
            error: format!(
                "{} belongs to knack's own process (its environment holds keys); file tools \
                 do not read it.",
                path.display()
            ),
            hint: "Inspect other processes with the terminal instead.".to_owned(),
        };
    }
    Gate::Run
}

/// Every folder skills are discovered in, and every project skill folder
/// (`skill_core::roots::PROJECT_SKILL_DIRS`) anywhere, trusted or not: a skill
/// changes only through `skill_manage`, which scans it. The rule that refuses
/// `path`, if one does.
fn skill_root_rule(ctx: &ToolContext, path: &Path) -> Option<(PathBuf, &'static str)> {
    let options = skill_core::DiscoveryOptions::resolve(&ctx.home, &ctx.config, &ctx.cwd);
    for root in &options.roots {
        let root_path = resolve_existing_prefix(&root.path);
        if path.starts_with(&root_path) {
            let rule = match &root.scope {
                skill_core::Scope::User => "knack's skills folder",
                skill_core::Scope::Project => "a project skills folder",
                skill_core::Scope::Numbered { label, .. } if *label == "project" => {
                    "a project skills folder"
                }
                _ => "a skills folder from skills.external_dirs or skills.plugins",
            };
            return Some((root_path, rule));
        }
    }
    // A project skill folder whether or not discovery reads it today: the
    // repository may be trusted tomorrow.
    path.ancestors().find_map(|dir| {
        skill_core::roots::PROJECT_SKILL_DIRS
            .iter()
            .any(|rel| dir.ends_with(rel))
            .then(|| (dir.to_path_buf(), "a project skills folder"))
    })
}

fn write_gate(ctx: &ToolContext, path: &Path) -> Gate {
    if let Some((root, rule)) = skill_root_rule(ctx, path) {
        return Gate::Refuse {
            error: format!(
                "{} is inside {} ({rule}), which file tools do not write: every skill change \
                 goes through the guard's scan.",
                path.display(),
                root.display()
            ),
            hint: "Use skill_manage (actions create, edit, patch, write_file) to change a \
                   skill; a project's own skill files are the user's to edit."
                .to_owned(),
        };
    }
    // The home and every existing `.knack/`, and also a `.knack/` that does
    // not exist yet: creating one would hand the next session project config.
    let new_project_dir = path
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == ".knack"))
        .map(Path::to_path_buf);
    let protected = protected_dirs(ctx)
        .into_iter()
        .map(|dir| resolve_existing_prefix(&dir))
        .chain(new_project_dir);
    for dir in protected {
        if path.starts_with(&dir) {
            return Gate::Refuse {
                error: format!(
                    "{} is inside {}, knack's own configuration and state; no tool writes there.",
                    path.display(),
                    dir.display()
                ),
                hint: "Settings are the user's to change: ask them to edit it, or to run \
                       `knack config set`."
                    .to_owned(),
            };
        }
    }
    if is_git_path(path) {
        return Gate::Refuse {
            error: format!(
                "{} is inside a git folder, whose hooks and config run when the user next \
                 uses git; no file tool writes there.",
                path.display()
            ),
            hint: "Change the files of the working tree; git's own settings are the user's \
                   to change in their shell."
                .to_owned(),
        };
    }
    if let Some(file) = startup_file(path) {
        return Gate::Refuse {
            error: format!(
                "{} is inside {}, which the user's shell or git runs or reads on its own; no \
                 file tool writes there.",
                path.display(),
                file.display()
            ),
            hint: "Tell the user what to add to their start-up files; they change them \
                   themselves."
                .to_owned(),
        };
    }
    let mode = ctx.approval_mode();
    if mode == ApprovalMode::Plan {
        return plan_refusal(&format!("writes {}", path.display()));
    }
    let gate = sandbox_write_gate(ctx, path);
    if gate == Gate::Run && mode == ApprovalMode::AskEdits {
        return Gate::ask(format!(
            "the approval mode is ask-edits: every edit waits for you ({})",
            path.display()
        ));
    }
    gate
}

/// What the sandbox setting says about a write to `path`.
fn sandbox_write_gate(ctx: &ToolContext, path: &Path) -> Gate {
    let agent = &ctx.config.agent;
    match agent.sandbox {
        SandboxMode::FullAccess => Gate::Run,
        SandboxMode::ReadOnly => Gate::ask(format!(
            "agent.sandbox is read-only and this writes {}",
            path.display()
        )),
        SandboxMode::WorkspaceWrite => {
            let inside = writable_roots(ctx)
                .iter()
                .map(|root| resolve_existing_prefix(root))
                .any(|root| path.starts_with(root));
            if inside {
                Gate::Run
            } else {
                Gate::ask(format!(
                    "this writes {}, outside the workspace",
                    path.display()
                ))
            }
        }
    }
}

/// What an MCP server says about one of its tools, and the server's `approval` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpToolHints {
    pub read_only: bool,
    pub destructive: Option<bool>,
    pub approval: knack_config::McpApproval,
}

/// The gate for a call to the MCP tool `name` (`mcp__server__tool`): a tool
/// marked read-only runs; one marked non-destructive runs under `on-request`;
/// anything else asks (or is refused under `never`). The server's `approval`
/// overrides the annotations, which are the server's claims, not facts.
pub fn mcp_tool_gate(ctx: &ToolContext, name: &str, hints: McpToolHints) -> Gate {
    use knack_config::McpApproval;
    let policy = ctx.config.agent.approval;
    // "Always" saves a rule for this one tool (`Subject::McpTool`): approving one tool
    // says nothing of the others.
    if ctx.approval_mode() == ApprovalMode::Plan && !hints.read_only {
        return plan_refusal(&format!("calls {name}, which does not say it only reads"));
    }
    match hints.approval {
        McpApproval::Never => Gate::Run,
        McpApproval::Always => Gate::ask(format!(
            "{name} belongs to an MCP server whose approval is `always`"
        )),
        McpApproval::Auto if hints.read_only => Gate::Run,
        McpApproval::Auto
            if hints.destructive == Some(false) && policy.trusts_non_destructive_tools() =>
        {
            Gate::Run
        }
        McpApproval::Auto => Gate::ask(if hints.destructive == Some(true) {
            format!("the MCP tool {name} says it may change or delete things")
        } else {
            format!("the MCP tool {name} does not say it only reads")
        }),
    }
}

/// Words in a command's output that show the kernel said no.
const DENIED: [&str; 4] = [
    "Permission denied",
    "Read-only file system",
    "Operation not permitted",
    "Network is unreachable",
];

/// The note for a failed command that ran outside the sandbox and was
/// refused: knack's own files stay read-only there too.
pub fn outside_denial_hint(output: &str) -> Option<String> {
    DENIED.iter().any(|word| output.contains(word)).then(|| {
        "This command ran outside the sandbox, but knack's own files (its home with \
         config.yaml and skills, every project's .knack/ and skill folders) stay read-only \
         even there. Skills change through skill_manage; settings are the user's to change."
            .to_owned()
    })
}

/// A note for a failed sandboxed command whose output shows the kernel said
/// no: what was denied and how the user can allow it.
pub fn denial_hint(ctx: &ToolContext, output: &str) -> Option<String> {
    if !DENIED.iter().any(|word| output.contains(word)) {
        return None;
    }
    let agent = &ctx.config.agent;
    let writes = match agent.sandbox {
        SandboxMode::ReadOnly => "nothing may be written".to_owned(),
        _ => format!(
            "only {} and the temp folders are writable, knack's own files never",
            ctx.cwd.display()
        ),
    };
    let network = if agent.sandbox_network {
        ""
    } else {
        "; the network is off"
    };
    Some(format!(
        "This command ran in the sandbox ({}: {writes}{network}), which may have refused it. \
         If it truly needs more, call terminal again with outside_sandbox: true (the user is \
         asked), or the user can change agent.sandbox or agent.sandbox_network in config.yaml.",
        agent.sandbox.name()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use knack_config::{Config, KnackHome};

    fn ctx_in(dir: &Path, edit: impl FnOnce(&mut Config)) -> ToolContext {
        let mut config = Config::default();
        edit(&mut config);
        std::fs::create_dir_all(dir.join("home/skills")).unwrap();
        std::fs::create_dir_all(dir.join("work")).unwrap();
        ToolContext::new(
            KnackHome::at(dir.join("home")),
            config,
            dir.join("work"),
            "s",
        )
    }

    #[test]
    fn every_skill_folder_is_refused_to_the_file_tools() {
        let dir = tempfile::tempdir().unwrap();
        let external = dir.path().join("shared-skills");
        std::fs::create_dir_all(&external).unwrap();
        let ctx = ctx_in(dir.path(), |c| {
            c.skills.external_dirs = vec![external.display().to_string()];
        });
        for raw in [
            ".agents/skills/x/SKILL.md",
            "deep/er/.agents/skills/x/SKILL.md",
            ".knack/skills/x/SKILL.md",
            "../shared-skills/x/SKILL.md",
            "../home/skills/x/SKILL.md",
        ] {
            let (_, gate) = file_gate(&ctx, raw, FileAccess::Write);
            match gate {
                Gate::Refuse { hint, .. } => assert!(hint.contains("skill_manage"), "{raw}"),
                other => panic!("{raw}: {other:?}"),
            }
        }
        // Reading skills stays allowed, and a folder merely near one is not a root.
        let (_, gate) = file_gate(&ctx, ".agents/skills/x/SKILL.md", FileAccess::Read);
        assert_eq!(gate, Gate::Run);
        let (_, gate) = file_gate(&ctx, "agents/skills/notes.md", FileAccess::Write);
        assert_eq!(gate, Gate::Run);
        // The whole `.agents/` is protected for commands (`protected_dirs`), so
        // the file tools refuse it too: one boundary for both.
        let (_, gate) = file_gate(&ctx, ".agents/notes.md", FileAccess::Write);
        assert!(matches!(gate, Gate::Refuse { .. }), "{gate:?}");
    }

    #[test]
    fn git_places_are_the_working_directorys_own_and_every_existing_one_above() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("repo/.git")).unwrap();
        std::fs::create_dir_all(root.join("repo/a/b")).unwrap();
        let places = git_places(&root.join("repo/a/b"));
        assert_eq!(
            &places[..2],
            &[root.join("repo/a/b/.git"), root.join("repo/.git")]
        );
        assert!(!places.contains(&root.join("repo/a/.git")), "{places:?}");
        assert!(!places.contains(&root.join(".git")), "{places:?}");
        // The repository's own, when the working directory is its root.
        let places = git_places(&root.join("repo"));
        assert_eq!(places[0], root.join("repo/.git"));
        assert!(!places[1..].contains(&root.join("repo/.git")));
    }

    #[test]
    fn file_writes_into_any_git_folder_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ctx_in(dir.path(), |_| {});
        std::fs::create_dir_all(dir.path().join("work/vendor/lib")).unwrap();
        std::fs::write(dir.path().join("work/vendor/lib/.git"), "gitdir: ../x\n").unwrap();
        for raw in [
            ".git/hooks/pre-commit",
            ".git/config",
            "nested/.git/config",
            "vendor/lib/.git",
        ] {
            let (_, gate) = file_gate(&ctx, raw, FileAccess::Write);
            assert!(matches!(gate, Gate::Refuse { .. }), "{raw}: {gate:?}");
        }
        for raw in [".gitignore", ".github/workflows/ci.yml", "src/git/mod.rs"] {
            let (_, gate) = file_gate(&ctx, raw, FileAccess::Write);
            assert_eq!(gate, Gate::Run, "{raw}");
        }
    }

    #[test]
    fn commands_outside_the_sandbox_keep_knacks_files_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ctx_in(dir.path(), |_| {});
        std::fs::create_dir_all(dir.path().join("work/.git")).unwrap();
        std::fs::create_dir_all(dir.path().join("work/.agents/skills")).unwrap();
        std::fs::create_dir_all(dir.path().join("work/.knack")).unwrap();
        let policy = outside_sandbox_policy(&ctx).expect("this kernel has Landlock");
        assert!(policy.network);
        for protected in ["home/config.yaml", "work/.knack/x", "work/.agents/skills/x"] {
            let path = dir.path().join(protected);
            assert!(
                policy.read_only.iter().any(|p| path.starts_with(p)),
                "{protected}: {:?}",
                policy.read_only
            );
        }
    }

    #[test]
    fn never_refuses_what_would_ask_and_on_request_asks() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ctx_in(dir.path(), |c| {
            c.agent.approval = knack_config::ApprovalPolicy::Never
        });
        let never = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(pass(
                &ctx,
                Check::new("ls", Subject::command("ls", true)),
                command_gate(&ctx, "ls", true),
            ));
        assert!(never.is_err(), "never runs what would ask");
        let ctx = ctx_in(dir.path(), |_| {});
        assert!(matches!(
            command_gate(&ctx, "ls", true),
            Gate::Ask { ref reason } if reason.contains("outside the sandbox")
        ));
        assert_eq!(command_gate(&ctx, "ls", false), Gate::Run);
        assert!(matches!(
            command_gate(&ctx, "rm -rf /", false),
            Gate::Ask { ref reason } if reason.contains("recursive-delete-root")
        ));
    }

    #[test]
    fn file_writes_to_the_home_are_refused_even_through_a_link_and_dot_dot() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ctx_in(dir.path(), |_| {});
        std::os::unix::fs::symlink(dir.path().join("home/skills"), dir.path().join("work/link"))
            .unwrap();
        for raw in [
            "new-project/.knack/skills/x/SKILL.md",
            "new/../../home/config.yaml",
            "new/deeper/../../../home/.env",
            "link/../config.yaml",
            "link/x/SKILL.md",
            "../home/config.yaml",
            "../home/.env",
        ] {
            let (_, gate) = file_gate(&ctx, raw, FileAccess::Write);
            assert!(matches!(gate, Gate::Refuse { .. }), "{raw}: {gate:?}");
        }
        let (_, gate) = file_gate(&ctx, "src/main.rs", FileAccess::Write);
        assert_eq!(gate, Gate::Run);
        // Temp folders are writable roots, so "outside" is a system folder here.
        let (_, gate) = file_gate(&ctx, "/usr/local/knack-test/x.txt", FileAccess::Write);
        assert!(matches!(gate, Gate::Ask { .. }), "{gate:?}");
        let (_, gate) = file_gate(&ctx, "../home/.env", FileAccess::Read);
        assert!(matches!(gate, Gate::Refuse { .. }), "{gate:?}");
        let (_, gate) = file_gate(&ctx, "../home/config.yaml", FileAccess::Read);
        assert_eq!(gate, Gate::Run);
        std::fs::write(dir.path().join("home/signing.pem"), "k").unwrap();
        assert!(is_secret_file(&ctx, &dir.path().join("home/signing.pem")));
        assert!(!is_secret_file(&ctx, &dir.path().join("work/cert.pem")));
    }
}
