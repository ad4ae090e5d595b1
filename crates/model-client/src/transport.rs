//! The HTTP side every wire shares: one reqwest client, timeouts, retries, SSE reading.
//! A wire supplies the endpoint, its headers, the body bytes and a stream assembler.

use std::time::Duration;

use futures::StreamExt;
use knack_config::{CacheTtl, ModelConfig, Prices, ProviderConfig, Wire};
use reqwest::header::{ACCEPT, CONTENT_TYPE, RETRY_AFTER};
use reqwest::{Response, Url};
use tokio::time::{Instant, timeout, timeout_at};

use super::retry::{RetryPolicy, parse_retry_after};
use super::sse::SseDecoder;
use super::types::{ChatRequest, Completion};
use super::{StreamUpdate, UpdateSink};
use crate::error::{ModelError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelTimeouts {
    /// Establishing the TCP (and TLS) connection.
    pub connect: Duration,
    /// From sending the request to the first streamed bytes of the reply.
    pub first_byte: Duration,
    /// Silence allowed between two streamed chunks.
    pub idle: Duration,
}

impl ModelTimeouts {
    pub fn from_config(config: &ModelConfig) -> Self {
        Self {
            connect: Duration::from_secs(config.connect_timeout_secs),
            first_byte: Duration::from_secs(config.first_byte_timeout_secs),
            idle: Duration::from_secs(config.idle_timeout_secs),
        }
    }
}

impl Default for ModelTimeouts {
    fn default() -> Self {
        Self::from_config(&ModelConfig::default())
    }
}

/// How to reach a server and speak its wire. The key comes from the caller,
/// which resolved the provider profile, `KNACK_API_KEY` and `.env`.
#[derive(Debug, Clone)]
pub struct ClientSettings {
    /// e.g. `http://127.0.0.1:8080/v1`; the wire's path is appended.
    pub base_url: String,
    /// Sent as `Authorization: Bearer` (or `x-api-key` on the Anthropic
    /// wire) when present; local servers need none.
    pub api_key: Option<String>,
    pub timeouts: ModelTimeouts,
    pub retry: RetryPolicy,
    pub wire: Wire,
    /// Extra headers for every request (`providers.<name>.headers`).
    pub headers: Vec<(String, String)>,
    /// The reply's token limit; `None` sends [`ClientSettings::output_cap`]'s default.
    pub max_output_tokens: Option<u32>,
    /// Anthropic: how long cached prefixes live.
    pub cache_ttl: CacheTtl,
    /// Send the session id as `prompt_cache_key`; `None` is the wire's
    /// default (off on Chat, where not every server accepts it; on for Responses).
    pub prompt_cache_key: Option<bool>,
    /// Chat: Anthropic `cache_control` markers for routers that proxy Claude
    /// models (OpenRouter); their lifetime follows `cache_ttl`.
    pub cache_control: bool,
    /// When set, every usage record carries its cost.
    pub prices: Option<Prices>,
    /// Responses: the reasoning effort to ask for; it also asks for the
    /// encrypted reasoning that must be replayed when nothing is stored.
    pub reasoning_effort: Option<String>,
    /// Where `base_url` was set (`KNACK_BASE_URL`, `providers.local.base_url`),
    /// named in the error when a local server refuses the connection.
    pub base_url_setting: Option<String>,
    /// Where the key comes from (`ANTHROPIC_API_KEY (providers.claude.api_key_env)`),
    /// named when the server rejects it.
    pub api_key_source: Option<String>,
    /// Anthropic: the extended-thinking budget in tokens; `None` asks for no thinking.
    pub thinking_budget: Option<u32>,
}

/// The reply's token limit when the provider sets none. Every wire sends a
/// limit: without one, some local servers generate until the context is
/// full, and a model caught in a loop keeps a headless run busy for minutes.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 8192;
/// The default with `reasoning_effort`: a reasoning model's thinking counts
/// against the same limit, and a limit it reaches while thinking leaves no answer.
pub const DEFAULT_REASONING_MAX_OUTPUT_TOKENS: u32 = 32_768;

impl ClientSettings {
    pub fn new(base_url: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: None,
            timeouts: ModelTimeouts::default(),
            retry: RetryPolicy::default(),
            wire: Wire::Chat,
            headers: Vec::new(),
            max_output_tokens: None,
            cache_ttl: CacheTtl::default(),
            prompt_cache_key: None,
            cache_control: false,
            prices: None,
            reasoning_effort: None,
            base_url_setting: None,
            api_key_source: None,
            thinking_budget: None,
        }
    }

    /// The output limit every request carries: the provider's, else the default.
    pub fn output_cap(&self) -> u32 {
        self.max_output_tokens.unwrap_or(
            if self.reasoning_effort.is_some() || self.thinking_budget.is_some() {
                DEFAULT_REASONING_MAX_OUTPUT_TOKENS
            } else {
                DEFAULT_MAX_OUTPUT_TOKENS
            },
        )
    }

    /// The same settings on another wire.
    pub fn with_wire(mut self, wire: Wire) -> Self {
        self.wire = wire;
        self
    }
}

