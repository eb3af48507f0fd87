//! A read-only look at the database for `mediaparse diagnose`: whether it
//! answers, its schema version, the newest time it recorded and (on
//! PostgreSQL) the server's clock. Nothing is created or migrated. Each
//! backend's look is in `sqlite/probe.rs` and `pg/probe.rs`.

use crate::{DbLocation, StoreResult, pg, sqlite};

/// What a read-only look at the database found.
#[derive(Clone, Debug)]
pub struct Probe {
    pub backend: &'static str,
    pub schema_version: u32,
    /// The version this binary writes for this backend.
    pub supported_version: u32,
    /// The newest `created_at` (Unix seconds) among accounts, keys and
    /// charges; `None` when nothing was recorded yet.
    pub newest_record_s: Option<i64>,
    /// The database server's clock in Unix milliseconds (PostgreSQL only).
    pub server_clock_ms: Option<i64>,
}

/// Open the database read-only (`None`: a SQLite file that does not exist yet).
pub fn probe(location: &DbLocation) -> StoreResult<Option<Probe>> {
    match location {
        DbLocation::Sqlite(path) if !path.exists() => Ok(None),
        DbLocation::Sqlite(path) => sqlite::probe::probe(path).map(Some),
        DbLocation::Postgres(url) => pg::probe::probe(url).map(Some),
    }
}

/// The same text for SQLite and PostgreSQL (`created_at` is seconds in both).
pub(crate) const NEWEST_RECORD: &str = "SELECT MAX(t) FROM (
    SELECT MAX(created_at) AS t FROM accounts
    UNION ALL SELECT MAX(created_at) FROM api_keys
    UNION ALL SELECT MAX(created_at) FROM ledger) AS newest";
