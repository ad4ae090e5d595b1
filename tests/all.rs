//! End-to-end tests of the `knack` binary, one test binary for all of them.
//! Each test runs the real binary with a temporary KNACK_HOME.

// Helpers outside #[test] functions unwrap too; that is fine in a test binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cli;
