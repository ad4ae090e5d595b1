//! Integration suites: the labelled corpus, the adversarial corpus and the context-file scope.
//! Each file holds one concern; shared fixtures stay on disk under `tests/corpus/`.
mod adversarial;
mod context;
mod corpus;
mod unseen;
