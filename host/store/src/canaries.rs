//! The canaries' shared state: a lease (one row) naming the host that runs
//! them until a time, taken or renewed by one upsert, so of several hosts on
//! one PostgreSQL database one runs the canaries and another takes over
//! when it stops renewing; and the results, appended by that host and read
//! by every host into its own platform health (`crate::canary`). On SQLite
//! one host owns the file: the lease is trivially its own.

use crate::{Backend, Store, StoreResult, dispatch, sqlite};

/// Results kept (the oldest are deleted as new ones come).
pub const CANARY_RESULTS_KEPT: i64 = 1000;

/// The lease's one row.
pub(crate) const LEASE: &str = "canaries";

/// One canary's result as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CanaryRow {
    /// Order of arrival (set by the database).
    pub id: i64,
    pub platform: String,
    pub url: String,
    pub outcome: String,
    pub detail: String,
    /// The platform-side code it counts as; `None`: a success.
    pub failure_code: Option<String>,
    pub at_unix_s: i64,
    /// The host that ran it.
    pub host: String,
}

pub(crate) const TAKE_LEASE_SQLITE: &str =
    "INSERT INTO canary_lease (name, holder, until_ms) VALUES (?1, ?2, ?3)
     ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until_ms = excluded.until_ms
     WHERE canary_lease.holder = excluded.holder OR canary_lease.until_ms < ?4
     RETURNING holder";
pub(crate) const TAKE_LEASE_PG: &str =
    "INSERT INTO canary_lease (name, holder, until_ms) VALUES ($1, $2, $3)
     ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until_ms = excluded.until_ms
     WHERE canary_lease.holder = excluded.holder OR canary_lease.until_ms < $4
     RETURNING holder";

impl Store {
    /// Take or renew the canaries' lease for `holder` until `until_ms`, if
    /// no other host holds it at `now_ms`; whether `holder` holds it now.
    pub fn take_canary_lease(&self, holder: &str, now_ms: i64, until_ms: i64) -> StoreResult<bool> {
        dispatch!(
            self,
            |c| sqlite::canaries::take_canary_lease(c, holder, now_ms, until_ms),
            |p| p.take_canary_lease(holder, now_ms, until_ms)
        )
    }

    /// Append one result (its `id` is ignored); the oldest beyond
    /// [`CANARY_RESULTS_KEPT`] go.
    pub fn add_canary_result(&self, row: &CanaryRow) -> StoreResult<()> {
        dispatch!(self, |c| sqlite::canaries::add_canary_result(c, row), |p| p
            .add_canary_result(row))
    }

    /// The results after `after_id`, oldest first (at most `limit`).
    pub fn canary_results_after(&self, after_id: i64, limit: i64) -> StoreResult<Vec<CanaryRow>> {
        dispatch!(
            self,
            |c| sqlite::canaries::canary_results_after(c, after_id, limit),
            |p| p.canary_results_after(after_id, limit)
        )
    }
}

/// The awaited twins of the canary calls (see `awaited`).
impl Store {
    /// [`Store::take_canary_lease`], awaited.
    pub async fn take_canary_lease_async(
        &self,
        holder: &str,
        now_ms: i64,
        until_ms: i64,
    ) -> StoreResult<bool> {
        let (a, b) = (holder.to_string(), holder.to_string());
        self.write_or_off_thread(
            move |c| sqlite::canaries::take_canary_lease(c, &a, now_ms, until_ms),
            move |s| s.take_canary_lease(&b, now_ms, until_ms),
        )
        .await
    }

    /// [`Store::add_canary_result`], awaited.
    pub async fn add_canary_result_async(&self, row: &CanaryRow) -> StoreResult<()> {
        let (a, b) = (row.clone(), row.clone());
        self.write_or_off_thread(
            move |c| sqlite::canaries::add_canary_result(c, &a),
            move |s| s.add_canary_result(&b),
        )
        .await
    }

    /// [`Store::canary_results_after`], awaited.
    pub async fn canary_results_after_async(
        &self,
        after_id: i64,
        limit: i64,
    ) -> StoreResult<Vec<CanaryRow>> {
        self.off_thread(move |s| s.canary_results_after(after_id, limit))
            .await
    }
}
