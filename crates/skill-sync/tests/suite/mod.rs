//! Seeding cases, manifest recovery, reset/diff, the real bundled trees, timing.

mod cases;
mod fixture;
mod inspect_reset;
mod real_trees;
mod recovery;
mod timing;
