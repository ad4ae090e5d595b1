//! `knack run`: one task, headless. The answer goes to stdout (as it streams
//! on a terminal, whole when piped) and progress to stderr; `--json` prints the
//! session's events as JSON lines instead. The review runs before exit.

use std::collections::HashMap;
use std::io::{IsTerminal, Read, Write};
use std::sync::Arc;

use agent_loop::session::{EventSink, Session, SessionHandle, SessionOptions, spawn_session};
use agent_protocol::{Event, Op};
use prompt_builder::Platform;

use crate::cli::RunArgs;
use crate::context::Context;
use crate::exit;

/// Exit code for a run stopped by Ctrl-C (CONTRACT.md).
const INTERRUPTED: u8 = 130;

pub fn run(args: RunArgs) -> anyhow::Result<u8> {
    let json = args.json;
    start(args).inspect_err(|e| {
        // Scripts reading `--json` get a last `error` line, whatever went wrong.
        if json {
            let event = Event::Error {
                message: format!("{e:#}"),
            };
            if let Ok(line) = event.to_json_line() {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
        }
    })
}

fn start(mut args: RunArgs) -> anyhow::Result<u8> {
    let ctx = Context::load()?;
    let prompt = read_prompt(args.prompt.as_deref())?;
    let choice = ctx.model(&args.model.flags())?;
    // Mistakes the user can fix are refused before a session or a request exists.
    check_invocation(&ctx, &prompt)?;
    check_preloads(&ctx, &args.skills)?;
    super::skill_setup::report_missing(&ctx, &prompt, &args.skills);
    // `@path` mentions attach their files now: a bad one is exit 2, no request.
    let prompt = agent_loop::mentions::expand(&prompt, &ctx.cwd, ctx.home.root())
        .map_err(|e| exit::usage(e.to_string()))?
        .text;
    args.resume = session_to_resume(&ctx, args.resume.as_deref(), args.continue_last)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(run_async(ctx, args, prompt, choice))
}

fn read_prompt(arg: Option<&str>) -> anyhow::Result<String> {
    let from_stdin = match arg {
        Some("-") => true,
        Some(_) => false,
        None => !std::io::stdin().is_terminal(),
    };
    let text = if from_stdin {
        let mut buf = String::new();
        std::io::stdin().read_to_string(&mut buf)?;
        buf
    } else {
        arg.unwrap_or_default().to_owned()
    };
    if text.trim().is_empty() {
        return Err(exit::usage(
            "no prompt given: `knack run \"your task\"`, or pipe it in with `knack run -`",
        ));
    }
    Ok(text)
}

/// A prompt starting with `/name` must name skills: an unknown one is a
/// usage error with the closest name, as the TUI refuses it. A first token
/// holding a `/` is a path (`/usr/bin is odd`), sent as written.
fn check_invocation(ctx: &Context, prompt: &str) -> anyhow::Result<()> {
    let Some(rest) = prompt.trim_start().strip_prefix('/') else {
        return Ok(());
    };
    let token = rest.split(char::is_whitespace).next().unwrap_or_default();
    if token.is_empty() || token.contains('/') {
        return Ok(());
    }
    ctx.with_skills(|set| {
        let unknown = match agent_loop::invocation::parse_invocation(prompt, set) {
            Ok(Some(_)) => return Ok(()),
            Ok(None) => token.to_owned(),
            Err(agent_loop::invocation::InvocationError::NotFound { token }) => token,
            Err(e) => return Err(exit::usage(e.to_string())),
        };
        let visible = set.visible();
        let hint = match crate::suggest::closest(&unknown, visible.iter().map(|s| s.name.as_str()))
        {
            Some(name) => format!("; did you mean /{name}?"),
            None => "; `knack skills list` shows the skills".to_owned(),
        };
        Err(exit::usage(format!("no skill named /{unknown}{hint}")))
    })
}

/// `-s NAME` must name a skill: an unknown one is a usage error with the
/// closest name, before anything starts (`knack chat` checks the same).
pub(crate) fn check_preloads(ctx: &Context, names: &[String]) -> anyhow::Result<()> {
    if names.is_empty() {
        return Ok(());
    }
    ctx.with_skills(|set| {
        for name in names {
            match agent_loop::invocation::resolve_preload(set, name) {
                Ok(_) => {}
                Err(agent_loop::invocation::PreloadError::NotFound { .. }) => {
                    return Err(exit::usage(format!(
                        "-s {name}: no skill by that name; {}",
                        crate::suggest::skill_hint(set, name)
                    )));
                }
                // An ambiguous or hidden skill is the user's to fix too.
                Err(e) => return Err(exit::usage(e.to_string())),
            }
        }
        Ok(())
    })
}

/// The session `--resume ID` or `--continue` asks for, as a full id.
pub(crate) fn session_to_resume(
    ctx: &Context,
    resume: Option<&str>,
    continue_last: bool,
) -> anyhow::Result<Option<String>> {
    match (resume, continue_last) {
        (Some(id), _) => resolve_session(ctx, id).map(Some),
        (None, true) => latest_session(ctx).map(Some),
        (None, false) => Ok(None),
    }
}

/// `--continue`: the session whose last message is the newest among those
/// started in this directory. Other directories' sessions are never picked,
/// so a `--continue` in one project never carries on another's conversation.
fn latest_session(ctx: &Context) -> anyhow::Result<String> {
    let store = agent_loop::SessionStore::open(&ctx.home)?;
    let cwd = ctx.cwd.to_string_lossy();
    store.latest_session(Some(&cwd))?.ok_or_else(|| {
        exit::failed(format!(
            "no session to continue in {cwd}: none was started in this directory — \
start one without --continue, or pick any session with --resume ID (`knack sessions list`)"
        ))
    })
}

/// The full id of the session `--resume` names (an id or a unique prefix);
/// one that names no stored session is a usage error.
pub(crate) fn resolve_session(ctx: &Context, id: &str) -> anyhow::Result<String> {
    let store = agent_loop::SessionStore::open(&ctx.home)?;
    match store.resolve_id(id) {
        Ok(full) => Ok(full),
        Err(
            e
            @ (agent_loop::Error::SessionNotFound(_) | agent_loop::Error::SessionAmbiguous { .. }),
        ) => Err(exit::usage(super::sessions::explain_unknown(&store, id, e))),
        Err(e) => Err(e.into()),
    }
}

async fn run_async(
    ctx: Context,
    args: RunArgs,
    prompt: String,
    choice: agent_loop::setup::ModelChoice,
) -> anyhow::Result<u8> {
    let setup = ctx.session_setup(Platform::Cli).with_yolo_flag(args.yolo);
    if ctx.config.agent.sandbox != knack_config::SandboxMode::FullAccess
        && let Some(why) = agent_loop::tools::boundary::sandbox_missing_reason()
    {
        eprintln!(
            "knack: warning: the command sandbox is weaker here ({why}); every command needs approval{}",
            if setup.yolo() {
                " (given by --yolo)"
            } else {
                ", so this headless run refuses them"
            }
        );
    }
    let options = SessionOptions {
        system_message: args
            .system
            .clone()
            .or_else(|| ctx.config.agent.system_message.clone()),
        preload: args.skills.clone(),
        resume: args.resume.clone(),
        max_iterations: args
            .max_iterations
            .unwrap_or(ctx.config.agent.max_iterations),
        review: !args.no_review,
        mode: args
            .mode
            .as_deref()
            .and_then(agent_protocol::ApprovalMode::from_name)
            .unwrap_or_default(),
        context_window: choice.context_window,
        mcp: start_mcp_servers(&ctx).await,
        // Nobody is there to answer: flagged commands are refused unless yolo.
        ..setup.options(choice.model.clone())
    };
    let mut renderer = Renderer::for_terminal(args.json);
    let code = drive(options, choice.client, &prompt, &ctx, &mut renderer).await;
    renderer.finish();
    Ok(code)
}

/// Starts the configured MCP servers before the session (their tools join its
/// frozen list) and says on stderr which ones failed: a headless run has no
/// other place to show it, and the session goes on without their tools.
async fn start_mcp_servers(ctx: &Context) -> Option<Arc<agent_loop::mcp_client::McpHub>> {
    let hub = agent_loop::session::start_mcp_servers(&ctx.home, &ctx.config).await?;
    for status in hub.statuses() {
        if let agent_loop::mcp_client::ServerState::Failed(why) = &status.state {
            eprintln!(
                "knack: warning: MCP server '{}' did not start ({why}); its tools are missing from this session (`knack mcp list` shows every server)",
                status.name
            );
        }
    }
    Some(hub)
}

/// How the one turn of a headless run ended, as its events told.
#[derive(Default)]
struct TurnEnd {
    interrupted: bool,
    /// The turn's error, held back until it is known whether the session is kept.
    error: Option<String>,
}

impl TurnEnd {
    /// Renders `event`, except the turn's error, which [`drive`] reports last;
    /// true when the event ends the turn (nothing of it follows).
    fn observe<O: Write, E: Write>(&mut self, event: Event, renderer: &mut Renderer<O, E>) -> bool {
        match event {
            Event::Error { message } => {
                self.error = Some(message);
                true
            }
            Event::TurnAborted { .. } => {
                self.interrupted = true;
                renderer.render(&event);
                true
            }
            Event::TurnComplete => {
                renderer.render(&event);
                true
            }
            other => {
                renderer.render(&other);
                false
            }
        }
    }
}

/// Runs the one turn through the session's `Op`s, as the TUI does (the session
/// decides what follows an answer: the review, then `turn_complete`), renders
/// every event, and reports how it ended; returns the exit code.
async fn drive<O: Write, E: Write>(
    options: SessionOptions,
    client: Arc<dyn agent_loop::model::ModelClient>,
    prompt: &str,
    ctx: &Context,
    renderer: &mut Renderer<O, E>,
) -> u8 {
    let (events, mut events_rx) = EventSink::channel();
    let resumed = options.resume.is_some();
    let session = match Session::launch(options, client, events.clone()).await {
        Ok(s) => s,
        Err(e) => {
            drop(events);
            while let Ok(event) = events_rx.try_recv() {
                renderer.render(&event);
            }
            renderer.render(&Event::Error {
                message: e.to_string(),
            });
            return exit::FAILED;
        }
    };
    drop(events);
    let SessionHandle {
        ops,
        events: mut rx,
        models,
        mut finished,
        ..
    } = spawn_session(session, events_rx, None);
    drop(models);
    let _ = ops.send(Op::UserTurn {
        text: prompt.to_owned(),
    });
    let interrupt = ops.clone();
    let signal = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            let _ = interrupt.send(Op::Interrupt);
        }
    });
    let mut end = TurnEnd::default();
    let mut redraw = tokio::time::interval(crate::progress::REDRAW_EVERY);
    redraw.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let joined = loop {
        tokio::select! {
            Some(event) = rx.recv() => {
                // The one turn is over (the session already ran what follows
                // an answer), so the session ends and hands itself back.
                if end.observe(event, renderer) {
                    let _ = ops.send(Op::Shutdown);
                }
            }
            joined = &mut finished => break joined,
            _ = redraw.tick(), if renderer.progress.is_some() => renderer.tick(),
        }
    };
    signal.abort();
    while let Ok(event) = rx.try_recv() {
        end.observe(event, renderer);
    }
    let session = match joined {
        Ok(session) => session,
        Err(e) => {
            renderer.render(&Event::Error {
                message: format!("the session stopped unexpectedly: {e}"),
            });
            return exit::FAILED;
        }
    };
    let (code, message) = if end.interrupted {
        (
            INTERRUPTED,
            Some(format!(
                "interrupted; the session {} is saved",
                session.id()
            )),
        )
    } else if let Some(e) = end.error {
        // A run the model never answered leaves nothing worth resuming.
        let answered = session
            .history()
            .iter()
            .any(|m| m.role == agent_loop::model::Role::Assistant);
        let message = if answered || resumed {
            format!("{e} (session {} is saved)", session.id())
        } else {
            match forget(ctx, session.id()) {
                Ok(()) => format!("{e} (no request succeeded, so no session was saved)"),
                Err(why) => {
                    tracing::warn!(error = %why, "could not remove the unanswered session");
                    format!("{e} (session {} is saved)", session.id())
                }
            }
        };
        (exit::FAILED, Some(message))
    } else {
        (exit::OK, None)
    };
    if let Some(message) = message {
        renderer.render(&Event::Error { message });
    }
    code
}

