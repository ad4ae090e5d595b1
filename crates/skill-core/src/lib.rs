//! skill core
