//! The shape every usage report shares on SQLite: two sums over a table
//! under a filter, the same sums per platform and per key, and the newest
//! ledger entries. (PostgreSQL's twin is `pg/report.rs`.)

use rusqlite::types::Value;
use rusqlite::{Transaction, params_from_iter};

use crate::UsageEntry;

/// Two sums (SQL aggregates such as `COUNT(*)`, `SUM(credits)`) over `table`
/// under `clause`: a report's totals.
pub(crate) fn totals(
    tx: &Transaction<'_>,
    table: &str,
    [a, b]: [&str; 2],
    clause: &str,
    params: &[Value],
) -> rusqlite::Result<(i64, i64)> {
    tx.query_row(
        &format!("SELECT COALESCE({a}, 0), COALESCE({b}, 0) FROM {table}{clause}"),
        params_from_iter(params.iter()),
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// The same two sums per value of `column`, largest `order_by` first, then by name.
pub(crate) fn grouped(
    tx: &Transaction<'_>,
    table: &str,
    [a, b]: [&str; 2],
    order_by: &str,
    (clause, params): (&str, &[Value]),
    column: &str,
) -> rusqlite::Result<Vec<(String, i64, i64)>> {
    let mut stmt = tx.prepare(&format!(
        "SELECT {column}, {a}, {b} FROM {table}{clause}
         GROUP BY {column} ORDER BY {order_by} DESC, {column}"
    ))?;
    let rows = stmt.query_map(params_from_iter(params.iter()), |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    })?;
    rows.collect()
}

/// The ledger's columns as [`ledger_entry`] reads them.
pub(crate) const ENTRY_COLUMNS: &str =
    "id, created_at, account_id, key_id, platform, credits, request_id";

/// One ledger row selected with [`ENTRY_COLUMNS`].
pub(crate) fn ledger_entry(r: &rusqlite::Row<'_>) -> rusqlite::Result<UsageEntry> {
    Ok(UsageEntry {
        id: r.get(0)?,
        time: r.get(1)?,
        account: r.get(2)?,
        key: r.get(3)?,
        platform: r.get(4)?,
        credits: r.get(5)?,
        request_id: r.get(6)?,
    })
}

/// The newest `limit` ledger entries under `clause`.
pub(crate) fn recent_entries(
    tx: &Transaction<'_>,
    clause: &str,
    params: &[Value],
    limit: usize,
) -> rusqlite::Result<Vec<UsageEntry>> {
    let mut stmt = tx.prepare(&format!(
        "SELECT {ENTRY_COLUMNS} FROM ledger{clause} ORDER BY created_at DESC, id DESC LIMIT {limit}"
    ))?;
    let rows = stmt.query_map(params_from_iter(params.iter()), ledger_entry)?;
    rows.collect()
}