/// A provider profile's settings for its client. The key (from the variable
/// `api_key_env` names) and where the URL came from are the resolver's to add;
/// without a `base_url` the wire's usual public endpoint is taken (empty for
/// Chat, which has none, and which the resolver refuses).
impl From<&ProviderConfig> for ClientSettings {
    fn from(profile: &ProviderConfig) -> Self {
        let base_url = match profile.base_url.as_deref().map(str::trim) {
            Some(url) if !url.is_empty() => url.to_owned(),
            _ => default_base_url(profile.wire)
                .unwrap_or_default()
                .to_owned(),
        };
        Self {
            headers: profile
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            max_output_tokens: profile.max_output_tokens,
            cache_ttl: profile.cache_ttl,
            prompt_cache_key: profile.prompt_cache_key,
            cache_control: profile.cache_control,
            prices: profile.prices,
            reasoning_effort: profile.reasoning_effort.clone(),
            ..Self::new(base_url).with_wire(profile.wire)
        }
    }
}

/// The public endpoint a wire usually means, when a profile names none.
pub fn default_base_url(wire: Wire) -> Option<&'static str> {
    match wire {
        Wire::Anthropic => Some("https://api.anthropic.com/v1"),
        Wire::Responses => Some("https://api.openai.com/v1"),
        Wire::Chat => None,
    }
}

/// Builds one completion from the stream of one attempt; one per wire.
pub(crate) trait StreamAssembler: Default + Send {
    /// Takes one SSE `data` payload. A payload that is not JSON is an error
    /// (retried like a cut stream), never skipped.
    fn accept(&mut self, data: &str, sink: &mut (dyn FnMut(StreamUpdate) + Send)) -> Result<()>;

    /// Takes a whole non-streamed JSON reply (servers that ignore `stream: true`).
    fn accept_whole(
        &mut self,
        body: &str,
        sink: &mut (dyn FnMut(StreamUpdate) + Send),
    ) -> Result<()>;

    /// True once the wire's end marker arrived; nothing more will follow.
    fn saw_done(&self) -> bool;

    /// True once the server said the reply is over (only usage may follow).
    fn is_complete(&self) -> bool;

    /// Whether anything was handed to the caller (it must be told to reset on retry).
    fn emitted(&self) -> bool;

    fn finish(self) -> Result<Completion>;
}

/// One endpoint with its headers, timeouts and retry policy.
#[derive(Debug, Clone)]
pub(crate) struct Transport {
    http: reqwest::Client,
    endpoint: Url,
    /// `host:port`, for error messages.
    pub(crate) target: String,
    /// The base URL as configured and the setting it came from, for the
    /// error when a server on this machine refuses the connection.
    base_url: String,
    base_url_setting: Option<String>,
    /// Where the key comes from, for a rejected key's message.
    api_key_source: Option<String>,
    /// Whether the host is this machine (loopback or `localhost`).
    local: bool,
    /// Every header but the per-request ones, the key included.
    headers: Vec<(String, String)>,
    timeouts: ModelTimeouts,
    retry: RetryPolicy,
    prices: Option<Prices>,
}

