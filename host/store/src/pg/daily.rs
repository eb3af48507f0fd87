//! The console overview's reports on PostgreSQL (`daily`).

use std::collections::BTreeMap;

use super::Pg;
use crate::daily::{DailyCredits, LAST_CHARGED_USE};
use crate::{StoreResult, UsageEntry};

impl Pg {
    /// `sql` is one of `store::daily`'s two statements, with its bounds.
    pub fn daily_credits(
        &self,
        sql: &str,
        account: &str,
        from: i64,
        until: i64,
    ) -> StoreResult<Vec<DailyCredits>> {
        Ok(self
            .client()?
            .query(sql, &[&account, &from, &until])?
            .iter()
            .map(|r| DailyCredits {
                day: r.get(0),
                platform: r.get(1),
                credits: r.get(2),
            })
            .collect())
    }

    pub fn last_charged_use(&self, account: &str) -> StoreResult<BTreeMap<String, i64>> {
        Ok(self
            .client()?
            .query(LAST_CHARGED_USE, &[&account])?
            .iter()
            .filter_map(|r| Some((r.get(0), r.get::<_, Option<i64>>(1)?)))
            .collect())
    }

    pub fn recent_charges(&self, account: &str, n: usize) -> StoreResult<Vec<UsageEntry>> {
        super::report::recent_entries(
            &mut **self.client()?,
            " WHERE account_id = $1",
            &[&account],
            n,
        )
    }
}
