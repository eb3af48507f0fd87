//! The console overview's reports on SQLite (`daily`).

use std::collections::BTreeMap;

use rusqlite::{Connection, params};

use super::report;
use crate::daily::{DailyCredits, LAST_CHARGED_USE};
use crate::{StoreResult, UsageEntry};

pub(crate) fn daily_credits(
    c: &mut Connection,
    sql: &str,
    account: &str,
    from: i64,
    until: i64,
) -> StoreResult<Vec<DailyCredits>> {
    let mut stmt = c.prepare(sql)?;
    let rows = stmt.query_map(params![account, from, until], |r| {
        Ok(DailyCredits {
            day: r.get(0)?,
            platform: r.get(1)?,
            credits: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub(crate) fn recent_charges(
    c: &mut Connection,
    account: &str,
    n: usize,
) -> StoreResult<Vec<UsageEntry>> {
    let mut stmt = c.prepare(&format!(
        "SELECT {} FROM ledger WHERE account_id = ?1
         ORDER BY created_at DESC, id DESC LIMIT ?2",
        report::ENTRY_COLUMNS
    ))?;
    let rows = stmt.query_map(params![account, n as i64], report::ledger_entry)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub(crate) fn last_charged_use(
    c: &mut Connection,
    account: &str,
) -> StoreResult<BTreeMap<String, i64>> {
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
}
