//! Issue 15's tunnel traffic and issue 19's bounded usage on PostgreSQL.
//! Their filters are built once by the SQLite side (`?n` placeholders and
//! rusqlite values) and translated here, so both backends filter alike.

use postgres::types::ToSql;

use super::Pg;
use crate::store::tunnel_usage::{DAY, TunnelTraffic, TunnelUsage, TunnelUsageGroup};
use crate::store::{StoreError, StoreResult, Usage, UsageEntry, UsageGroup};

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
        let (clause, params) = (&filter.clause, filter.params());
        let mut client = self.client()?;
        let mut tx = client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()?;
        let totals = tx.query_one(
            &format!(
                "SELECT CAST(COALESCE(SUM(bytes), 0) AS BIGINT), CAST(COALESCE(SUM(streams), 0) AS BIGINT)
                 FROM tunnel_usage{clause}"
            ),
            &params,
        )?;
        let mut group = |column: &str| -> StoreResult<Vec<TunnelUsageGroup>> {
            Ok(tx
                .query(
                    &format!(
                        "SELECT {column}, CAST(SUM(bytes) AS BIGINT), CAST(SUM(streams) AS BIGINT)
                         FROM tunnel_usage{clause}
                         GROUP BY {column} ORDER BY SUM(bytes) DESC, {column}"
                    ),
                    &params,
                )?
                .iter()
                .map(|r| TunnelUsageGroup {
                    name: r.get(0),
                    bytes: r.get(1),
                    streams: r.get(2),
                })
                .collect())
        };
        let by_platform = group("platform")?;
        let by_key = group("key_id")?;
        tx.commit()?;
        Ok(TunnelUsage {
            bytes: totals.get(0),
            streams: totals.get(1),
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
        let (daily_clause, daily_params) = (&daily.clause, daily.params());
        let mut client = self.client()?;
        let mut tx = client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()?;
        let totals = tx.query_one(
            &format!(
                "SELECT CAST(COALESCE(SUM(requests), 0) AS BIGINT), CAST(COALESCE(SUM(credits), 0) AS BIGINT)
                 FROM ledger_daily{daily_clause}"
            ),
            &daily_params,
        )?;
        let mut group = |column: &str| -> StoreResult<Vec<UsageGroup>> {
            Ok(tx
                .query(
                    &format!(
                        "SELECT {column}, CAST(SUM(requests) AS BIGINT), CAST(SUM(credits) AS BIGINT)
                         FROM ledger_daily{daily_clause}
                         GROUP BY {column} ORDER BY SUM(credits) DESC, {column}"
                    ),
                    &daily_params,
                )?
                .iter()
                .map(|r| UsageGroup {
                    name: r.get(0),
                    requests: r.get(1),
                    credits: r.get(2),
                })
                .collect())
        };
        let by_platform = group("platform")?;
        let by_key = group("key_id")?;
        let entries = tx
            .query(
                &format!(
                    "SELECT id, created_at, account_id, key_id, platform, credits, request_id
                     FROM ledger{} ORDER BY created_at DESC, id DESC LIMIT {entries}",
                    ledger.clause
                ),
                &ledger.params(),
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
            .collect();
        tx.commit()?;
        Ok(Usage {
            requests: totals.get(0),
            credits: totals.get(1),
            by_platform,
            by_key,
            entries,
        })
    }
}
