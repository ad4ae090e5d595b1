//! knack-sandbox's integration tests: real child processes under the real kernel sandbox.
mod suite;
