//! `knack run`: one task, headless. The final answer goes to stdout and
//! progress to stderr; `--json` prints the session's events as JSON lines
//! instead. The self-improvement review runs after the answer, before exit.

use std::io::{IsTerminal, Read, Write};
use std::sync::Arc;

use agent_loop::session::{EventSink, Session, SessionOptions, TurnOutcome};
use agent_loop::{Approver, AutoApprove, AutoDeny};
use agent_protocol::Event;
use prompt_builder::Platform;
use tokio_util::sync::CancellationToken;

use crate::cli::RunArgs;
use crate::context::Context;
use crate::exit;

/// Exit code for a run stopped by Ctrl-C (CONTRACT.md).
const INTERRUPTED: u8 = 130;

pub fn run(args: RunArgs) -> anyhow::Result<u8> {
    let ctx = Context::load()?;
    let prompt = read_prompt(args.prompt.as_deref())?;
    let flags = args.model.clone();
    let choice = super::model::resolve(&ctx, &flags)?;
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

async fn run_async(
    ctx: Context,
    args: RunArgs,
    prompt: String,
    choice: super::model::ModelChoice,
) -> anyhow::Result<u8> {
    let (events, mut rx) = EventSink::channel();
    if ctx.config.agent.sandbox != knack_config::SandboxMode::FullAccess
        && let Some(why) = agent_loop::tools::boundary::sandbox_missing_reason()
    {
        eprintln!(
            "knack: warning: the command sandbox is {why}; every command needs approval{}",
            if args.yolo || ctx.config.agent.yolo {
                " (given by --yolo)"
            } else {
                ", so this headless run refuses them"
            }
        );
    }
    let approver: Arc<dyn Approver> = if args.yolo || ctx.config.agent.yolo {
        Arc::new(AutoApprove)
    } else {
        Arc::new(AutoDeny)
    };
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
        approver,
        context_window: choice.context_window,
        ..SessionOptions::new(
            ctx.home.clone(),
            ctx.config.clone(),
            ctx.cwd.clone(),
            Platform::Cli,
            choice.model.clone(),
        )
    };
    let json = args.json;
    let printer = tokio::spawn(async move {
        let mut renderer = Renderer::new(json);
        while let Some(event) = rx.recv().await {
            renderer.render(&event);
        }
        renderer
    });

    let code = drive(options, choice.client, events, &prompt, &ctx).await;
    let mut renderer = printer.await?;
    renderer.finish();
    Ok(code)
}

/// Runs the session to its end and emits the closing event; returns the exit code.
async fn drive(
    options: SessionOptions,
    client: Arc<dyn agent_loop::model::ModelClient>,
    events: EventSink,
    prompt: &str,
    ctx: &Context,
) -> u8 {
    let review_timeout = std::time::Duration::from_secs(ctx.config.agent.review_timeout_secs);
    let mut session = match Session::launch(options, client, events.clone()).await {
        Ok(s) => s,
        Err(e) => {
            events.send(Event::Error {
                message: e.to_string(),
            });
            return exit::FAILED;
        }
    };
    let cancel = CancellationToken::new();
    let on_signal = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_signal.cancel();
        }
    });
    let code = match session.run_turn(prompt, cancel.clone()).await {
        Ok(TurnOutcome::Answered(_)) => {
            if session.review_due() && !cancel.is_cancelled() {
                let review = session.run_review(cancel.clone());
                if tokio::time::timeout(review_timeout, review).await.is_err() {
                    events.send(Event::ReviewFinished {
                        summary: format!(
                            "review: stopped after {}s (agent.review_timeout_secs)",
                            review_timeout.as_secs()
                        ),
                    });
                }
            }
            events.send(Event::TurnComplete);
            exit::OK
        }
        Ok(TurnOutcome::Interrupted) => {
            events.send(Event::Error {
                message: format!("interrupted; the session {} is saved", session.id()),
            });
            INTERRUPTED
        }
        Err(e) => {
            events.send(Event::Error {
                message: format!("{e} (session {} is saved)", session.id()),
            });
            exit::FAILED
        }
    };
    drop(session);
    drop(events);
    code
}

/// Turns events into output: JSON lines, or the answer on stdout and
/// progress on stderr.
struct Renderer {
    json: bool,
    answer: Option<String>,
    color: bool,
}

impl Renderer {
    fn new(json: bool) -> Self {
        Self {
            json,
            answer: None,
            color: crate::output::color_enabled() && std::io::stderr().is_terminal(),
        }
    }

    fn note(&self, text: &str) {
        if self.color {
            eprintln!("\x1b[2m{text}\x1b[0m");
        } else {
            eprintln!("{text}");
        }
    }

    fn render(&mut self, event: &Event) {
        if self.json {
            if let Ok(line) = event.to_json_line() {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
            return;
        }
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
            Event::ToolCallBegin {
                name, arguments, ..
            } => {
                let args = crate::output::ellipsize(&arguments.to_string(), 100);
                self.note(&format!("→ {name} {args}"));
            }
            Event::ToolCallEnd {
                name,
                success,
                duration_ms,
                ..
            } => {
                let mark = if *success { "✓" } else { "✗" };
                self.note(&format!("{mark} {name} ({duration_ms} ms)"));
            }
            Event::Retry {
                attempt,
                delay_ms,
                reason,
            } => self.note(&format!("retry {attempt} in {delay_ms} ms: {reason}")),
            Event::CatalogNote { added, removed } => self.note(&format!(
                "skills changed: +{} -{}",
                added.join(","),
                removed.join(",")
            )),
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
            Event::SkillWritten {
                action,
                name,
                actor,
            } => self.note(&format!("{actor:?} {action} skill {name}").to_lowercase()),
            Event::Error { message } => {
                self.flush_answer();
                eprintln!("knack: {message}");
            }
            Event::TurnAborted { .. } => self.note("interrupted"),
            Event::ApprovalRequest {
                command, reason, ..
            } => self.note(&format!(
                "refused to run `{command}` ({reason}); rerun with --yolo to allow it"
            )),
            // Thinking is not part of the answer; text mode shows only the answer.
            Event::AssistantDelta { .. }
            | Event::ReasoningDelta { .. }
            | Event::ToolCallOutput { .. }
            | Event::Usage { .. } => {}
        }
    }

    fn flush_answer(&mut self) {
        if let Some(answer) = self.answer.take() {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", answer.trim_end());
            let _ = out.flush();
        }
    }

    fn finish(&mut self) {
        self.flush_answer();
    }
}
