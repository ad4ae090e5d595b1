//! skill-core's integration tests, one binary (one link step) for all of them.

// Helpers outside #[test] functions unwrap too; that is fine in a test binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