fn forget(ctx: &Context, id: &str) -> agent_loop::Result<()> {
    agent_loop::SessionStore::open(&ctx.home)?.delete(id)
}

/// Turns events into output: JSON lines, or the answer on `out` and progress
/// on `err`. With `stream` the answer is written as it arrives (a person is
/// watching); without it only the final message, once the turn is done.
struct Renderer<O: Write, E: Write> {
    json: bool,
    stream: bool,
    color: bool,
    out: O,
    err: E,
    /// The self-overwriting status line, when stderr is a terminal.
    progress: Option<crate::progress::Progress>,
    /// The status line now on screen (cleared before anything else is printed).
    progress_shown: Option<String>,
    /// The terminal's width, for keeping the status line on one row.
    width: fn() -> usize,
    /// The last message, held back until it is known to be the final one.
    answer: Option<String>,
    /// Streaming left the cursor after text without a newline.
    mid_line: bool,
    /// The latest output of each running call, for the reason of a failure.
    outputs: HashMap<String, String>,
}

impl Renderer<std::io::Stdout, std::io::Stderr> {
    fn for_terminal(json: bool) -> Self {
        let stream = !json && std::io::stdout().is_terminal();
        // Only a person at a terminal that understands the erase sequence
        // gets the status line; logs and pipes never see its bytes.
        let dumb = std::env::var_os("TERM").is_some_and(|term| term == "dumb");
        let progress = (!json && !dumb && std::io::stderr().is_terminal())
            .then(|| crate::progress::Progress::new(std::time::Instant::now(), stream));
        Self {
            json,
            stream,
            color: crate::output::stderr_color_enabled(),
            out: std::io::stdout(),
            err: std::io::stderr(),
            progress,
            progress_shown: None,
            width: terminal_width,
            answer: None,
            mid_line: false,
            outputs: HashMap::new(),
        }
    }
}

