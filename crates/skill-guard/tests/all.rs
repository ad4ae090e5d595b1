//! Integration tests for skill-guard, compiled as one binary.
//! The suites live in `suite/`; the labelled corpus in `corpus/`, the adversarial one in `corpus-adversarial/`.
// Helpers outside `#[test]` functions panic on broken fixtures by design.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
