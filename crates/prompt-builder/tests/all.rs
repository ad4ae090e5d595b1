//! Integration tests of prompt-builder, one binary (see suite/).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