impl Transport {
    /// `path` is appended to the base URL; `auth` turns the key into headers.
    pub(crate) fn new(
        settings: &ClientSettings,
        path: &str,
        auth: impl FnOnce(&str) -> Vec<(String, String)>,
        wire_headers: &[(&str, &str)],
        http: Option<reqwest::Client>,
    ) -> Result<Self> {
        let invalid = |reason: String| ModelError::InvalidBaseUrl {
            url: settings.base_url.clone(),
            reason,
        };
        let base = settings.base_url.trim().trim_end_matches('/');
        let endpoint =
            Url::parse(&format!("{base}/{path}")).map_err(|err| invalid(err.to_string()))?;
        if !matches!(endpoint.scheme(), "http" | "https") {
            return Err(invalid("it must start with http:// or https://".into()));
        }
        let host = endpoint
            .host_str()
            .ok_or_else(|| invalid("it has no host".into()))?;
        let local = is_local_host(host);
        let target = match endpoint.port_or_known_default() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        };
        let http = match http {
            Some(http) => http,
            None => reqwest::Client::builder()
                .connect_timeout(settings.timeouts.connect)
                .user_agent(concat!("knack/", env!("CARGO_PKG_VERSION")))
                .build()
                .map_err(|err| ModelError::Transport {
                    detail: error_chain(&err),
                })?,
        };
        let mut headers: Vec<(String, String)> = wire_headers
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect();
        if let Some(key) = settings.api_key.as_deref().filter(|key| !key.is_empty()) {
            headers.extend(auth(key));
        }
        // The user's headers come last so they can override the wire's defaults.
        headers.extend(settings.headers.iter().cloned());
        Ok(Self {
            http,
            endpoint,
            target,
            base_url: base.to_owned(),
            base_url_setting: settings.base_url_setting.clone(),
            api_key_source: settings.api_key_source.clone(),
            local,
            headers,
            timeouts: settings.timeouts,
            retry: settings.retry,
            prices: settings.prices,
        })
    }

    pub(crate) fn endpoint(&self) -> &Url {
        &self.endpoint
    }

    /// Sends `body`, retrying as the policy allows; every retry is reported
    /// and voids what the failed attempt streamed.
    pub(crate) async fn stream<A: StreamAssembler>(
        &self,
        body: &[u8],
        request: &ChatRequest,
        on_update: UpdateSink<'_>,
    ) -> Result<Completion> {
        let mut retries = 0u32;
        loop {
            let mut assembler = A::default();
            let outcome = self.attempt(body, request, &mut assembler, on_update).await;
            let emitted = assembler.emitted();
            let error = match outcome {
                Ok(()) => {
                    let completion = assembler.finish()?;
                    match empty_reply(&completion) {
                        None => return self.priced(completion),
                        Some(error) => error,
                    }
                }
                Err(error) => error,
            };
            if !error.is_retryable() {
                return Err(error);
            }
            if retries >= self.retry.retries_for(&error, request.purpose) {
                return Err(if retries == 0 {
                    error
                } else {
                    ModelError::RetriesExhausted {
                        attempts: retries + 1,
                        last: Box::new(error),
                    }
                });
            }
            retries += 1;
            let delay = match self.retry.delay_for(retries, &error) {
                Ok(delay) => delay,
                Err(wait) => {
                    let message = match error {
                        ModelError::RateLimited { message, .. }
                        | ModelError::Overloaded { message, .. } => message,
                        other => other.to_string(),
                    };
                    return Err(ModelError::RateLimitWaitTooLong { wait, message });
                }
            };
            tracing::warn!(
                attempt = retries,
                delay_ms = delay.as_millis() as u64,
                error = %error,
                "model request failed; retrying"
            );
            if emitted {
                on_update(StreamUpdate::Reset);
            }
            on_update(StreamUpdate::Retry {
                attempt: retries,
                delay_ms: delay.as_millis() as u64,
                reason: error.short_reason(),
            });
            tokio::time::sleep(delay).await;
        }
    }

    /// Adds the cost to the usage record when prices are known.
    fn priced(&self, mut completion: Completion) -> Result<Completion> {
        if let (Some(prices), Some(usage)) = (&self.prices, completion.usage.as_mut()) {
            usage.cost_usd = Some(usage.cost(prices));
        }
        Ok(completion)
    }

    /// One HTTP request and its stream, fed into `assembler`.
    async fn attempt<A: StreamAssembler>(
        &self,
        body: &[u8],
        request: &ChatRequest,
        assembler: &mut A,
        on_update: UpdateSink<'_>,
    ) -> Result<()> {
        let mut builder = self
            .http
            .post(self.endpoint.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .header("X-Knack-Purpose", request.purpose.as_str())
            .header("X-Knack-Session", request.session_id.as_str());
        for (name, value) in &self.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        let builder = builder.body(body.to_vec());
        tracing::debug!(endpoint = %self.endpoint, purpose = request.purpose.as_str(), "model request");

        let first_byte_deadline = Instant::now() + self.timeouts.first_byte;
        let response = match timeout_at(first_byte_deadline, builder.send()).await {
            Err(_) => return Err(self.first_byte_timeout()),
            Ok(Err(err)) => return Err(self.send_error(&err)),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get(RETRY_AFTER)
                .and_then(|value| value.to_str().ok())
                .and_then(parse_retry_after);
            // An unreadable error body still leaves a useful status error.
            let text = timeout(self.timeouts.idle, response.text())
                .await
                .ok()
                .and_then(|body| body.ok())
                .unwrap_or_default();
            return Err(ModelError::from_status(status.as_u16(), retry_after, &text)
                .with_key_source(self.api_key_source.as_deref()));
        }
        if is_json(&response) {
            let text = match timeout_at(first_byte_deadline, response.text()).await {
                Err(_) => return Err(self.first_byte_timeout()),
                Ok(Err(err)) => {
                    return Err(ModelError::StreamCut {
                        detail: error_chain(&err),
                    });
                }
                Ok(Ok(text)) => text,
            };
            return assembler.accept_whole(&text, on_update);
        }

        let mut stream = response.bytes_stream();
        let mut decoder = SseDecoder::default();
        let mut received_any = false;
        loop {
            let next = if received_any {
                timeout(self.timeouts.idle, stream.next()).await
            } else {
                timeout_at(first_byte_deadline, stream.next()).await
            };
            let item = match next {
                Ok(item) => item,
                // Only trailing usage can be missing; the reply itself is whole.
                Err(_) if assembler.is_complete() => break,
                Err(_) if received_any => {
                    return Err(ModelError::IdleTimeout {
                        timeout: self.timeouts.idle,
                    });
                }
                Err(_) => return Err(self.first_byte_timeout()),
            };
            received_any = true;
            match item {
                None => break,
                Some(Err(err)) if assembler.is_complete() => {
                    tracing::debug!(error = %error_chain(&err), "stream broke after the reply was complete");
                    break;
                }
                Some(Err(err)) => {
                    return Err(ModelError::StreamCut {
                        detail: error_chain(&err),
                    });
                }
                Some(Ok(bytes)) => {
                    for data in decoder.push(&bytes) {
                        assembler.accept(&data, on_update)?;
                        if assembler.saw_done() {
                            break;
                        }
                    }
                }
            }
            if assembler.saw_done() {
                break;
            }
        }
        if !assembler.saw_done()
            && let Some(data) = decoder.finish()
        {
            assembler.accept(&data, on_update)?;
        }
        if assembler.is_complete() {
            Ok(())
        } else {
            Err(ModelError::StreamCut {
                detail: "the connection closed before the server said the reply was over".into(),
            })
        }
    }

    fn first_byte_timeout(&self) -> ModelError {
        ModelError::FirstByteTimeout {
            timeout: self.timeouts.first_byte,
        }
    }

    fn send_error(&self, err: &reqwest::Error) -> ModelError {
        if err.is_connect() {
            if err.is_timeout() {
                return ModelError::ConnectTimeout {
                    target: self.target.clone(),
                    timeout: self.timeouts.connect,
                };
            }
            if self.local && is_refused(err) {
                return ModelError::LocalServerDown {
                    url: self.base_url.clone(),
                    setting: self
                        .base_url_setting
                        .clone()
                        .unwrap_or_else(|| "the base URL setting".to_owned()),
                };
            }
            return ModelError::Connect {
                target: self.target.clone(),
                detail: root_cause(err),
            };
        }
        ModelError::Transport {
            detail: error_chain(err),
        }
    }
}

