mod common;
mod config;
mod prompt;
mod run;
mod sessions;
mod skills;
mod sync;
mod tool;
