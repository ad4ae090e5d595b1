//! Prompt-builder behaviour from the outside: golden prompts, screening, caps, budget.
mod fixture;
mod golden;
mod index_timing;
mod layers;
