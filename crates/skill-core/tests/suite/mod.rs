mod discovery;
mod fixture;
mod learning;
mod manage_attacks;
mod manage_reliability;
mod search;
mod symlinks;
mod view;
