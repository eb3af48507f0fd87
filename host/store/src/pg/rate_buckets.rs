//! Per-key request counts on PostgreSQL (`rate_buckets`), shared by every host.

use postgres::types::Type;

use super::Pg;
use crate::StoreResult;

impl Pg {
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
}
