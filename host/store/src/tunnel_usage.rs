//! Bytes the media tunnel served, per UTC day, key and platform.
//! Tunnel traffic charges no credits, so it is not in the ledger: it is
//! counted here for the per-key daily byte limit and for usage views.
//! Portable SQL (an upsert, plain integer columns).

use rusqlite::types::Value;

use crate::{Backend, Store, StoreResult, UsageFilter, dispatch, dispatch_read, sqlite};

/// Seconds in a UTC day; days are `unix_seconds / DAY`.
pub const DAY: i64 = 86_400;

/// Tunnel traffic matching a usage filter (whole UTC days).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TunnelUsage {
    pub bytes: i64,
    /// Tunnel requests that streamed (GET or HEAD), merges included.
    pub streams: i64,
    pub by_platform: Vec<TunnelUsageGroup>,
    pub by_key: Vec<TunnelUsageGroup>,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TunnelUsageGroup {
    pub name: String,
    pub bytes: i64,
    pub streams: i64,
}

/// One stream's (or a part of one's) traffic to add.
#[derive(Clone, Debug)]
pub struct TunnelTraffic<'a> {
    pub account: &'a str,
    pub key: &'a str,
    pub platform: &'a str,
    /// Unix seconds; the row is that UTC day's.
    pub at: i64,
    pub bytes: i64,
    /// 1 when this closes a stream, 0 for a partial flush.
    pub streams: i64,
}

impl UsageFilter {
    /// The filter on `tunnel_usage` rows: same account/key/platform, days
    /// touching the time range.
    fn tunnel_where(&self) -> (String, Vec<Value>) {
        let mut conds = Vec::new();
        let mut params = Vec::new();
        for (column, value) in [
            ("account_id", &self.account),
            ("key_id", &self.key),
            ("platform", &self.platform),
        ] {
            if let Some(v) = value {
                params.push(Value::Text(v.clone()));
                conds.push(format!("{column} = ?{}", params.len()));
            }
        }
        if let Some(from) = self.from {
            params.push(Value::Integer(from.div_euclid(DAY)));
            conds.push(format!("day >= ?{}", params.len()));
        }
        if let Some(until) = self.until {
            // The day holding the last second before `until`.
            params.push(Value::Integer((until - 1).div_euclid(DAY)));
            conds.push(format!("day <= ?{}", params.len()));
        }
        let clause = if conds.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", conds.join(" AND "))
        };
        (clause, params)
    }
}

/// Byte groups as the tunnel report shows them (both backends).
pub(crate) fn tunnel_groups(rows: Vec<(String, i64, i64)>) -> Vec<TunnelUsageGroup> {
    rows.into_iter()
        .map(|(name, bytes, streams)| TunnelUsageGroup {
            name,
            bytes,
            streams,
        })
        .collect()
}

impl Store {
    /// Add `traffic` to its day's row.
    pub fn record_tunnel_traffic(&self, traffic: &TunnelTraffic<'_>) -> StoreResult<()> {
        dispatch!(
            self,
            |c| sqlite::tunnel_usage::record_tunnel_traffic(c, traffic),
            |p| p.record_tunnel_traffic(traffic)
        )
    }

    /// Bytes served to `key` on the UTC day holding `at`, every platform.
    pub fn tunnel_bytes_on_day(&self, key: &str, at: i64) -> StoreResult<i64> {
        dispatch_read!(
            self,
            |c| sqlite::tunnel_usage::tunnel_bytes_on_day(c, key, at),
            |p| p.tunnel_bytes_on_day(key, at)
        )
    }

    /// Tunnel traffic by `filter` (its `entries` is ignored).
    pub fn tunnel_usage(&self, filter: &UsageFilter) -> StoreResult<TunnelUsage> {
        let (clause, params) = filter.tunnel_where();
        dispatch_read!(
            self,
            |c| sqlite::tunnel_usage::tunnel_usage(c, &clause, &params),
            |p| p.tunnel_usage(&crate::pg::Filter::from_sqlite(&clause, &params)?)
        )
    }
}

/// The awaited twins of the tunnel traffic calls (see `awaited`).
impl Store {
    /// [`Store::record_tunnel_traffic`], awaited.
    pub async fn record_tunnel_traffic_async(
        &self,
        traffic: &TunnelTraffic<'_>,
    ) -> StoreResult<()> {
        let names = [traffic.account, traffic.key, traffic.platform].map(str::to_string);
        let again = names.clone();
        let counts = (traffic.at, traffic.bytes, traffic.streams);
        self.write_or_off_thread(
            move |c| sqlite::tunnel_usage::record_tunnel_traffic(c, &traffic_of(&names, counts)),
            move |s| s.record_tunnel_traffic(&traffic_of(&again, counts)),
        )
        .await
    }

    /// [`Store::tunnel_bytes_on_day`], awaited.
    pub async fn tunnel_bytes_on_day_async(&self, key: &str, at: i64) -> StoreResult<i64> {
        let key = key.to_string();
        self.off_thread(move |s| s.tunnel_bytes_on_day(&key, at))
            .await
    }

    /// [`Store::tunnel_usage`], awaited.
    pub async fn tunnel_usage_async(&self, filter: &UsageFilter) -> StoreResult<TunnelUsage> {
        let filter = filter.clone();
        self.off_thread(move |s| s.tunnel_usage(&filter)).await
    }
}

/// The traffic of owned `[account, key, platform]` and `(at, bytes, streams)`.
fn traffic_of(
    [account, key, platform]: &[String; 3],
    (at, bytes, streams): (i64, i64, i64),
) -> TunnelTraffic<'_> {
    TunnelTraffic {
        account,
        key,
        platform,
        at,
        bytes,
        streams,
    }
}
