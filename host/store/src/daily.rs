//! Credits by UTC day and platform, for the console's overview chart.

use std::collections::BTreeMap;

use crate::{Backend, Store, StoreResult, UsageEntry, dispatch_read, sqlite};

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
            |c| sqlite::daily::daily_credits(c, sql, account, from, until),
            |p| p.daily_credits(sql, account, from, until)
        )
    }

    /// The account's latest `n` charges, newest first (the overview's list:
    /// read through the `(account_id, created_at)` index, no totals).
    pub fn recent_charges(&self, account: &str, n: usize) -> StoreResult<Vec<UsageEntry>> {
        dispatch_read!(
            self,
            |c| sqlite::daily::recent_charges(c, account, n),
            |p| p.recent_charges(account, n)
        )
    }

    /// When each key of the account was last charged (unix seconds; keys
    /// never charged are absent). Derived from the ledger, not written per
    /// parse: one `MAX` per key, each read from the end of the
    /// `(key_id, created_at)` index.
    pub fn last_charged_use(&self, account: &str) -> StoreResult<BTreeMap<String, i64>> {
        dispatch_read!(self, |c| sqlite::daily::last_charged_use(c, account), |p| p
            .last_charged_use(account))
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

/// The awaited twins of the overview's reads (see `awaited`).
impl Store {
    /// [`Store::daily_credits`], awaited.
    pub async fn daily_credits_async(
        &self,
        account: &str,
        from: i64,
        until: i64,
    ) -> StoreResult<Vec<DailyCredits>> {
        let account = account.to_string();
        self.off_thread(move |s| s.daily_credits(&account, from, until))
            .await
    }

    /// [`Store::recent_charges`], awaited.
    pub async fn recent_charges_async(
        &self,
        account: &str,
        n: usize,
    ) -> StoreResult<Vec<UsageEntry>> {
        let account = account.to_string();
        self.off_thread(move |s| s.recent_charges(&account, n))
            .await
    }

    /// [`Store::last_charged_use`], awaited.
    pub async fn last_charged_use_async(
        &self,
        account: &str,
    ) -> StoreResult<BTreeMap<String, i64>> {
        let account = account.to_string();
        self.off_thread(move |s| s.last_charged_use(&account)).await
    }
}
