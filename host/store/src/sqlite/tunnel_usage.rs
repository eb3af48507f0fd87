//! The media tunnel's traffic on SQLite (`tunnel_usage`).

use rusqlite::Connection;
use rusqlite::types::Value;

use super::report;
use crate::StoreResult;
use crate::tunnel_usage::{DAY, TunnelTraffic, TunnelUsage, tunnel_groups};

pub(crate) fn record_tunnel_traffic(
    c: &Connection,
    traffic: &TunnelTraffic<'_>,
) -> StoreResult<()> {
    c.execute(
        "INSERT INTO tunnel_usage (day, account_id, key_id, platform, bytes, streams)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
     ON CONFLICT (day, key_id, platform) DO UPDATE SET
        bytes = tunnel_usage.bytes + excluded.bytes,
        streams = tunnel_usage.streams + excluded.streams",
        rusqlite::params![
            traffic.at.div_euclid(DAY),
            traffic.account,
            traffic.key,
            traffic.platform,
            traffic.bytes,
            traffic.streams
        ],
    )?;
    Ok(())
}

pub(crate) fn tunnel_bytes_on_day(c: &mut Connection, key: &str, at: i64) -> StoreResult<i64> {
    Ok(c.query_row(
        "SELECT COALESCE(SUM(bytes), 0) FROM tunnel_usage WHERE key_id = ?1 AND day = ?2",
        rusqlite::params![key, at.div_euclid(DAY)],
        |r| r.get(0),
    )?)
}

pub(crate) fn tunnel_usage(
    c: &mut Connection,
    clause: &str,
    params: &[Value],
) -> StoreResult<TunnelUsage> {
    // One read transaction, so totals and groups agree.
    const SUMS: [&str; 2] = ["SUM(bytes)", "SUM(streams)"];
    let tx = c.transaction()?;
    let (bytes, streams) = report::totals(&tx, "tunnel_usage", SUMS, clause, params)?;
    let group = |column: &str| {
        let filter = (clause, params);
        report::grouped(&tx, "tunnel_usage", SUMS, "SUM(bytes)", filter, column).map(tunnel_groups)
    };
    let by_platform = group("platform")?;
    let by_key = group("key_id")?;
    Ok(TunnelUsage {
        bytes,
        streams,
        by_platform,
        by_key,
    })
}
