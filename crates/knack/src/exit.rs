//! Exit codes (CONTRACT.md): 0 ok, 1 failed, 2 usage, 3 configuration, 130 interrupted.
//! Errors carry their code so every command reports failure the same way.

pub const OK: u8 = 0;
pub const FAILED: u8 = 1;
pub const USAGE: u8 = 2;
pub const CONFIG: u8 = 3;

/// An error that knows its exit code.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Coded {
    pub code: u8,
    pub message: String,
}

pub fn failed(message: impl Into<String>) -> anyhow::Error {
    Coded {
        code: FAILED,
        message: message.into(),
    }
    .into()
}

pub fn usage(message: impl Into<String>) -> anyhow::Error {
    Coded {
        code: USAGE,
        message: message.into(),
    }
    .into()
}

/// Prints the error on stderr and returns its exit code.
pub fn report(err: &anyhow::Error) -> u8 {
    let code = if let Some(coded) = err.downcast_ref::<Coded>() {
        coded.code
    } else if let Some(cfg) = err.downcast_ref::<knack_config::Error>() {
        match cfg {
            knack_config::Error::InvalidConfig { .. }
            | knack_config::Error::UnknownKey { .. }
            | knack_config::Error::InvalidValue { .. }
            | knack_config::Error::NoHome => CONFIG,
            knack_config::Error::Io { .. } => FAILED,
        }
    } else if let Some(setup) = err.downcast_ref::<agent_loop::setup::SetupError>() {
        match setup {
            agent_loop::setup::SetupError::Config(_) => CONFIG,
            agent_loop::setup::SetupError::Client(_) => FAILED,
        }
    } else {
        FAILED
    };
    eprintln!("knack: {err:#}");
    code
}
