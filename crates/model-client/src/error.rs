//! The agent core's error type; its messages are written for the person at the terminal.
//! Whether a failure is worth retrying is decided in one exhaustive match.

use std::time::Duration;

/// Longest server message kept in an error (bodies can be whole HTML pages).
const MAX_SERVER_MESSAGE_CHARS: usize = 500;

/// Where a key comes from when the caller did not say (the environment-only setup).
const DEFAULT_KEY_SOURCE: &str = "KNACK_API_KEY or the variable named by model.api_key_env";

/// A failed model request.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("invalid model base URL '{url}': {reason}")]
    InvalidBaseUrl { url: String, reason: String },

    #[error("could not connect to {target} — is the server running? ({detail})")]
    Connect { target: String, detail: String },

    /// A server on this machine refused the connection: nothing listens on
    /// that port, so waiting longer rarely helps (see `RetryPolicy`).
    #[error(
        "nothing is listening at {url} (connection refused) — start the model server, or correct the address in {setting}"
    )]
    LocalServerDown { url: String, setting: String },

    #[error(
        "connecting to {target} took longer than {}s — is the server reachable? (model.connect_timeout_secs)",
        timeout.as_secs_f64()
    )]
    ConnectTimeout { target: String, timeout: Duration },

    #[error(
        "the model server sent nothing for {}s after the request (model.first_byte_timeout_secs)",
        timeout.as_secs_f64()
    )]
    FirstByteTimeout { timeout: Duration },

    #[error(
        "the model stream stalled for {}s (model.idle_timeout_secs)",
        timeout.as_secs_f64()
    )]
    IdleTimeout { timeout: Duration },

    /// `key_source` names where this profile's key comes from, so the
    /// message points at the variable the user actually has to fix.
    #[error("the server rejected the API key ({status}) — check {key_source}: {message}")]
    Unauthorized {
        status: u16,
        message: String,
        key_source: String,
    },

    #[error("rate limited by the model server (429){}: {message}", retry_after_note(*retry_after))]
    RateLimited {
        retry_after: Option<Duration>,
        message: String,
    },

    #[error(
        "the server asks to wait {}s before retrying (429), longer than knack waits: {message}",
        wait.as_secs()
    )]
    RateLimitWaitTooLong { wait: Duration, message: String },

    #[error("model server error ({status}): {message}")]
    Server { status: u16, message: String },

    #[error("the model server is overloaded ({status}){}: {message}", retry_after_note(*retry_after))]
    Overloaded {
        status: u16,
        retry_after: Option<Duration>,
        message: String,
    },

    #[error("the model server refused the request ({status}){}: {message}", status_hint(*status))]
    Rejected { status: u16, message: String },

    #[error("the model stream ended before the reply was complete ({detail})")]
    StreamCut { detail: String },

    #[error("the model server reported an error mid-stream: {message}")]
    StreamReportedError { message: String },

    #[error("the model server sent no readable data: {detail}")]
    MalformedStream { detail: String },

    #[error("the model stream carried a chunk that is not valid JSON: {detail}")]
    MalformedChunk { detail: String },

    #[error("HTTP error talking to the model server: {detail}")]
    Transport { detail: String },

    /// The reply finished with no text and no tool call: answering nothing
    /// would look like success, so it is an error (retried unless the
    /// output limit caused it, which a retry would hit again).
    #[error("the model replied with neither text nor a tool call{}", empty_reply_hint(finish_reason.as_deref()))]
    EmptyReply { finish_reason: Option<String> },

    #[error("cannot encode the model request: {0}")]
    Encode(#[from] serde_json::Error),

    #[error("gave up after {attempts} attempts: {last}")]
    RetriesExhausted {
        attempts: u32,
        last: Box<ModelError>,
    },
}

pub type Result<T, E = ModelError> = std::result::Result<T, E>;

impl ModelError {
    /// Whether sending the same request again might succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Connect { .. }
            | Self::LocalServerDown { .. }
            | Self::ConnectTimeout { .. }
            | Self::FirstByteTimeout { .. }
            | Self::IdleTimeout { .. }
            | Self::RateLimited { .. }
            | Self::Server { .. }
            | Self::Overloaded { .. }
            | Self::MalformedChunk { .. }
            | Self::StreamCut { .. }
            | Self::StreamReportedError { .. }
            | Self::Transport { .. } => true,
            Self::EmptyReply { finish_reason } => finish_reason.as_deref() != Some("length"),
            Self::InvalidBaseUrl { .. }
            | Self::Unauthorized { .. }
            | Self::RateLimitWaitTooLong { .. }
            | Self::Rejected { .. }
            | Self::MalformedStream { .. }
            | Self::Encode(_)
            | Self::RetriesExhausted { .. } => false,
        }
    }

    /// The wait the server asked for, when it asked.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } | Self::Overloaded { retry_after, .. } => {
                *retry_after
            }
            _ => None,
        }
    }

    /// The error from an HTTP status and its body.
    pub(crate) fn from_status(status: u16, retry_after: Option<Duration>, body: &str) -> Self {
        let message = server_message(body);
        match status {
            401 | 403 => Self::Unauthorized {
                status,
                message,
                key_source: DEFAULT_KEY_SOURCE.to_owned(),
            },
            429 => Self::RateLimited {
                retry_after,
                message,
            },
            // Anthropic's "overloaded": a busy server that may say when to come back.
            529 => Self::Overloaded {
                status,
                retry_after,
                message,
            },
            500..=599 => Self::Server { status, message },
            _ => Self::Rejected { status, message },
        }
    }

    /// The same error, an authentication failure naming `key_source` as
    /// where the rejected key came from.
    pub(crate) fn with_key_source(self, key_source: Option<&str>) -> Self {
        match (self, key_source) {
            (
                Self::Unauthorized {
                    status, message, ..
                },
                Some(source),
            ) => Self::Unauthorized {
                status,
                message,
                key_source: source.to_owned(),
            },
            (other, _) => other,
        }
    }

    /// A one-line reason for a retry event.
    pub fn short_reason(&self) -> String {
        match self {
            Self::Connect { target, .. } => format!("could not connect to {target}"),
            Self::LocalServerDown { url, .. } => format!("nothing is listening at {url}"),
            Self::RateLimited { .. } => "rate limited (429)".into(),
            Self::Server { status, .. } => format!("server error ({status})"),
            Self::StreamCut { .. } => "stream ended early".into(),
            Self::Overloaded { status, .. } => format!("server overloaded ({status})"),
            Self::MalformedChunk { .. } => "unreadable stream chunk".into(),
            Self::EmptyReply { .. } => "empty reply".into(),
            other => {
                let text = other.to_string();
                truncate_chars(&text, 120)
            }
        }
    }
}

