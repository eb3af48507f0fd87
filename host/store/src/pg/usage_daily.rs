//! Usage from the daily aggregates on PostgreSQL (`usage_daily`).

use super::Pg;
use super::report::{self, Filter};
use crate::usage::usage_groups;
use crate::{StoreResult, Usage};

impl Pg {
    /// Totals and breakdowns from `ledger_daily`, the most recent entries
    /// from the ledger, in one snapshot.
    pub fn usage_bounded(
        &self,
        daily: &Filter,
        ledger: &Filter,
        entries: usize,
    ) -> StoreResult<Usage> {
        const SUMS: [&str; 2] = ["SUM(requests)", "SUM(credits)"];
        let (clause, params) = (&daily.clause, daily.params());
        let mut client = self.client()?;
        let mut tx = report::snapshot(&mut client)?;
        let (requests, credits) = report::totals(&mut tx, "ledger_daily", SUMS, clause, &params)?;
        let mut group = |column: &str| {
            report::grouped(
                &mut tx,
                "ledger_daily",
                SUMS,
                "SUM(credits)",
                clause,
                &params,
                column,
            )
            .map(usage_groups)
        };
        let by_platform = group("platform")?;
        let by_key = group("key_id")?;
        let entries = report::recent_entries(&mut tx, &ledger.clause, &ledger.params(), entries)?;
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
