//! Usage on PostgreSQL: the ledger report of `usage`, on one snapshot.

use postgres::types::ToSql;

use super::{Pg, report};
use crate::StoreResult;
use crate::usage::{Usage, UsageFilter, UsageParam};

impl Pg {
    pub fn usage(&self, filter: &UsageFilter) -> StoreResult<Usage> {
        let (clause, params) = filter.where_clause(|n| format!("${n}"));
        let params: Vec<&(dyn ToSql + Sync)> = params
            .iter()
            .map(|p| match p {
                UsageParam::Text(t) => t as &(dyn ToSql + Sync),
                UsageParam::Int(i) => i as &(dyn ToSql + Sync),
            })
            .collect();
        const SUMS: [&str; 2] = ["COUNT(*)", "SUM(credits)"];
        let mut client = self.client()?;
        let mut tx = report::snapshot(&mut client)?;
        let (requests, credits) = report::totals(&mut tx, "ledger", SUMS, &clause, &params)?;
        let mut group = |column: &str| {
            report::grouped(
                &mut tx,
                "ledger",
                SUMS,
                "SUM(credits)",
                &clause,
                &params,
                column,
            )
            .map(crate::usage::usage_groups)
        };
        let by_platform = group("platform")?;
        let by_key = group("key_id")?;
        let entries = report::recent_entries(&mut tx, &clause, &params, filter.entries)?;
        tx.commit()?;
        Ok(Usage {
            requests,
            credits,
            by_platform,
            by_key,
            entries,
        })
    }
}