/// The width of the terminal, or a safe guess when it cannot be read (or a
/// pseudo-terminal reports none).
fn terminal_width() -> usize {
    match crossterm::terminal::size() {
        Ok((columns, _)) if columns > 0 => usize::from(columns),
        _ => 80,
    }
}

/// Back to the start of the row, and erase it.
const ERASE_LINE: &str = "\r\x1b[2K";

impl<O: Write, E: Write> Renderer<O, E> {
    /// Moves the spinner and redraws the status line (the timer's tick).
    fn tick(&mut self) {
        if let Some(progress) = &mut self.progress {
            progress.tick();
        }
        self.draw_progress();
    }

    /// Puts the status line on screen, replacing the one there; nothing
    /// while streamed text has left the cursor mid-line.
    fn draw_progress(&mut self) {
        let Some(progress) = &self.progress else {
            return;
        };
        // One column short of the edge: a full row would wrap on some terminals.
        let width = (self.width)().saturating_sub(1);
        let line = match progress.line(std::time::Instant::now(), width) {
            Some(line) if !self.mid_line => line,
            _ => return self.clear_progress(),
        };
        if self.progress_shown.as_ref() == Some(&line) {
            return;
        }
        let _ = if self.color {
            write!(self.err, "{ERASE_LINE}\x1b[2m{line}\x1b[0m")
        } else {
            write!(self.err, "{ERASE_LINE}{line}")
        };
        let _ = self.err.flush();
        self.progress_shown = Some(line);
    }

