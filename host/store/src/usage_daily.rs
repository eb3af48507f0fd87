//! Usage at a bounded cost however long the ledger grows:
//! `ledger_daily` (migration 4) holds per account, UTC day, key and platform
//! the count and credits of the charges, kept in the charge's transaction
//! (`Store::charge_once`). Totals and breakdowns over whole days read it
//! (days × keys × platforms rows, not charges); the most recent entries
//! walk an index backwards. A range that cuts a day falls back to the
//! ledger ([`Store::usage`]).

use rusqlite::types::Value;
use rusqlite::{Connection, params};

use super::{Backend, Store, StoreResult, Usage, UsageFilter, dispatch_read, report};

pub(crate) const DAY_S: i64 = 86_400;

/// Count one charge in its day's aggregate (inside the charge's transaction).
pub(super) fn count_charge(
    tx: &Connection,
    account: &str,
    key_id: &str,
    platform: &str,
    credits: i64,
    now: i64,
) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO ledger_daily (account_id, day, key_id, platform, requests, credits)
         VALUES (?1, ?2, ?3, ?4, 1, ?5)
         ON CONFLICT (account_id, day, key_id, platform)
         DO UPDATE SET requests = ledger_daily.requests + 1, credits = ledger_daily.credits + ?5",
    )?
    .execute(params![
        account,
        now.div_euclid(DAY_S),
        key_id,
        platform,
        credits
    ])?;
    Ok(())
}

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
            |c| {
                // One read transaction, so totals, groups and entries agree.
                const SUMS: [&str; 2] = ["SUM(requests)", "SUM(credits)"];
                let tx = c.transaction()?;
                let (requests, credits) =
                    report::totals(&tx, "ledger_daily", SUMS, &daily, &daily_params)?;
                let group = |column: &str| {
                    let filter = (daily.as_str(), daily_params.as_slice());
                    report::grouped(&tx, "ledger_daily", SUMS, "SUM(credits)", filter, column)
                        .map(report::usage_groups)
                };
                let by_platform = group("platform")?;
                let by_key = group("key_id")?;
                let entries = report::recent_entries(&tx, &ledger, &ledger_params, filter.entries)?;
                Ok(Usage {
                    requests,
                    credits,
                    by_platform,
                    by_key,
                    entries,
                })
            },
            |p| p.usage_bounded(
                &super::pg::Filter::from_sqlite(&daily, &daily_params)?,
                &super::pg::Filter::from_sqlite(&ledger, &ledger_params)?,
                filter.entries,
            )
        )
    }
}
