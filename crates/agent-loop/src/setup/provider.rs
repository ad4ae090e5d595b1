//! Which provider, model, endpoint and key a session uses: one resolver for every frontend
//! (`run`, the TUI and its `/model`, `doctor`, `prompt show`, `model list`, `eval`).

use std::sync::Arc;

use knack_config::{Config, EnvFile, KnackHome, ProviderConfig, Wire};

use crate::compaction::{ContextBudget, effective_window};
use crate::model::{
    ClientSettings, MIN_THINKING_BUDGET, ModelClient, ModelError, ModelTimeouts, RetryPolicy,
    THINKING_EFFORTS, build_client, default_base_url, thinking_budget_for_effort,
};

/// `--provider` and `--model` as a frontend took them; `None` defers to the config.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelFlags {
    pub provider: Option<String>,
    pub model: Option<String>,
}

/// Why no model could be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A setting is missing or wrong; the message names it and how to fix it.
    #[error("{0}")]
    Config(String),
    /// The HTTP client could not be built for a reason no setting explains.
    #[error("cannot set up the HTTP client: {0}")]
    Client(ModelError),
}

/// Everything a session needs to reach its model.
pub struct ModelChoice {
    pub model: String,
    pub client: Arc<dyn ModelClient>,
    /// The model's context window: `KNACK_CONTEXT_WINDOW`, else the provider
    /// profile's, else `model.context_window`; `None` lets the session use
    /// the model family's usual window.
    pub context_window: Option<u64>,
}

/// The decisions before any client exists; `model list` and `prompt show`
/// stop here.
#[derive(Debug, Clone)]
pub struct Resolution {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub settings: ClientSettings,
    pub context_window: Option<u64>,
}

/// Resolves the model and builds its client, or says which setting to fix.
pub fn resolve(
    home: &KnackHome,
    config: &Config,
    flags: &ModelFlags,
) -> Result<ModelChoice, SetupError> {
    let resolution = resolve_settings(home, config, flags)?;
    let Some(model) = resolution.model else {
        let hint = match &resolution.provider {
            Some(name) => format!(
                "set providers.{name}.model or model.name in config.yaml, KNACK_MODEL, or --model NAME"
            ),
            None => "set KNACK_MODEL, `knack config set model.name NAME`, or --model NAME".into(),
        };
        return Err(SetupError::Config(format!(
            "no model name configured: {hint}"
        )));
    };
    let context_window = resolution.context_window;
    let client = build_client(resolution.settings).map_err(|e| match e {
        ModelError::InvalidBaseUrl { .. } => SetupError::Config(e.to_string()),
        other => SetupError::Client(other),
    })?;
    Ok(ModelChoice {
        model,
        client,
        context_window,
    })
}

/// The model name and its context window as a session would take them
/// (`None` where not configured), without building the client settings:
/// `prompt show` needs these even when no key is set.
pub fn model_and_window(
    home: &KnackHome,
    config: &Config,
    flags: &ModelFlags,
) -> Result<(Option<String>, Option<u64>), SetupError> {
    let env = home.env_file();
    let provider = pick_provider(config, flags)?;
    let model = pick_model(config, &env, flags, provider);
    Ok((model, pick_window(config, &env, provider)?))
}

/// `KNACK_CONTEXT_WINDOW`, else the provider profile's, else `model.context_window`.
fn pick_window(
    config: &Config,
    env: &EnvFile,
    provider: Option<(&str, &ProviderConfig)>,
) -> Result<Option<u64>, SetupError> {
    Ok(match env.lookup("KNACK_CONTEXT_WINDOW") {
        Some(text) => Some(text.trim().parse::<u64>().map_err(|_| {
            SetupError::Config(format!(
                "KNACK_CONTEXT_WINDOW is '{text}', not a whole number of tokens (e.g. 32768)"
            ))
        })?),
        None => provider
            .and_then(|(_, profile)| profile.context_window)
            .or(config.model.context_window),
    })
}