    /// Erases the status line, so what is printed next starts on a clean row.
    fn clear_progress(&mut self) {
        if self.progress_shown.take().is_some() {
            let _ = write!(self.err, "{ERASE_LINE}");
            let _ = self.err.flush();
        }
    }

    fn note(&mut self, text: &str) {
        // Text taken out of a tool's JSON reply is decoded here, so escape it again.
        let text = crate::terminal_text::escape(text);
        self.clear_progress();
        self.end_line();
        let _ = if self.color {
            writeln!(self.err, "\x1b[2m{text}\x1b[0m")
        } else {
            writeln!(self.err, "{text}")
        };
        let _ = self.err.flush();
    }

    /// Puts the cursor on a fresh line after streamed text, so progress on
    /// stderr does not continue the answer's line.
    fn end_line(&mut self) {
        if self.mid_line {
            let _ = writeln!(self.out);
            let _ = self.out.flush();
            self.mid_line = false;
        }
    }

    fn render(&mut self, event: &Event) {
        if self.json {
            if let Ok(line) = event.to_json_line() {
                let _ = writeln!(self.out, "{line}");
                let _ = self.out.flush();
            }
            return;
        }
        // Model and tool text never reaches the terminal with its control sequences.
        let event = crate::terminal_text::escape_event(event);
        if let Some(progress) = &mut self.progress {
            progress.observe(&event, std::time::Instant::now());
        }
        self.print(&event);
        self.draw_progress();
    }

