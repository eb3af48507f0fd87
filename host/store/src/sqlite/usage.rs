//! Usage on SQLite: the ledger report of `usage`, in one read transaction.

use rusqlite::Connection;
use rusqlite::types::Value;

use super::report;
use crate::StoreResult;
use crate::usage::{Usage, UsageFilter, UsageParam};

pub(crate) fn usage(c: &mut Connection, filter: &UsageFilter) -> StoreResult<Usage> {
    let (clause, params) = filter.where_clause(|n| format!("?{n}"));
    let params: Vec<Value> = params
        .into_iter()
        .map(|p| match p {
            UsageParam::Text(t) => Value::Text(t),
            UsageParam::Int(i) => Value::Integer(i),
        })
        .collect();
    // One read transaction, so totals, groups and entries agree.
    const SUMS: [&str; 2] = ["COUNT(*)", "SUM(credits)"];
    let tx = c.transaction()?;
    let (requests, credits) = report::totals(&tx, "ledger", SUMS, &clause, &params)?;
    let group = |column: &str| {
        let filter = (clause.as_str(), params.as_slice());
        report::grouped(&tx, "ledger", SUMS, "SUM(credits)", filter, column)
            .map(crate::usage::usage_groups)
    };
    let by_platform = group("platform")?;
    let by_key = group("key_id")?;
    let entries = report::recent_entries(&tx, &clause, &params, filter.entries)?;
    Ok(Usage {
        requests,
        credits,
        by_platform,
        by_key,
        entries,
    })
}