/// Whether the connection was refused (nothing listens on the port), as
/// opposed to a timeout, a DNS failure or a TLS error.
fn is_refused(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = Some(err);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return true;
        }
        source = cause.source();
    }
    false
}

/// Whether `host` (as a URL spells it) is this machine.
fn is_local_host(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback() || ip.is_unspecified(),
        Err(_) => {
            let name = bare.to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
    }
}

/// The error for a reply that says nothing: no text (whitespace does not
/// count) and no tool call. Reasoning alone is not an answer.
fn empty_reply(completion: &Completion) -> Option<ModelError> {
    (completion.content.trim().is_empty() && completion.tool_calls.is_empty()).then(|| {
        ModelError::EmptyReply {
            finish_reason: completion.finish_reason.clone(),
        }
    })
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.trim_start().starts_with("application/json"))
}

/// The error and its causes, joined; reqwest's own message alone rarely says what broke.
fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut deepest: &(dyn std::error::Error + 'static) = err;
    while let Some(cause) = deepest.source() {
        deepest = cause;
    }
    deepest.to_string()
}

/// The first `MAX` characters of a payload, for error messages and logs.
/// The session's frozen tool specs (Chat Completions' `{"type": "function",
/// "function": {...}}` shape) in another wire's shape: `convert` gets each
/// spec's `function` object. `None` when there are no tools.
pub(crate) fn convert_tool_specs(
    raw: &str,
    convert: impl Fn(&serde_json::Value) -> serde_json::Value,
) -> Result<Option<serde_json::Value>> {
    let specs: Vec<serde_json::Value> = serde_json::from_str(raw)?;
    if specs.is_empty() {
        return Ok(None);
    }
    let tools = specs
        .iter()
        .map(|spec| convert(spec.get("function").unwrap_or(spec)))
        .collect();
    Ok(Some(serde_json::Value::Array(tools)))
}

