//! Credits by UTC day and platform, for the console's overview chart.

use rusqlite::params;

use super::{Backend, Store, StoreResult, UsageEntry, dispatch};

/// Credits one platform took on one UTC day.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DailyCredits {
    /// Days since 1970-01-01 (UTC).
    pub day: i64,
    pub platform: String,
    pub credits: i64,
}

impl Store {
    /// The account's credits per day and platform in `[from, until)` (unix seconds).
    pub fn daily_credits(
        &self,
        account: &str,
        from: i64,
        until: i64,
    ) -> StoreResult<Vec<DailyCredits>> {
        dispatch!(
            self,
            |c| {
                // Integer division truncates in SQLite and PostgreSQL alike; the
                // bounds keep times non-negative.
                let mut stmt = c.prepare(
                    "SELECT created_at / 86400 AS day, platform, SUM(credits) FROM ledger
                 WHERE account_id = ?1 AND created_at >= ?2 AND created_at < ?3
                 GROUP BY created_at / 86400, platform ORDER BY day, platform",
                )?;
                let rows = stmt.query_map(params![account, from.max(0), until], |r| {
                    Ok(DailyCredits {
                        day: r.get(0)?,
                        platform: r.get(1)?,
                        credits: r.get(2)?,
                    })
                })?;
                Ok(rows.collect::<Result<_, _>>()?)
            },
            |p| p.daily_credits(account, from, until)
        )
    }
}

impl Store {
    /// The account's latest `n` charges, newest first (the overview's list:
    /// read through the `(account_id, created_at)` index, no totals).
    pub fn recent_charges(&self, account: &str, n: usize) -> StoreResult<Vec<UsageEntry>> {
        dispatch!(
            self,
            |c| {
                let mut stmt = c.prepare(
                    "SELECT id, created_at, account_id, key_id, platform, credits, request_id
                 FROM ledger WHERE account_id = ?1 ORDER BY created_at DESC, id DESC LIMIT ?2",
                )?;
                let rows = stmt.query_map(params![account, n as i64], |r| {
                    Ok(UsageEntry {
                        id: r.get(0)?,
                        time: r.get(1)?,
                        account: r.get(2)?,
                        key: r.get(3)?,
                        platform: r.get(4)?,
                        credits: r.get(5)?,
                        request_id: r.get(6)?,
                    })
                })?;
                Ok(rows.collect::<Result<_, _>>()?)
            },
            |p| p.recent_charges(account, n)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_by_day_and_platform() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).unwrap();
        store.add_credits("acme", 100, 0).unwrap();
        for (i, (t, p)) in [
            (86_400, "tiktok"),
            (86_401, "tiktok"),
            (86_402, "x"),
            (2 * 86_400, "x"),
        ]
        .into_iter()
        .enumerate()
        {
            // Ledger request ids are unique.
            store
                .charge("acme", "k", p, 2, &format!("r{i}"), t)
                .unwrap();
        }
        let days = store.daily_credits("acme", 0, 3 * 86_400).unwrap();
        let flat: Vec<(i64, &str, i64)> = days
            .iter()
            .map(|d| (d.day, d.platform.as_str(), d.credits))
            .collect();
        assert_eq!(flat, [(1, "tiktok", 4), (1, "x", 2), (2, "x", 2)]);
        assert!(store.daily_credits("acme", 0, 86_400).unwrap().is_empty());
        let recent = store.recent_charges("acme", 2).unwrap();
        let times: Vec<i64> = recent.iter().map(|e| e.time).collect();
        assert_eq!(times, [2 * 86_400, 86_402]);
    }
}
