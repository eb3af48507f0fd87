//! Jobs: batches run in the background (`jobs`), and each finished item's
//! stored answer (`job_items`). A job is `queued` until a host claims it
//! with a lease (`running`), which that host renews while it runs the
//! items; a lease that lapsed (its host died) lets any host claim the job
//! again. An item's answer is written once (the first write wins), so a
//! job run again keeps what already finished. Times in Unix milliseconds.

use crate::{Backend, Store, StoreResult, dispatch, dispatch_tx, sqlite};

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

pub(crate) const JOB_COLUMNS: &str =
    "id, account_id, key_id, request, callback_url, state, item_count, created_ms, finished_ms";

impl Store {
    /// Queue a new job.
    pub fn insert_job(&self, job: &JobRecord) -> StoreResult<()> {
        let count = job.item_count as i32;
        dispatch!(self, |c| sqlite::jobs::insert_job(c, job, count), |p| p
            .insert_job(job, count))
    }

    /// Job `id`, if it is still kept.
    pub fn job(&self, id: &str) -> StoreResult<Option<JobRecord>> {
        let sql = format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1");
        let pg_sql = sql.replace("?1", "$1");
        dispatch!(self, |c| sqlite::jobs::job(c, id, &sql), |p| p
            .job(id, &pg_sql))
    }

    /// The stored answers of job `id`'s finished items, by index.
    pub fn job_answers(&self, id: &str) -> StoreResult<Vec<(u32, String)>> {
        dispatch!(self, |c| sqlite::jobs::job_answers(c, id), |p| p
            .job_answers(id))
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
        dispatch_tx!(
            self,
            |c| sqlite::jobs::claim_jobs(c, now_ms, limit, lease, until),
            |p| p.claim_jobs(now_ms, limit, lease, until)
        )
    }

    /// Extend `lease`'s claim on job `id` to `until_ms`; `false` if the
    /// claim is no longer `lease`'s (it lapsed and another host took it).
    pub fn renew_job_lease(&self, id: &str, lease: &str, until_ms: i64) -> StoreResult<bool> {
        let n = dispatch!(
            self,
            |c| sqlite::jobs::renew_job_lease(c, id, lease, until_ms),
            |p| p.renew_job_lease(id, lease, until_ms)
        )?;
        Ok(n == 1)
    }

    /// Keep the answer of item `index` of job `id`, unless one is kept
    /// already (the first answer stands).
    pub fn record_job_item(&self, id: &str, index: u32, answer: &str) -> StoreResult<()> {
        let index = index as i32;
        dispatch!(
            self,
            |c| sqlite::jobs::record_job_item(c, id, index, answer),
            |p| p.record_job_item(id, index, answer)
        )
    }

    /// Mark job `id` done at `now_ms` (whoever ran it: every item is kept).
    pub fn finish_job(&self, id: &str, now_ms: i64) -> StoreResult<()> {
        dispatch!(self, |c| sqlite::jobs::finish_job(c, id, now_ms), |p| p
            .finish_job(id, now_ms))
    }

    /// Drop every lease (a SQLite database has one process: at its start
    /// no claim is alive). On PostgreSQL other hosts' leases stand: `0`.
    pub fn drop_job_leases(&self) -> StoreResult<usize> {
        match &self.backend {
            Backend::Sqlite(_) => self.with(|c| sqlite::jobs::drop_job_leases(c)),
            Backend::Postgres(_) => Ok(0),
        }
    }

    /// Remove the jobs done before `finished_before_ms`, with their items;
    /// how many jobs went.
    pub fn prune_jobs(&self, finished_before_ms: i64) -> StoreResult<usize> {
        dispatch_tx!(
            self,
            |c| sqlite::jobs::prune_jobs(c, finished_before_ms),
            |p| p.prune_jobs(finished_before_ms)
        )
    }
}

/// The awaited twins of the job calls (see `awaited`).
impl Store {
    /// [`Store::insert_job`], awaited.
    pub async fn insert_job_async(&self, job: &JobRecord) -> StoreResult<()> {
        let count = job.item_count as i32;
        let (a, b) = (job.clone(), job.clone());
        self.write_or_off_thread(
            move |c| sqlite::jobs::insert_job(c, &a, count),
            move |s| s.insert_job(&b),
        )
        .await
    }

    /// [`Store::job`], awaited.
    pub async fn job_async(&self, id: &str) -> StoreResult<Option<JobRecord>> {
        let id = id.to_string();
        self.off_thread(move |s| s.job(&id)).await
    }

    /// [`Store::job_answers`], awaited.
    pub async fn job_answers_async(&self, id: &str) -> StoreResult<Vec<(u32, String)>> {
        let id = id.to_string();
        self.off_thread(move |s| s.job_answers(&id)).await
    }

    /// [`Store::claim_jobs`], awaited.
    pub async fn claim_jobs_async(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: u32,
        lease: &str,
    ) -> StoreResult<Vec<JobRecord>> {
        let until = now_ms.saturating_add(lease_ms);
        let (a, b) = (lease.to_string(), lease.to_string());
        self.write_or_off_thread(
            move |c| sqlite::jobs::claim_jobs(c, now_ms, i64::from(limit), &a, until),
            move |s| s.claim_jobs(now_ms, lease_ms, limit, &b),
        )
        .await
    }

    /// [`Store::renew_job_lease`], awaited.
    pub async fn renew_job_lease_async(
        &self,
        id: &str,
        lease: &str,
        until_ms: i64,
    ) -> StoreResult<bool> {
        let (id, lease) = (id.to_string(), lease.to_string());
        let (id2, lease2) = (id.clone(), lease.clone());
        self.write_or_off_thread(
            move |c| Ok(sqlite::jobs::renew_job_lease(c, &id, &lease, until_ms)? == 1),
            move |s| s.renew_job_lease(&id2, &lease2, until_ms),
        )
        .await
    }

    /// [`Store::record_job_item`], awaited.
    pub async fn record_job_item_async(
        &self,
        id: &str,
        index: u32,
        answer: &str,
    ) -> StoreResult<()> {
        let (id, answer) = (id.to_string(), answer.to_string());
        let (id2, answer2) = (id.clone(), answer.clone());
        self.write_or_off_thread(
            move |c| sqlite::jobs::record_job_item(c, &id, index as i32, &answer),
            move |s| s.record_job_item(&id2, index, &answer2),
        )
        .await
    }

    /// [`Store::finish_job`], awaited.
    pub async fn finish_job_async(&self, id: &str, now_ms: i64) -> StoreResult<()> {
        let (a, b) = (id.to_string(), id.to_string());
        self.write_or_off_thread(
            move |c| sqlite::jobs::finish_job(c, &a, now_ms),
            move |s| s.finish_job(&b, now_ms),
        )
        .await
    }

    /// [`Store::drop_job_leases`], awaited.
    pub async fn drop_job_leases_async(&self) -> StoreResult<usize> {
        self.write_or_off_thread(sqlite::jobs::drop_job_leases, |s| s.drop_job_leases())
            .await
    }

    /// [`Store::prune_jobs`], awaited.
    pub async fn prune_jobs_async(&self, finished_before_ms: i64) -> StoreResult<usize> {
        self.write_or_off_thread(
            move |c| sqlite::jobs::prune_jobs(c, finished_before_ms),
            move |s| s.prune_jobs(finished_before_ms),
        )
        .await
    }
}
