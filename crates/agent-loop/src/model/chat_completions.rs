//! The OpenAI-compatible Chat Completions client: one reqwest client, our own SSE parsing.
//! Owns timeouts and retries so every retry is visible to the user as it happens.
//!
//! Why not `async-openai`: its typed chunks use strict enums that some
//! OpenAI-compatible servers break (`finish_reason: ""`, unknown
//! `service_tier`), and its typed structs drop fields such as
//! `reasoning_content`. Its `byot` mode would let us pass our own structs, but
//! then it only adds an SSE layer and a retry layer we must not use (retries
//! here are reported as events and must reset partial output). What is left is
//! about a hundred lines of SSE decoding, far less than the crate's build
//! cost, and a single `reqwest::Client` that we configure ourselves.

use std::time::Duration;

use futures::StreamExt;
use knack_config::ModelConfig;
use reqwest::header::{ACCEPT, CONTENT_TYPE, RETRY_AFTER};
use reqwest::{Response, Url};
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::time::{Instant, timeout, timeout_at};

use super::chunk::ReplyAssembler;
use super::retry::{RetryPolicy, parse_retry_after};
use super::sse::SseDecoder;
use super::types::{ChatMessage, ChatRequest, Completion};
use super::{ModelClient, ModelFuture, StreamUpdate, UpdateSink};
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

/// How to reach a server. The key comes from the caller, which resolved
/// `KNACK_API_KEY`, `model.api_key_env` and `.env`.
#[derive(Debug, Clone)]
pub struct ClientSettings {
    /// e.g. `http://127.0.0.1:8080/v1`; `/chat/completions` is appended.
    pub base_url: String,
    /// Sent as `Authorization: Bearer` when present; local servers need none.
    pub api_key: Option<String>,
    pub timeouts: ModelTimeouts,
    pub retry: RetryPolicy,
}

impl ClientSettings {
    pub fn new(base_url: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: None,
            timeouts: ModelTimeouts::default(),
            retry: RetryPolicy::default(),
        }
    }

    /// Settings from `config.yaml`'s `model` section, whose `base_url` the
    /// caller has already merged with `KNACK_BASE_URL`.
    pub fn from_config(config: &ModelConfig, api_key: Option<String>) -> Result<Self> {
        let base_url = config
            .base_url
            .clone()
            .filter(|url| !url.trim().is_empty())
            .ok_or(ModelError::NotConfigured)?;
        Ok(Self {
            base_url,
            api_key: api_key.filter(|key| !key.is_empty()),
            timeouts: ModelTimeouts::from_config(config),
            retry: RetryPolicy::from_config(config),
        })
    }
}

/// A streaming Chat Completions client for OpenAI, OpenRouter, vLLM,
/// llama.cpp, Ollama and anything else that speaks the same protocol.
#[derive(Debug, Clone)]
pub struct ChatCompletionsClient {
    http: reqwest::Client,
    endpoint: Url,
    /// `host:port`, for error messages.
    target: String,
    api_key: Option<String>,
    timeouts: ModelTimeouts,
    retry: RetryPolicy,
}

/// The request body; field order is fixed so the bytes repeat request after request.
#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    messages: &'a [ChatMessage],
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
    stream: bool,
    stream_options: StreamOptions,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

impl ChatCompletionsClient {
    pub fn new(settings: ClientSettings) -> Result<Self> {
        let http = reqwest::Client::builder()
            .connect_timeout(settings.timeouts.connect)
            .user_agent(concat!("knack/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|err| ModelError::Transport {
                detail: error_chain(&err),
            })?;
        Self::with_http_client(settings, http)
    }

