//! Short bash commands knack runs for itself with text the model can influence — a skill's
//! inline shell, the memory `provider_command` — confined read-only by the kernel sandbox.
//!
//! They run through `knack_sandbox::run_split`, the one way knack starts, times out and
//! kills a command: in the sandbox, nothing they start outlives them (their PID namespace
//! ends with them); unconfined, their process group is killed. The policy is read-only
//! (these commands print, they should not write), hides `$KNACK_HOME/.env`, and follows
//! `agent.sandbox_network`; in `full-access` the user chose no sandbox, and none is applied.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use knack_config::{Config, KnackHome, SandboxMode};
use knack_sandbox::{CappedOutput, Ending, RunLimits, SandboxPolicy};

use crate::{Error, Result};

/// How long the output is still waited for once the command is over: only a process that
/// escaped an unconfined command's group holds it open.
const DRAIN_GRACE: Duration = Duration::from_secs(1);

/// Whether helper commands run in the sandbox, and under which policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HelperConfinement {
    /// The read-only policy for this home and config.
    Sandboxed(SandboxPolicy),
    /// `agent.sandbox: full-access`: the user switched the sandbox off.
    Unconfined,
}

impl HelperConfinement {
    /// The confinement `config` asks for: read-only (nothing writable,
    /// `.env` hidden, network as `agent.sandbox_network` says) unless the
    /// sandbox is off.
    pub fn for_config(home: &KnackHome, config: &Config) -> Self {
        match config.agent.sandbox {
            SandboxMode::FullAccess => Self::Unconfined,
            SandboxMode::ReadOnly | SandboxMode::WorkspaceWrite => Self::Sandboxed(SandboxPolicy {
                writable_roots: Vec::new(),
                read_only: Vec::new(),
                hidden_files: vec![home.env_path()],
                network: config.agent.sandbox_network,
                ..SandboxPolicy::default()
            }),
        }
    }
}

