mod discovery;
mod fixture;
mod manage_attacks;
mod manage_reliability;
mod search;
mod symlinks;
mod view;
