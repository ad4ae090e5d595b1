//! knack's agent core: the model client today; tools, the turn loop and sessions build on it.
//! It never draws on a terminal: frontends see only `agent-protocol` events.

mod error;
pub mod model;

pub use error::{ModelError, Result};
