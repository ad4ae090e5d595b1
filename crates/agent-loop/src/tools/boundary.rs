//! The boundary around the model's tools, in one place: which folders a command or a file
//! write may change, which of knack's own files no tool may touch, and when the user is asked.
//!
//! Commands are confined by the operating system (`knack-sandbox`); the file tools check the
//! same roots themselves, on paths resolved through symlinks. The approval policy decides what
//! runs at once, what waits for the user, and what is refused outright.

use std::path::{Path, PathBuf};

use knack_config::{ApprovalPolicy, SandboxMode};
use knack_sandbox::{SandboxPolicy, resolve_existing_prefix};

use super::context::lock;
use super::{ApprovalDecision, ToolContext, ToolError};

/// Approval keys for asks that are not destructive-command rules; an
/// "always" answer is remembered per key for the session.
pub const OUTSIDE_SANDBOX: &str = "outside-sandbox";
pub const NO_SANDBOX: &str = "no-sandbox";
pub const WRITE_OUTSIDE_WORKSPACE: &str = "write-outside-workspace";
pub const UNTRUSTED_COMMAND: &str = "untrusted-command";

/// Files under the home that `read_file` never returns: they hold keys.
const SECRET_FILE_NAMES: [&str; 1] = [".env"];
const SECRET_FILE_SUFFIXES: [&str; 3] = [".key", ".pem", ".env"];

/// What must happen before a tool call runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// Run without asking.
    Run,
    /// Ask the user; `key` is remembered on "always".
    Ask { key: String, reason: String },
    /// Do not run; the model is told why and how the user could allow it.
    Refuse { error: String, hint: String },
}

impl Gate {
    fn ask(policy: ApprovalPolicy, key: &str, reason: String) -> Self {
        match policy {
            ApprovalPolicy::Never => Self::Refuse {
                error: format!("refused without asking ({reason})."),
                hint: "agent.approval is `never`, so nothing that needs approval runs. Find \
                       another way, or ask the user to run it themselves."
                    .to_owned(),
            },
            ApprovalPolicy::Untrusted | ApprovalPolicy::OnRequest => Self::Ask {
                key: key.to_owned(),
                reason,
            },
        }
    }
}

