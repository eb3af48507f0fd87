//! Per-key request counts on SQLite (`rate_buckets`).

use rusqlite::{Connection, OptionalExtension, params};

use crate::StoreResult;

pub(crate) fn count_request(c: &Connection, bucket: &str, minute: i64) -> StoreResult<i64> {
    Ok(c.query_row(
        "INSERT INTO rate_buckets (bucket, minute, count) VALUES (?1, ?2, 1)
     ON CONFLICT (bucket, minute) DO UPDATE SET count = rate_buckets.count + 1
     RETURNING count",
        params![bucket, minute],
        |r| r.get(0),
    )?)
}

pub(crate) fn count_requests_within(
    c: &Connection,
    bucket: &str,
    minute: i64,
    n: i64,
    limit: i64,
) -> StoreResult<Option<i64>> {
    Ok(c.query_row(
        "INSERT INTO rate_buckets (bucket, minute, count) SELECT ?1, ?2, ?3 WHERE ?3 <= ?4
             ON CONFLICT (bucket, minute) DO UPDATE SET count = rate_buckets.count + excluded.count
             WHERE rate_buckets.count + excluded.count <= ?4
             RETURNING count",
        params![bucket, minute, n, limit],
        |r| r.get(0),
    )
    .optional()?)
}

pub(crate) fn prune_rate_buckets(c: &Connection, minute: i64) -> StoreResult<()> {
    c.execute("DELETE FROM rate_buckets WHERE minute < ?1", [minute])?;
    Ok(())
}
