//! Integration tests of the hub against real sources: a static HTTP server on
//! 127.0.0.1, git repositories made with the git CLI, and local folders.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
