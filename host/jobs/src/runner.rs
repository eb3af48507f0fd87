//! The task that runs jobs on this host: it claims queued jobs (and jobs
//! whose host's lease lapsed), runs each one's unfinished items as a batch
//! runs its items, keeps every answer as it arrives, renews its lease while
//! it works, queues the `job.done` webhook and marks the job done; and it
//! removes jobs finished longer ago than the retention.

use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::task::JoinSet;

use super::{DONE_EVENT, JobRequest, JobSignal, Jobs, item_body};
use mediaparse_call::batch::{self, BatchCall, BatchItem, Funding};
use mediaparse_call::{Callee, Door, ParseAnswer, RequestIds};
use mediaparse_core::{ApiError, ErrorCode};
use mediaparse_store::{JobRecord, StoreError};
use mediaparse_webhooks::now_ms;

/// Run jobs until the process ends.
pub async fn run(jobs: Jobs) {
    // A SQLite database has one process: no claim from before is alive.
    if let Err(e) = jobs.store().drop_job_leases_async().await {
        tracing::warn!(error = %e, "job leases not dropped at start");
    }
    let mut running: JoinSet<()> = JoinSet::new();
    let mut last_prune: Option<Instant> = None;
    loop {
        let limits = jobs.limits();
        if last_prune.is_none_or(|t| t.elapsed() >= limits.retention.min(Duration::from_secs(60))) {
            last_prune = Some(Instant::now());
            let before = now_ms() - limits.retention.as_millis() as i64;
            match jobs.store().prune_jobs_async(before).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(removed = n, "finished jobs past their retention removed"),
                Err(e) => tracing::warn!(error = %e, "jobs not pruned"),
            }
        }
        let free = (limits.concurrent as usize).saturating_sub(running.len());
        if free > 0 {
            let lease_ms = limits.lease.as_millis() as i64;
            let host = jobs.host.to_string();
            let claimed = jobs
                .store()
                .claim_jobs_async(now_ms(), lease_ms, free as u32, &host)
                .await;
            match claimed {
                Ok(claimed) => {
                    for job in claimed {
                        let jobs = jobs.clone();
                        running.spawn(async move { run_job(&jobs, job).await });
                    }
                }
                Err(e) => tracing::warn!(error = %e, "jobs not claimed"),
            }
        }
        tokio::select! {
            _ = jobs.wake.notified() => {}
            _ = tokio::time::sleep(limits.poll) => {}
            Some(_) = running.join_next(), if !running.is_empty() => {}
        }
    }
}

/// Run the unfinished items of `job` (claimed by this host), then finish it.
async fn run_job(jobs: &Jobs, job: JobRecord) {
    let started = Instant::now();
    match run_items(jobs, &job).await {
        Ok(()) => {}
        Err(e) => {
            // Left running: once the lease lapses a host (this one too)
            // runs what is left.
            tracing::warn!(job = %job.id, error = %e, "job interrupted; it resumes when its lease lapses");
            return;
        }
    }
    if let Err(e) = finish(jobs, &job).await {
        tracing::warn!(job = %job.id, error = %e, "job not marked done; it resumes when its lease lapses");
        return;
    }
    tracing::info!(job = %job.id, items = job.item_count, elapsed_ms = started.elapsed().as_secs_f64() * 1000.0, "job done");
}

