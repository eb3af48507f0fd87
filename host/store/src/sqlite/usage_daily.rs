//! Usage from the daily aggregates on SQLite (`usage_daily`), and the
//! aggregate row every charge adds to.

use rusqlite::types::Value;
use rusqlite::{Connection, params};

use super::report;
use crate::usage_daily::DAY_S;
use crate::{StoreResult, Usage};

pub(crate) fn usage_bounded(
    c: &mut Connection,
    (daily, daily_params): (&str, &[Value]),
    (ledger, ledger_params): (&str, &[Value]),
    entries: usize,
) -> StoreResult<Usage> {
    // One read transaction, so totals, groups and entries agree.
    const SUMS: [&str; 2] = ["SUM(requests)", "SUM(credits)"];
    let tx = c.transaction()?;
    let (requests, credits) = report::totals(&tx, "ledger_daily", SUMS, daily, daily_params)?;
    let group = |column: &str| {
        let filter = (daily, daily_params);
        report::grouped(&tx, "ledger_daily", SUMS, "SUM(credits)", filter, column)
            .map(crate::usage::usage_groups)
    };
    let by_platform = group("platform")?;
    let by_key = group("key_id")?;
    let entries = report::recent_entries(&tx, ledger, ledger_params, entries)?;
    Ok(Usage {
        requests,
        credits,
        by_platform,
        by_key,
        entries,
    })
}

/// Count one charge in its day's aggregate (inside the charge's transaction).
pub(crate) fn count_charge(
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
