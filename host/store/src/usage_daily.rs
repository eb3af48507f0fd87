//! Usage at a bounded cost however long the ledger grows:
//! `ledger_daily` (migration 4) holds per account, UTC day, key and platform
//! the count and credits of the charges, kept in the charge's transaction
//! (`Store::charge_once`). Totals and breakdowns over whole days read it
//! (days × keys × platforms rows, not charges); the most recent entries
//! walk an index backwards. A range that cuts a day falls back to the
//! ledger ([`Store::usage`]).

use rusqlite::types::Value;

use crate::{Backend, Store, StoreResult, Usage, UsageFilter, dispatch_read, sqlite};

pub(crate) const DAY_S: i64 = 86_400;

/// `WHERE …` over `account_id`, `key_id`, `platform` and a time column
/// (`from`/`until` divided by `unit`: 1 for the ledger, a day for aggregates).
pub(crate) fn where_clause(filter: &UsageFilter, time: &str, unit: i64) -> (String, Vec<Value>) {
    let mut conds = Vec::new();
    let mut params = Vec::new();
    for (column, value) in [
        ("account_id", &filter.account),
        ("key_id", &filter.key),
        ("platform", &filter.platform),
    ] {
        if let Some(v) = value {
            params.push(Value::Text(v.clone()));
            conds.push(format!("{column} = ?{}", params.len()));
        }
    }
    for (op, value) in [(">=", filter.from), ("<", filter.until)] {
        if let Some(t) = value {
            params.push(Value::Integer(t.div_euclid(unit)));
            conds.push(format!("{time} {op} ?{}", params.len()));
        }
    }
    let clause = if conds.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conds.join(" AND "))
    };
    (clause, params)
}

impl Store {
    /// [`Store::usage`], read from the daily aggregates when the range is
    /// whole UTC days (or open), so its cost does not grow with the ledger.
    pub fn usage_bounded(&self, filter: &UsageFilter) -> StoreResult<Usage> {
        let whole_days = |t: Option<i64>| t.is_none_or(|t| t.rem_euclid(DAY_S) == 0);
        if !(whole_days(filter.from) && whole_days(filter.until)) {
            return self.usage(filter);
        }
        let (daily, daily_params) = where_clause(filter, "day", DAY_S);
        let (ledger, ledger_params) = where_clause(filter, "created_at", 1);
        dispatch_read!(
            self,
            |c| sqlite::usage_daily::usage_bounded(
                c,
                (&daily, &daily_params),
                (&ledger, &ledger_params),
                filter.entries
            ),
            |p| p.usage_bounded(
                &crate::pg::Filter::from_sqlite(&daily, &daily_params)?,
                &crate::pg::Filter::from_sqlite(&ledger, &ledger_params)?,
                filter.entries,
            )
        )
    }
}

impl Store {
    /// [`Store::usage_bounded`], awaited (see `awaited`).
    pub async fn usage_bounded_async(&self, filter: &UsageFilter) -> StoreResult<Usage> {
        let filter = filter.clone();
        self.off_thread(move |s| s.usage_bounded(&filter)).await
    }
}
