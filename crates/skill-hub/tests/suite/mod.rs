mod collections;
mod fixture;
mod hostile;
mod lifecycle;
mod marketplace;
mod search;
mod sources;