/// The provider profile, the model, the endpoint and the key.
pub fn resolve_settings(
    home: &KnackHome,
    config: &Config,
    flags: &ModelFlags,
) -> Result<Resolution, SetupError> {
    let env = home.env_file();
    let cfg = &config.model;
    let provider = pick_provider(config, flags)?;
    let model = pick_model(config, &env, flags, provider);
    let mut settings = match provider {
        Some((name, profile)) => profile_settings(&env, name, profile)?,
        None => env_only_settings(config, &env)?,
    };
    settings.timeouts = ModelTimeouts::from_config(cfg);
    settings.retry = RetryPolicy::from_config(cfg);
    let context_window = pick_window(config, &env, provider)?;
    // With a known window the default cap never asks for more than the
    // session leaves free; a guessed window is not reason enough to cut it.
    let (window, guessed) = effective_window(context_window, model.as_deref().unwrap_or_default());
    if settings.max_output_tokens.is_none() && !guessed {
        settings.max_output_tokens = Some(
            settings
                .output_cap()
                .min(answer_room(window, config.context.compact_at)),
        );
    }
    Ok(Resolution {
        provider: provider.map(|(name, _)| name.to_owned()),
        model,
        settings,
        context_window,
    })
}

/// The tokens a reply can have without the request outgrowing the window:
/// what the session leaves free above its compaction threshold. A server
/// that checks prompt + limit against the window (vLLM) would refuse a
/// larger limit for a small model.
fn answer_room(window: usize, compact_at: f64) -> u32 {
    let budget = ContextBudget::for_window(window, compact_at);
    let room = window.saturating_sub(budget.threshold()).max(1);
    u32::try_from(room).unwrap_or(u32::MAX)
}

/// `--provider`, else `model.provider`, else none (environment only).
fn pick_provider<'c>(
    config: &'c Config,
    flags: &ModelFlags,
) -> Result<Option<(&'c str, &'c ProviderConfig)>, SetupError> {
    let (name, source) = match (&flags.provider, &config.model.provider) {
        (Some(name), _) => (name.as_str(), "--provider"),
        (None, Some(name)) => (name.as_str(), "model.provider"),
        (None, None) => return Ok(None),
    };
    match config.providers.get_key_value(name) {
        Some((key, profile)) => Ok(Some((key.as_str(), profile))),
        None => {
            let known: Vec<&str> = config.providers.keys().map(String::as_str).collect();
            let choices = if known.is_empty() {
                "none is configured".to_owned()
            } else {
                format!("configured: {}", known.join(", "))
            };
            Err(SetupError::Config(format!(
                "unknown provider '{name}' ({source}; {choices}) — add providers.{name} to config.yaml \
(wire, base_url, api_key_env) or pick a configured one"
            )))
        }
    }
}

/// `--model`, then `KNACK_MODEL`, then the config: `model.name` for the
/// configured provider (and the environment-only setup), the profile's own
/// `model` for a provider picked with `--provider`.
fn pick_model(
    config: &Config,
    env: &EnvFile,
    flags: &ModelFlags,
    provider: Option<(&str, &ProviderConfig)>,
) -> Option<String> {
    let global = config.model.name.clone();
    let from_config = match provider {
        Some((name, profile)) if config.model.provider.as_deref() == Some(name) => {
            global.or_else(|| profile.model.clone())
        }
        Some((_, profile)) => profile.model.clone().or(global),
        None => global,
    };
    flags
        .model
        .clone()
        .or_else(|| env.lookup("KNACK_MODEL"))
        .or(from_config)
        .filter(|name| !name.trim().is_empty())
}

