//! SQLite migrations, applied in order and recorded in `PRAGMA user_version`.

use rusqlite::Connection;

use super::SCHEMA_VERSION;
use crate::{StoreError, StoreResult};

pub(crate) const MIGRATIONS: &[&str] = &[
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
    // 3: a key's default media delivery (NULL: the service default).
    "ALTER TABLE api_keys ADD COLUMN delivery TEXT
        CHECK (delivery IS NULL OR delivery IN ('direct', 'tunnel'));",
    // 4: bytes the tunnel served, per UTC day, key and platform.
    "CREATE TABLE tunnel_usage (
        day BIGINT NOT NULL,
        account_id TEXT NOT NULL,
        key_id TEXT NOT NULL,
        platform TEXT NOT NULL,
        bytes BIGINT NOT NULL DEFAULT 0,
        streams BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (day, key_id, platform)
     );
     CREATE INDEX tunnel_usage_by_account ON tunnel_usage (account_id, day);",
    // 5: Idempotency-Key records (store/idempotency.rs); ledger
    // request ids unique (the server mints them; an older database's
    // repeated client ids get `_<row id>` appended), the client's
    // X-Request-Id kept beside them; daily aggregates of the ledger per
    // account, key and platform (store/usage_daily.rs), filled from the
    // ledger here and kept by every charge; an index for the most recent
    // entries of an account and platform.
    "ALTER TABLE ledger ADD COLUMN client_request_id TEXT;
     UPDATE ledger SET request_id = request_id || '_' || CAST(id AS TEXT)
        WHERE request_id IN (SELECT request_id FROM ledger GROUP BY request_id HAVING COUNT(*) > 1);
     CREATE UNIQUE INDEX ledger_by_request_id ON ledger (request_id);
     CREATE INDEX ledger_by_account_platform ON ledger (account_id, platform, created_at, credits);
     CREATE TABLE idempotency_keys (
        key_id TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        request_id TEXT NOT NULL,
        status INTEGER,
        credits INTEGER,
        response TEXT,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (key_id, idempotency_key)
     );
     CREATE INDEX idempotency_keys_by_time ON idempotency_keys (created_at);
     CREATE TABLE ledger_daily (
        account_id TEXT NOT NULL,
        day BIGINT NOT NULL,
        key_id TEXT NOT NULL,
        platform TEXT NOT NULL,
        requests BIGINT NOT NULL,
        credits BIGINT NOT NULL,
        PRIMARY KEY (account_id, day, key_id, platform)
     );
     INSERT INTO ledger_daily (account_id, day, key_id, platform, requests, credits)
        SELECT account_id, created_at / 86400, key_id, platform, COUNT(*), SUM(credits)
        FROM ledger GROUP BY account_id, created_at / 86400, key_id, platform;",
    // 6: console users (several per account) and their sessions.
    // Secrets are stored as hex SHA-256 digests; passwords as argon2id PHC strings.
    "CREATE TABLE users (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        email TEXT NOT NULL UNIQUE,
        password_hash TEXT,
        invite_hash TEXT UNIQUE,
        invite_expires_at BIGINT,
        created_at BIGINT NOT NULL
     );
     CREATE INDEX users_by_account ON users (account_id);
     CREATE TABLE console_sessions (
        token_hash TEXT PRIMARY KEY,
        user_id TEXT REFERENCES users(id),
        operator INTEGER NOT NULL DEFAULT 0,
        csrf TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        last_seen_at BIGINT NOT NULL
     );
     CREATE INDEX console_sessions_by_user ON console_sessions (user_id);",
    // 7: shared per-key request counts, one row per bucket and minute.
    "CREATE TABLE rate_buckets (
        bucket TEXT NOT NULL,
        minute BIGINT NOT NULL,
        count BIGINT NOT NULL,
        PRIMARY KEY (bucket, minute)
     );",
    // 8: the operator's reason for a grant or set of credits,
    // and an index for an account's grants log, newest first.
    "ALTER TABLE credit_grants ADD COLUMN reason TEXT;
     CREATE INDEX credit_grants_by_account ON credit_grants (account_id, id);",
    // 9: an open sign-up waiting for its e-mail address to be verified: the
    // credits it gets when the link is used (NULL: none waiting).
    "ALTER TABLE users ADD COLUMN signup_credits BIGINT;",
    // 10: credits set aside for parses about to run (store/holds.rs): out
    // of the balance until each is charged, released or expires.
    "CREATE TABLE credit_holds (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        credits INTEGER NOT NULL CHECK (credits > 0),
        expires_at BIGINT NOT NULL,
        created_at BIGINT NOT NULL
     );
     CREATE INDEX credit_holds_by_expiry ON credit_holds (expires_at);
     CREATE INDEX credit_holds_by_account ON credit_holds (account_id);",
    // 11: webhooks: a key's signing secret (`whsec_…`, read at each send,
    // so it is kept as written), the delivery queue (one row per event:
    // due time, the claiming host's lease, the outcome) and every attempt.
    // Times in Unix milliseconds.
    "ALTER TABLE api_keys ADD COLUMN webhook_secret TEXT;
     CREATE TABLE webhook_deliveries (
        id TEXT PRIMARY KEY,
        key_id TEXT NOT NULL,
        account_id TEXT NOT NULL,
        url TEXT NOT NULL,
        event_type TEXT NOT NULL,
        data TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        created_ms BIGINT NOT NULL,
        next_attempt_ms BIGINT,
        lease TEXT,
        lease_until_ms BIGINT,
        finished_ms BIGINT,
        last_error TEXT
     );
     CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_ms);
     CREATE INDEX webhook_deliveries_by_key ON webhook_deliveries (key_id, created_ms);
     CREATE INDEX webhook_deliveries_by_account ON webhook_deliveries (account_id, created_ms);
     CREATE TABLE webhook_attempts (
        delivery_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        at_ms BIGINT NOT NULL,
        status INTEGER,
        error TEXT,
        duration_ms BIGINT NOT NULL,
        PRIMARY KEY (delivery_id, attempt)
     );",
    // 12: jobs: a batch run in the background (`POST /api/v1/jobs`), its
    // request as JSON, its state, the claiming host's lease (Unix
    // milliseconds) and, per item, the stored answer once it finished.
    "CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        key_id TEXT NOT NULL,
        request TEXT NOT NULL,
        callback_url TEXT,
        state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done')),
        item_count INTEGER NOT NULL,
        created_ms BIGINT NOT NULL,
        finished_ms BIGINT,
        lease TEXT,
        lease_until_ms BIGINT
     );
     CREATE INDEX jobs_due ON jobs (state, created_ms);
     CREATE INDEX jobs_by_finish ON jobs (finished_ms);
     CREATE TABLE job_items (
        job_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        answer TEXT NOT NULL,
        PRIMARY KEY (job_id, idx)
     );",
    // 13: the canaries' lease (one host runs them) and their results, read
    // by every host into its platform health.
    "CREATE TABLE canary_lease (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        until_ms BIGINT NOT NULL
     );
     CREATE TABLE canary_results (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        platform TEXT NOT NULL,
        url TEXT NOT NULL,
        outcome TEXT NOT NULL,
        detail TEXT NOT NULL,
        failure_code TEXT,
        at BIGINT NOT NULL,
        host TEXT NOT NULL
     );",
];

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
pub(crate) fn migrate_to(conn: &Connection, target: u32) -> StoreResult<(u32, u32)> {
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
