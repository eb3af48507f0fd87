//! Jobs on PostgreSQL (`jobs`).

use super::Pg;
use crate::StoreResult;
use crate::jobs::{JOB_COLUMNS, JobRecord};

impl Pg {
    pub(crate) fn insert_job(&self, job: &JobRecord, count: i32) -> StoreResult<()> {
        self.client()?.execute(
            "INSERT INTO jobs (id, account_id, key_id, request, callback_url, state, item_count, created_ms)
             VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7)",
            &[&job.id, &job.account_id, &job.key_id, &job.request, &job.callback_url, &count, &job.created_ms],
        )?;
        Ok(())
    }

    pub(crate) fn job(&self, id: &str, pg_sql: &str) -> StoreResult<Option<JobRecord>> {
        Ok(self
            .client()?
            .query_opt(pg_sql, &[&id])?
            .as_ref()
            .map(job_from_row))
    }

    pub(crate) fn job_answers(&self, id: &str) -> StoreResult<Vec<(u32, String)>> {
        Ok(self
            .client()?
            .query(
                "SELECT idx, answer FROM job_items WHERE job_id = $1 ORDER BY idx",
                &[&id],
            )?
            .iter()
            .map(|r| (u32::try_from(r.get::<_, i32>(0)).unwrap_or(0), r.get(1)))
            .collect())
    }

    pub(crate) fn claim_jobs(
        &self,
        now_ms: i64,
        limit: i64,
        lease: &str,
        until: i64,
    ) -> StoreResult<Vec<JobRecord>> {
        let rows = self.client()?.query(
            &format!(
                "UPDATE jobs SET state = 'running', lease = $3, lease_until_ms = $2
                 WHERE id IN (SELECT id FROM jobs
                    WHERE state <> 'done'
                      AND (lease_until_ms IS NULL OR lease_until_ms <= $1)
                    ORDER BY created_ms LIMIT $4
                    FOR UPDATE SKIP LOCKED)
                 RETURNING {JOB_COLUMNS}"
            ),
            &[&now_ms, &until, &lease, &limit],
        )?;
        Ok(rows.iter().map(job_from_row).collect())
    }

    pub(crate) fn renew_job_lease(
        &self,
        id: &str,
        lease: &str,
        until_ms: i64,
    ) -> StoreResult<usize> {
        Ok(self.client()?.execute(
            "UPDATE jobs SET lease_until_ms = $3 WHERE id = $1 AND lease = $2 AND state <> 'done'",
            &[&id, &lease, &until_ms],
        )? as usize)
    }

    pub(crate) fn record_job_item(&self, id: &str, index: i32, answer: &str) -> StoreResult<()> {
        self.client()?.execute(
            "INSERT INTO job_items (job_id, idx, answer) VALUES ($1, $2, $3)
             ON CONFLICT (job_id, idx) DO NOTHING",
            &[&id, &index, &answer],
        )?;
        Ok(())
    }

    pub(crate) fn finish_job(&self, id: &str, now_ms: i64) -> StoreResult<()> {
        self.client()?.execute(
            "UPDATE jobs SET state = 'done', finished_ms = $2, lease = NULL, lease_until_ms = NULL
             WHERE id = $1 AND state <> 'done'",
            &[&id, &now_ms],
        )?;
        Ok(())
    }

    pub(crate) fn prune_jobs(&self, finished_before_ms: i64) -> StoreResult<usize> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        tx.execute(
            "DELETE FROM job_items WHERE job_id IN
                (SELECT id FROM jobs WHERE state = 'done' AND finished_ms < $1)",
            &[&finished_before_ms],
        )?;
        let n = tx.execute(
            "DELETE FROM jobs WHERE state = 'done' AND finished_ms < $1",
            &[&finished_before_ms],
        )?;
        tx.commit()?;
        Ok(n as usize)
    }
}

fn job_from_row(r: &postgres::Row) -> JobRecord {
    JobRecord {
        id: r.get(0),
        account_id: r.get(1),
        key_id: r.get(2),
        request: r.get(3),
        callback_url: r.get(4),
        state: r.get(5),
        item_count: u32::try_from(r.get::<_, i32>(6)).unwrap_or(0),
        created_ms: r.get(7),
        finished_ms: r.get(8),
    }
}