    fn print(&mut self, event: &Event) {
        match event {
            Event::SessionStarted { session_id, model } => {
                self.note(&format!("session {session_id} · {model}"))
            }
            Event::SkillLoaded { name, .. } => self.note(&format!("skill loaded: {name}")),
            Event::Compaction {
                before_tokens,
                after_tokens,
            } => self.note(&format!(
                "history compacted to fit the context window: about {before_tokens} → {after_tokens} tokens"
            )),
            Event::AssistantDelta { text } if self.stream => {
                self.clear_progress();
                let _ = write!(self.out, "{text}");
                let _ = self.out.flush();
                self.mid_line = !text.ends_with('\n');
            }
            Event::ToolCallBegin {
                name, arguments, ..
            } => {
                let args = crate::output::ellipsize(&arguments.to_string(), 100);
                self.note(&format!("→ {name} {args}"));
            }
            Event::ToolCallOutput { call_id, output } => {
                self.outputs.insert(call_id.clone(), output.clone());
            }
            Event::ToolCallEnd {
                call_id,
                name,
                success,
                duration_ms,
            } => {
                let output = self.outputs.remove(call_id);
                if *success {
                    self.note(&format!("✓ {name} ({duration_ms} ms)"));
                } else {
                    let reason = output.as_deref().map(failure_reason).unwrap_or_default();
                    if reason.is_empty() {
                        self.note(&format!("✗ {name} ({duration_ms} ms)"));
                    } else {
                        self.note(&format!("✗ {name} ({duration_ms} ms): {reason}"));
                    }
                }
            }
            Event::Retry {
                attempt,
                delay_ms,
                reason,
            } => {
                let void = if self.mid_line {
                    " (the partial answer above is void)"
                } else {
                    ""
                };
                self.note(&format!("retry {attempt} in {delay_ms} ms: {reason}{void}"));
            }
            Event::CatalogNote { added, removed } => self.note(&format!(
                "skills changed: +{} -{}",
                added.join(","),
                removed.join(",")
            )),
            // Already on screen as it streamed; only the line needs closing.
            Event::AssistantMessage { .. } if self.stream => self.end_line(),
            Event::AssistantMessage { text } => {
                // Text between tool calls is progress; only the last message is the answer.
                if let Some(previous) = self.answer.replace(text.clone())
                    && !previous.trim().is_empty()
                {
                    self.note(&previous);
                }
            }
            Event::TurnComplete | Event::ReviewStarted => self.flush_answer(),
            Event::ReviewFinished { summary } => self.note(summary),
            Event::ReviewUsage {
                requests,
                prompt_tokens,
                completion_tokens,
                cost_usd,
                ..
            } => self.note(&review_usage_line(
                *requests,
                *prompt_tokens,
                *completion_tokens,
                *cost_usd,
            )),
            Event::SkillWritten {
                action,
                name,
                actor,
            } => self.note(&format!("{actor:?} {action} skill {name}").to_lowercase()),
            Event::Error { message } => {
                self.flush_answer();
                self.clear_progress();
                self.end_line();
                let _ = writeln!(self.err, "knack: {message}");
                let _ = self.err.flush();
            }
            Event::TurnAborted { .. } => self.note("interrupted"),
            Event::AutoApproved { rule, .. } => self.note(&format!("allowed by rule {rule}")),
            Event::FileDiff { path, diff, .. } => {
                let (added, removed) = agent_loop::edit_diff::stat(diff);
                self.note(&format!("edited {path} (+{added} -{removed})"));
            }
            Event::ApprovalRequest {
                command, reason, ..
            } => self.note(&format!(
                "refused to run `{command}` ({reason}); rerun with --yolo to allow it"
            )),
            // Thinking is not part of the answer; text mode shows only the answer.
            Event::AssistantDelta { .. } | Event::ReasoningDelta { .. } | Event::Usage { .. } => {}
        }
    }

