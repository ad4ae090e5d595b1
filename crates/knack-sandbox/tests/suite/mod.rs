mod confine;
mod fallback;
mod namespaces;
