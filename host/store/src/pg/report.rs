//! The shape every usage report shares on PostgreSQL: a filter translated
//! from the one the SQLite side builds (`?n` placeholders and rusqlite
//! values: both backends filter alike), one snapshot, two sums over a table,
//! the same sums per platform and per key, and the newest ledger entries.
//! (SQLite's twin is `sqlite/report.rs`.)

use postgres::types::ToSql;

use crate::{StoreError, StoreResult, UsageEntry};

/// A `WHERE` clause with `?n` placeholders and its values, as PostgreSQL
/// takes them: `$n` placeholders and typed parameters.
pub struct Filter {
    pub(super) clause: String,
    params: Vec<Box<dyn ToSql + Sync>>,
}

impl Filter {
    pub fn from_sqlite(clause: &str, values: &[rusqlite::types::Value]) -> StoreResult<Filter> {
        let mut clause = clause.to_string();
        // Highest first, so `?1` does not eat the start of `?10`.
        for n in (1..=values.len()).rev() {
            clause = clause.replace(&format!("?{n}"), &format!("${n}"));
        }
        let params = values
            .iter()
            .map(|v| -> StoreResult<Box<dyn ToSql + Sync>> {
                match v {
                    rusqlite::types::Value::Text(t) => Ok(Box::new(t.clone())),
                    rusqlite::types::Value::Integer(i) => Ok(Box::new(*i)),
                    other => Err(StoreError::Invalid(format!(
                        "unexpected filter value {other:?}"
                    ))),
                }
            })
            .collect::<StoreResult<_>>()?;
        Ok(Filter { clause, params })
    }

    pub(super) fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.params.iter().map(|p| p.as_ref()).collect()
    }
}

/// A read-only snapshot, so a report's totals, groups and entries agree.
pub(super) fn snapshot(client: &mut super::PooledClient) -> StoreResult<postgres::Transaction<'_>> {
    Ok(client
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()?)
}

/// Two sums (SQL aggregate expressions such as `COUNT(*)`, `SUM(credits)`)
/// over `table` under `clause`: the report's totals.
pub(super) fn totals(
    tx: &mut postgres::Transaction<'_>,
    table: &str,
    [a, b]: [&str; 2],
    clause: &str,
    params: &[&(dyn ToSql + Sync)],
) -> StoreResult<(i64, i64)> {
    let row = tx.query_one(
        &format!(
            "SELECT CAST(COALESCE({a}, 0) AS BIGINT), CAST(COALESCE({b}, 0) AS BIGINT)
             FROM {table}{clause}"
        ),
        params,
    )?;
    Ok((row.get(0), row.get(1)))
}

/// The same two sums per value of `column`, largest second sum first
/// (`ORDER BY` `order_by`, then the name).
pub(super) fn grouped(
    tx: &mut postgres::Transaction<'_>,
    table: &str,
    [a, b]: [&str; 2],
    order_by: &str,
    clause: &str,
    params: &[&(dyn ToSql + Sync)],
    column: &str,
) -> StoreResult<Vec<(String, i64, i64)>> {
    Ok(tx
        .query(
            &format!(
                "SELECT {column}, CAST({a} AS BIGINT), CAST({b} AS BIGINT) FROM {table}{clause}
                 GROUP BY {column} ORDER BY {order_by} DESC, {column}"
            ),
            params,
        )?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect())
}

/// The newest `limit` ledger entries under `clause` (in a report's
/// snapshot, or straight from a pooled connection).
pub(super) fn recent_entries(
    c: &mut impl postgres::GenericClient,
    clause: &str,
    params: &[&(dyn ToSql + Sync)],
    limit: usize,
) -> StoreResult<Vec<UsageEntry>> {
    Ok(c.query(
        &format!(
            "SELECT id, created_at, account_id, key_id, platform, credits, request_id
                 FROM ledger{clause} ORDER BY created_at DESC, id DESC LIMIT {limit}"
        ),
        params,
    )?
    .iter()
    .map(|r| UsageEntry {
        id: r.get(0),
        time: r.get(1),
        account: r.get(2),
        key: r.get(3),
        platform: r.get(4),
        credits: r.get(5),
        request_id: r.get(6),
    })
    .collect())
}