    /// Uses a client built elsewhere (shared connection pool); its own connect
    /// timeout applies instead of `settings.timeouts.connect`.
    pub fn with_http_client(settings: ClientSettings, http: reqwest::Client) -> Result<Self> {
        let invalid = |reason: String| ModelError::InvalidBaseUrl {
            url: settings.base_url.clone(),
            reason,
        };
        let base = settings.base_url.trim().trim_end_matches('/');
        let endpoint = Url::parse(&format!("{base}/chat/completions"))
            .map_err(|err| invalid(err.to_string()))?;
        if !matches!(endpoint.scheme(), "http" | "https") {
            return Err(invalid("it must start with http:// or https://".into()));
        }
        let host = endpoint
            .host_str()
            .ok_or_else(|| invalid("it has no host".into()))?;
        let target = match endpoint.port_or_known_default() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        };
        Ok(Self {
            http,
            endpoint,
            target,
            api_key: settings.api_key,
            timeouts: settings.timeouts,
            retry: settings.retry,
        })
    }

    /// `{base_url}/chat/completions`
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }

    async fn stream_with_retries(
        &self,
        request: &ChatRequest,
        on_update: UpdateSink<'_>,
    ) -> Result<Completion> {
        let body = encode(request)?;
        let mut retries = 0u32;
        loop {
            let mut assembler = ReplyAssembler::default();
            let error = match self
                .attempt(&body, request, &mut assembler, on_update)
                .await
            {
                Ok(()) => return assembler.finish(),
                Err(error) => error,
            };
            if !error.is_retryable() {
                return Err(error);
            }
            if retries >= self.retry.max_retries {
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
                        ModelError::RateLimited { message, .. } => message,
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
            if assembler.emitted {
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

    /// One HTTP request and its stream, fed into `assembler`.
    async fn attempt(
        &self,
        body: &[u8],
        request: &ChatRequest,
        assembler: &mut ReplyAssembler,
        on_update: UpdateSink<'_>,
    ) -> Result<()> {
        let mut builder = self
            .http
            .post(self.endpoint.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .header("X-Knack-Purpose", request.purpose.as_str())
            .header("X-Knack-Session", request.session_id.as_str())
            .body(body.to_vec());
        if let Some(key) = &self.api_key {
            builder = builder.bearer_auth(key);
        }
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
            return Err(ModelError::from_status(status.as_u16(), retry_after, &text));
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
                // Only the trailing usage chunk can be missing; the reply itself is whole.
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
                    }
                }
            }
            if assembler.saw_done() {
                break;
            }
        }
        if let Some(data) = decoder.finish() {
            assembler.accept(&data, on_update)?;
        }
        if assembler.is_complete() {
            Ok(())
        } else {
            Err(ModelError::StreamCut {
                detail: "the connection closed without [DONE] or a finish_reason".into(),
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

impl ModelClient for ChatCompletionsClient {
    fn stream_chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_update: UpdateSink<'a>,
    ) -> ModelFuture<'a> {
        Box::pin(self.stream_with_retries(request, on_update))
    }
}

/// The body bytes, built once per call and resent unchanged on retry.
fn encode(request: &ChatRequest) -> Result<Vec<u8>> {
    let tools = request
        .tools
        .as_deref()
        .filter(|raw| raw.get().trim() != "[]");
    let wire = WireRequest {
        model: &request.model,
        messages: &request.messages,
        tools,
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
    };
    Ok(serde_json::to_vec(&wire)?)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{RequestPurpose, freeze_tools};
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    fn request(tools: Option<super::super::FrozenTools>) -> ChatRequest {
        ChatRequest {
            model: "m".into(),
            messages: vec![ChatMessage::system("s"), ChatMessage::user("u")],
            tools,
            purpose: RequestPurpose::Turn,
            session_id: "sess".into(),
        }
    }

    #[test]
    fn the_body_streams_with_usage_and_embeds_the_frozen_tools_verbatim() {
        let tools = freeze_tools(&[
            json!({"type": "function", "function": {"name": "z", "parameters": {"b": 1, "a": 2}}}),
        ])
        .unwrap();
        let body = String::from_utf8(encode(&request(tools.clone())).unwrap()).unwrap();
        assert!(body.contains(tools.unwrap().get()), "{body}");
        let value: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(value["stream"], true);
        assert_eq!(value["stream_options"], json!({"include_usage": true}));
        assert_eq!(
            value["messages"][1],
            json!({"role": "user", "content": "u"})
        );
    }

    #[test]
    fn empty_or_missing_tools_are_omitted() {
        let empty: super::super::FrozenTools =
            std::sync::Arc::from(serde_json::value::to_raw_value(&json!([])).unwrap());
        for tools in [None, Some(empty)] {
            let value: Value = serde_json::from_slice(&encode(&request(tools)).unwrap()).unwrap();
            assert!(value.get("tools").is_none(), "{value}");
        }
    }

    #[test]
    fn base_urls_are_checked_and_named_by_host_and_port() {
        let client =
            ChatCompletionsClient::new(ClientSettings::new("http://127.0.0.1:8080/v1/")).unwrap();
        assert_eq!(
            client.endpoint().as_str(),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
        assert_eq!(client.target, "127.0.0.1:8080");
        let https =
            ChatCompletionsClient::new(ClientSettings::new("https://api.example.org/v1")).unwrap();
        assert_eq!(https.target, "api.example.org:443");
        for bad in ["127.0.0.1:8080/v1", "ftp://host/v1", "not a url"] {
            let err = ChatCompletionsClient::new(ClientSettings::new(bad)).unwrap_err();
            assert!(
                matches!(err, ModelError::InvalidBaseUrl { .. }),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn settings_from_config_need_a_base_url() {
        let mut config = ModelConfig::default();
        let err = ClientSettings::from_config(&config, None).unwrap_err();
        assert!(err.to_string().contains("KNACK_BASE_URL"), "{err}");
        config.base_url = Some("http://localhost:11434/v1".into());
        config.idle_timeout_secs = 7;
        let settings = ClientSettings::from_config(&config, Some(String::new())).unwrap();
        assert_eq!(settings.api_key, None);
        assert_eq!(settings.timeouts.idle, Duration::from_secs(7));
        assert_eq!(settings.retry.max_retries, config.max_retries);
    }
}
