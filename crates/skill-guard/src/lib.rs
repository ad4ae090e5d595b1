//! Threat scanner (placeholder until the guard lands).
