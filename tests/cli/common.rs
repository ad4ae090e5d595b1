//! A temp home and working directory per test, and a `knack` command that sees
//! nothing of the machine's own configuration.

use std::path::{Path, PathBuf};

pub struct Env {
    pub home: tempfile::TempDir,
    pub cwd: tempfile::TempDir,
    /// An empty bundled-skills source, so tests see only the skills they write.
    pub bundle: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            cwd: tempfile::tempdir().unwrap(),
            bundle: tempfile::tempdir().unwrap(),
        }
    }

    pub fn home_path(&self, rel: &str) -> PathBuf {
        self.home.path().join(rel)
    }

    pub fn knack(&self) -> assert_cmd::Command {
        let mut cmd = assert_cmd::Command::cargo_bin("knack").unwrap();
        for (key, _) in std::env::vars() {
            if key.starts_with("KNACK_") || key == "OPENAI_API_KEY" {
                cmd.env_remove(key);
            }
        }
        cmd.env("KNACK_HOME", self.home.path())
            .env("KNACK_BUNDLED_SKILLS", self.bundle.path())
            .env("NO_COLOR", "1")
            .current_dir(self.cwd.path());
        cmd
    }

    /// Writes `rel` under the home (creating parents).
    pub fn write(&self, rel: &str, text: &str) -> &Self {
        write_file(&self.home_path(rel), text);
        self
    }

    /// A valid user skill at `skills/<rel>`.
    pub fn skill(&self, rel: &str, name: &str, description: &str) -> &Self {
        self.write(
            &format!("skills/{rel}/SKILL.md"),
            &format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nSteps for {name}.\n"),
        )
    }
}

pub fn write_file(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

pub fn stdout_json(output: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// Runs `cmd`, fails the test with knack's stderr unless it exited 0, and
/// returns the output for the test's own checks.
pub fn success(cmd: &mut assert_cmd::Command) -> std::process::Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// What an interrupted `knack run --json` left: its exit code, its JSON
/// events and its stderr.
pub struct Interrupted {
    pub code: i32,
    pub events: Vec<serde_json::Value>,
    pub stderr: String,
}

/// Runs `knack run --json PROMPT` against `base_url`, waits until the answer
/// has started streaming (an event, not a sleep: however slow the machine),
/// then sends SIGINT as Ctrl-C would.
pub fn interrupt_mid_answer(env: &Env, base_url: &str, prompt: &str) -> Interrupted {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("knack"))
        .args(["run", "--json", prompt])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("KNACK_HOME", env.home.path())
        .env("KNACK_BUNDLED_SKILLS", env.bundle.path())
        .env("KNACK_BASE_URL", base_url)
        .env("KNACK_MODEL", "mock-model")
        .current_dir(env.cwd.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (streaming_tx, streaming_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut events = Vec::new();
        for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)).map_while(Result::ok) {
            let event: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
            if event["type"] == "assistant_delta" {
                let _ = streaming_tx.send(());
            }
            events.push(event);
        }
        events
    });
    let mut stderr = child.stderr.take().unwrap();
    let stderr_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    assert!(
        streaming_rx.recv().is_ok(),
        "the run ended before the reply streamed"
    );
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let status = child.wait().unwrap();
    Interrupted {
        code: status.code().unwrap_or(-1),
        events: reader.join().unwrap(),
        stderr: stderr_reader.join().unwrap(),
    }
}

/// The scripted mock model server, started for one test.
pub fn mock() -> test_support::MockModelServer {
    test_support::MockModelServer::start_blocking().unwrap()
}

/// A knack command pointed at the mock model (`mock-model`), bounded in time
/// so a hang fails the test instead of stalling the suite.
pub fn run_cmd(env: &Env, server: &test_support::MockModelServer) -> assert_cmd::Command {
    let mut cmd = env.knack();
    cmd.env("KNACK_BASE_URL", server.base_url())
        .env("KNACK_MODEL", "mock-model")
        .timeout(std::time::Duration::from_secs(60));
    cmd
}

/// `knack doctor ARGS` in a home with no model configured: the whole report
/// is printed, and the exit code (3, configuration) says the model is missing.
pub fn doctor_without_model(env: &Env, args: &[&str]) -> std::process::Output {
    let out = env.knack().arg("doctor").args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
