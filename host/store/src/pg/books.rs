//! The books on PostgreSQL: the same queries as the SQLite side, in
//! PostgreSQL's dialect (`$n` placeholders, `ON CONFLICT DO NOTHING`,
//! `SUM` cast back to `BIGINT`). Each method is one statement or one
//! transaction on one pooled connection. The statements of a parse
//! (balance, key lookup, delivery, charge, rate count) are sent typed
//! (`query_typed*`): parse, bind and execute in one round trip instead of a
//! prepare round trip first.

use postgres::types::{ToSql, Type};

use super::keys::notify_key_change;
use super::{Pg, reports};
use crate::backup::BackupSummary;
use crate::usage::{Usage, UsageFilter, UsageParam};
use crate::{StoreError, StoreResult};

impl Pg {
    pub fn key_delivery(
        &self,
        id: &str,
        set: Option<Option<&str>>,
        now: i64,
    ) -> StoreResult<Option<String>> {
        let mut client = self.client()?;
        if let Some(delivery) = set {
            // Keys are cached with their delivery: every host forgets them.
            let mut tx = client.transaction()?;
            tx.execute(
                "UPDATE api_keys SET delivery = $2, updated_at = $3 WHERE id = $1",
                &[&id, &delivery, &now],
            )?;
            notify_key_change(&mut tx)?;
            tx.commit()?;
        }
        client
            .query_typed_opt(
                "SELECT delivery FROM api_keys WHERE id = $1",
                &[(&id, Type::TEXT)],
            )?
            .map(|r| r.get::<_, Option<String>>(0))
            .ok_or_else(|| StoreError::NotFound("key", id.into()))
    }

    pub fn count_request(&self, bucket: &str, minute: i64) -> StoreResult<i64> {
        Ok(self
            .client()?
            .query_typed_one(
                "INSERT INTO rate_buckets (bucket, minute, count) VALUES ($1, $2, 1)
                 ON CONFLICT (bucket, minute) DO UPDATE SET count = rate_buckets.count + 1
                 RETURNING count",
                &[(&bucket, Type::TEXT), (&minute, Type::INT8)],
            )?
            .get(0))
    }

    pub fn count_requests_within(
        &self,
        bucket: &str,
        minute: i64,
        n: i64,
        limit: i64,
    ) -> StoreResult<Option<i64>> {
        Ok(self
            .client()?
            .query_typed_opt(
                "INSERT INTO rate_buckets (bucket, minute, count) SELECT $1, $2, $3 WHERE $3 <= $4
                 ON CONFLICT (bucket, minute) DO UPDATE SET count = rate_buckets.count + excluded.count
                 WHERE rate_buckets.count + excluded.count <= $4
                 RETURNING count",
                &[
                    (&bucket, Type::TEXT),
                    (&minute, Type::INT8),
                    (&n, Type::INT8),
                    (&limit, Type::INT8),
                ],
            )?
            .map(|r| r.get(0)))
    }

    pub fn prune_rate_buckets(&self, minute: i64) -> StoreResult<()> {
        self.client()?
            .execute("DELETE FROM rate_buckets WHERE minute < $1", &[&minute])?;
        Ok(())
    }

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
        let mut tx = reports::snapshot(&mut client)?;
        let (requests, credits) = reports::totals(&mut tx, "ledger", SUMS, &clause, &params)?;
        let mut group = |column: &str| {
            reports::grouped(
                &mut tx,
                "ledger",
                SUMS,
                "SUM(credits)",
                &clause,
                &params,
                column,
            )
            .map(crate::report::usage_groups)
        };
        let by_platform = group("platform")?;
        let by_key = group("key_id")?;
        let entries = reports::recent_entries(&mut tx, &clause, &params, filter.entries)?;
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
