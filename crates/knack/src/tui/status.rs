//! The status line: model, session id, token counts, the share of prompt
//! tokens served from the server's cache, and what the agent is doing.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::connection::SessionInfo;
use super::theme::Theme;
use super::transcript::SPINNER;
use super::wrap::truncate;

/// Token counts summed over every `usage` event of the session.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TokenTotals {
    pub prompt: u64,
    pub completion: u64,
    pub cached: u64,
    /// Millionths of a USD, summed from `cost_usd` (integers keep the sum exact).
    pub cost_micro_usd: u64,
    /// The prompt tokens of the latest request: how full the context is.
    pub last_prompt: u64,
    /// The part of `prompt + completion` the self-improvement reviews used
    /// (from their `review_usage` events).
    pub review: u64,
}

impl TokenTotals {
    pub fn add(&mut self, prompt: u64, completion: u64, cached: u64) {
        self.last_prompt = prompt;
        self.prompt += prompt;
        self.completion += completion;
        self.cached += cached;
    }

    /// Adds a request's cost, when the provider's prices are configured.
    pub fn add_cost(&mut self, cost_usd: Option<f64>) {
        if let Some(cost) = cost_usd.filter(|c| c.is_finite() && *c > 0.0) {
            self.cost_micro_usd += (cost * 1_000_000.0).round() as u64;
        }
    }

    /// The totals stored for a session's earlier requests, so a resumed
    /// session counts on from them instead of from zero.
    pub fn from_stored(stored: &agent_loop::UsageTotals) -> Self {
        let cost = stored.cost_usd.filter(|c| c.is_finite() && *c > 0.0);
        Self {
            prompt: stored.fresh_input_tokens
                + stored.cache_read_tokens
                + stored.cache_write_tokens,
            completion: stored.output_tokens,
            cached: stored.cache_read_tokens,
            cost_micro_usd: cost.map_or(0, |c| (c * 1_000_000.0).round() as u64),
            last_prompt: 0,
            ..Self::default()
        }
    }

    /// Adds what one review used (its requests are already in the totals).
    pub fn add_review(&mut self, prompt: u64, completion: u64) {
        self.review += prompt + completion;
    }

    /// The reviews' share of every token the session used, in whole percent
    /// (at least 1 when they used any).
    pub fn review_percent(&self) -> Option<u64> {
        let all = self.prompt + self.completion;
        (self.review > 0 && all > 0).then(|| (self.review.min(all) * 100 / all).max(1))
    }

    /// How full the context window is after the latest request, in percent.
    pub fn context_percent(&self, window: u64) -> Option<u64> {
        (window > 0 && self.last_prompt > 0).then(|| self.last_prompt * 100 / window)
    }

    /// Cached prompt tokens as a whole percentage of all prompt tokens.
    pub fn cache_percent(&self) -> Option<u64> {
        (self.prompt > 0)
            .then(|| (self.cached.min(self.prompt) * 100 + self.prompt / 2) / self.prompt)
    }
}

pub fn compact(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1_000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// What the status line reports on its right side.
pub struct Activity<'a> {
    pub turn_running: bool,
    /// The model's thinking is streaming (before its answer or a tool call).
    pub thinking: bool,
    pub review_running: bool,
    pub hint: Option<&'a str>,
    pub tick: usize,
    /// Shown when it is not the default (auto-edits), and never dropped for room.
    pub mode: agent_protocol::ApprovalMode,
}

