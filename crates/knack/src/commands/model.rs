//! Which model server and model a session talks to: environment first
//! (`KNACK_BASE_URL`, `KNACK_MODEL`, `KNACK_API_KEY`), then config.yaml.

use agent_loop::model::{ChatCompletionsClient, ClientSettings};

use crate::context::Context;
use crate::exit;

pub struct ModelChoice {
    pub model: String,
    pub client: ChatCompletionsClient,
}

/// Resolves the model or fails with exit code 3 naming what to set.
pub fn resolve(ctx: &Context) -> anyhow::Result<ModelChoice> {
    let env = ctx.home.env_file();
    let cfg = &ctx.config.model;
    let base_url = env
        .lookup("KNACK_BASE_URL")
        .or_else(|| cfg.base_url.clone());
    let model = env.lookup("KNACK_MODEL").or_else(|| cfg.name.clone());
    let (base_url, model) = match (base_url, model) {
        (Some(b), Some(m)) => (b, m),
        (None, _) => {
            return Err(config_error(
                "no model server configured: set KNACK_BASE_URL (e.g. http://127.0.0.1:8080/v1) \
or `knack config set model.base_url URL`",
            ));
        }
        (_, None) => {
            return Err(config_error(
                "no model name configured: set KNACK_MODEL or `knack config set model.name NAME`",
            ));
        }
    };
    let api_key = env
        .lookup("KNACK_API_KEY")
        .or_else(|| env.lookup(&cfg.api_key_env));
    let mut effective = cfg.clone();
    effective.base_url = Some(base_url);
    let settings = ClientSettings::from_config(&effective, api_key)
        .map_err(|e| exit::failed(e.to_string()))?;
    let client = ChatCompletionsClient::new(settings)
        .map_err(|e| exit::failed(format!("cannot set up the HTTP client: {e}")))?;
    Ok(ModelChoice { model, client })
}

fn config_error(message: &str) -> anyhow::Error {
    crate::exit::Coded {
        code: exit::CONFIG,
        message: message.to_owned(),
    }
    .into()
}
