mod common;
mod config;
mod skills;