/// What a helper command left.
#[derive(Debug)]
pub struct HelperOutput {
    /// Its exit code (128 + the signal when a signal ended it); `None` when it ran past
    /// its timeout and was killed.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl HelperOutput {
    /// It finished, with exit code 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// Runs `bash -c command` in `dir` under `confinement`, without secret
/// variables except `passthrough`, for at most `timeout`; keeps at most
/// `max_bytes` of each stream. An error means it did not start (or could not
/// be confined, in which case it is not run at all).
pub fn run_helper(
    command: &str,
    dir: &Path,
    timeout: Duration,
    confinement: &HelperConfinement,
    passthrough: &[String],
    max_bytes: usize,
) -> Result<HelperOutput> {
    let mut cmd = Command::new("bash");
    cmd.arg("-c").arg(command).current_dir(dir);
    knack_config::secret_env::scrub_std_command(&mut cmd, passthrough);
    let policy = match confinement {
        HelperConfinement::Sandboxed(policy) => Some(policy),
        HelperConfinement::Unconfined => None,
    };
    let limits = RunLimits {
        timeout,
        drain_grace: DRAIN_GRACE,
    };
    let (mut stdout, mut stderr) = (CappedOutput::new(max_bytes), CappedOutput::new(max_bytes));
    let finished = knack_sandbox::run_split(
        cmd,
        policy,
        None,
        limits,
        None,
        &mut |bytes| stdout.push(bytes),
        &mut |bytes| stderr.push(bytes),
    )
    .map_err(|e| match e {
        knack_sandbox::Error::Spawn(e) => Error::HelperCommand(format!("cannot start bash: {e}")),
        other => Error::HelperCommand(format!(
            "not run: {other} (agent.sandbox: full-access in config.yaml runs it unconfined)"
        )),
    })?;
    let code = match finished.ending {
        Ending::Exited(code) => Some(code),
        Ending::TimedOut | Ending::Stopped => None,
    };
    Ok(HelperOutput {
        code,
        stdout: stdout.text(),
        stderr: stderr.text(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(command: &str, timeout: Duration) -> HelperOutput {
        let dir = tempfile::tempdir().unwrap();
        run_helper(
            command,
            dir.path(),
            timeout,
            &HelperConfinement::Unconfined,
            &[],
            1 << 20,
        )
        .unwrap()
    }

    #[test]
    fn output_status_and_timeout() {
        let out = run("echo out; echo err >&2; exit 3", Duration::from_secs(30));
        assert_eq!(out.stdout, "out\n");
        assert_eq!(out.stderr, "err\n");
        assert_eq!(out.code, Some(3));
        assert!(!out.success());
        let out = run("sleep 30", Duration::from_millis(100));
        assert!(out.code.is_none());
    }

    /// Whether `pid` still runs (a zombie waiting to be reaped does not).
    fn alive(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit(") ")
                .next()
                .is_some_and(|s| !s.starts_with('Z'))
        })
    }

    #[test]
    fn nothing_it_started_outlives_it() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        // A background job in the command's group, still running when the
        // shell exits; the shell itself notes its pid before it exits.
        let command = format!("sleep 600 & echo $! > {}; echo started", pid_file.display());
        let out = run_helper(
            &command,
            dir.path(),
            Duration::from_secs(60),
            &HelperConfinement::Unconfined,
            &[],
            1 << 20,
        )
        .unwrap();
        assert_eq!(out.stdout, "started\n");
        let pid = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .to_owned();
        // SIGKILL was sent before run_helper returned; the kernel may take a
        // moment to finish the process off, so look a bounded number of times.
        let gone = (0..2_000).any(|_| {
            let gone = !alive(&pid);
            if !gone {
                std::thread::sleep(Duration::from_millis(5));
            }
            gone
        });
        assert!(gone, "background job {pid} outlived its command");
    }

    #[test]
    fn a_sandboxed_helper_takes_even_detached_children_along() {
        let dir = tempfile::tempdir().unwrap();
        // A sleep no other process on the machine has: pids inside the sandbox are not
        // the host's, so the survivor is looked for by its arguments.
        let token = format!("{}.{:09}", 800 + std::process::id() % 100, {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
        });
        let command = format!("setsid sleep {token} > /dev/null 2>&1 < /dev/null & echo started");
        let out = run_helper(
            &command,
            dir.path(),
            Duration::from_secs(60),
            &HelperConfinement::Sandboxed(SandboxPolicy::default()),
            &[],
            1 << 20,
        )
        .unwrap();
        assert_eq!(out.stdout, "started\n", "{out:?}");
        assert!(out.success());
        let survives = || {
            std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
                alive(&entry.file_name().to_string_lossy())
                    && std::fs::read(entry.path().join("cmdline"))
                        .is_ok_and(|c| c.split(|b| *b == 0).any(|arg| arg == token.as_bytes()))
            })
        };
        // The namespace is gone when run_helper returns; its last process may take the
        // kernel a moment to reap, so look a bounded number of times.
        let gone = (0..2_000).any(|_| {
            let gone = !survives();
            if !gone {
                std::thread::sleep(Duration::from_millis(5));
            }
            gone
        });
        assert!(
            gone,
            "the detached sleep {token} outlived its helper command"
        );
    }

    #[test]
    fn the_config_decides_the_confinement() {
        let home = KnackHome::at("/h");
        let mut config = Config::default();
        match HelperConfinement::for_config(&home, &config) {
            HelperConfinement::Sandboxed(policy) => {
                assert!(policy.writable_roots.is_empty(), "read-only");
                assert_eq!(policy.hidden_files, vec![home.env_path()]);
                assert!(!policy.network);
            }
            HelperConfinement::Unconfined => panic!("sandboxed by default"),
        }
        config.agent.sandbox = SandboxMode::FullAccess;
        assert_eq!(
            HelperConfinement::for_config(&home, &config),
            HelperConfinement::Unconfined
        );
    }
}
