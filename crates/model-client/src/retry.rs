//! When and how long to wait before sending a failed model request again.
//! Capped exponential backoff with jitter, and the server's `Retry-After` when it gives one.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::time::Duration;

use knack_config::ModelConfig;

use crate::RequestPurpose;
use crate::error::ModelError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (so `max_retries + 1` requests at most).
    pub max_retries: u32,
    /// The wait before the first retry; it doubles per retry.
    pub base_delay: Duration,
    /// No backoff wait is longer than this.
    pub max_delay: Duration,
    /// The longest `Retry-After` honoured; a server asking for more ends the retries.
    pub max_retry_after: Duration,
}

impl RetryPolicy {
    pub const DEFAULT_BASE_DELAY: Duration = Duration::from_secs(1);
    pub const DEFAULT_MAX_DELAY: Duration = Duration::from_secs(30);
    pub const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

    pub fn from_config(config: &ModelConfig) -> Self {
        Self {
            max_retries: config.max_retries,
            base_delay: Duration::from_millis(config.retry_base_delay_ms),
            max_delay: Duration::from_millis(
                config.retry_max_delay_ms.max(config.retry_base_delay_ms),
            ),
            ..Self::default()
        }
    }

    /// How many retries `error` gets on a request made for `purpose`. A
    /// local server that refused the connection is not started (or the port
    /// is wrong): one retry covers a server that is just coming up, and more
    /// would only keep the user waiting for the error. The self-improvement
    /// review is best-effort and runs where the user's next message waits
    /// behind it, so its requests get one retry too.
    pub(crate) fn retries_for(&self, error: &ModelError, purpose: RequestPurpose) -> u32 {
        match (error, purpose) {
            (ModelError::LocalServerDown { .. }, _) | (_, RequestPurpose::Review) => {
                self.max_retries.min(1)
            }
            _ => self.max_retries,
        }
    }

    /// The wait before retry number `attempt` (1-based) after `error`, or the
    /// error to give up with when the server's requested wait is too long.
    pub(crate) fn delay_for(&self, attempt: u32, error: &ModelError) -> Result<Duration, Duration> {
        match error.retry_after() {
            Some(wait) if wait > self.max_retry_after => Err(wait),
            Some(wait) => Ok(wait),
            None => Ok(self.backoff(attempt)),
        }
    }

    /// `base * 2^(attempt-1)`, scaled by a random factor in [0.75, 1.25) so
    /// clients that failed together do not retry together, then capped.
    pub(crate) fn backoff(&self, attempt: u32) -> Duration {
        let exponent = attempt.saturating_sub(1).min(20);
        let raw = self.base_delay.saturating_mul(1u32 << exponent);
        let jittered = raw.mul_f64(0.75 + 0.5 * unit_random());
        jittered.min(self.max_delay)
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: ModelConfig::default().max_retries,
            base_delay: Self::DEFAULT_BASE_DELAY,
            max_delay: Self::DEFAULT_MAX_DELAY,
            max_retry_after: Self::DEFAULT_MAX_RETRY_AFTER,
        }
    }
}

/// A number in [0, 1) from the std hasher's per-instance random keys;
/// jitter needs no better randomness than that.
fn unit_random() -> f64 {
    let bits = RandomState::new().hash_one(std::time::Instant::now());
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// Reads a `Retry-After` header given in seconds (the HTTP-date form is rare
/// from model servers and is treated as absent).
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    let secs: f64 = value.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_retries: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(500),
            max_retry_after: Duration::from_secs(10),
        }
    }

    #[test]
    fn backoff_grows_with_jitter_and_stops_at_the_cap() {
        let policy = policy();
        for _ in 0..50 {
            let first = policy.backoff(1);
            assert!(first >= Duration::from_millis(75) && first < Duration::from_millis(125));
            let third = policy.backoff(3);
            assert!(third >= Duration::from_millis(300) && third <= Duration::from_millis(500));
            assert_eq!(policy.backoff(30), Duration::from_millis(500));
        }
        let distinct: std::collections::HashSet<_> = (0..20).map(|_| policy.backoff(2)).collect();
        assert!(distinct.len() > 1, "jitter should vary the delay");
    }

    #[test]
    fn retry_after_wins_over_backoff_up_to_the_limit() {
        let policy = policy();
        let limited = ModelError::RateLimited {
            retry_after: Some(Duration::from_secs(3)),
            message: String::new(),
        };
        assert_eq!(policy.delay_for(1, &limited), Ok(Duration::from_secs(3)));
        let too_long = ModelError::RateLimited {
            retry_after: Some(Duration::from_secs(600)),
            message: String::new(),
        };
        assert_eq!(
            policy.delay_for(1, &too_long),
            Err(Duration::from_secs(600))
        );
    }

    #[test]
    fn a_refused_local_connection_is_retried_once_and_others_as_configured() {
        let policy = policy();
        let down = ModelError::LocalServerDown {
            url: "http://127.0.0.1:9/v1".into(),
            setting: "KNACK_BASE_URL".into(),
        };
        let turn = RequestPurpose::Turn;
        assert_eq!(policy.retries_for(&down, turn), 1);
        let remote = ModelError::Connect {
            target: "api.example.org:443".into(),
            detail: "Connection refused".into(),
        };
        assert_eq!(policy.retries_for(&remote, turn), 5);
        assert_eq!(policy.retries_for(&remote, RequestPurpose::Compact), 5);
        assert_eq!(
            policy.retries_for(&remote, RequestPurpose::Review),
            1,
            "the review is best-effort and the user waits behind it"
        );
        let none = RetryPolicy {
            max_retries: 0,
            ..policy
        };
        assert_eq!(
            none.retries_for(&down, turn),
            0,
            "never more than configured"
        );
        assert_eq!(none.retries_for(&remote, RequestPurpose::Review), 0);
    }

    #[test]
    fn retry_after_header_forms() {
        assert_eq!(parse_retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after(" 0.5 "), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }

    #[test]
    fn config_sets_the_retry_count() {
        let config = ModelConfig {
            max_retries: 7,
            ..ModelConfig::default()
        };
        assert_eq!(RetryPolicy::from_config(&config).max_retries, 7);
    }
}