pub fn render(
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    info: &SessionInfo,
    tokens: &TokenTotals,
    activity: &Activity<'_>,
) {
    // (text, drop order): narrow terminals lose the highest numbers first.
    let mut segments: Vec<(String, u8)> = Vec::new();
    match activity.mode {
        agent_protocol::ApprovalMode::AutoEdits => {}
        agent_protocol::ApprovalMode::AskEdits => segments.push(("⏸ ask-edits".to_owned(), 0)),
        agent_protocol::ApprovalMode::Plan => segments.push(("⏸ plan mode".to_owned(), 0)),
    }
    segments.extend([
        (info.model.clone(), 0),
        // The whole id: its last part tells sessions of the same second
        // apart, and it is what `--resume` and `/resume` take.
        (format!("session {}", truncate(&info.session_id, 40)), 3),
        (
            format!(
                "{} in / {} out",
                compact(tokens.prompt),
                compact(tokens.completion)
            ),
            1,
        ),
    ]);
    if let Some(p) = tokens.context_percent(info.context_window) {
        segments.push((format!("context {p}%"), 2));
    }
    if let Some(p) = tokens.cache_percent() {
        segments.push((format!("cache {p}%"), 2));
    }
    if let Some(p) = tokens.review_percent() {
        segments.push((format!("review {p}%"), 2));
    }
    if tokens.cost_micro_usd > 0 {
        segments.push((
            format!("${:.4}", tokens.cost_micro_usd as f64 / 1_000_000.0),
            2,
        ));
    }
    let spin = SPINNER[activity.tick % SPINNER.len()];
    let right = if let Some(hint) = activity.hint {
        Span::styled(format!(" {hint} "), theme.warning())
    } else if activity.turn_running && activity.thinking {
        Span::styled(format!(" {spin} thinking "), theme.warning())
    } else if activity.turn_running {
        Span::styled(format!(" {spin} working "), theme.warning())
    } else if activity.review_running {
        Span::styled(format!(" {spin} reviewing "), theme.accent())
    } else {
        Span::styled(" /help ", theme.dim())
    };
    let room = area.width as usize;
    let width_of = |segs: &[(String, u8)]| -> usize {
        1 + segs.iter().map(|(t, _)| t.chars().count()).sum::<usize>()
            + 3 * segs.len().saturating_sub(1)
    };
    while segments.len() > 1 && width_of(&segments) + right.width() + 1 > room {
        if let Some(worst) = (0..segments.len()).max_by_key(|i| segments[*i].1) {
            segments.remove(worst);
        }
    }
    let mut spans = vec![Span::raw(" ")];
    for (i, (text, _)) in segments.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" │ ", theme.dim()));
        }
        let style = if i == 0 { theme.bold() } else { theme.text() };
        spans.push(Span::styled(text.clone(), style));
    }
    let used: usize = spans.iter().map(Span::width).sum();
    if used + right.width() <= room {
        spans.push(Span::raw(" ".repeat(room - used - right.width())));
        spans.push(right);
    }
    Paragraph::new(Line::from(spans))
        .style(theme.status())
        .render(area, buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_share_and_compact_numbers() {
        let mut t = TokenTotals::default();
        assert_eq!(t.cache_percent(), None);
        t.add(1000, 20, 640);
        t.add(1000, 20, 0);
        assert_eq!(t.cache_percent(), Some(32));
        assert_eq!(compact(999), "999");
        assert_eq!(compact(1234), "1.2k");
        assert_eq!(compact(2_500_000), "2.5M");
    }

    #[test]
    fn the_review_share_counts_both_directions() {
        let mut t = TokenTotals::default();
        assert_eq!(t.review_percent(), None);
        t.add(9_000, 1_000, 0);
        t.add(2_400, 100, 0);
        t.add_review(2_400, 100);
        assert_eq!(t.review_percent(), Some(20));
        let mut tiny = TokenTotals::default();
        tiny.add(100_000, 0, 0);
        tiny.add_review(10, 0);
        assert_eq!(
            tiny.review_percent(),
            Some(1),
            "a review that ran is never shown as 0 %"
        );
    }

    #[test]
    fn the_context_gauge_follows_the_latest_request() {
        let mut t = TokenTotals::default();
        assert_eq!(t.context_percent(8_000), None);
        t.add(2_000, 10, 0);
        t.add(4_000, 10, 0);
        assert_eq!(
            t.context_percent(8_000),
            Some(50),
            "the latest, not the sum"
        );
        assert_eq!(t.context_percent(0), None, "unknown window");

        let info = SessionInfo {
            session_id: "s".into(),
            model: "m".into(),
            context_window: 8_000,
            mcp_servers: Vec::new(),
            mode: agent_protocol::ApprovalMode::default(),
        };
        let area = Rect::new(0, 0, 100, 1);
        let mut buf = Buffer::empty(area);
        let activity = Activity {
            turn_running: false,
            thinking: false,
            review_running: false,
            hint: None,
            tick: 0,
            mode: agent_protocol::ApprovalMode::default(),
        };
        render(area, &mut buf, &Theme::plain(), &info, &t, &activity);
        let line: String = (0..area.width)
            .map(|x| buf[(x, 0)].symbol().to_owned())
            .collect();
        assert!(line.contains("context 50%"), "{line}");
    }
}