async fn run_items(jobs: &Jobs, job: &JobRecord) -> Result<(), StoreError> {
    let request: JobRequest = serde_json::from_str(&job.request)
        .map_err(|e| StoreError::Invalid(format!("job {} request unreadable: {e}", job.id)))?;
    let items: Vec<BatchItem> = request.batch_items();
    let finished = jobs.store().job_answers_async(&job.id).await?;
    let pending: Vec<usize> = (0..items.len())
        .filter(|i| !finished.iter().any(|(f, _)| *f as usize == *i))
        .collect();
    if pending.is_empty() {
        return Ok(());
    }
    let ledger_ids: Vec<String> = pending.iter().map(|i| format!("{}_{i}", job.id)).collect();
    // A run before this one may have died holding these items' credits.
    for ledger in &ledger_ids {
        jobs.store()
            .release_hold_async(&format!("hold_{ledger}"))
            .await?;
    }
    let key = match jobs.store().key_async(&job.key_id).await {
        Ok(key) => key,
        Err(StoreError::NotFound(..)) => {
            // The key was deleted while the job waited: every item is refused.
            for (i, ledger) in pending.iter().zip(&ledger_ids) {
                let answer = ParseAnswer::refused(
                    ledger,
                    batch::shape(&items[*i]),
                    ApiError::new(ErrorCode::InvalidToken, "the job's API key was deleted"),
                );
                keep(jobs, job, *i, &answer).await?;
            }
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let pending_items: Vec<&BatchItem> = pending.iter().map(|i| &items[*i]).collect();
    let expires_at = batch::hold_expiry(&jobs.services);
    let funding = batch::fund(
        &jobs.services,
        &key,
        &pending_items,
        &ledger_ids,
        expires_at,
    )
    .await
    .map_err(|e| StoreError::Invalid(format!("credits not set aside: {}", e.msg)))?;
    let call = BatchCall {
        key: &key,
        door: Door::Job,
        items: &items,
        delivery: request.delivery(),
        idempotency: None,
        cache: request.cache(),
        ids: RequestIds::of(&job.id, None),
    };
    let callee = Callee {
        services: &jobs.services,
        tunnel: &jobs.tunnel,
    };
    let call = &call;
    let mut runs: FuturesUnordered<_> = pending
        .iter()
        .zip(&ledger_ids)
        .zip(funding)
        .map(|((i, ledger), funding): ((&usize, &String), Funding)| {
            let item = &items[*i];
            async move {
                (
                    *i,
                    batch::run_item(callee, call, item, ledger, funding).await,
                )
            }
        })
        .collect();
    let lease = jobs.limits().lease;
    let mut renew = tokio::time::interval(lease / 3);
    renew.tick().await;
    let mut first_error = None;
    loop {
        tokio::select! {
            next = runs.next() => {
                let Some((i, answer)) = next else { break };
                if let Err(e) = keep(jobs, job, i, &answer).await {
                    // The item's charge (if any) is under its ledger id: a
                    // later run finds it and charges nothing again.
                    tracing::warn!(job = %job.id, item = i, error = %e, "job item answer not kept");
                    first_error.get_or_insert(e);
                }
            }
            _ = renew.tick() => {
                let until = now_ms() + lease.as_millis() as i64;
                match jobs.store().renew_job_lease_async(&job.id, &jobs.host, until).await {
                    Ok(true) => {}
                    Ok(false) => tracing::warn!(job = %job.id, "job lease lost; another host runs it too (no item is charged twice)"),
                    Err(e) => tracing::warn!(job = %job.id, error = %e, "job lease not renewed"),
                }
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Keep item `index`'s answer and tell this host's waiters.
async fn keep(
    jobs: &Jobs,
    job: &JobRecord,
    index: usize,
    answer: &ParseAnswer,
) -> Result<(), StoreError> {
    let stored = serde_json::to_string(answer)
        .map_err(|e| StoreError::Invalid(format!("job item answer: {e}")))?;
    jobs.store()
        .record_job_item_async(&job.id, index as u32, &stored)
        .await?;
    let _ = jobs.signals.send(JobSignal {
        job: job.id.as_str().into(),
        done: false,
    });
    Ok(())
}

/// Queue the `job.done` webhook (once: its delivery id is the job's), then
/// mark the job done and tell this host's waiters.
async fn finish(jobs: &Jobs, job: &JobRecord) -> Result<(), StoreError> {
    if let Some(url) = &job.callback_url {
        let answers = jobs.store().job_answers_async(&job.id).await?;
        let items: Vec<serde_json::Value> = answers
            .iter()
            .map(|(_, a)| serde_json::from_str(&item_body(a)).unwrap_or(serde_json::Value::Null))
            .collect();
        let data = serde_json::json!({"id": job.id, "state": "done", "items": items});
        let delivery = format!("msg_{}", job.id);
        match jobs
            .webhooks
            .enqueue_with_id(&delivery, &job.key_id, url, DONE_EVENT, &data)
            .await
        {
            Ok(()) => {}
            Err(mediaparse_webhooks::WebhookError::Store(
                e @ (StoreError::Invalid(_) | StoreError::NotFound(..)),
            )) => {
                tracing::warn!(job = %job.id, error = %e, "job.done webhook not queued")
            }
            Err(mediaparse_webhooks::WebhookError::Store(e)) => return Err(e),
            // Refused for good (the key's queue is full, the data too big):
            // the job's results are still there to read.
            Err(e) => {
                tracing::warn!(job = %job.id, error = %e, "job.done webhook not queued")
            }
        }
    }
    jobs.store().finish_job_async(&job.id, now_ms()).await?;
    let _ = jobs.signals.send(JobSignal {
        job: job.id.as_str().into(),
        done: true,
    });
    Ok(())
}