    fn flush_answer(&mut self) {
        if let Some(answer) = self.answer.take() {
            self.clear_progress();
            let _ = writeln!(self.out, "{}", answer.trim_end());
            let _ = self.out.flush();
        }
    }

    fn finish(&mut self) {
        self.flush_answer();
        self.clear_progress();
        self.end_line();
    }
}

/// One line on what the review cost, for the text output.
fn review_usage_line(requests: u32, prompt: u64, completion: u64, cost_usd: Option<f64>) -> String {
    let plural = if requests == 1 { "" } else { "s" };
    let mut line = format!(
        "review used {prompt} input and {completion} output tokens in {requests} request{plural}"
    );
    if let Some(cost) = cost_usd {
        line.push_str(&format!(" (${cost:.4})"));
    }
    line
}

/// One line saying why a tool call failed: the `error` of its JSON result,
/// else the first line of what it returned.
fn failure_reason(output: &str) -> String {
    let reason = serde_json::from_str::<serde_json::Value>(output)
        .ok()
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
        .unwrap_or_else(|| output.lines().next().unwrap_or_default().to_owned());
    crate::output::ellipsize(reason.trim(), 200)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn renderer(stream: bool) -> Renderer<Vec<u8>, Vec<u8>> {
        Renderer {
            json: false,
            stream,
            color: false,
            out: Vec::new(),
            err: Vec::new(),
            progress: None,
            progress_shown: None,
            width: || 80,
            answer: None,
            mid_line: false,
            outputs: HashMap::new(),
        }
    }

    fn text(bytes: &[u8]) -> String {
        String::from_utf8_lossy(bytes).into_owned()
    }

    fn delta(text: &str) -> Event {
        Event::AssistantDelta { text: text.into() }
    }

    #[test]
    fn on_a_terminal_the_answer_appears_as_it_streams() {
        let mut r = renderer(true);
        r.render(&delta("Hel"));
        assert_eq!(text(&r.out), "Hel", "written before the answer is complete");
        r.render(&delta("lo"));
        r.render(&Event::AssistantMessage {
            text: "Hello".into(),
        });
        r.render(&Event::TurnComplete);
        r.finish();
        assert_eq!(text(&r.out), "Hello\n", "printed once, with its newline");
    }

    #[test]
    fn progress_starts_on_a_fresh_line_after_streamed_text() {
        let mut r = renderer(true);
        r.render(&delta("Let me look"));
        r.render(&Event::Retry {
            attempt: 1,
            delay_ms: 10,
            reason: "stream cut".into(),
        });
        assert_eq!(text(&r.out), "Let me look\n");
        assert!(text(&r.err).contains("partial answer above is void"));
    }

    #[test]
    fn piped_output_is_only_the_final_answer() {
        let mut r = renderer(false);
        r.render(&delta("Hel"));
        assert_eq!(text(&r.out), "");
        r.render(&Event::AssistantMessage {
            text: "Hello".into(),
        });
        r.render(&Event::TurnComplete);
        r.finish();
        assert_eq!(text(&r.out), "Hello\n");
    }

    fn with_progress(stream: bool) -> Renderer<Vec<u8>, Vec<u8>> {
        let mut r = renderer(stream);
        r.progress = Some(crate::progress::Progress::new(
            std::time::Instant::now(),
            stream,
        ));
        r
    }

    #[test]
    fn the_status_line_is_erased_before_anything_else_is_printed() {
        let mut r = with_progress(false);
        r.render(&Event::SessionStarted {
            session_id: "s1".into(),
            model: "m".into(),
        });
        let err = text(&r.err);
        let (note, status) = err.split_once(ERASE_LINE).unwrap();
        assert_eq!(
            note, "session s1 · m\n",
            "the note comes first, on its own line"
        );
        assert!(status.contains("waiting for the model"), "{status:?}");

        r.err.clear();
        r.render(&Event::tool_call_begin("c1", "terminal", "{}"));
        let err = text(&r.err);
        assert!(
            err.starts_with(&format!("{ERASE_LINE}→ terminal {{}}\n{ERASE_LINE}")),
            "the old line is erased, the note printed, the new line drawn: {err:?}"
        );
        assert!(err.contains("running terminal"), "{err:?}");

        r.err.clear();
        r.render(&Event::AssistantMessage {
            text: "done".into(),
        });
        r.render(&Event::TurnComplete);
        r.finish();
        assert_eq!(text(&r.out), "done\n");
        assert!(
            text(&r.err).ends_with(ERASE_LINE),
            "nothing is left on screen at the end: {:?}",
            text(&r.err)
        );
        assert_eq!(r.progress_shown, None);
    }

    #[test]
    fn streamed_text_is_never_interrupted_by_the_status_line() {
        let mut r = with_progress(true);
        r.render(&Event::SessionStarted {
            session_id: "s1".into(),
            model: "m".into(),
        });
        assert!(r.progress_shown.is_some());
        r.render(&delta("Hel"));
        r.tick();
        r.render(&delta("lo"));
        assert_eq!(text(&r.out), "Hello");
        assert_eq!(r.progress_shown, None, "no line while the answer streams");
        let err = text(&r.err);
        assert!(err.ends_with(ERASE_LINE), "{err:?}");
    }

    #[test]
    fn a_failed_tool_says_why() {
        let mut r = renderer(false);
        r.render(&Event::ToolCallOutput {
            call_id: "c1".into(),
            output: r#"{"success": false, "error": "the command needs approval"}"#.into(),
        });
        r.render(&Event::ToolCallEnd {
            call_id: "c1".into(),
            name: "terminal".into(),
            success: false,
            duration_ms: 11,
        });
        assert_eq!(
            text(&r.err),
            "✗ terminal (11 ms): the command needs approval\n"
        );
    }
}