/// Settings from a provider profile; the key comes from its `api_key_env`
/// (which must be set when named) or `KNACK_API_KEY`.
fn profile_settings(
    env: &EnvFile,
    name: &str,
    profile: &ProviderConfig,
) -> Result<ClientSettings, SetupError> {
    let base_url = match profile.base_url.as_deref().filter(|u| !u.trim().is_empty()) {
        Some(url) => url.trim().to_owned(),
        None => default_base_url(profile.wire)
            .ok_or_else(|| {
                SetupError::Config(format!(
                    "providers.{name}.base_url is not set — add the server's URL, e.g. http://127.0.0.1:8080/v1"
                ))
            })?
            .to_owned(),
    };
    check_scheme(&base_url, &format!("providers.{name}.base_url"))?;
    // The key and where it came from, named if the server rejects it.
    let (api_key, api_key_source) = match profile
        .api_key_env
        .as_deref()
        .filter(|v| !v.trim().is_empty())
    {
        Some(variable) => match (env.lookup(variable), env.lookup("KNACK_API_KEY")) {
            (Some(key), _) => (
                Some(key),
                format!("{variable} (providers.{name}.api_key_env)"),
            ),
            (None, Some(key)) => (
                Some(key),
                format!(
                    "KNACK_API_KEY (used because {variable}, providers.{name}.api_key_env, is not set)"
                ),
            ),
            (None, None) => {
                return Err(SetupError::Config(format!(
                    "providers.{name}.api_key_env names {variable}, which is not set — \
export {variable}=… or add it to $KNACK_HOME/.env"
                )));
            }
        },
        None => (
            env.lookup("KNACK_API_KEY"),
            format!("KNACK_API_KEY (or name the key's variable in providers.{name}.api_key_env)"),
        ),
    };
    // A limit of 0 asks for an empty reply, which every server refuses.
    if profile.max_output_tokens == Some(0) {
        return Err(SetupError::Config(format!(
            "providers.{name}.max_output_tokens is 0, which leaves no room for a reply — set a limit such as 4096, or remove the key for the default"
        )));
    }
    Ok(ClientSettings {
        base_url,
        base_url_setting: Some(if profile.base_url.is_some() {
            format!("providers.{name}.base_url")
        } else {
            format!("providers.{name}.wire (its default URL)")
        }),
        api_key,
        api_key_source: Some(api_key_source),
        thinking_budget: thinking_budget(name, profile)?,
        ..ClientSettings::from(profile)
    })
}

/// The Anthropic wire's extended-thinking budget: `thinking_budget`, else
/// the one `reasoning_effort` stands for; other wires take no budget.
fn thinking_budget(name: &str, profile: &ProviderConfig) -> Result<Option<u32>, SetupError> {
    if profile.wire != Wire::Anthropic {
        return Ok(None);
    }
    let budget = match (profile.thinking_budget, profile.reasoning_effort.as_deref()) {
        (Some(budget), _) => budget,
        (None, Some(effort)) => thinking_budget_for_effort(effort).ok_or_else(|| {
            SetupError::Config(format!(
                "providers.{name}.reasoning_effort is '{effort}', which the anthropic wire cannot map \
to a thinking budget — use one of {THINKING_EFFORTS}, or set providers.{name}.thinking_budget (tokens)"
            ))
        })?,
        (None, None) => return Ok(None),
    };
    if budget < MIN_THINKING_BUDGET {
        return Err(SetupError::Config(format!(
            "providers.{name}.thinking_budget is {budget}; Anthropic needs at least {MIN_THINKING_BUDGET} tokens — \
raise it, or remove it and reasoning_effort to turn thinking off"
        )));
    }
    Ok(Some(budget))
}

/// The environment-only setup: `KNACK_BASE_URL` (or `model.base_url`),
/// `KNACK_WIRE`, `KNACK_API_KEY` (or the variable `model.api_key_env` names).
fn env_only_settings(config: &Config, env: &EnvFile) -> Result<ClientSettings, SetupError> {
    let cfg = &config.model;
    let (base_url, key_name) = match env.lookup("KNACK_BASE_URL") {
        Some(url) => (url, "KNACK_BASE_URL"),
        None => match cfg.base_url.clone().filter(|u| !u.trim().is_empty()) {
            Some(url) => (url, "model.base_url"),
            None => {
                return Err(SetupError::Config(
                    "no model server configured: set KNACK_BASE_URL (e.g. http://127.0.0.1:8080/v1), \
`knack config set model.base_url URL`, or pick a provider with model.provider / --provider"
                        .to_owned(),
                ));
            }
        },
    };
    check_scheme(&base_url, key_name)?;
    let wire = match env.lookup("KNACK_WIRE") {
        Some(name) => Wire::from_name(&name).ok_or_else(|| {
            SetupError::Config(format!(
                "KNACK_WIRE={name} is not a wire protocol — use chat, anthropic or responses"
            ))
        })?,
        None => Wire::Chat,
    };
    let (api_key, api_key_source) = match env.lookup("KNACK_API_KEY") {
        Some(key) => (Some(key), "KNACK_API_KEY".to_owned()),
        None => (
            env.lookup(&cfg.api_key_env),
            format!("{} (model.api_key_env) or KNACK_API_KEY", cfg.api_key_env),
        ),
    };
    let mut settings = ClientSettings::new(base_url.trim()).with_wire(wire);
    settings.base_url_setting = Some(key_name.to_owned());
    settings.api_key = api_key;
    settings.api_key_source = Some(api_key_source);
    Ok(settings)
}

