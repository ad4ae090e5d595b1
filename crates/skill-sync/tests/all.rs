//! Integration tests of skill-sync, one binary (see tests/suite/).
// Test helpers outside #[test] functions may panic freely.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
