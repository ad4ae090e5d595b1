//! skill-core's integration tests, one binary (one link step) for all of them.

mod suite;