/// A URL without `http://` or `https://` is the most common slip; say how to write it.
fn check_scheme(url: &str, key: &str) -> Result<(), SetupError> {
    let lower = url.trim().to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Ok(());
    }
    let suggestion = if lower.contains("://") {
        "use http:// or https://".to_owned()
    } else {
        format!(
            "write it as https://{} (or http:// for a local server)",
            url.trim()
        )
    };
    Err(SetupError::Config(format!(
        "{key} '{url}' has no http:// or https:// scheme — {suggestion}"
    )))
}

/// A provider profile as `knack model list` and the TUI's `/model` show it.
pub struct ProfileSummary {
    pub name: String,
    pub wire: &'static str,
    pub base_url: Option<String>,
    /// The model `--provider NAME` would send.
    pub model: Option<String>,
    pub context_window: Option<u64>,
    /// How hard the model is asked to think (`providers.<name>.reasoning_effort`).
    pub reasoning_effort: Option<String>,
    /// Anthropic: the extended-thinking budget requests carry, when thinking is on.
    pub thinking_budget: Option<u32>,
    /// `model.provider` names it.
    pub active: bool,
}

/// Every provider profile of the config, in name order.
pub fn profiles(home: &KnackHome, config: &Config) -> Vec<ProfileSummary> {
    let env = home.env_file();
    let active = config.model.provider.as_deref();
    config
        .providers
        .iter()
        .map(|(name, profile)| {
            let flags = ModelFlags {
                provider: Some(name.clone()),
                model: None,
            };
            ProfileSummary {
                name: name.clone(),
                wire: profile.wire.name(),
                base_url: profile
                    .base_url
                    .clone()
                    .or_else(|| default_base_url(profile.wire).map(str::to_owned)),
                model: pick_model(config, &env, &flags, Some((name, profile))),
                context_window: profile.context_window,
                reasoning_effort: profile.reasoning_effort.clone(),
                // A budget the profile cannot use shows as none; sessions name the error.
                thinking_budget: thinking_budget(name, profile).ok().flatten(),
                active: active == Some(name.as_str()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_output_cap_leaves_the_prompt_its_room() {
        // Large windows: the default cap fits in what compaction leaves free.
        assert!(answer_room(200_000, 0.8) >= crate::model::DEFAULT_MAX_OUTPUT_TOKENS);
        // A small local model: prompt (at most the threshold) plus reply fit the window.
        let room = answer_room(8_192, 0.8);
        assert_eq!(room, 8_192 - 6_553);
        // The session's own reserve is the floor when compact_at is near 1.
        assert_eq!(answer_room(8_192, 1.0), 1_024);
    }

    #[test]
    fn urls_without_a_scheme_say_how_to_write_them() {
        assert!(check_scheme("https://api.example.org/v1", "k").is_ok());
        assert!(check_scheme("HTTP://127.0.0.1:8080/v1", "k").is_ok());
        let err = check_scheme("api.anthropic.com/v1", "providers.claude.base_url")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("providers.claude.base_url")
                && err.contains("https://api.anthropic.com/v1"),
            "{err}"
        );
        let err = check_scheme("ftp://host", "KNACK_BASE_URL")
            .unwrap_err()
            .to_string();
        assert!(err.contains("use http:// or https://"), "{err}");
    }
}
