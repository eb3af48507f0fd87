//! Shared per-key request counts: one row per (bucket, minute),
//! counted by one upsert, so every host behind a load balancer takes from the
//! same count. Used on PostgreSQL; a single SQLite host counts in memory.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::{Backend, Store, StoreResult, dispatch, sqlite};

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
            |c| sqlite::rate_buckets::count_request(c, bucket, minute),
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
            |c| sqlite::rate_buckets::count_requests_within(c, bucket, minute, n, limit),
            |p| p.count_requests_within(bucket, minute, n, limit)
        )
    }

    /// Delete the counts of minutes before `minute`.
    fn prune_rate_buckets(&self, minute: i64) -> StoreResult<()> {
        dispatch!(
            self,
            |c| sqlite::rate_buckets::prune_rate_buckets(c, minute),
            |p| p.prune_rate_buckets(minute)
        )
    }
}
