mod collections;
mod fixture;
mod hostile;
mod lifecycle;
mod search;
mod sources;
