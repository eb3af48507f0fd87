//! Jobs on SQLite (`jobs`).

use rusqlite::{Connection, OptionalExtension, params};

use crate::StoreResult;
use crate::jobs::{JOB_COLUMNS, JobRecord};

pub(crate) fn insert_job(c: &Connection, job: &JobRecord, count: i32) -> StoreResult<()> {
    c.execute(
        "INSERT INTO jobs (id, account_id, key_id, request, callback_url, state, item_count, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, 'queued', ?6, ?7)",
        params![job.id, job.account_id, job.key_id, job.request, job.callback_url, count, job.created_ms],
    )?;
    Ok(())
}

pub(crate) fn job(c: &mut Connection, id: &str, sql: &str) -> StoreResult<Option<JobRecord>> {
    Ok(c.query_row(sql, [id], job_from_row).optional()?)
}

pub(crate) fn job_answers(c: &mut Connection, id: &str) -> StoreResult<Vec<(u32, String)>> {
    let rows = c
        .prepare_cached("SELECT idx, answer FROM job_items WHERE job_id = ?1 ORDER BY idx")?
        .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

pub(crate) fn claim_jobs(
    c: &Connection,
    now_ms: i64,
    limit: i64,
    lease: &str,
    until: i64,
) -> StoreResult<Vec<JobRecord>> {
    let claimed = {
        let mut stmt = c.prepare_cached(&format!(
            "UPDATE jobs SET state = 'running', lease = ?3, lease_until_ms = ?2
             WHERE id IN (SELECT id FROM jobs
                WHERE state <> 'done'
                  AND (lease_until_ms IS NULL OR lease_until_ms <= ?1)
                ORDER BY created_ms LIMIT ?4)
             RETURNING {JOB_COLUMNS}"
        ))?;
        stmt.query_map(params![now_ms, until, lease, limit], job_from_row)?
            .collect::<Result<Vec<_>, _>>()?
    };
    Ok(claimed)
}

pub(crate) fn renew_job_lease(
    c: &Connection,
    id: &str,
    lease: &str,
    until_ms: i64,
) -> StoreResult<usize> {
    Ok(c.execute(
        "UPDATE jobs SET lease_until_ms = ?3 WHERE id = ?1 AND lease = ?2 AND state <> 'done'",
        params![id, lease, until_ms],
    )?)
}

pub(crate) fn record_job_item(
    c: &Connection,
    id: &str,
    index: i32,
    answer: &str,
) -> StoreResult<()> {
    c.execute(
        "INSERT INTO job_items (job_id, idx, answer) VALUES (?1, ?2, ?3)
         ON CONFLICT (job_id, idx) DO NOTHING",
        params![id, index, answer],
    )?;
    Ok(())
}

pub(crate) fn finish_job(c: &Connection, id: &str, now_ms: i64) -> StoreResult<()> {
    c.execute(
        "UPDATE jobs SET state = 'done', finished_ms = ?2, lease = NULL, lease_until_ms = NULL
         WHERE id = ?1 AND state <> 'done'",
        params![id, now_ms],
    )?;
    Ok(())
}

pub(crate) fn prune_jobs(c: &Connection, finished_before_ms: i64) -> StoreResult<usize> {
    c.execute(
        "DELETE FROM job_items WHERE job_id IN
            (SELECT id FROM jobs WHERE state = 'done' AND finished_ms < ?1)",
        [finished_before_ms],
    )?;
    let n = c.execute(
        "DELETE FROM jobs WHERE state = 'done' AND finished_ms < ?1",
        [finished_before_ms],
    )?;
    Ok(n)
}

fn job_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<JobRecord> {
    Ok(JobRecord {
        id: r.get(0)?,
        account_id: r.get(1)?,
        key_id: r.get(2)?,
        request: r.get(3)?,
        callback_url: r.get(4)?,
        state: r.get(5)?,
        item_count: r.get(6)?,
        created_ms: r.get(7)?,
        finished_ms: r.get(8)?,
    })
}

/// Every lease dropped: one process uses a SQLite file, so at its start no
/// claim is alive.
pub(crate) fn drop_job_leases(c: &Connection) -> StoreResult<usize> {
    Ok(c.execute(
        "UPDATE jobs SET lease = NULL, lease_until_ms = NULL WHERE state <> 'done'",
        [],
    )?)
}