/// Asks the user when `gate` says so (unless "always" was answered for its
/// key before) and turns a refusal into the model-visible error.
pub async fn pass(ctx: &ToolContext, subject: &str, gate: Gate) -> Result<(), ToolError> {
    match gate {
        Gate::Run => Ok(()),
        Gate::Refuse { error, hint } => Err(ToolError::model_with_hint(error, hint)),
        Gate::Ask { key, reason } => {
            if lock(&ctx.approved_rules).contains(&key) {
                return Ok(());
            }
            let decision = ctx.approver.approve(subject, &reason).await;
            if decision == ApprovalDecision::ApproveAlways {
                lock(&ctx.approved_rules).insert(key);
            }
            if super::approval::allows(decision) {
                Ok(())
            } else {
                Err(ToolError::model_with_hint(
                    format!("refused: the user did not approve this ({reason})."),
                    "Find a narrower way that stays inside the workspace, or ask the user to \
                     do it themselves (a headless `knack run` approves only with --yolo).",
                ))
            }
        }
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
/// whatever else skill discovery reads) in the working directory and each folder above it,
/// whether it exists yet or not. No tool writes them (skills change only through
/// `skill_manage`); commands see them read-only, and one that does not exist cannot be
/// created.
pub fn protected_dirs(ctx: &ToolContext) -> Vec<PathBuf> {
    let mut dirs = vec![ctx.home.root().to_path_buf()];
    for ancestor in ctx.cwd.ancestors() {
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
/// ([`protected_dirs`]), every `.git` from the working directory up (its hooks and config
/// run when the user next uses git; a `gitdir:` file is followed by the sandbox), and the
/// user's shell start-up files.
pub fn protected_paths(ctx: &ToolContext) -> Vec<PathBuf> {
    let mut paths = protected_dirs(ctx);
    for ancestor in ctx.cwd.ancestors() {
        let git = ancestor.join(".git");
        // A `.git` that does not exist yet is not masked: `git init` stays possible.
        if std::fs::symlink_metadata(&git).is_ok() {
            paths.push(git);
        }
    }
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        let home = PathBuf::from(home);
        paths.extend(HOME_STARTUP_FILES.iter().map(|name| home.join(name)));
    }
    paths
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
    if outside_sandbox && agent.sandbox != SandboxMode::FullAccess {
        return Gate::ask(
            policy,
            OUTSIDE_SANDBOX,
            "the command asks to run outside the sandbox, with the user's full rights".to_owned(),
        );
    }
    if agent.sandbox != SandboxMode::FullAccess
        && let Some(why) = sandbox_missing_reason()
    {
        return Gate::ask(
            policy,
            NO_SANDBOX,
            format!("commands run less confined than the full sandbox here: {why}"),
        );
    }
    if let Some(rule) = super::terminal::destructive_rule(command) {
        return Gate::ask(
            policy,
            rule.id,
            format!("it matches the rule '{}' ({})", rule.id, rule.reason),
        );
    }
    if policy == ApprovalPolicy::Untrusted && !is_known_read_only(command) {
        return Gate::ask(
            policy,
            UNTRUSTED_COMMAND,
            "agent.approval is `untrusted` and this is not a known read-only command".to_owned(),
        );
    }
    Gate::Run
}

/// Commands `untrusted` runs without asking: every simple command of the
/// line is one of these and nothing is redirected into a file.
fn is_known_read_only(command: &str) -> bool {
    const READ_ONLY: [&str; 20] = [
        "ls", "cat", "head", "tail", "wc", "pwd", "echo", "grep", "rg", "which", "file", "stat",
        "du", "df", "date", "whoami", "uname", "tree", "sort", "uniq",
    ];
    const GIT_READ_ONLY: [&str; 6] = ["status", "log", "diff", "show", "branch", "blame"];
    if command.contains(['>', '`', '$', '(']) {
        return false;
    }
    command
        .split(['|', ';', '&', '\n'])
        .map(str::split_whitespace)
        .all(|mut words| match words.next() {
            None => true,
            Some("git") => words.next().is_some_and(|sub| GIT_READ_ONLY.contains(&sub)),
            Some(program) => READ_ONLY.contains(&program),
        })
}

/// What a file tool may do with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileAccess {
    Read,
    Write,
}

/// Resolves a file tool's path argument through symlinks and checks it
/// against the boundary. The returned path is the one to operate on.
pub fn file_gate(ctx: &ToolContext, raw: &str, access: FileAccess) -> (PathBuf, Gate) {
    let path = resolve_existing_prefix(&ctx.resolve_path(raw));
    let gate = match access {
        FileAccess::Read => read_gate(ctx, &path),
        FileAccess::Write => write_gate(ctx, &path),
    };
    (path, gate)
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
    Gate::Run
}

fn write_gate(ctx: &ToolContext, path: &Path) -> Gate {
    let skills = resolve_existing_prefix(&ctx.home.skills_dir());
    if path.starts_with(&skills) {
        return Gate::Refuse {
            error: format!(
                "{} is inside the skills folder, which file tools do not write.",
                path.display()
            ),
            hint: "Use skill_manage (actions edit, patch, write_file) to change skills.".to_owned(),
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
    let agent = &ctx.config.agent;
    match agent.sandbox {
        SandboxMode::FullAccess => Gate::Run,
        SandboxMode::ReadOnly => Gate::ask(
            agent.approval,
            WRITE_OUTSIDE_WORKSPACE,
            format!(
                "agent.sandbox is read-only and this writes {}",
                path.display()
            ),
        ),
        SandboxMode::WorkspaceWrite => {
            let inside = writable_roots(ctx)
                .iter()
                .map(|root| resolve_existing_prefix(root))
                .any(|root| path.starts_with(root));
            if inside {
                Gate::Run
            } else {
                Gate::ask(
                    agent.approval,
                    WRITE_OUTSIDE_WORKSPACE,
                    format!("this writes {}, outside the workspace", path.display()),
                )
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
    // "Always" is remembered per tool: approving one tool says nothing of the others.
    let key = format!("mcp:{name}");
    match hints.approval {
        McpApproval::Never => Gate::Run,
        McpApproval::Always => Gate::ask(
            policy,
            &key,
            format!("{name} belongs to an MCP server whose approval is `always`"),
        ),
        McpApproval::Auto if hints.read_only => Gate::Run,
        McpApproval::Auto
            if hints.destructive == Some(false) && policy != ApprovalPolicy::Untrusted =>
        {
            Gate::Run
        }
        McpApproval::Auto => Gate::ask(
            policy,
            &key,
            if hints.destructive == Some(true) {
                format!("the MCP tool {name} says it may change or delete things")
            } else {
                format!("the MCP tool {name} does not say it only reads")
            },
        ),
    }
}

/// A note for a failed sandboxed command whose output shows the kernel said
/// no: what was denied and how the user can allow it.
pub fn denial_hint(ctx: &ToolContext, output: &str) -> Option<String> {
    const DENIED: [&str; 4] = [
        "Permission denied",
        "Read-only file system",
        "Operation not permitted",
        "Network is unreachable",
    ];
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
    fn read_only_commands_are_recognised_conservatively() {
        assert!(is_known_read_only("ls -la | grep x; git status"));
        assert!(!is_known_read_only("ls > out.txt"));
        assert!(!is_known_read_only("rm -rf x"));
        assert!(!is_known_read_only("echo $(rm -rf x)"));
        assert!(!is_known_read_only("git push"));
    }

    #[test]
    fn never_refuses_what_would_ask_and_on_request_asks() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ctx_in(dir.path(), |c| c.agent.approval = ApprovalPolicy::Never);
        assert!(matches!(
            command_gate(&ctx, "ls", true),
            Gate::Refuse { .. }
        ));
        let ctx = ctx_in(dir.path(), |_| {});
        assert!(matches!(
            command_gate(&ctx, "ls", true),
            Gate::Ask { ref key, .. } if key == OUTSIDE_SANDBOX
        ));
        assert_eq!(command_gate(&ctx, "ls", false), Gate::Run);
        assert!(matches!(
            command_gate(&ctx, "rm -rf /", false),
            Gate::Ask { ref key, .. } if key == "recursive-delete-root"
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
