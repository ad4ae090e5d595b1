//! `/model` outside the screen: which provider profiles there are to pick
//! from, and turning `/model NAME` into a client through the one resolver
//! (`agent_loop::setup::resolve`) and handing it to the running session.

use std::sync::{Arc, Mutex};

use agent_loop::session::{ModelSwitch, ModelSwitcher};
use agent_loop::setup::{ModelFlags, profiles};

use super::picker::PickerRow;
use crate::context::Context;

/// What the app needs for `/model`; tests give it a stand-in.
pub trait ModelSource {
    /// The provider profiles to pick from (empty with the environment-only setup).
    fn choices(&self) -> Vec<PickerRow>;
    /// Switches the session to what `arg` names (see [`flags_for`]); the
    /// error is a sentence for the transcript.
    fn switch(&mut self, arg: &str) -> Result<Switched, String>;
}

/// The model now in use, for the status line and the note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Switched {
    pub model: String,
    pub provider: Option<String>,
    /// The effective context window in tokens, for the status line's gauge.
    pub context_window: u64,
}

/// The flags `/model ARG` means, given the ones in use: `PROVIDER MODEL`
/// sets both; a single word is a provider profile when one has that name
/// (its model then comes by the usual rules), else a model name on the
/// current provider.
pub fn flags_for(ctx: &Context, current: &ModelFlags, arg: &str) -> ModelFlags {
    let words: Vec<&str> = arg.split_whitespace().collect();
    match words.as_slice() {
        [provider, model, ..] => ModelFlags {
            provider: Some((*provider).to_owned()),
            model: Some((*model).to_owned()),
        },
        [name] if ctx.config.providers.contains_key(*name) => ModelFlags {
            provider: Some((*name).to_owned()),
            model: None,
        },
        _ => ModelFlags {
            provider: current.provider.clone(),
            model: Some(arg.trim().to_owned()),
        },
    }
}

/// The real source: the config's profiles, the resolver, and the running
/// session's switcher. The flags are shared with `knack chat`'s loop, so
/// `/new` and `/resume` keep the model chosen last.
pub struct ConfiguredModels {
    pub ctx: Arc<Context>,
    pub flags: Arc<Mutex<ModelFlags>>,
    pub switcher: ModelSwitcher,
}

impl ConfiguredModels {
    fn current(&self) -> ModelFlags {
        match self.flags.lock() {
            Ok(flags) => flags.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

impl ModelSource for ConfiguredModels {
    fn choices(&self) -> Vec<PickerRow> {
        let current = self.current();
        let active = current
            .provider
            .or_else(|| self.ctx.config.model.provider.clone());
        profiles(&self.ctx.home, &self.ctx.config)
            .into_iter()
            .map(|p| PickerRow {
                current: active.as_deref() == Some(p.name.as_str()),
                detail: format!(
                    "{} · {} · {}",
                    p.model.as_deref().unwrap_or("(no model set)"),
                    p.wire,
                    p.base_url.as_deref().unwrap_or("(no base_url)")
                ),
                title: p.name.clone(),
                value: p.name,
            })
            .collect()
    }

    fn switch(&mut self, arg: &str) -> Result<Switched, String> {
        let flags = flags_for(&self.ctx, &self.current(), arg);
        let choice = self.ctx.model(&flags).map_err(|e| format!("{e:#}"))?;
        let (window, _) =
            agent_loop::compaction::effective_window(choice.context_window, &choice.model);
        let switched = Switched {
            model: choice.model.clone(),
            provider: flags
                .provider
                .clone()
                .or_else(|| self.ctx.config.model.provider.clone()),
            context_window: window as u64,
        };
        let delivered = self.switcher.switch(ModelSwitch {
            model: choice.model,
            client: choice.client,
            context_window: choice.context_window,
        });
        if !delivered {
            return Err("the session has ended; /new starts another one".into());
        }
        match self.flags.lock() {
            Ok(mut shared) => *shared = flags,
            Err(poisoned) => *poisoned.into_inner() = flags,
        }
        Ok(switched)
    }
}
