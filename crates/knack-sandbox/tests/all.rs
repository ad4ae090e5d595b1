//! knack-sandbox's integration tests: real child processes under the real kernel sandbox.

// Helpers outside #[test] functions unwrap too; that is fine in a test binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod suite;
