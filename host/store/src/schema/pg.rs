//! PostgreSQL migrations: step N here is step N of the SQLite list
//! (`schema::sqlite`), in PostgreSQL's types, so one `SCHEMA_VERSION` names
//! the same books on both backends. The version lives in `mediaparse_schema`;
//! the missing steps run in one transaction (PostgreSQL's DDL is
//! transactional) under an advisory lock, so hosts starting together migrate once.

use postgres::{Client, GenericClient};

use super::SCHEMA_VERSION;
use crate::{StoreError, StoreResult};

pub const PG_MIGRATIONS: &[&str] = &[
    // 1: accounts, keys, ledger, credit grants. Ledger and grant ids are
    // minted by the database (identity), unique across every host.
    "CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        balance BIGINT NOT NULL DEFAULT 0 CHECK (balance >= 0),
        created_at BIGINT NOT NULL
     );
     CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        name TEXT NOT NULL,
        token_hash BYTEA NOT NULL UNIQUE,
        token_prefix TEXT NOT NULL,
        expires_on TEXT,
        platforms TEXT,
        created_at BIGINT NOT NULL,
        rotated_at BIGINT
     );
     CREATE TABLE ledger (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        key_id TEXT NOT NULL,
        platform TEXT NOT NULL,
        credits BIGINT NOT NULL CHECK (credits > 0),
        request_id TEXT NOT NULL,
        created_at BIGINT NOT NULL
     );
     CREATE INDEX ledger_by_account ON ledger (account_id, created_at);
     CREATE INDEX ledger_by_key ON ledger (key_id, created_at);
     CREATE TABLE credit_grants (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        credits BIGINT NOT NULL,
        created_at BIGINT NOT NULL
     );",
    // 2: per-key rate limits, key edit times, kinds of credit grants, usage indexes.
    "ALTER TABLE api_keys ADD COLUMN rate_limit_per_minute BIGINT
        CHECK (rate_limit_per_minute IS NULL OR rate_limit_per_minute >= 0);
     ALTER TABLE api_keys ADD COLUMN updated_at BIGINT;
     ALTER TABLE credit_grants ADD COLUMN kind TEXT NOT NULL DEFAULT 'add';
     CREATE INDEX ledger_by_time ON ledger (created_at);
     CREATE INDEX ledger_by_platform ON ledger (platform, created_at);",
    // 3: a key's default media delivery.
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
    // 5: Idempotency-Key records; ledger request ids unique
    // (minted by the server; the client's X-Request-Id kept beside them);
    // daily aggregates of the ledger kept by every charge.
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
        credits BIGINT,
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
    // 8: grant reasons; an index for an account's grants log.
    "ALTER TABLE credit_grants ADD COLUMN reason TEXT;
     CREATE INDEX credit_grants_by_account ON credit_grants (account_id, id);",
    // 9: credits an open sign-up gets once its address is verified.
    "ALTER TABLE users ADD COLUMN signup_credits BIGINT;",
    // 10: credits set aside for parses about to run.
    "CREATE TABLE credit_holds (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        credits BIGINT NOT NULL CHECK (credits > 0),
        expires_at BIGINT NOT NULL,
        created_at BIGINT NOT NULL
     );
     CREATE INDEX credit_holds_by_expiry ON credit_holds (expires_at);
     CREATE INDEX credit_holds_by_account ON credit_holds (account_id);",
    // 11: webhooks: a key's signing secret, the delivery queue, the attempts.
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
    // 13: the canaries' lease and their results.
    "CREATE TABLE canary_lease (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        until_ms BIGINT NOT NULL
     );
     CREATE TABLE canary_results (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        platform TEXT NOT NULL,
        url TEXT NOT NULL,
        outcome TEXT NOT NULL,
        detail TEXT NOT NULL,
        failure_code TEXT,
        at BIGINT NOT NULL,
        host TEXT NOT NULL
     );",
];

/// Any fixed number; every host takes the same lock while migrating.
const MIGRATION_LOCK: i64 = 0x6d65_6469_6170;

/// The database's schema version (0 = empty).
pub fn version(client: &mut impl GenericClient) -> StoreResult<u32> {
    let exists: bool = client
        .query_one("SELECT to_regclass('mediaparse_schema') IS NOT NULL", &[])?
        .get(0);
    if !exists {
        return Ok(0);
    }
    let v: Option<i32> = client
        .query_opt("SELECT version FROM mediaparse_schema", &[])?
        .map(|r| r.get(0));
    Ok(v.unwrap_or(0) as u32)
}

fn check_not_newer(found: u32) -> StoreResult<u32> {
    if found > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(found)
}

/// Apply every missing step; returns (version before, version after).
pub fn migrate(client: &mut Client) -> StoreResult<(u32, u32)> {
    migrate_to(client, SCHEMA_VERSION)
}

pub fn migrate_to(client: &mut Client, target: u32) -> StoreResult<(u32, u32)> {
    let before = check_not_newer(version(client)?)?;
    if before >= target {
        return Ok((before, before));
    }
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS mediaparse_schema (version INTEGER NOT NULL)")?;
    // Read again under the lock: another host may have migrated meanwhile.
    let current: i32 = tx
        .query_opt("SELECT version FROM mediaparse_schema", &[])?
        .map(|r| r.get(0))
        .unwrap_or(0);
    let current = check_not_newer(current as u32)?;
    for (i, sql) in PG_MIGRATIONS
        .iter()
        .enumerate()
        .take(target as usize)
        .skip(current as usize)
    {
        tx.batch_execute(sql)?;
        let v = i as i32 + 1;
        tx.execute("DELETE FROM mediaparse_schema", &[])?;
        tx.execute("INSERT INTO mediaparse_schema (version) VALUES ($1)", &[&v])?;
    }
    tx.commit()?;
    Ok((before, version(client)?))
}