fn retry_after_note(retry_after: Option<Duration>) -> String {
    retry_after
        .map(|wait| format!(", retry after {}s", wait.as_secs()))
        .unwrap_or_default()
}

fn empty_reply_hint(finish_reason: Option<&str>) -> String {
    match finish_reason {
        Some("length") => " — it reached its output limit first (finish reason `length`); raise max_output_tokens in the provider profile".into(),
        Some(reason) => format!(" (finish reason `{reason}`)"),
        None => String::new(),
    }
}

fn status_hint(status: u16) -> &'static str {
    match status {
        404 => " — check model.base_url (it usually ends in /v1) and the model name",
        400 | 413 | 422 => {
            " — the server did not accept the request; the conversation may be too long for the model"
        }
        _ => "",
    }
}

/// The `error.message` of an OpenAI-style error body, else the body itself, shortened.
fn server_message(body: &str) -> String {
    let parsed = serde_json::from_str::<serde_json::Value>(body).ok();
    let message = parsed.as_ref().and_then(|value| {
        value
            .pointer("/error/message")
            .or_else(|| value.get("message"))
            .or_else(|| value.get("error"))
            .and_then(serde_json::Value::as_str)
    });
    let text = message.unwrap_or(body).trim();
    if text.is_empty() {
        "(empty body)".into()
    } else {
        truncate_chars(text, MAX_SERVER_MESSAGE_CHARS)
    }
}

fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_kinds_and_retryability() {
        let cases = [
            (401, false),
            (403, false),
            (404, false),
            (400, false),
            (429, true),
            (500, true),
            (502, true),
            (503, true),
        ];
        for (status, retryable) in cases {
            let err = ModelError::from_status(status, None, "{}");
            assert_eq!(err.is_retryable(), retryable, "{status}: {err}");
        }
    }

    #[test]
    fn the_openai_error_message_is_extracted_and_long_bodies_are_cut() {
        let err = ModelError::from_status(
            400,
            None,
            r#"{"error":{"message":"context too long","type":"invalid_request_error"}}"#,
        );
        assert_eq!(
            err.to_string(),
            "the model server refused the request (400) — the server did not accept the request; \
             the conversation may be too long for the model: context too long"
        );
        let html = "<html>".repeat(200);
        let err = ModelError::from_status(502, None, &html);
        assert!(err.to_string().chars().count() < 600, "{err}");
        assert!(err.to_string().ends_with('…'));
    }

    #[test]
    fn unauthorized_names_the_key_variable() {
        let err = ModelError::from_status(401, None, r#"{"error":{"message":"bad key"}}"#);
        let text = err.to_string();
        assert!(
            text.contains("(401)") && text.contains("KNACK_API_KEY"),
            "{text}"
        );
        // A profile's own variable replaces the generic advice.
        let text = err
            .with_key_source(Some("ANTHROPIC_API_KEY (providers.claude.api_key_env)"))
            .to_string();
        assert!(
            text.contains("check ANTHROPIC_API_KEY (providers.claude.api_key_env)")
                && !text.contains("KNACK_API_KEY"),
            "{text}"
        );
        // Other errors are left as they were.
        let other = ModelError::from_status(500, None, "").with_key_source(Some("X"));
        assert!(!other.to_string().contains('X'), "{other}");
    }

    #[test]
    fn retry_after_is_reported_only_for_rate_limits() {
        let wait = Some(Duration::from_secs(3));
        assert_eq!(ModelError::from_status(429, wait, "").retry_after(), wait);
        assert_eq!(ModelError::from_status(503, wait, "").retry_after(), None);
        let overloaded = ModelError::from_status(529, wait, "");
        assert_eq!(overloaded.retry_after(), wait);
        assert!(overloaded.is_retryable());
        assert!(
            ModelError::from_status(429, wait, "")
                .to_string()
                .contains("retry after 3s")
        );
    }
}
