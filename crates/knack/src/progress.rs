//! The progress line `knack run` keeps on stderr while a person waits: a
//! spinner, what is happening (waiting for the model, running a tool, waiting
//! to retry) and for how long. This module only decides the text, from the
//! session's events and the clock it is handed; the runner draws it, clears it
//! before anything else is printed, and redraws it on a timer.

use std::time::{Duration, Instant};

use agent_protocol::Event;

/// How often the runner redraws the line: often enough for the spinner to
/// look alive, rarely enough to cost nothing.
pub const REDRAW_EVERY: Duration = Duration::from_millis(125);

const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// What the run is doing now, as far as the events tell.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Activity {
    /// Before the session has said it started (MCP servers, the prompt).
    Starting,
    /// A request is out and nothing of its reply has arrived yet.
    Waiting,
    /// The model streams its reasoning.
    Thinking,
    /// The model streams its answer.
    Answering,
    /// A tool call is running.
    Tool(String),
    /// A request failed and is sent again at `until`.
    Retrying { attempt: u32, until: Instant },
    /// The turn (and the review) ended: nothing to show.
    Done,
}

/// Events in, one line of text out. Pure: the clock is a parameter.
#[derive(Debug, Clone)]
pub struct Progress {
    activity: Activity,
    since: Instant,
    frame: usize,
    /// The self-improvement review is running (its requests are not the answer).
    reviewing: bool,
    /// The answer streams to the same terminal: it is its own progress, and
    /// a line drawn meanwhile would land in the middle of it.
    quiet_while_answering: bool,
}

impl Progress {
    pub fn new(now: Instant, quiet_while_answering: bool) -> Self {
        Self {
            activity: Activity::Starting,
            since: now,
            frame: 0,
            reviewing: false,
            quiet_while_answering,
        }
    }

    /// Takes one session event.
    pub fn observe(&mut self, event: &Event, now: Instant) {
        let next = match event {
            Event::SessionStarted { .. } | Event::ToolCallEnd { .. } => Activity::Waiting,
            Event::AssistantMessage { .. } => Activity::Waiting,
            Event::ReviewStarted => {
                self.reviewing = true;
                Activity::Waiting
            }
            Event::AssistantDelta { .. } => Activity::Answering,
            Event::ReasoningDelta { .. } => Activity::Thinking,
            Event::ToolCallBegin { name, .. } => Activity::Tool(name.clone()),
            Event::Retry {
                attempt, delay_ms, ..
            } => Activity::Retrying {
                attempt: *attempt,
                until: now + Duration::from_millis(*delay_ms),
            },
            Event::ReviewFinished { .. }
            | Event::TurnComplete
            | Event::Error { .. }
            | Event::TurnAborted { .. } => Activity::Done,
            Event::SkillLoaded { .. }
            | Event::ToolCallOutput { .. }
            | Event::Usage { .. }
            | Event::CatalogNote { .. }
            | Event::Compaction { .. }
            | Event::ApprovalRequest { .. }
            | Event::AutoApproved { .. }
            | Event::FileDiff { .. }
            | Event::SkillWritten { .. }
            | Event::ReviewUsage { .. } => return,
        };
        if next != self.activity {
            self.activity = next;
            self.since = now;
        }
    }

    /// Moves the spinner on by one frame.
    pub fn tick(&mut self) {
        self.frame = (self.frame + 1) % SPINNER.len();
    }

    /// The line to show at `now`, at most `width` characters; `None` when
    /// nothing should be on screen.
    pub fn line(&self, now: Instant, width: usize) -> Option<String> {
        let elapsed = format_secs(now.saturating_duration_since(self.since));
        let doing = match &self.activity {
            Activity::Done => return None,
            Activity::Answering if self.quiet_while_answering => return None,
            Activity::Starting => "starting".to_owned(),
            Activity::Waiting => format!("waiting for the model · {elapsed}"),
            Activity::Thinking => format!("the model is thinking · {elapsed}"),
            Activity::Answering => format!("receiving the answer · {elapsed}"),
            Activity::Tool(name) => format!("running {name} · {elapsed}"),
            Activity::Retrying { attempt, until } if now < *until => {
                let left = until.saturating_duration_since(now);
                format!(
                    "retry {attempt} in {}",
                    format_secs(left + Duration::from_millis(999))
                )
            }
            Activity::Retrying { attempt, .. } => {
                format!("waiting for the model (retry {attempt}) · {elapsed}")
            }
        };
        let prefix = if self.reviewing { "review: " } else { "" };
        let text = format!("{} {prefix}{doing}", SPINNER[self.frame]);
        Some(crate::output::ellipsize(&text, width.max(8)))
    }
}

