//! The schema migrations of both backends, side by side: step N of
//! [`sqlite`] and step N of [`pg`] build the same books, so one
//! [`SCHEMA_VERSION`] names them on either backend.

pub mod pg;
pub mod sqlite;

/// The schema version this binary writes and understands.
pub const SCHEMA_VERSION: u32 = sqlite::MIGRATIONS.len() as u32;
