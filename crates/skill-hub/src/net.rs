//! HTTP for the hub: one client with the fetch timeout, at most five redirects,
//! a size cap on every body, progress on stderr, and GitHub's auth and rate limits.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, USER_AGENT};

use crate::{Error, Result};

/// How a request is made.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Request<'a> {
    pub accept: Option<&'a str>,
    /// Send the GitHub token and explain GitHub's rate-limit answers.
    pub github: bool,
    /// Show a progress bar with this label (unless quiet).
    pub progress: Option<&'a str>,
}

pub(crate) struct Net {
    client: reqwest::Client,
    timeout: Duration,
    max_bytes: u64,
    quiet: bool,
    github_token: Option<String>,
}

impl Net {
    pub(crate) fn new(
        timeout: Duration,
        max_bytes: u64,
        quiet: bool,
        github_token: Option<String>,
    ) -> Result<Self> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::limited(5))
            .build()
            .map_err(|e| Error::Fetch(format!("cannot set up the HTTP client: {e}")))?;
        Ok(Self {
            client,
            timeout,
            max_bytes,
            quiet,
            github_token: github_token.filter(|t| !t.trim().is_empty()),
        })
    }

    /// The body at `url`; `Ok(None)` for a 404.
    pub(crate) async fn get(&self, url: &str, req: Request<'_>) -> Result<Option<Vec<u8>>> {
        let mut builder = self
            .client
            .get(url)
            .header(USER_AGENT, concat!("knack/", env!("CARGO_PKG_VERSION")));
        if let Some(accept) = req.accept {
            builder = builder.header(ACCEPT, accept);
        }
        if req.github
            && let Some(token) = &self.github_token
        {
            builder = builder.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        let response = builder.send().await.map_err(|e| self.transport(url, &e))?;
        let status = response.status();
        if status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            if req.github
                && let Some(message) = rate_limit_message(status, response.headers())
            {
                return Err(Error::Fetch(message));
            }
            if req.github && status == StatusCode::UNAUTHORIZED {
                return Err(Error::Fetch(
                    "GitHub refused the credentials in GITHUB_TOKEN (HTTP 401); check or unset it"
                        .into(),
                ));
            }
            return Err(Error::Fetch(format!(
                "{url} answered HTTP {}",
                status.as_u16()
            )));
        }
        if let Some(len) = response.content_length()
            && len > self.max_bytes
        {
            return Err(self.too_big(url));
        }
        let bar = self.bar(req.progress, response.content_length());
        let mut response = response;
        let mut body = Vec::new();
        loop {
            let chunk = response.chunk().await.map_err(|e| self.transport(url, &e));
            let chunk = match chunk {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(e) => {
                    bar.abandon();
                    return Err(e);
                }
            };
            body.extend_from_slice(&chunk);
            bar.inc(chunk.len() as u64);
            if body.len() as u64 > self.max_bytes {
                bar.abandon();
                return Err(self.too_big(url));
            }
        }
        bar.finish_and_clear();
        Ok(Some(body))
    }

    /// Like [`get`](Self::get), but a 404 is an error naming `what`.
    pub(crate) async fn get_required(&self, url: &str, req: Request<'_>) -> Result<Vec<u8>> {
        self.get(url, req)
            .await?
            .ok_or_else(|| Error::Fetch(format!("{url} was not found (HTTP 404)")))
    }

    /// A counting bar on stderr ("checking 3/12 sources"), hidden when quiet.
    pub(crate) fn count_bar(&self, label: &str, len: u64) -> ProgressBar {
        if self.quiet {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{msg} {pos}/{len}") {
            bar.set_style(style);
        }
        bar.set_message(label.to_owned());
        bar
    }

    fn bar(&self, label: Option<&str>, len: Option<u64>) -> ProgressBar {
        let Some(label) = label.filter(|_| !self.quiet) else {
            return ProgressBar::hidden();
        };
        let bar = match len {
            Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr()),
            None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
        };
        let template = if len.is_some() {
            "{msg} [{bar:30}] {bytes}/{total_bytes}"
        } else {
            "{spinner} {msg} {bytes}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(label.to_owned());
        bar
    }

    /// A spinner on stderr for work without a byte count (git clones).
    pub(crate) fn spinner(&self, label: &str) -> ProgressBar {
        if self.quiet {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_message(label.to_owned());
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    }

    fn too_big(&self, url: &str) -> Error {
        Error::Fetch(format!(
            "{url} is larger than {} bytes (hub.max_package_bytes)",
            self.max_bytes
        ))
    }

    fn transport(&self, url: &str, e: &reqwest::Error) -> Error {
        if e.is_timeout() {
            Error::Fetch(format!(
                "{url} did not answer within {}s (hub.fetch_timeout_secs)",
                self.timeout.as_secs()
            ))
        } else if e.is_connect() {
            Error::Fetch(format!("cannot connect to {url}: {}", root_cause(e)))
        } else if e.is_redirect() {
            Error::Fetch(format!("{url} redirected more than 5 times"))
        } else {
            Error::Fetch(format!("fetching {url} failed: {}", root_cause(e)))
        }
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut current = e;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

/// GitHub's "no requests left" answer, as an instruction to the user.
fn rate_limit_message(status: StatusCode, headers: &HeaderMap) -> Option<String> {
    if status != StatusCode::FORBIDDEN && status != StatusCode::TOO_MANY_REQUESTS {
        return None;
    }
    let remaining = headers
        .get("x-ratelimit-remaining")
        .and_then(|v| v.to_str().ok())
        .map(str::trim);
    if remaining != Some("0") {
        return None;
    }
    let reset = headers
        .get("x-ratelimit-reset")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|secs| skill_core::clock::rfc3339(std::time::UNIX_EPOCH + Duration::from_secs(secs)))
        .unwrap_or_else(|| "the limit resets (about an hour)".into());
    Some(format!(
        "GitHub rate limit reached; set GITHUB_TOKEN or wait until {reset}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn rate_limit_needs_a_zero_remaining() {
        let mut h = HeaderMap::new();
        assert!(rate_limit_message(StatusCode::FORBIDDEN, &h).is_none());
        h.insert("x-ratelimit-remaining", HeaderValue::from_static("0"));
        h.insert("x-ratelimit-reset", HeaderValue::from_static("86400"));
        assert_eq!(
            rate_limit_message(StatusCode::TOO_MANY_REQUESTS, &h).unwrap(),
            "GitHub rate limit reached; set GITHUB_TOKEN or wait until 1970-01-02T00:00:00Z"
        );
        assert!(rate_limit_message(StatusCode::NOT_FOUND, &h).is_none());
    }
}
