//! agent-loop's integration tests, as one binary.
#[cfg(test)] // lets the helpers unwrap like the tests they serve
mod suite;
