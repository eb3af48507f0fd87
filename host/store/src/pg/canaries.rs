//! The canaries' lease and results on PostgreSQL (`canaries`), shared by every host.

use postgres::types::Type;

use super::Pg;
use crate::StoreResult;
use crate::canaries::{CANARY_RESULTS_KEPT, CanaryRow, LEASE, TAKE_LEASE_PG};

impl Pg {
    pub(crate) fn take_canary_lease(
        &self,
        holder: &str,
        now_ms: i64,
        until_ms: i64,
    ) -> StoreResult<bool> {
        Ok(!self
            .client()?
            .query_typed(
                TAKE_LEASE_PG,
                &[
                    (&LEASE, Type::TEXT),
                    (&holder, Type::TEXT),
                    (&until_ms, Type::INT8),
                    (&now_ms, Type::INT8),
                ],
            )?
            .is_empty())
    }

    pub(crate) fn add_canary_result(&self, row: &CanaryRow) -> StoreResult<()> {
        let mut client = self.client()?;
        client.execute(
            "INSERT INTO canary_results (platform, url, outcome, detail, failure_code, at, host)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[
                &row.platform,
                &row.url,
                &row.outcome,
                &row.detail,
                &row.failure_code,
                &row.at_unix_s,
                &row.host,
            ],
        )?;
        client.execute(
            "DELETE FROM canary_results WHERE id <= (SELECT MAX(id) FROM canary_results) - $1",
            &[&CANARY_RESULTS_KEPT],
        )?;
        Ok(())
    }

    pub(crate) fn canary_results_after(
        &self,
        after_id: i64,
        limit: i64,
    ) -> StoreResult<Vec<CanaryRow>> {
        const SQL_PG: &str = "SELECT id, platform, url, outcome, detail, failure_code, at, host
             FROM canary_results WHERE id > $1 ORDER BY id LIMIT $2";
        Ok(self
            .client()?
            .query(SQL_PG, &[&after_id, &limit])?
            .iter()
            .map(|r| CanaryRow {
                id: r.get(0),
                platform: r.get(1),
                url: r.get(2),
                outcome: r.get(3),
                detail: r.get(4),
                failure_code: r.get(5),
                at_unix_s: r.get(6),
                host: r.get(7),
            })
            .collect())
    }
}
