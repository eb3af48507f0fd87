//! Shared per-key request counts: one row per (bucket, minute),
//! counted by one upsert, so every host behind a load balancer takes from the
//! same count. Used on PostgreSQL; a single SQLite host counts in memory.

use std::sync::atomic::{AtomicU64, Ordering};

use rusqlite::{OptionalExtension, params};

use super::{Backend, Store, StoreResult, dispatch};

/// Every this many counts a host deletes rows of minutes gone by.
const PRUNE_EVERY: u64 = 1024;
static COUNTED: AtomicU64 = AtomicU64::new(0);

impl Store {
    /// Count one request of `bucket` in `minute` (unix seconds / 60); returns
    /// the count so far, this one included. One round trip.
    pub fn count_request(&self, bucket: &str, minute: i64) -> StoreResult<i64> {
        if COUNTED.fetch_add(1, Ordering::Relaxed) % PRUNE_EVERY == PRUNE_EVERY - 1 {
            self.prune_rate_buckets(minute - 1)?;
        }
        dispatch!(
            self,
            |c| {
                Ok(c.query_row(
                    "INSERT INTO rate_buckets (bucket, minute, count) VALUES (?1, ?2, 1)
                 ON CONFLICT (bucket, minute) DO UPDATE SET count = rate_buckets.count + 1
                 RETURNING count",
                    params![bucket, minute],
                    |r| r.get(0),
                )?)
            },
            |p| p.count_request(bucket, minute)
        )
    }

    /// Count `n` requests of `bucket` in `minute` if the count stays within
    /// `limit`: the count so far, these included, or `None` (nothing
    /// counted) when they do not fit. One round trip.
    pub fn count_requests_within(
        &self,
        bucket: &str,
        minute: i64,
        n: u32,
        limit: u32,
    ) -> StoreResult<Option<i64>> {
        let (n, limit) = (i64::from(n), i64::from(limit));
        dispatch!(
            self,
            |c| {
                Ok(c
                    .query_row(
                        "INSERT INTO rate_buckets (bucket, minute, count) SELECT ?1, ?2, ?3 WHERE ?3 <= ?4
                         ON CONFLICT (bucket, minute) DO UPDATE SET count = rate_buckets.count + excluded.count
                         WHERE rate_buckets.count + excluded.count <= ?4
                         RETURNING count",
                        params![bucket, minute, n, limit],
                        |r| r.get(0),
                    )
                    .optional()?)
            },
            |p| p.count_requests_within(bucket, minute, n, limit)
        )
    }

    /// Delete the counts of minutes before `minute`.
    fn prune_rate_buckets(&self, minute: i64) -> StoreResult<()> {
        dispatch!(
            self,
            |c| {
                c.execute("DELETE FROM rate_buckets WHERE minute < ?1", [minute])?;
                Ok(())
            },
            |p| p.prune_rate_buckets(minute)
        )
    }
}
