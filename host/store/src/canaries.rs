//! The canaries' shared state: a lease (one row) naming the host that runs
//! them until a time, taken or renewed by one upsert, so of several hosts on
//! one PostgreSQL database one runs the canaries and another takes over
//! when it stops renewing; and the results, appended by that host and read
//! by every host into its own platform health (`crate::canary`). On SQLite
//! one host owns the file: the lease is trivially its own.

use postgres::types::Type;
use rusqlite::params;

use super::{Backend, Store, StoreResult, dispatch};

/// Results kept (the oldest are deleted as new ones come).
pub const CANARY_RESULTS_KEPT: i64 = 1000;

/// The lease's one row.
const LEASE: &str = "canaries";

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

const TAKE_LEASE_SQLITE: &str =
    "INSERT INTO canary_lease (name, holder, until_ms) VALUES (?1, ?2, ?3)
     ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until_ms = excluded.until_ms
     WHERE canary_lease.holder = excluded.holder OR canary_lease.until_ms < ?4
     RETURNING holder";
const TAKE_LEASE_PG: &str = "INSERT INTO canary_lease (name, holder, until_ms) VALUES ($1, $2, $3)
     ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until_ms = excluded.until_ms
     WHERE canary_lease.holder = excluded.holder OR canary_lease.until_ms < $4
     RETURNING holder";

impl Store {
    /// Take or renew the canaries' lease for `holder` until `until_ms`, if
    /// no other host holds it at `now_ms`; whether `holder` holds it now.
    pub fn take_canary_lease(&self, holder: &str, now_ms: i64, until_ms: i64) -> StoreResult<bool> {
        dispatch!(
            self,
            |c| {
                let mut stmt = c.prepare(TAKE_LEASE_SQLITE)?;
                let mut rows = stmt.query(params![LEASE, holder, until_ms, now_ms])?;
                Ok(rows.next()?.is_some())
            },
            |p| Ok(!p
                .client()?
                .query_typed(
                    TAKE_LEASE_PG,
                    &[
                        (&LEASE, Type::TEXT),
                        (&holder, Type::TEXT),
                        (&until_ms, Type::INT8),
                        (&now_ms, Type::INT8),
                    ],
                )?
                .is_empty())
        )
    }

    /// Append one result (its `id` is ignored); the oldest beyond
    /// [`CANARY_RESULTS_KEPT`] go.
    pub fn add_canary_result(&self, row: &CanaryRow) -> StoreResult<()> {
        dispatch!(
            self,
            |c| {
                c.execute(
                    "INSERT INTO canary_results (platform, url, outcome, detail, failure_code, at, host)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![row.platform, row.url, row.outcome, row.detail, row.failure_code, row.at_unix_s, row.host],
                )?;
                c.execute(
                    "DELETE FROM canary_results WHERE id <= (SELECT MAX(id) FROM canary_results) - ?1",
                    [CANARY_RESULTS_KEPT],
                )?;
                Ok(())
            },
            |p| {
                let mut client = p.client()?;
                client.execute(
                    "INSERT INTO canary_results (platform, url, outcome, detail, failure_code, at, host)
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    &[&row.platform, &row.url, &row.outcome, &row.detail, &row.failure_code, &row.at_unix_s, &row.host],
                )?;
                client.execute(
                    "DELETE FROM canary_results WHERE id <= (SELECT MAX(id) FROM canary_results) - $1",
                    &[&CANARY_RESULTS_KEPT],
                )?;
                Ok(())
            }
        )
    }

    /// The results after `after_id`, oldest first (at most `limit`).
    pub fn canary_results_after(&self, after_id: i64, limit: i64) -> StoreResult<Vec<CanaryRow>> {
        const SQL_SQLITE: &str = "SELECT id, platform, url, outcome, detail, failure_code, at, host
             FROM canary_results WHERE id > ?1 ORDER BY id LIMIT ?2";
        const SQL_PG: &str = "SELECT id, platform, url, outcome, detail, failure_code, at, host
             FROM canary_results WHERE id > $1 ORDER BY id LIMIT $2";
        dispatch!(
            self,
            |c| {
                let mut stmt = c.prepare(SQL_SQLITE)?;
                let rows = stmt
                    .query_map(params![after_id, limit], |r| {
                        Ok(CanaryRow {
                            id: r.get(0)?,
                            platform: r.get(1)?,
                            url: r.get(2)?,
                            outcome: r.get(3)?,
                            detail: r.get(4)?,
                            failure_code: r.get(5)?,
                            at_unix_s: r.get(6)?,
                            host: r.get(7)?,
                        })
                    })?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(rows)
            },
            |p| Ok(p
                .client()?
                .query(SQL_PG, &[&after_id, &limit])?
                .iter()
                .map(|r| CanaryRow {
                    id: r.get(0),
                    platform: r.get(1),
                    url: r.get(2),
                    outcome: r.get(3),
                    detail: r.get(4),
                    failure_code: r.get(5),
                    at_unix_s: r.get(6),
                    host: r.get(7),
                })
                .collect())
        )
    }
}
