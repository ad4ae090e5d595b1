//! End-to-end tests of the `knack` binary, one test binary for all of them.
//! Each test runs the real binary with a temporary KNACK_HOME.

mod cli;
