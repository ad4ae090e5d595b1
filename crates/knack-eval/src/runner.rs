//! Runs one agent session as a child `knack run --json` in a prepared
//! workspace and home, accounts for it from its events and the session
//! store, and runs the verifier after the session has ended.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use agent_loop::SessionStore;
use agent_loop::model::RequestPurpose;
use knack_config::Prices;
use serde::Serialize;

use crate::trace::{SessionTrace, Tokens, parse_trace};
use crate::{Error, Result};

/// How to start the agent: the `knack` binary and the flags every run shares.
#[derive(Debug, Clone)]
pub struct AgentCommand {
    pub program: PathBuf,
    /// `--provider NAME` / `--model NAME` as the user gave them.
    pub model_args: Vec<String>,
}

/// The provider as the eval reports it.
#[derive(Debug, Clone, Serialize)]
pub struct ProviderInfo {
    /// The provider's key in config.yaml, or `environment` for the KNACK_* setup.
    pub provider: String,
    pub model: String,
    pub base_url: String,
    /// USD per million tokens, when configured: used for the cost as if nothing were cached.
    #[serde(skip)]
    pub prices: Option<Prices>,
    /// The scripted mock server of knack's tests answered (it marks its replies).
    pub scripted_mock: bool,
}

/// Everything a mode needs besides its own input.
#[derive(Debug, Clone)]
pub struct EvalContext {
    pub agent: AgentCommand,
    pub provider: ProviderInfo,
    /// The user's home: its config.yaml and .env are copied into every temp home,
    /// and its skills when a mode uses the user's library.
    pub user_home: Option<PathBuf>,
    pub out: PathBuf,
    pub jobs: usize,
    pub seeds: usize,
    /// Draw a progress bar on stderr (only when it is a terminal).
    pub progress: bool,
    /// Set when the user pressed Ctrl-C: no further runs start, and the
    /// report of what ran is still written.
    pub interrupted: Arc<AtomicBool>,
    /// The knack version, for the report.
    pub version: String,
}

/// The exit code of a `knack run` stopped by Ctrl-C (CONTRACT.md).
pub const INTERRUPTED: i32 = 130;

/// One session to run.
#[derive(Debug, Clone)]
pub struct SessionRequest<'a> {
    pub home: &'a Path,
    pub workspace: &'a Path,
    pub prompt: &'a str,
    /// Let the self-improvement review run after the answer.
    pub review: bool,
    pub max_iterations: Option<u32>,
}

/// What one session did and cost.
#[derive(Debug, Clone)]
pub struct SessionOutcome {
    pub trace: SessionTrace,
    /// The conversation's requests.
    pub turn_tokens: Tokens,
    /// The review's requests.
    pub review_tokens: Tokens,
    /// The compaction's requests.
    pub compact_tokens: Tokens,
    /// Summed over every request that had prices; `None` when none had.
    pub cost_usd: Option<f64>,
    pub wall_ms: u64,
    pub exit_code: Option<i32>,
    /// The end of the child's stderr, for the report of a run that broke.
    pub stderr_tail: String,
}

impl SessionOutcome {
    /// Every token of the run: conversation, review and compaction.
    pub fn all_tokens(&self) -> Tokens {
        let mut all = self.turn_tokens;
        all.add(&self.review_tokens);
        all.add(&self.compact_tokens);
        all
    }

    /// Why the run is an error rather than a result: the model never
    /// answered (provider down, bad key), or the agent could not start.
    pub fn infrastructure_error(&self) -> Option<String> {
        if self.exit_code == Some(INTERRUPTED) {
            return Some("interrupted (Ctrl-C) before the run ended".to_owned());
        }
        if self.trace.model_answered {
            return None;
        }
        let why = self
            .trace
            .error
            .clone()
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| {
                format!(
                    "the agent exited with {:?} before any model reply: {}",
                    self.exit_code,
                    self.stderr_tail.trim()
                )
            });
        Some(why)
    }
}

