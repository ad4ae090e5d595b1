//! The turn loop's own cost per model request, with a 200-message history and a
//! client that answers from memory; printed as `BENCH` lines for `cargo xtask bench agent`.

use std::fs;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agent_loop::model::{
    ChatRequest, Completion, ModelClient, ModelFuture, Role, StreamUpdate, ToolCall, UpdateSink,
    Usage,
};
use agent_loop::session::{EventSink, Session, SessionOptions, TurnOutcome};
use knack_config::{Config, KnackHome};
use prompt_builder::Platform;
use test_support::print_bench;
use tokio_util::sync::CancellationToken;

const ANSWER: &str = "The skills list shows what is available here. The deploy skill covers \
rolling out a new version: build the image, push it, apply the manifest and watch the rollout \
until every replica reports ready. Nothing else needs doing for this question.";
/// Every turn adds four messages: the user's, a tool call, its result, the answer.
const MESSAGES_PER_TURN: usize = 4;
const HISTORY: usize = 200;
const SESSIONS: usize = 12;
const TIMED_TURNS: usize = 5;

/// A model that calls `skills_list` once after each user message, then answers.
struct InstantModel {
    /// Also encode the request as JSON, as the HTTP client would before sending.
    encode: bool,
    requests: AtomicUsize,
}

impl ModelClient for InstantModel {
    fn stream_chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_update: UpdateSink<'a>,
    ) -> ModelFuture<'a> {
        Box::pin(async move {
            let n = self.requests.fetch_add(1, Ordering::Relaxed);
            if self.encode {
                let body = serde_json::to_vec(&request.messages).unwrap();
                std::hint::black_box(body);
            }
            let usage = Some(Usage {
                prompt_tokens: 1000,
                completion_tokens: 20,
                cached_tokens: Some(900),
                ..Usage::default()
            });
            let after_user = request
                .messages
                .last()
                .is_some_and(|m| m.role == Role::User);
            if after_user {
                return Ok(Completion {
                    content: String::new(),
                    tool_calls: vec![ToolCall::function(format!("call-{n}"), "skills_list", "{}")],
                    usage,
                    finish_reason: Some("tool_calls".into()),
                    reasoning: Vec::new(),
                });
            }
            on_update(StreamUpdate::TextDelta(ANSWER.into()));
            Ok(Completion {
                content: ANSWER.into(),
                tool_calls: Vec::new(),
                usage,
                finish_reason: Some("stop".into()),
                reasoning: Vec::new(),
            })
        })
    }
}

fn write_skills(home: &std::path::Path) {
    for i in 0..20 {
        let dir = home
            .join("skills")
            .join(format!("ops-{}", i % 4))
            .join(format!("task-{i}"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: task-{i}\ndescription: Use when task {i} comes up\n---\n# Task {i}\n\nStep one.\n"),
        )
        .unwrap();
    }
}

/// Per-request times of `TIMED_TURNS` turns in each of `SESSIONS` sessions,
/// each timed once its history holds `HISTORY` messages.
async fn iteration_times(encode: bool) -> Vec<Duration> {
    let mut samples = Vec::new();
    for _ in 0..SESSIONS {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        write_skills(&home);
        let cwd = dir.path().join("work");
        fs::create_dir_all(&cwd).unwrap();
        let model = Arc::new(InstantModel {
            encode,
            requests: AtomicUsize::new(0),
        });
        let (events, mut rx) = EventSink::channel();
        let options = SessionOptions {
            max_iterations: 10,
            review: false,
            ..SessionOptions::new(
                KnackHome::at(&home),
                Config::default(),
                cwd,
                Platform::Cli,
                "instant",
            )
        };
        let mut session = Session::start(options, model.clone(), events).unwrap();
        let mut turn = 0;
        while session.history().len() < HISTORY {
            run_turn(&mut session, turn).await;
            turn += 1;
        }
        assert_eq!(session.history().len(), HISTORY);
        for _ in 0..TIMED_TURNS {
            while rx.try_recv().is_ok() {}
            let before = model.requests.load(Ordering::Relaxed);
            let start = Instant::now();
            run_turn(&mut session, turn).await;
            let took = start.elapsed();
            let requests = model.requests.load(Ordering::Relaxed) - before;
            assert_eq!(requests, 2);
            samples.push(took / requests as u32);
            turn += 1;
        }
        assert_eq!(
            session.history().len(),
            HISTORY + TIMED_TURNS * MESSAGES_PER_TURN
        );
    }
    samples
}

async fn run_turn(session: &mut Session, turn: usize) {
    let text = format!("question {turn}: which skill covers rolling out a new version?");
    let outcome = session
        .run_turn(&text, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome, TurnOutcome::Answered(ANSWER.into()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement: run in release via `cargo xtask bench agent`"]
async fn bench_loop_iteration_200_messages() {
    print_bench("loop_iteration", iteration_times(false).await);
    print_bench("loop_iteration_encoded", iteration_times(true).await);
}
