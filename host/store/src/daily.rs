//! Credits by UTC day and platform, for the console's overview chart.

use std::collections::BTreeMap;

use rusqlite::params;

use super::{Backend, Store, StoreResult, UsageEntry, dispatch_read, report};

/// Credits one platform took on one UTC day.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DailyCredits {
    /// Days since 1970-01-01 (UTC).
    pub day: i64,
    pub platform: String,
    pub credits: i64,
}

impl Store {
    /// The account's credits per day and platform in `[from, until)` (unix
    /// seconds). Whole-day bounds (the overview's 30 days) read the daily
    /// aggregates (`ledger_daily`, kept by every charge), so the cost does
    /// not grow with the ledger; other bounds read the ledger.
    pub fn daily_credits(
        &self,
        account: &str,
        from: i64,
        until: i64,
    ) -> StoreResult<Vec<DailyCredits>> {
        let (from, until) = (from.max(0), until.max(0));
        let whole_days = from % DAY_S == 0 && until % DAY_S == 0;
        // Integer division truncates in SQLite and PostgreSQL alike; the
        // bounds are non-negative.
        let (sql, from, until) = if whole_days {
            (DAILY_FROM_AGGREGATES, from / DAY_S, until / DAY_S)
        } else {
            (DAILY_FROM_LEDGER, from, until)
        };
        dispatch_read!(
            self,
            |c| {
                let mut stmt = c.prepare(sql)?;
                let rows = stmt.query_map(params![account, from, until], |r| {
                    Ok(DailyCredits {
                        day: r.get(0)?,
                        platform: r.get(1)?,
                        credits: r.get(2)?,
                    })
                })?;
                Ok(rows.collect::<Result<_, _>>()?)
            },
            |p| p.daily_credits(sql, account, from, until)
        )
    }

    /// The account's latest `n` charges, newest first (the overview's list:
    /// read through the `(account_id, created_at)` index, no totals).
    pub fn recent_charges(&self, account: &str, n: usize) -> StoreResult<Vec<UsageEntry>> {
        dispatch_read!(
            self,
            |c| {
                let mut stmt = c.prepare(&format!(
                    "SELECT {} FROM ledger WHERE account_id = ?1
                     ORDER BY created_at DESC, id DESC LIMIT ?2",
                    report::ENTRY_COLUMNS
                ))?;
                let rows = stmt.query_map(params![account, n as i64], report::ledger_entry)?;
                Ok(rows.collect::<Result<_, _>>()?)
            },
            |p| p.recent_charges(account, n)
        )
    }

    /// When each key of the account was last charged (unix seconds; keys
    /// never charged are absent). Derived from the ledger, not written per
    /// parse: one `MAX` per key, each read from the end of the
    /// `(key_id, created_at)` index.
    pub fn last_charged_use(&self, account: &str) -> StoreResult<BTreeMap<String, i64>> {
        dispatch_read!(
            self,
            |c| {
                let mut stmt = c.prepare(LAST_CHARGED_USE)?;
                let rows = stmt.query_map([account], |r| Ok((r.get(0)?, r.get(1)?)))?;
                let mut out = BTreeMap::new();
                for row in rows {
                    let (key, at): (String, Option<i64>) = row?;
                    if let Some(at) = at {
                        out.insert(key, at);
                    }
                }
                Ok(out)
            },
            |p| p.last_charged_use(account)
        )
    }
}

const DAY_S: i64 = 86_400;

/// `(account, first day, day after the last)`, in days since 1970-01-01.
pub(super) const DAILY_FROM_AGGREGATES: &str =
    "SELECT day, platform, CAST(SUM(credits) AS BIGINT) FROM ledger_daily
     WHERE account_id = $1 AND day >= $2 AND day < $3
     GROUP BY day, platform ORDER BY day, platform";

/// `(account, from, until)` in unix seconds.
pub(super) const DAILY_FROM_LEDGER: &str =
    "SELECT created_at / 86400 AS day, platform, CAST(SUM(credits) AS BIGINT) FROM ledger
     WHERE account_id = $1 AND created_at >= $2 AND created_at < $3
     GROUP BY created_at / 86400, platform ORDER BY day, platform";

