//! The tunnel's traffic and the bounded usage reports on PostgreSQL.
//! Their filters are built once by the SQLite side (`?n` placeholders and
//! rusqlite values) and translated here, so both backends filter alike.

use postgres::types::ToSql;

use super::Pg;
use crate::report::usage_groups;
use crate::tunnel_usage::{DAY, TunnelTraffic, TunnelUsage, tunnel_groups};
use crate::{StoreError, StoreResult, Usage, UsageEntry};

/// A `WHERE` clause with `?n` placeholders and its values, as PostgreSQL
/// takes them: `$n` placeholders and typed parameters.
pub struct Filter {
    clause: String,
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

    fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.params.iter().map(|p| p.as_ref()).collect()
    }
}

impl Pg {
    pub fn record_tunnel_traffic(&self, traffic: &TunnelTraffic<'_>) -> StoreResult<()> {
        self.client()?.execute(
            "INSERT INTO tunnel_usage (day, account_id, key_id, platform, bytes, streams)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (day, key_id, platform) DO UPDATE SET
                bytes = tunnel_usage.bytes + excluded.bytes,
                streams = tunnel_usage.streams + excluded.streams",
            &[
                &traffic.at.div_euclid(DAY),
                &traffic.account,
                &traffic.key,
                &traffic.platform,
                &traffic.bytes,
                &traffic.streams,
            ],
        )?;
        Ok(())
    }

    pub fn tunnel_bytes_on_day(&self, key: &str, at: i64) -> StoreResult<i64> {
        Ok(self
            .client()?
            .query_one(
                "SELECT CAST(COALESCE(SUM(bytes), 0) AS BIGINT) FROM tunnel_usage
                 WHERE key_id = $1 AND day = $2",
                &[&key, &at.div_euclid(DAY)],
            )?
            .get(0))
    }

    pub fn tunnel_usage(&self, filter: &Filter) -> StoreResult<TunnelUsage> {
        const SUMS: [&str; 2] = ["SUM(bytes)", "SUM(streams)"];
        let (clause, params) = (&filter.clause, filter.params());
        let mut client = self.client()?;
        let mut tx = snapshot(&mut client)?;
        let (bytes, streams) = totals(&mut tx, "tunnel_usage", SUMS, clause, &params)?;
        let mut group = |column: &str| {
            grouped(
                &mut tx,
                "tunnel_usage",
                SUMS,
                "SUM(bytes)",
                clause,
                &params,
                column,
            )
            .map(tunnel_groups)
        };
        let by_platform = group("platform")?;
        let by_key = group("key_id")?;
        tx.commit()?;
        Ok(TunnelUsage {
            bytes,
            streams,
            by_platform,
            by_key,
        })
    }

    /// Totals and breakdowns from `ledger_daily`, the most recent entries
    /// from the ledger, in one snapshot.
    pub fn usage_bounded(
        &self,
        daily: &Filter,
        ledger: &Filter,
        entries: usize,
    ) -> StoreResult<Usage> {
        const SUMS: [&str; 2] = ["SUM(requests)", "SUM(credits)"];
        let (clause, params) = (&daily.clause, daily.params());
        let mut client = self.client()?;
        let mut tx = snapshot(&mut client)?;
        let (requests, credits) = totals(&mut tx, "ledger_daily", SUMS, clause, &params)?;
        let mut group = |column: &str| {
            grouped(
                &mut tx,
                "ledger_daily",
                SUMS,
                "SUM(credits)",
                clause,
                &params,
                column,
            )
            .map(usage_groups)
        };
        let by_platform = group("platform")?;
        let by_key = group("key_id")?;
        let entries = recent_entries(&mut tx, &ledger.clause, &ledger.params(), entries)?;
        tx.commit()?;
        Ok(Usage {
            requests,
            credits,
            by_platform,
            by_key,
            entries,
        })
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