/// Runs one session to its end (review included) and reads back what it did.
pub fn run_session(agent: &AgentCommand, request: &SessionRequest<'_>) -> Result<SessionOutcome> {
    let mut command = Command::new(&agent.program);
    command.arg("run").arg("--json");
    if !request.review {
        command.arg("--no-review");
    }
    if let Some(n) = request.max_iterations {
        command.arg("--max-iterations").arg(n.to_string());
    }
    command
        .args(&agent.model_args)
        // The prompt goes through stdin: a prompt may start with `-` or be long.
        .arg("-")
        .current_dir(request.workspace)
        .env("KNACK_HOME", request.home)
        .env("NO_COLOR", "1")
        .env_remove("KNACK_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = command.spawn().map_err(|source| Error::Spawn {
        program: agent.program.clone(),
        source,
    })?;
    if let Some(mut stdin) = child.stdin.take() {
        // A child that exits early closes its stdin; its exit code tells why.
        let _ = stdin.write_all(request.prompt.as_bytes());
    }
    let stderr = child.stderr.take();
    let stderr_reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut stderr) = stderr {
            let _ = stderr.read_to_string(&mut text);
        }
        text
    });
    let mut stdout = String::new();
    if let Some(mut out) = child.stdout.take() {
        out.read_to_string(&mut stdout)
            .map_err(|e| Error::io(&agent.program, e))?;
    }
    let status = child.wait().map_err(|e| Error::io(&agent.program, e))?;
    let wall_ms = millis(started.elapsed());
    let stderr = stderr_reader.join().unwrap_or_default();
    let trace = parse_trace(&stdout);
    let mut outcome = SessionOutcome {
        trace,
        turn_tokens: Tokens::default(),
        review_tokens: Tokens::default(),
        compact_tokens: Tokens::default(),
        cost_usd: None,
        wall_ms,
        exit_code: status.code(),
        stderr_tail: tail(&stderr, 600),
    };
    if let Some(id) = outcome.trace.session_id.clone() {
        read_usage(request.home, &id, &mut outcome)?;
    }
    Ok(outcome)
}

/// The session store holds every request's usage with its purpose; the
/// event stream does not carry the review's, so the store is the ledger.
fn read_usage(home: &Path, session_id: &str, outcome: &mut SessionOutcome) -> Result<()> {
    let db = knack_config::KnackHome::at(home).state_db();
    if !db.exists() {
        return Ok(());
    }
    let store = SessionStore::open_path(&db)?;
    let mut cost: Option<f64> = None;
    for (purpose, slot) in [
        (RequestPurpose::Turn, &mut outcome.turn_tokens),
        (RequestPurpose::Review, &mut outcome.review_tokens),
        (RequestPurpose::Compact, &mut outcome.compact_tokens),
    ] {
        let totals = store.usage_totals_for(session_id, purpose)?;
        *slot = Tokens {
            input: totals.fresh_input_tokens,
            cache_read: totals.cache_read_tokens,
            cache_write: totals.cache_write_tokens,
            output: totals.output_tokens,
            reasoning: totals.reasoning_tokens,
        };
        if let Some(c) = totals.cost_usd {
            cost = Some(cost.unwrap_or(0.0) + c);
        }
    }
    outcome.cost_usd = cost;
    Ok(())
}

/// The cost of `tokens` as if no prompt token had come from or gone to the cache.
pub fn uncached_cost(prices: Option<&Prices>, tokens: &Tokens) -> Option<f64> {
    let prices = prices?;
    let prompt = (tokens.input + tokens.cache_read + tokens.cache_write) as f64;
    Some((prompt * prices.input + tokens.output as f64 * prices.output) / 1_000_000.0)
}

/// The verdict of a verifier run after the session.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub passed: bool,
    pub exit_code: Option<i32>,
    /// The end of what the verifier printed, for the report of a failure.
    pub output_tail: String,
    pub ms: u64,
}

/// What to run as the verifier.
#[derive(Debug, Clone)]
pub enum Verifier {
    /// A script file (a family's `verify.sh`), run with `sh`.
    Script(PathBuf),
    /// A shell command line (a tasks file's `verify`).
    Shell(String),
}