/// One row per key of the account: its id and its latest ledger time (both
/// backends; `$1` is SQLite's `?1` too).
pub(super) const LAST_CHARGED_USE: &str = "SELECT k.id,
        (SELECT MAX(l.created_at) FROM ledger l WHERE l.key_id = k.id)
     FROM api_keys k WHERE k.account_id = $1";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_by_day_and_platform() {
        crate::both::each_backend(|t| groups_by_day_and_platform_on(&t.store));
    }

    fn groups_by_day_and_platform_on(store: &Store) {
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
                .charge_once("acme", "k", p, 2, &format!("r{i}"), t)
                .unwrap();
        }
        let days = store.daily_credits("acme", 0, 3 * 86_400).unwrap();
        let flat: Vec<(i64, &str, i64)> = days
            .iter()
            .map(|d| (d.day, d.platform.as_str(), d.credits))
            .collect();
        assert_eq!(flat, [(1, "tiktok", 4), (1, "x", 2), (2, "x", 2)]);
        assert!(store.daily_credits("acme", 0, 86_400).unwrap().is_empty());
        // Bounds inside days read the ledger: the same days, cut exactly.
        assert_eq!(
            store.daily_credits("acme", 1, 3 * 86_400 - 1).unwrap(),
            days,
            "ledger and aggregates agree"
        );
        let cut = store.daily_credits("acme", 86_401, 2 * 86_400 + 1).unwrap();
        let cut: Vec<(i64, &str, i64)> = cut
            .iter()
            .map(|d| (d.day, d.platform.as_str(), d.credits))
            .collect();
        assert_eq!(cut, [(1, "tiktok", 2), (1, "x", 2), (2, "x", 2)]);
        let recent = store.recent_charges("acme", 2).unwrap();
        let times: Vec<i64> = recent.iter().map(|e| e.time).collect();
        assert_eq!(times, [2 * 86_400, 86_402]);
    }

    #[test]
    fn last_charged_use_per_key_from_the_ledger() {
        crate::both::each_backend(|t| {
            let store = &t.store;
            for (id, account) in [
                ("k1", "acme"),
                ("k2", "acme"),
                ("k3", "acme"),
                ("o1", "other"),
            ] {
                store.insert_key(&key(id, account), id.as_bytes()).unwrap();
            }
            store.add_credits("acme", 100, 0).unwrap();
            store.add_credits("other", 100, 0).unwrap();
            for (i, (k, a, t)) in [
                ("k1", "acme", 50),
                ("k1", "acme", 70),
                ("k1", "acme", 60),
                ("k2", "acme", 40),
                ("o1", "other", 90),
            ]
            .into_iter()
            .enumerate()
            {
                store
                    .charge(a, k, "tiktok", 1, &format!("r{i}"), t)
                    .unwrap();
            }
            let last = store.last_charged_use("acme").unwrap();
            assert_eq!(
                last.into_iter().collect::<Vec<_>>(),
                [("k1".to_string(), 70), ("k2".to_string(), 40)],
                "k3 never charged; o1 is another account's"
            );
            assert!(store.last_charged_use("nobody").unwrap().is_empty());
        });
    }

    #[test]
    fn last_charged_use_reads_the_key_index_not_the_ledger() {
        let dir = tempfile::tempdir().unwrap();
        Store::open(&dir.path().join("t.db")).unwrap();
        let conn = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
        let mut stmt = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {LAST_CHARGED_USE}"))
            .unwrap();
        let plan: Vec<String> = stmt
            .query_map(["acme"], |r| r.get(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            plan.iter()
                .any(|d| d.contains("USING COVERING INDEX ledger_by_key (key_id=?)")),
            "{plan:?}"
        );
        assert!(!plan.iter().any(|d| d.starts_with("SCAN l")), "{plan:?}");
    }

    fn key(id: &str, account: &str) -> crate::KeyRecord {
        crate::KeyRecord {
            id: id.into(),
            account_id: account.into(),
            name: id.into(),
            token_prefix: "mp_live_x".into(),
            expires_on: None,
            platforms: None,
            created_at: 0,
            rotated_at: None,
            rate_limit_per_minute: None,
            delivery: None,
        }
    }
}
