//! Integration suites: the labelled corpus and the context-file scope.
//! Each file holds one concern; shared fixtures stay on disk under `tests/corpus/`.
mod context;
mod corpus;