/// `7s`, `2m 05s`: whole seconds, rounded down.
fn format_secs(duration: Duration) -> String {
    let secs = duration.as_secs();
    if secs < 60 {
        format!("{secs}s")
    } else {
        format!("{}m {:02}s", secs / 60, secs % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(start: Instant, secs: u64) -> Instant {
        start + Duration::from_secs(secs)
    }

    fn started(quiet: bool) -> (Progress, Instant) {
        let t0 = Instant::now();
        let mut p = Progress::new(t0, quiet);
        p.observe(
            &Event::SessionStarted {
                session_id: "s".into(),
                model: "m".into(),
            },
            t0,
        );
        (p, t0)
    }

    #[test]
    fn waiting_counts_the_seconds_since_the_request() {
        let (p, t0) = started(false);
        assert_eq!(
            p.line(at(t0, 12), 80).unwrap(),
            "⠋ waiting for the model · 12s"
        );
        assert_eq!(
            p.line(at(t0, 125), 80).unwrap(),
            "⠋ waiting for the model · 2m 05s"
        );
    }

    #[test]
    fn a_tool_call_names_the_tool_and_restarts_the_clock() {
        let (mut p, t0) = started(false);
        p.observe(&Event::tool_call_begin("c1", "terminal", "{}"), at(t0, 5));
        assert_eq!(p.line(at(t0, 8), 80).unwrap(), "⠋ running terminal · 3s");
        p.observe(
            &Event::ToolCallEnd {
                call_id: "c1".into(),
                name: "terminal".into(),
                success: true,
                duration_ms: 3000,
            },
            at(t0, 8),
        );
        assert_eq!(
            p.line(at(t0, 9), 80).unwrap(),
            "⠋ waiting for the model · 1s"
        );
    }

    #[test]
    fn a_retry_counts_down_then_waits_again() {
        let (mut p, t0) = started(false);
        p.observe(
            &Event::Retry {
                attempt: 2,
                delay_ms: 4_000,
                reason: "server error (503)".into(),
            },
            at(t0, 10),
        );
        assert_eq!(p.line(at(t0, 10), 80).unwrap(), "⠋ retry 2 in 4s");
        assert_eq!(p.line(at(t0, 13), 80).unwrap(), "⠋ retry 2 in 1s");
        assert_eq!(
            p.line(at(t0, 16), 80).unwrap(),
            "⠋ waiting for the model (retry 2) · 6s"
        );
    }

    #[test]
    fn streamed_text_hides_the_line_only_when_it_shares_the_terminal() {
        let delta = Event::AssistantDelta { text: "Hi".into() };
        let (mut quiet, t0) = started(true);
        quiet.observe(&delta, at(t0, 1));
        assert_eq!(quiet.line(at(t0, 2), 80), None);
        let (mut piped, t0) = started(false);
        piped.observe(&delta, at(t0, 1));
        assert_eq!(
            piped.line(at(t0, 2), 80).unwrap(),
            "⠋ receiving the answer · 1s"
        );
        // More text keeps the clock of the first piece.
        piped.observe(&delta, at(t0, 2));
        assert_eq!(
            piped.line(at(t0, 3), 80).unwrap(),
            "⠋ receiving the answer · 2s"
        );
    }

    #[test]
    fn the_review_is_labelled_and_the_end_clears_the_line() {
        let (mut p, t0) = started(false);
        p.observe(&Event::ReviewStarted, t0);
        assert_eq!(
            p.line(t0, 80).unwrap(),
            "⠋ review: waiting for the model · 0s"
        );
        p.observe(
            &Event::ReviewFinished {
                summary: "review: nothing to save".into(),
            },
            t0,
        );
        assert_eq!(p.line(t0, 80), None);
        let (mut failed, t0) = started(false);
        failed.observe(
            &Event::Error {
                message: "boom".into(),
            },
            t0,
        );
        assert_eq!(failed.line(t0, 80), None);
    }

    #[test]
    fn the_spinner_turns_and_the_line_fits_the_width() {
        let (mut p, t0) = started(false);
        p.tick();
        assert!(p.line(t0, 80).unwrap().starts_with('⠙'));
        for _ in 0..SPINNER.len() - 1 {
            p.tick();
        }
        assert!(p.line(t0, 80).unwrap().starts_with('⠋'), "it wraps around");
        p.observe(
            &Event::tool_call_begin("c1", "mcp__server__a_tool_with_a_long_name", "{}"),
            t0,
        );
        let line = p.line(t0, 20).unwrap();
        assert_eq!(line.chars().count(), 20);
        assert!(line.ends_with('…'), "{line}");
    }
}
