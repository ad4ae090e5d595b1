//! The setting for the boundary attacks: a knack home, a workspace and a victim `HOME` (outside
//! every writable root) in one folder, and `knack` run as root or as the unprivileged
//! uid/gid 65534 (switched to with `setpriv`; the test process must be root for both).

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;
use test_support::MockModelServer;

/// The unprivileged user and group the second run switches to.
const NOBODY: u32 = 65534;

/// Who runs knack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runner {
    /// The test process's own user, root (as in CI).
    Root,
    /// uid/gid 65534, switched to with `setpriv`.
    Nobody,
}

/// "Text file busy".
fn libc_etxtbsy() -> i32 {
    rustix::io::Errno::TXTBSY.raw_os_error()
}

/// Starts the world's copy of knack. The copy was just written; a child another
/// test forked meanwhile may still hold it open for writing until it execs
/// (ETXTBSY), so a busy binary is retried (bounded).
pub fn retry_while_busy<T>(mut start: impl FnMut() -> std::io::Result<T>) -> T {
    let mut tries = 0;
    loop {
        match start() {
            Err(e) if e.raw_os_error() == Some(libc_etxtbsy()) && tries < 500 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => return other.unwrap(),
        }
    }
}

pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// The folders of one attack. Everything sits in one temp folder outside
/// `/tmp` (the temp folders are writable roots; the victim must not be).
pub struct World {
    pub runner: Runner,
    base: tempfile::TempDir,
    pub home: PathBuf,
    pub cwd: PathBuf,
    pub victim: PathBuf,
    bundle: PathBuf,
    bin: PathBuf,
}

impl World {
    pub fn new(runner: Runner) -> Self {
        assert!(
            is_root(),
            "the boundary attacks run knack as root and as uid {NOBODY}: run the suite as root \
             (as CI does)"
        );
        let var_tmp = PathBuf::from("/var/tmp");
        let parent = match var_tmp.canonicalize() {
            Ok(real) if !real.starts_with("/tmp") => real,
            _ => PathBuf::from(env!("CARGO_TARGET_TMPDIR")),
        };
        let base = tempfile::tempdir_in(parent).unwrap();
        let root = base.path().canonicalize().unwrap();
        // Reachable by the unprivileged user, like a home directory's parent.
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
        let world = Self {
            runner,
            home: root.join("knack-home"),
            cwd: root.join("work"),
            victim: root.join("victim"),
            bundle: root.join("bundle"),
            bin: root.join("bin/knack"),
            base,
        };
        for dir in [&world.home, &world.cwd, &world.victim, &world.bundle] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::set_permissions(&world.home, std::fs::Permissions::from_mode(0o700)).unwrap();
        let victim_files = [
            ("notes.txt", "my notes\n"),
            (".bashrc", "export PS1='$ '\n"),
            (".gitconfig", "[user]\n\tname = me\n"),
            (".ssh/id_rsa", "-----BEGIN KEY-----\n"),
            ("docs/report.md", "# report\n"),
        ];
        for (rel, text) in victim_files {
            let path = world.victim.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        // The binary where the unprivileged user can run it.
        let bin_dir = world.bin.parent().unwrap();
        std::fs::create_dir_all(bin_dir).unwrap();
        std::fs::copy(assert_cmd::cargo::cargo_bin("knack"), &world.bin).unwrap();
        std::fs::set_permissions(bin_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&world.bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        world.hand_over();
        world
    }

    /// The temp folder holding everything (to look for leftovers).
    pub fn base(&self) -> &Path {
        self.base.path()
    }

    /// Writes `path` (parents made) and gives it to the runner.
    pub fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self.hand_over();
    }

    /// Gives the home, the workspace and the victim to the user knack runs
    /// as, so that without the sandbox it could change every one of them.
    pub fn hand_over(&self) {
        if self.runner != Runner::Nobody {
            return;
        }
        for dir in [&self.home, &self.cwd, &self.victim, &self.bundle] {
            let status = std::process::Command::new("chown")
                .args(["-R", &format!("{NOBODY}:{NOBODY}")])
                .arg(dir)
                .status()
                .unwrap();
            assert!(status.success(), "chown {}", dir.display());
        }
    }

    /// The command that runs `program` as the runner, with a clean environment.
    fn command(&self, program: &Path) -> std::process::Command {
        let mut cmd = match self.runner {
            Runner::Root => std::process::Command::new(program),
            Runner::Nobody => {
                let mut cmd = std::process::Command::new("setpriv");
                cmd.args([
                    &format!("--reuid={NOBODY}"),
                    &format!("--regid={NOBODY}"),
                    "--clear-groups",
                    "--",
                ])
                .arg(program);
                cmd
            }
        };
        cmd.env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
            .env("HOME", &self.victim)
            .env("KNACK_HOME", &self.home)
            .env("KNACK_BUNDLED_SKILLS", &self.bundle)
            .env("NO_COLOR", "1")
            .current_dir(&self.cwd);
        cmd
    }

    /// `knack ARGS` against the mock, as the runner; its output, once it
    /// exited successfully.
    pub fn knack(&self, server: &MockModelServer, args: &[&str]) -> std::process::Output {
        let out = self.knack_status(server, args);
        assert!(
            out.status.success(),
            "knack {args:?} as {:?}: exit {:?}\n{}",
            self.runner,
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// [`Self::knack`] whatever its exit status.
    pub fn knack_status(&self, server: &MockModelServer, args: &[&str]) -> std::process::Output {
        let mut cmd = self.command(&self.bin);
        cmd.env("KNACK_BASE_URL", server.base_url())
            .env("KNACK_MODEL", "mock-model")
            .args(args)
            .stdin(std::process::Stdio::null());
        retry_while_busy(|| cmd.output())
    }

    /// A shell command of the test's own (the swapper), run as the runner in
    /// the workspace sandbox, by knack itself: `knack tool call terminal`, so
    /// the sandbox is set up by a knack process of the runner's, exactly as a
    /// background command of the model's would be.
    pub fn sandboxed(&self, shell_command: &str) -> std::process::Command {
        let mut cmd = self.command(&self.bin);
        let args = serde_json::json!({ "command": shell_command, "timeout_secs": 600 });
        cmd.args(["tool", "call", "terminal", &args.to_string()])
            .stdin(std::process::Stdio::null());
        cmd
    }

    /// Files anywhere below the base whose name starts with `prefix`.
    pub fn files_named(&self, prefix: &str) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut stack = vec![self.base().to_path_buf()];
        while let Some(folder) = stack.pop() {
            for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
                let path = entry.path();
                if entry.file_name().to_string_lossy().starts_with(prefix) {
                    found.push(path.clone());
                }
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(path);
                }
            }
        }
        found
    }
}

/// Every file below `dir` with its content, links as their targets.
pub fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(dir).unwrap().display().to_string();
            let content = if meta.is_dir() {
                stack.push(path.clone());
                "<dir>".to_owned()
            } else if meta.file_type().is_symlink() {
                format!("<link to {}>", std::fs::read_link(&path).unwrap().display())
            } else {
                std::fs::read_to_string(&path).unwrap_or_else(|_| "<binary>".into())
            };
            out.insert(rel, content);
        }
    }
    out
}

/// What each tool call sent back to the model, in order, from the last request.
pub fn tool_results(server: &MockModelServer) -> Vec<Value> {
    let requests = server.chat_requests();
    let last = requests.last().unwrap();
    last.messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect()
}

/// Every request body the mock received, as one text.
pub fn everything_sent(server: &MockModelServer) -> String {
    server
        .requests()
        .iter()
        .map(|r| r.raw_body.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}
