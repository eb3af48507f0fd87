//! Schema migrations, applied in order and recorded in `PRAGMA user_version`.

use rusqlite::Connection;

use super::{StoreError, StoreResult};

const MIGRATIONS: &[&str] = &[
    // 1: accounts, keys, ledger, credit grants
    "CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        balance INTEGER NOT NULL DEFAULT 0 CHECK (balance >= 0),
        created_at INTEGER NOT NULL
     );
     CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        name TEXT NOT NULL,
        token_hash BLOB NOT NULL UNIQUE,
        token_prefix TEXT NOT NULL,
        expires_on TEXT,
        platforms TEXT,
        created_at INTEGER NOT NULL,
        rotated_at INTEGER
     );
     CREATE TABLE ledger (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        key_id TEXT NOT NULL,
        platform TEXT NOT NULL,
        credits INTEGER NOT NULL CHECK (credits > 0),
        request_id TEXT NOT NULL,
        created_at INTEGER NOT NULL
     );
     CREATE INDEX ledger_by_account ON ledger (account_id, created_at);
     CREATE INDEX ledger_by_key ON ledger (key_id, created_at);
     CREATE TABLE credit_grants (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        credits INTEGER NOT NULL,
        created_at INTEGER NOT NULL
     );",
    // 2: per-key rate limits, key edit times, kinds of credit grants
    // (`add` or `set`; a set records the signed difference it made), and
    // an index for usage queries by time.
    "ALTER TABLE api_keys ADD COLUMN rate_limit_per_minute INTEGER
        CHECK (rate_limit_per_minute IS NULL OR rate_limit_per_minute >= 0);
     ALTER TABLE api_keys ADD COLUMN updated_at INTEGER;
     ALTER TABLE credit_grants ADD COLUMN kind TEXT NOT NULL DEFAULT 'add';
     CREATE INDEX ledger_by_time ON ledger (created_at);
     CREATE INDEX ledger_by_platform ON ledger (platform, created_at);",
    // 3: a key's default media delivery (issue 15; NULL: the service default).
    "ALTER TABLE api_keys ADD COLUMN delivery TEXT
        CHECK (delivery IS NULL OR delivery IN ('direct', 'tunnel'));",
    // 4: shared per-key request counts, one row per bucket and minute (issue 16).
    "CREATE TABLE rate_buckets (
        bucket TEXT NOT NULL,
        minute BIGINT NOT NULL,
        count BIGINT NOT NULL,
        PRIMARY KEY (bucket, minute)
     );",
];

/// The schema version this binary writes and understands.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// The database's schema version (`PRAGMA user_version`; 0 = empty).
pub fn version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// Refuse a database written by a newer binary: its books may hold columns
/// or rules this one would silently ignore.
pub fn check_not_newer(conn: &Connection) -> StoreResult<u32> {
    let found = version(conn)?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(found)
}

/// Apply every migration the database lacks, each in its own transaction;
/// returns (version before, version after).
pub fn migrate(conn: &Connection) -> StoreResult<(u32, u32)> {
    migrate_to(conn, SCHEMA_VERSION)
}

/// Migrate up to `target` (tests build each earlier version with this).
pub(super) fn migrate_to(conn: &Connection, target: u32) -> StoreResult<(u32, u32)> {
    let current = check_not_newer(conn)?;
    for (i, sql) in MIGRATIONS
        .iter()
        .enumerate()
        .take(target as usize)
        .skip(current as usize)
    {
        conn.execute_batch(&format!(
            "BEGIN; {sql}; PRAGMA user_version = {}; COMMIT;",
            i + 1
        ))?;
    }
    Ok((current, version(conn)?))
}
