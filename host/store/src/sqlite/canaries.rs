//! The canaries' lease and results on SQLite (`canaries`).

use rusqlite::{Connection, params};

use crate::StoreResult;
use crate::canaries::{CANARY_RESULTS_KEPT, CanaryRow, LEASE, TAKE_LEASE_SQLITE};

pub(crate) fn take_canary_lease(
    c: &Connection,
    holder: &str,
    now_ms: i64,
    until_ms: i64,
) -> StoreResult<bool> {
    let mut stmt = c.prepare(TAKE_LEASE_SQLITE)?;
    let mut rows = stmt.query(params![LEASE, holder, until_ms, now_ms])?;
    Ok(rows.next()?.is_some())
}

pub(crate) fn add_canary_result(c: &Connection, row: &CanaryRow) -> StoreResult<()> {
    c.execute(
        "INSERT INTO canary_results (platform, url, outcome, detail, failure_code, at, host)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            row.platform,
            row.url,
            row.outcome,
            row.detail,
            row.failure_code,
            row.at_unix_s,
            row.host
        ],
    )?;
    c.execute(
        "DELETE FROM canary_results WHERE id <= (SELECT MAX(id) FROM canary_results) - ?1",
        [CANARY_RESULTS_KEPT],
    )?;
    Ok(())
}

pub(crate) fn canary_results_after(
    c: &mut Connection,
    after_id: i64,
    limit: i64,
) -> StoreResult<Vec<CanaryRow>> {
    const SQL_SQLITE: &str = "SELECT id, platform, url, outcome, detail, failure_code, at, host
         FROM canary_results WHERE id > ?1 ORDER BY id LIMIT ?2";
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
}