pub(crate) fn preview(data: &str) -> String {
    const MAX: usize = 200;
    match data.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &data[..cut]),
        None => data.to_owned(),
    }
}

/// Parses one stream payload; a payload that is not JSON is a retryable error.
pub(crate) fn parse_chunk<'a, T: serde::Deserialize<'a>>(data: &'a str) -> Result<T> {
    serde_json::from_str(data).map_err(|err| {
        tracing::warn!(error = %err, data = %preview(data), "a stream chunk is not valid JSON");
        ModelError::MalformedChunk {
            detail: format!("{err} in {}", preview(data)),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_becomes_client_settings_with_every_field() {
        let profile = ProviderConfig {
            wire: Wire::Anthropic,
            headers: [("x-team".to_owned(), "docs".to_owned())].into(),
            max_output_tokens: Some(1234),
            cache_ttl: CacheTtl::OneHour,
            prompt_cache_key: Some(true),
            cache_control: true,
            prices: Some(Prices {
                input: 3.0,
                output: 15.0,
                ..Prices::default()
            }),
            reasoning_effort: Some("high".into()),
            ..ProviderConfig::default()
        };
        let settings = ClientSettings::from(&profile);
        assert_eq!(settings.wire, Wire::Anthropic);
        // No base_url: the wire's public endpoint.
        assert_eq!(settings.base_url, "https://api.anthropic.com/v1");
        assert_eq!(settings.headers, [("x-team".to_owned(), "docs".to_owned())]);
        assert_eq!(settings.max_output_tokens, Some(1234));
        assert_eq!(settings.cache_ttl, CacheTtl::OneHour);
        assert_eq!(settings.prompt_cache_key, Some(true));
        assert!(settings.cache_control);
        assert_eq!(settings.prices.map(|p| p.output), Some(15.0));
        assert_eq!(settings.reasoning_effort.as_deref(), Some("high"));
        // The key and the URL's origin are the resolver's to add.
        assert_eq!(settings.api_key, None);
        assert_eq!(settings.base_url_setting, None);

        let local = ProviderConfig {
            base_url: Some("  http://127.0.0.1:8080/v1 ".into()),
            ..ProviderConfig::default()
        };
        assert_eq!(
            ClientSettings::from(&local).base_url,
            "http://127.0.0.1:8080/v1"
        );
    }

    #[test]
    fn loopback_names_and_addresses_are_local() {
        for host in [
            "127.0.0.1",
            "127.1.2.3",
            "[::1]",
            "localhost",
            "LocalHost",
            "0.0.0.0",
            "app.localhost",
        ] {
            assert!(is_local_host(host), "{host}");
        }
        for host in [
            "api.openai.com",
            "10.0.0.5",
            "[2001:db8::1]",
            "localhost.example.org",
        ] {
            assert!(!is_local_host(host), "{host}");
        }
    }

    #[test]
    fn every_request_gets_an_output_cap() {
        let mut settings = ClientSettings::new("http://127.0.0.1:1/v1");
        assert_eq!(settings.output_cap(), DEFAULT_MAX_OUTPUT_TOKENS);
        settings.reasoning_effort = Some("high".into());
        assert_eq!(settings.output_cap(), DEFAULT_REASONING_MAX_OUTPUT_TOKENS);
        settings.max_output_tokens = Some(300);
        assert_eq!(settings.output_cap(), 300, "the provider's own limit wins");
    }

    #[test]
    fn user_headers_follow_the_wire_and_key_headers() {
        let mut settings = ClientSettings::new("http://127.0.0.1:1/v1");
        settings.api_key = Some("k".into());
        settings.headers = vec![("x-extra".into(), "1".into())];
        let transport = Transport::new(
            &settings,
            "messages",
            |key| vec![("x-api-key".into(), key.into())],
            &[("anthropic-version", "2023-06-01")],
            None,
        )
        .unwrap();
        let names: Vec<&str> = transport.headers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["anthropic-version", "x-api-key", "x-extra"]);
        assert_eq!(
            transport.endpoint().as_str(),
            "http://127.0.0.1:1/v1/messages"
        );
    }
}