/// Longest a verifier may run; past it the run fails and the verifier is killed.
pub const VERIFY_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs the verifier in the workspace once the session is over. It runs
/// outside the agent's sandbox, with the environment of `knack eval` minus
/// knack's own variables, and `EVAL_WORKSPACE` set to the workspace.
pub fn verify(verifier: &Verifier, workspace: &Path) -> Result<Verdict> {
    let mut command = Command::new("sh");
    match verifier {
        Verifier::Script(path) => command.arg(path),
        Verifier::Shell(line) => command.arg("-c").arg(line),
    };
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("KNACK_") {
            command.env_remove(key);
        }
    }
    let output_file = tempfile::tempfile().map_err(|e| Error::io(workspace, e))?;
    let err_file = output_file
        .try_clone()
        .map_err(|e| Error::io(workspace, e))?;
    let started = Instant::now();
    let mut child = command
        .current_dir(workspace)
        .env("EVAL_WORKSPACE", workspace)
        .stdin(Stdio::null())
        .stdout(
            output_file
                .try_clone()
                .map_err(|e| Error::io(workspace, e))?,
        )
        .stderr(err_file)
        .spawn()
        .map_err(|source| Error::Spawn {
            program: PathBuf::from("sh"),
            source,
        })?;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| Error::io(workspace, e))? {
            break Some(status);
        }
        if started.elapsed() > VERIFY_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let ms = millis(started.elapsed());
    let mut printed = String::new();
    let mut file = output_file;
    use std::io::Seek as _;
    let _ = file.seek(std::io::SeekFrom::Start(0));
    let _ = file.read_to_string(&mut printed);
    Ok(match status {
        Some(status) => Verdict {
            passed: status.success(),
            exit_code: status.code(),
            output_tail: tail(&printed, 400),
            ms,
        },
        None => Verdict {
            passed: false,
            exit_code: None,
            output_tail: format!(
                "the verifier ran longer than {}s and was stopped",
                VERIFY_TIMEOUT.as_secs()
            ),
            ms,
        },
    })
}

/// Asks the provider's base URL whether it is knack's scripted mock (which
/// marks every reply with a header). Only plain-HTTP URLs can be the mock.
pub fn is_scripted_mock(base_url: &str) -> bool {
    let Some(rest) = base_url.strip_prefix("http://") else {
        return false;
    };
    let (authority, path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
    let Ok(addrs) = std::net::ToSocketAddrs::to_socket_addrs(authority) else {
        return false;
    };
    let timeout = Duration::from_secs(2);
    for addr in addrs {
        let Ok(mut stream) = std::net::TcpStream::connect_timeout(&addr, timeout) else {
            continue;
        };
        let _ = stream.set_read_timeout(Some(timeout));
        let path = path.trim_end_matches('/');
        let request = format!(
            "GET /{path}/models HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
        );
        if stream.write_all(request.as_bytes()).is_err() {
            continue;
        }
        let mut head = Vec::new();
        let mut buf = [0u8; 1024];
        while let Ok(n) = stream.read(&mut buf) {
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
            if head.windows(4).any(|w| w == b"\r\n\r\n") || head.len() > 16 * 1024 {
                break;
            }
        }
        let text = String::from_utf8_lossy(&head).to_ascii_lowercase();
        return text
            .split("\r\n\r\n")
            .next()
            .is_some_and(|h| h.lines().any(|l| l.starts_with("x-knack-mock:")));
    }
    false
}

pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn tail(text: &str, chars: usize) -> String {
    let count = text.chars().count();
    if count <= chars {
        return text.to_owned();
    }
    text.chars().skip(count - chars).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verifier_decides_pass_and_fail_in_the_workspace() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("out.txt"), "42\n").unwrap();
        let pass = verify(&Verifier::Shell("grep -q 42 out.txt".into()), ws.path()).unwrap();
        assert!(pass.passed);
        let fail = verify(
            &Verifier::Shell("echo wrong answer; exit 3".into()),
            ws.path(),
        )
        .unwrap();
        assert!(!fail.passed);
        assert_eq!(fail.exit_code, Some(3));
        assert!(fail.output_tail.contains("wrong answer"));
    }

    #[test]
    fn uncached_cost_prices_every_prompt_token_as_input() {
        let prices = Prices {
            input: 2.0,
            output: 10.0,
            cache_read: Some(0.2),
            cache_write: None,
        };
        let tokens = Tokens {
            input: 100_000,
            cache_read: 900_000,
            cache_write: 0,
            output: 100_000,
            reasoning: 0,
        };
        let cost = uncached_cost(Some(&prices), &tokens).unwrap();
        assert!((cost - 3.0).abs() < 1e-9, "{cost}");
        assert_eq!(uncached_cost(None, &tokens), None);
    }

    #[test]
    fn a_closed_port_is_not_the_mock() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        assert!(!is_scripted_mock(&format!("http://127.0.0.1:{port}/v1")));
        assert!(!is_scripted_mock("https://api.example.com/v1"));
    }
}
