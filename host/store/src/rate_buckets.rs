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
        self.count_request_unpruned(bucket, minute)
    }

    /// [`Store::count_request`] without its occasional prune.
    fn count_request_unpruned(&self, bucket: &str, minute: i64) -> StoreResult<i64> {
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

/// The awaited twins of the request counts (see `awaited`).
impl Store {
    /// [`Store::count_request`], awaited.
    pub async fn count_request_async(&self, bucket: &str, minute: i64) -> StoreResult<i64> {
        let prune = COUNTED.fetch_add(1, Ordering::Relaxed) % PRUNE_EVERY == PRUNE_EVERY - 1;
        let bucket = bucket.to_string();
        match &self.backend {
            Backend::Sqlite(_) => {
                let work = move |c: &rusqlite::Connection| {
                    if prune {
                        sqlite::rate_buckets::prune_rate_buckets(c, minute - 1)?;
                    }
                    sqlite::rate_buckets::count_request(c, &bucket, minute)
                };
                self.write_async(work).await
            }
            Backend::Postgres(_) => {
                self.off_thread(move |s| {
                    if prune {
                        s.prune_rate_buckets(minute - 1)?;
                    }
                    s.count_request_unpruned(&bucket, minute)
                })
                .await
            }
        }
    }

    /// [`Store::count_requests_within`], awaited.
    pub async fn count_requests_within_async(
        &self,
        bucket: &str,
        minute: i64,
        n: u32,
        limit: u32,
    ) -> StoreResult<Option<i64>> {
        let (a, b) = (bucket.to_string(), bucket.to_string());
        let (n64, limit64) = (i64::from(n), i64::from(limit));
        self.write_or_off_thread(
            move |c| sqlite::rate_buckets::count_requests_within(c, &a, minute, n64, limit64),
            move |s| s.count_requests_within(&b, minute, n, limit),
        )
        .await
    }
}
