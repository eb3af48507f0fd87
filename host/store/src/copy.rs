//! `mediaparse migrate --from FILE.db --to postgres://…`: move an existing
//! deployment's books from SQLite into an empty PostgreSQL database, exactly
//! (ids included), in one PostgreSQL transaction, then verify the totals and
//! every account's balance, grants and spend on both sides.

use std::path::Path;

use postgres::types::ToSql;
use rusqlite::Connection;

use super::backup::BackupSummary;
use super::{DbLocation, Store, StoreError, StoreResult};

/// Rows per `INSERT … SELECT FROM UNNEST(…)` statement.
const BATCH: usize = 5000;

/// What was copied; `source == copied` always (else the copy fails).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CopySummary {
    pub source: BackupSummary,
    pub copied: BackupSummary,
}

/// Copy the SQLite file `from` (migrated to this binary's schema first)
/// into the empty PostgreSQL database at `to`.
pub fn copy_sqlite_to_postgres(from: &Path, to: &str) -> StoreResult<CopySummary> {
    if !from.exists() {
        return Err(StoreError::Invalid(format!(
            "{} does not exist",
            from.display()
        )));
    }
    let source = Store::open(from)?;
    let target = Store::connect(&DbLocation::Postgres(to.to_owned()))?;
    let (super::Backend::Sqlite(db), super::Backend::Postgres(pg)) =
        (&source.backend, &target.backend)
    else {
        return Err(StoreError::Invalid(
            "copy goes from SQLite to PostgreSQL".into(),
        ));
    };
    let before = target.summary()?;
    if before.accounts + before.keys + before.ledger_rows + before.granted_total != 0 {
        return Err(StoreError::Invalid(
            "the PostgreSQL database already holds books; copy into an empty database".into(),
        ));
    }
    let conn = crate::sqlite::lock(&db.writer);
    let mut client = pg.client()?;
    let mut tx = client.transaction()?;
    copy_table(
        &conn,
        &mut tx,
        "SELECT id, balance, created_at FROM accounts ORDER BY id",
        "INSERT INTO accounts (id, balance, created_at)
         SELECT * FROM UNNEST($1::TEXT[], $2::BIGINT[], $3::BIGINT[])",
        &[Col::Text, Col::Int, Col::Int],
    )?;
    copy_table(
        &conn,
        &mut tx,
        "SELECT id, account_id, name, token_hash, token_prefix, expires_on, platforms,
                created_at, rotated_at, rate_limit_per_minute, updated_at, delivery,
                webhook_secret
         FROM api_keys ORDER BY id",
        "INSERT INTO api_keys (id, account_id, name, token_hash, token_prefix, expires_on,
                platforms, created_at, rotated_at, rate_limit_per_minute, updated_at, delivery,
                webhook_secret)
         SELECT * FROM UNNEST($1::TEXT[], $2::TEXT[], $3::TEXT[], $4::BYTEA[], $5::TEXT[],
                $6::TEXT[], $7::TEXT[], $8::BIGINT[], $9::BIGINT[], $10::BIGINT[],
                $11::BIGINT[], $12::TEXT[], $13::TEXT[])",
        &[
            Col::Text,
            Col::Text,
            Col::Text,
            Col::Bytes,
            Col::Text,
            Col::Text,
            Col::Text,
            Col::Int,
            Col::Int,
            Col::Int,
            Col::Int,
            Col::Text,
            Col::Text,
        ],
    )?;
    copy_table(
        &conn,
        &mut tx,
        "SELECT id, account_id, key_id, platform, credits, request_id, created_at, client_request_id
         FROM ledger ORDER BY id",
        "INSERT INTO ledger (id, account_id, key_id, platform, credits, request_id, created_at,
                client_request_id)
         OVERRIDING SYSTEM VALUE
         SELECT * FROM UNNEST($1::BIGINT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::BIGINT[],
                $6::TEXT[], $7::BIGINT[], $8::TEXT[])",
        &[
            Col::Int,
            Col::Text,
            Col::Text,
            Col::Text,
            Col::Int,
            Col::Text,
            Col::Int,
            Col::Text,
        ],
    )?;
    // Open credit holds: their credits are out of the copied balances; on
    // the copy they expire and are given back like any other.
    copy_table(
        &conn,
        &mut tx,
        "SELECT id, account_id, credits, expires_at, created_at FROM credit_holds",
        "INSERT INTO credit_holds (id, account_id, credits, expires_at, created_at)
         SELECT * FROM UNNEST($1::TEXT[], $2::TEXT[], $3::BIGINT[], $4::BIGINT[], $5::BIGINT[])",
        &[Col::Text, Col::Text, Col::Int, Col::Int, Col::Int],
    )?;
    // Jobs with their items' answers, and webhook deliveries with their
    // attempts: a queued job or a pending delivery goes on from the copy
    // (a lease taken on SQLite lapses like any other).
    copy_table(
        &conn,
        &mut tx,
        "SELECT id, account_id, key_id, request, callback_url, state, item_count, created_ms,
                finished_ms, lease, lease_until_ms
         FROM jobs",
        "INSERT INTO jobs (id, account_id, key_id, request, callback_url, state, item_count,
                created_ms, finished_ms, lease, lease_until_ms)
         SELECT * FROM UNNEST($1::TEXT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::TEXT[],
                $6::TEXT[], $7::BIGINT[], $8::BIGINT[], $9::BIGINT[], $10::TEXT[], $11::BIGINT[])",
        &[
            Col::Text,
            Col::Text,
            Col::Text,
            Col::Text,
            Col::Text,
            Col::Text,
            Col::Int,
            Col::Int,
            Col::Int,
            Col::Text,
            Col::Int,
        ],
    )?;
    copy_table(
        &conn,
        &mut tx,
        "SELECT job_id, idx, answer FROM job_items",
        "INSERT INTO job_items (job_id, idx, answer)
         SELECT * FROM UNNEST($1::TEXT[], $2::BIGINT[], $3::TEXT[])",
        &[Col::Text, Col::Int, Col::Text],
    )?;
    copy_table(
        &conn,
        &mut tx,
        "SELECT id, key_id, account_id, url, event_type, data, state, attempts, created_ms,
                next_attempt_ms, lease, lease_until_ms, finished_ms, last_error
         FROM webhook_deliveries",
        "INSERT INTO webhook_deliveries (id, key_id, account_id, url, event_type, data, state,
                attempts, created_ms, next_attempt_ms, lease, lease_until_ms, finished_ms,
                last_error)
         SELECT * FROM UNNEST($1::TEXT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::TEXT[],
                $6::TEXT[], $7::TEXT[], $8::BIGINT[], $9::BIGINT[], $10::BIGINT[], $11::TEXT[],
                $12::BIGINT[], $13::BIGINT[], $14::TEXT[])",
        &[
            Col::Text,
            Col::Text,
            Col::Text,
            Col::Text,
            Col::Text,
            Col::Text,
            Col::Text,
            Col::Int,
            Col::Int,
            Col::Int,
            Col::Text,
            Col::Int,
            Col::Int,
            Col::Text,
        ],
    )?;
    copy_table(
        &conn,
        &mut tx,
        "SELECT delivery_id, attempt, at_ms, status, error, duration_ms FROM webhook_attempts",
        "INSERT INTO webhook_attempts (delivery_id, attempt, at_ms, status, error, duration_ms)
         SELECT * FROM UNNEST($1::TEXT[], $2::BIGINT[], $3::BIGINT[], $4::BIGINT[], $5::TEXT[],
                $6::BIGINT[])",
        &[Col::Text, Col::Int, Col::Int, Col::Int, Col::Text, Col::Int],
    )?;
    // The daily aggregates, the tunnel's traffic, the console's
    // users and sessions, and the live Idempotency-Key records.
    copy_table(
        &conn,
        &mut tx,
        "SELECT account_id, day, key_id, platform, requests, credits FROM ledger_daily",
        "INSERT INTO ledger_daily (account_id, day, key_id, platform, requests, credits)
         SELECT * FROM UNNEST($1::TEXT[], $2::BIGINT[], $3::TEXT[], $4::TEXT[], $5::BIGINT[],
                $6::BIGINT[])",
        &[
            Col::Text,
            Col::Int,
            Col::Text,
            Col::Text,
            Col::Int,
            Col::Int,
        ],
    )?;
    copy_table(
        &conn,
        &mut tx,
        "SELECT day, account_id, key_id, platform, bytes, streams FROM tunnel_usage",
        "INSERT INTO tunnel_usage (day, account_id, key_id, platform, bytes, streams)
         SELECT * FROM UNNEST($1::BIGINT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::BIGINT[],
                $6::BIGINT[])",
        &[
            Col::Int,
            Col::Text,
            Col::Text,
            Col::Text,
            Col::Int,
            Col::Int,
        ],
    )?;
    copy_table(
        &conn,
        &mut tx,
        "SELECT id, account_id, email, password_hash, invite_hash, invite_expires_at, created_at,
                signup_credits
         FROM users ORDER BY id",
        "INSERT INTO users (id, account_id, email, password_hash, invite_hash, invite_expires_at,
                created_at, signup_credits)
         SELECT * FROM UNNEST($1::TEXT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::TEXT[],
                $6::BIGINT[], $7::BIGINT[], $8::BIGINT[])",
        &[
            Col::Text,
            Col::Text,
            Col::Text,
            Col::Text,
            Col::Text,
            Col::Int,
            Col::Int,
            Col::Int,
        ],
    )?;
    copy_table(
        &conn,
        &mut tx,
        "SELECT token_hash, user_id, operator, csrf, created_at, last_seen_at FROM console_sessions",
        "INSERT INTO console_sessions (token_hash, user_id, operator, csrf, created_at, last_seen_at)
         SELECT * FROM UNNEST($1::TEXT[], $2::TEXT[], $3::BIGINT[], $4::TEXT[], $5::BIGINT[],
                $6::BIGINT[])",
        &[Col::Text, Col::Text, Col::Int, Col::Text, Col::Int, Col::Int],
    )?;
    copy_table(
        &conn,
        &mut tx,
        "SELECT key_id, idempotency_key, fingerprint, request_id, status, credits, response,
                created_at
         FROM idempotency_keys",
        "INSERT INTO idempotency_keys (key_id, idempotency_key, fingerprint, request_id, status,
                credits, response, created_at)
         SELECT * FROM UNNEST($1::TEXT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::BIGINT[],
                $6::BIGINT[], $7::TEXT[], $8::BIGINT[])",
        &[
            Col::Text,
            Col::Text,
            Col::Text,
            Col::Text,
            Col::Int,
            Col::Int,
            Col::Text,
            Col::Int,
        ],
    )?;
    copy_table(
        &conn,
        &mut tx,
        "SELECT id, account_id, credits, created_at, kind, reason FROM credit_grants ORDER BY id",
        "INSERT INTO credit_grants (id, account_id, credits, created_at, kind, reason)
         OVERRIDING SYSTEM VALUE
         SELECT * FROM UNNEST($1::BIGINT[], $2::TEXT[], $3::BIGINT[], $4::BIGINT[], $5::TEXT[], $6::TEXT[])",
        &[Col::Int, Col::Text, Col::Int, Col::Int, Col::Text, Col::Text],
    )?;
    // New ids continue after the copied ones.
    for table in ["ledger", "credit_grants"] {
        tx.execute(
            &format!(
                "SELECT setval(pg_get_serial_sequence('{table}', 'id'),
                               COALESCE((SELECT MAX(id) FROM {table}), 0) + 1, false)"
            ),
            &[],
        )?;
    }
    tx.commit()?;
    drop(conn);
    let source_summary = source.summary()?;
    let copied = target.summary()?;
    if source_summary != copied || source.accounts()? != target.accounts()? {
        return Err(StoreError::Invalid(format!(
            "the copy does not match its source: {source_summary:?} vs {copied:?}"
        )));
    }
    Ok(CopySummary {
        source: source_summary,
        copied,
    })
}

