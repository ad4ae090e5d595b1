//! Short bash commands knack runs for itself with text the model can influence — a skill's
//! inline shell, the memory `provider_command` — confined read-only by the kernel sandbox.
//!
//! Each runs in a session of its own; when it exits or times out, its whole process group is
//! killed, so no background job it started outlives it, and its output is waited for only a
//! bounded time (a child that escaped the group may hold the pipe open). The policy is read-only
//! (these commands print, they should not write), hides `$KNACK_HOME/.env`, and follows
//! `agent.sandbox_network`; in `full-access` the user chose no sandbox, and none is applied.

use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use knack_config::{Config, KnackHome, SandboxMode};
use knack_sandbox::SandboxPolicy;

use crate::{Error, Result};

/// How long the output is still waited for once the command is over and
/// its process group killed: only a process that left the group holds it.
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
    /// `None` when it ran past its timeout and was killed.
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
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
    cmd.arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // A group of its own, to be killed as one; no way to the user's terminal.
    knack_sandbox::new_session(&mut cmd);
    knack_config::secret_env::scrub_std_command(&mut cmd, passthrough);
    if let HelperConfinement::Sandboxed(policy) = confinement {
        knack_sandbox::confine(&mut cmd, policy).map_err(|e| {
            Error::HelperCommand(format!(
                "not run: {e} (agent.sandbox: full-access in config.yaml runs it unconfined)"
            ))
        })?;
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::HelperCommand(format!("cannot start bash: {e}")))?;
    let group = child.id();
    let stdout = child.stdout.take().map(|out| drain(out, max_bytes));
    let stderr = child.stderr.take().map(|err| drain(err, max_bytes));
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= timeout => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                kill_group(group);
                return Err(Error::HelperCommand(format!("lost track of it: {e}")));
            }
        }
    };
    // Whatever it left running in its group goes with it.
    kill_group(group);
    if status.is_none() {
        let _ = child.wait();
    }
    let collect = |rx: Option<mpsc::Receiver<Vec<u8>>>| {
        rx.and_then(|rx| rx.recv_timeout(DRAIN_GRACE).ok())
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default()
    };
    Ok(HelperOutput {
        status,
        stdout: collect(stdout),
        stderr: collect(stderr),
    })
}

/// Reads up to `max_bytes` of `reader` on a thread (the rest is drained so
/// the command never blocks on a full pipe) and sends them when it closes.
fn drain<R: Read + Send + 'static>(mut reader: R, max_bytes: usize) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let limit = u64::try_from(max_bytes).unwrap_or(u64::MAX);
        let _ = reader.by_ref().take(limit).read_to_end(&mut buf);
        let _ = std::io::copy(&mut reader, &mut std::io::sink());
        let _ = tx.send(buf);
    });
    rx
}

fn kill_group(group: u32) {
    let pid = i32::try_from(group)
        .ok()
        .and_then(rustix::process::Pid::from_raw);
    if let Some(pid) = pid {
        // Already gone (ESRCH) is the usual case.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
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
        assert_eq!(out.status.and_then(|s| s.code()), Some(3));
        let out = run("sleep 30", Duration::from_millis(100));
        assert!(out.status.is_none());
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
