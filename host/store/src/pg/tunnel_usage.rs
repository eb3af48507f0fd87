//! The media tunnel's traffic on PostgreSQL (`tunnel_usage`).

use super::Pg;
use super::report::{self, Filter};
use crate::StoreResult;
use crate::tunnel_usage::{DAY, TunnelTraffic, TunnelUsage, tunnel_groups};

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
        let mut tx = report::snapshot(&mut client)?;
        let (bytes, streams) = report::totals(&mut tx, "tunnel_usage", SUMS, clause, &params)?;
        let mut group = |column: &str| {
            report::grouped(
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
}