/// A column's type on the way from SQLite to PostgreSQL.
#[derive(Clone, Copy)]
enum Col {
    Text,
    Int,
    Bytes,
}

/// One column's values of one batch.
enum Values {
    Text(Vec<Option<String>>),
    Int(Vec<Option<i64>>),
    Bytes(Vec<Option<Vec<u8>>>),
}

impl Values {
    fn new(col: Col) -> Values {
        match col {
            Col::Text => Values::Text(Vec::with_capacity(BATCH)),
            Col::Int => Values::Int(Vec::with_capacity(BATCH)),
            Col::Bytes => Values::Bytes(Vec::with_capacity(BATCH)),
        }
    }

    fn push(&mut self, row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<()> {
        match self {
            Values::Text(v) => v.push(row.get(i)?),
            Values::Int(v) => v.push(row.get(i)?),
            Values::Bytes(v) => v.push(row.get(i)?),
        }
        Ok(())
    }

    fn param(&self) -> &(dyn ToSql + Sync) {
        match self {
            Values::Text(v) => v,
            Values::Int(v) => v,
            Values::Bytes(v) => v,
        }
    }
}

fn copy_table(
    conn: &Connection,
    tx: &mut postgres::Transaction<'_>,
    select: &str,
    insert: &str,
    cols: &[Col],
) -> StoreResult<()> {
    let mut stmt = conn.prepare(select)?;
    let mut rows = stmt.query([])?;
    let mut batch: Vec<Values> = cols.iter().map(|c| Values::new(*c)).collect();
    let mut pending = 0;
    let flush = |batch: &mut Vec<Values>, tx: &mut postgres::Transaction<'_>| -> StoreResult<()> {
        let params: Vec<&(dyn ToSql + Sync)> = batch.iter().map(Values::param).collect();
        tx.execute(insert, &params)?;
        *batch = cols.iter().map(|c| Values::new(*c)).collect();
        Ok(())
    };
    while let Some(row) = rows.next()? {
        for (i, values) in batch.iter_mut().enumerate() {
            values.push(row, i)?;
        }
        pending += 1;
        if pending == BATCH {
            flush(&mut batch, tx)?;
            pending = 0;
        }
    }
    if pending > 0 {
        flush(&mut batch, tx)?;
    }
    Ok(())
}
