//! Jobs: batches run in the background (`jobs`), and each finished item's
//! stored answer (`job_items`). A job is `queued` until a host claims it
//! with a lease (`running`), which that host renews while it runs the
//! items; a lease that lapsed (its host died) lets any host claim the job
//! again. An item's answer is written once (the first write wins), so a
//! job run again keeps what already finished. Times in Unix milliseconds.

use rusqlite::{OptionalExtension, params};

use super::{Backend, Store, StoreResult, dispatch};

/// One job as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRecord {
    pub id: String,
    pub account_id: String,
    pub key_id: String,
    /// The request (items, delivery, cache use) as JSON.
    pub request: String,
    pub callback_url: Option<String>,
    /// `queued`, `running` or `done`.
    pub state: String,
    pub item_count: u32,
    pub created_ms: i64,
    pub finished_ms: Option<i64>,
}

const JOB_COLUMNS: &str =
    "id, account_id, key_id, request, callback_url, state, item_count, created_ms, finished_ms";

fn job_of_sqlite(r: &rusqlite::Row<'_>) -> rusqlite::Result<JobRecord> {
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

fn job_of_pg(r: &postgres::Row) -> JobRecord {
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

impl Store {
    /// Queue a new job.
    pub fn insert_job(&self, job: &JobRecord) -> StoreResult<()> {
        let count = job.item_count as i32;
        dispatch!(
            self,
            |c| {
                c.execute(
                    "INSERT INTO jobs (id, account_id, key_id, request, callback_url, state, item_count, created_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, 'queued', ?6, ?7)",
                    params![job.id, job.account_id, job.key_id, job.request, job.callback_url, count, job.created_ms],
                )?;
                Ok(())
            },
            |p| {
                p.client()?.execute(
                    "INSERT INTO jobs (id, account_id, key_id, request, callback_url, state, item_count, created_ms)
                     VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7)",
                    &[&job.id, &job.account_id, &job.key_id, &job.request, &job.callback_url, &count, &job.created_ms],
                )?;
                Ok(())
            }
        )
    }

    /// Job `id`, if it is still kept.
    pub fn job(&self, id: &str) -> StoreResult<Option<JobRecord>> {
        let sql = format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1");
        let pg_sql = sql.replace("?1", "$1");
        dispatch!(
            self,
            |c| Ok(c.query_row(&sql, [id], job_of_sqlite).optional()?),
            |p| Ok(p
                .client()?
                .query_opt(&pg_sql, &[&id])?
                .as_ref()
                .map(job_of_pg))
        )
    }

    /// The stored answers of job `id`'s finished items, by index.
    pub fn job_answers(&self, id: &str) -> StoreResult<Vec<(u32, String)>> {
        dispatch!(
            self,
            |c| {
                let rows = c
                    .prepare_cached(
                        "SELECT idx, answer FROM job_items WHERE job_id = ?1 ORDER BY idx",
                    )?
                    .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(rows)
            },
            |p| Ok(p
                .client()?
                .query(
                    "SELECT idx, answer FROM job_items WHERE job_id = $1 ORDER BY idx",
                    &[&id],
                )?
                .iter()
                .map(|r| (u32::try_from(r.get::<_, i32>(0)).unwrap_or(0), r.get(1)))
                .collect())
        )
    }

    /// Claim up to `limit` unfinished jobs no live lease holds, oldest
    /// first, for `lease_ms` under the token `lease`; they become `running`.
    pub fn claim_jobs(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: u32,
        lease: &str,
    ) -> StoreResult<Vec<JobRecord>> {
        let until = now_ms.saturating_add(lease_ms);
        let limit = i64::from(limit);
        dispatch!(
            self,
            |c| {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let claimed = {
                    let mut stmt = tx.prepare_cached(&format!(
                        "UPDATE jobs SET state = 'running', lease = ?3, lease_until_ms = ?2
                         WHERE id IN (SELECT id FROM jobs
                            WHERE state <> 'done'
                              AND (lease_until_ms IS NULL OR lease_until_ms <= ?1)
                            ORDER BY created_ms LIMIT ?4)
                         RETURNING {JOB_COLUMNS}"
                    ))?;
                    stmt.query_map(params![now_ms, until, lease, limit], job_of_sqlite)?
                        .collect::<Result<Vec<_>, _>>()?
                };
                tx.commit()?;
                Ok(claimed)
            },
            |p| {
                let rows = p.client()?.query(
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
                Ok(rows.iter().map(job_of_pg).collect())
            }
        )
    }

    /// Extend `lease`'s claim on job `id` to `until_ms`; `false` if the
    /// claim is no longer `lease`'s (it lapsed and another host took it).
    pub fn renew_job_lease(&self, id: &str, lease: &str, until_ms: i64) -> StoreResult<bool> {
        let n = dispatch!(
            self,
            |c| {
                Ok(c.execute(
                "UPDATE jobs SET lease_until_ms = ?3 WHERE id = ?1 AND lease = ?2 AND state <> 'done'",
                params![id, lease, until_ms],
            )?)
            },
            |p| {
                Ok(p.client()?.execute(
                "UPDATE jobs SET lease_until_ms = $3 WHERE id = $1 AND lease = $2 AND state <> 'done'",
                &[&id, &lease, &until_ms],
            )? as usize)
            }
        )?;
        Ok(n == 1)
    }

    /// Keep the answer of item `index` of job `id`, unless one is kept
    /// already (the first answer stands).
    pub fn record_job_item(&self, id: &str, index: u32, answer: &str) -> StoreResult<()> {
        let index = index as i32;
        dispatch!(
            self,
            |c| {
                c.execute(
                    "INSERT INTO job_items (job_id, idx, answer) VALUES (?1, ?2, ?3)
                     ON CONFLICT (job_id, idx) DO NOTHING",
                    params![id, index, answer],
                )?;
                Ok(())
            },
            |p| {
                p.client()?.execute(
                    "INSERT INTO job_items (job_id, idx, answer) VALUES ($1, $2, $3)
                     ON CONFLICT (job_id, idx) DO NOTHING",
                    &[&id, &index, &answer],
                )?;
                Ok(())
            }
        )
    }

    /// Mark job `id` done at `now_ms` (whoever ran it: every item is kept).
    pub fn finish_job(&self, id: &str, now_ms: i64) -> StoreResult<()> {
        dispatch!(
            self,
            |c| {
                c.execute(
                    "UPDATE jobs SET state = 'done', finished_ms = ?2, lease = NULL, lease_until_ms = NULL
                     WHERE id = ?1 AND state <> 'done'",
                    params![id, now_ms],
                )?;
                Ok(())
            },
            |p| {
                p.client()?.execute(
                    "UPDATE jobs SET state = 'done', finished_ms = $2, lease = NULL, lease_until_ms = NULL
                     WHERE id = $1 AND state <> 'done'",
                    &[&id, &now_ms],
                )?;
                Ok(())
            }
        )
    }

    /// Drop every lease (a SQLite database has one process: at its start
    /// no claim is alive). On PostgreSQL other hosts' leases stand: `0`.
    pub fn drop_job_leases(&self) -> StoreResult<usize> {
        match &self.backend {
            Backend::Sqlite(_) => self.with(|c| {
                Ok(c.execute(
                    "UPDATE jobs SET lease = NULL, lease_until_ms = NULL WHERE state <> 'done'",
                    [],
                )?)
            }),
            Backend::Postgres(_) => Ok(0),
        }
    }

    /// Remove the jobs done before `finished_before_ms`, with their items;
    /// how many jobs went.
    pub fn prune_jobs(&self, finished_before_ms: i64) -> StoreResult<usize> {
        dispatch!(
            self,
            |c| {
                let tx = c.transaction()?;
                tx.execute(
                    "DELETE FROM job_items WHERE job_id IN
                        (SELECT id FROM jobs WHERE state = 'done' AND finished_ms < ?1)",
                    [finished_before_ms],
                )?;
                let n = tx.execute(
                    "DELETE FROM jobs WHERE state = 'done' AND finished_ms < ?1",
                    [finished_before_ms],
                )?;
                tx.commit()?;
                Ok(n)
            },
            |p| {
                let mut client = p.client()?;
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
        )
    }
}
