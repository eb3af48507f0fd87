//! The books' totals on PostgreSQL (`Store::summary`), as `backup` reports them for SQLite.

use super::Pg;
use crate::StoreResult;
use crate::backup::BackupSummary;

impl Pg {
    pub fn summary(&self) -> StoreResult<BackupSummary> {
        let mut client = self.client()?;
        // One snapshot, so the totals agree with each other.
        let mut tx = client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()?;
        let schema_version = crate::schema::pg::version(&mut tx)?;
        let row = tx.query_one(
            "SELECT (SELECT COUNT(*) FROM accounts),
                    (SELECT CAST(COALESCE(SUM(balance), 0) AS BIGINT) FROM accounts),
                    (SELECT COUNT(*) FROM api_keys),
                    (SELECT COUNT(*) FROM ledger),
                    (SELECT CAST(COALESCE(SUM(credits), 0) AS BIGINT) FROM ledger),
                    (SELECT CAST(COALESCE(SUM(credits), 0) AS BIGINT) FROM credit_grants)",
            &[],
        )?;
        tx.commit()?;
        Ok(BackupSummary {
            schema_version,
            accounts: row.get(0),
            balance_total: row.get(1),
            keys: row.get(2),
            ledger_rows: row.get(3),
            ledger_total: row.get(4),
            granted_total: row.get(5),
        })
    }
}
