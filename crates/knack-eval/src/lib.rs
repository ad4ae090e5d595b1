//! `knack eval`: measures whether the right skill fires, whether a skill
//! helps, and whether the agent gets better at repeated work by learning skills.
//!
//! Every agent session is a child `knack run --json` process in a fresh temp
//! workspace with a temp `KNACK_HOME`: the sandbox, the event stream and the
//! session store are the same ones a user gets, and runs stay isolated from
//! one another. This crate plans the runs, accounts for them and writes the
//! reports; the `knack` binary only parses flags and resolves the provider.

mod error;
pub mod learning_loop;
pub mod order;
pub mod pool;
pub mod record;
pub mod report;
pub mod runner;
pub mod setup;
pub mod skill_ab;
pub mod spec;
pub mod stats;
pub mod trace;
pub mod triggers;

pub use error::{Error, Result};
pub use runner::{AgentCommand, EvalContext, ProviderInfo};
