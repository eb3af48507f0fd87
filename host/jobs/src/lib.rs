//! Jobs: a batch (the same items, prices and answers as
//! `POST /api/v1/batch`) run in the background, its state and results kept
//! in the database, read back by its id, waited for, streamed item by item,
//! and announced by a webhook when it is done.
//!
//! - [`Jobs::submit`] queues a job; any host's [`runner`] claims it with a
//!   lease it renews, runs its items and keeps each answer as it finishes.
//! - Credits are set aside when the job starts running (not at submit), in
//!   item order, as a batch does: a queued job holds nothing, so it cannot
//!   keep credits out of reach for as long as it waits.
//! - Item `i` of job `job_…` is charged under the ledger id `job_…_i`, at
//!   most once: a job run again after its host died skips the items whose
//!   answer is kept and re-runs the others under the same ids.
//! - [`Jobs::wait`] is woken by this host's runner through a channel; a job
//!   run by another host is seen by reading the database every
//!   [`OTHER_HOST_POLL`].

pub mod runner;
mod submit;

pub use submit::{Queued, Submission, Submit, job_id_of};

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::{Notify, broadcast};

use mediaparse_call::ParseAnswer;
use mediaparse_call::batch::BatchItem;
pub use mediaparse_config::jobs::{JobLimits, JobSettings};
use mediaparse_core::Delivery;
use mediaparse_parse::{CacheUse, Services};
use mediaparse_store::{JobRecord, Store, StoreResult};
use mediaparse_tunnel::TunnelSettings;
use mediaparse_webhooks::Webhooks;

/// The longest `?wait=` (seconds).
pub const MAX_WAIT_S: u64 = 30;

/// How often a waiter reads the database for a job another host runs.
pub const OTHER_HOST_POLL: Duration = Duration::from_millis(250);

/// The webhook event sent when a job is done.
pub const DONE_EVENT: &str = "job.done";

/// A job's request as kept in the database.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobRequest {
    pub items: Vec<JobItem>,
    /// The delivery asked for (`direct`/`tunnel`); `None`: the key's.
    #[serde(default)]
    pub delivery: Option<String>,
    #[serde(default)]
    pub bypass_cache: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobItem {
    pub url: String,
    #[serde(default)]
    pub platform: Option<String>,
}

impl JobRequest {
    pub fn new(items: &[BatchItem], delivery: Option<Delivery>, cache: CacheUse) -> JobRequest {
        JobRequest {
            items: items
                .iter()
                .map(|i| JobItem {
                    url: i.input.clone(),
                    platform: i.platform.clone(),
                })
                .collect(),
            delivery: delivery.map(|d| d.as_str().to_string()),
            bypass_cache: cache == CacheUse::Bypass,
        }
    }

    pub fn batch_items(&self) -> Vec<BatchItem> {
        self.items
            .iter()
            .map(|i| BatchItem {
                input: i.url.clone(),
                platform: i.platform.clone(),
            })
            .collect()
    }

    pub fn delivery(&self) -> Option<Delivery> {
        self.delivery.as_deref().and_then(|d| d.parse().ok())
    }

    pub fn cache(&self) -> CacheUse {
        if self.bypass_cache {
            CacheUse::Bypass
        } else {
            CacheUse::Allowed
        }
    }
}

/// What happened to a job on this host: an item finished, or all did.
#[derive(Clone, Debug)]
pub struct JobSignal {
    pub job: Arc<str>,
    pub done: bool,
}

/// A job as its owner sees it.
#[derive(Clone, Debug)]
pub struct JobView {
    pub record: JobRecord,
    /// Finished items: index and the body its single parse would answer.
    pub items: Vec<(u32, String)>,
}

impl JobView {
    pub fn done(&self) -> bool {
        self.record.state == "done"
    }

    /// `{"id", "state"}` and, once done, `"items"` (every item's body in
    /// order, as a batch answers them).
    pub fn data(&self) -> serde_json::Value {
        let mut data = serde_json::json!({"id": self.record.id, "state": self.record.state});
        if self.done() {
            data["items"] = serde_json::Value::Array(
                self.items
                    .iter()
                    .map(|(_, body)| serde_json::from_str(body).unwrap_or(serde_json::Value::Null))
                    .collect(),
            );
        }
        data
    }
}

impl JobView {
    /// The REST body: `{"status":200,"data":{"id","state"[,"items"]},"msg":"success"}`,
    /// each item the body its single parse would have answered.
    pub fn body(&self) -> String {
        let head =
            serde_json::json!({"id": self.record.id, "state": self.record.state}).to_string();
        let head = head.trim_end_matches('}');
        if self.done() {
            let items: Vec<&str> = self.items.iter().map(|(_, b)| b.as_str()).collect();
            format!(
                r#"{{"status":200,"data":{head},"items":[{}]}},"msg":"success"}}"#,
                items.join(",")
            )
        } else {
            format!(r#"{{"status":200,"data":{head}}},"msg":"success"}}"#)
        }
    }
}

/// The body a stored item answer renders to.
pub fn item_body(stored: &str) -> String {
    match serde_json::from_str::<ParseAnswer>(stored) {
        Ok(answer) => answer.body(),
        Err(e) => mediaparse_core::api_error::internal(format!("stored job item unreadable: {e}"))
            .envelope()
            .to_string(),
    }
}

/// This service's jobs: submit, read, wait, and the runner. Cheap to clone.
#[derive(Clone)]
pub struct Jobs {
    services: Arc<Services>,
    tunnel: Arc<TunnelSettings>,
    webhooks: Webhooks,
    signals: broadcast::Sender<JobSignal>,
    /// Wakes this host's runner when a job is queued here.
    wake: Arc<Notify>,
    /// This process's lease token.
    host: Arc<str>,
}

impl Jobs {
    pub fn new(services: Arc<Services>, tunnel: Arc<TunnelSettings>, webhooks: Webhooks) -> Jobs {
        let (signals, _) = broadcast::channel(1024);
        Jobs {
            services,
            tunnel,
            webhooks,
            signals,
            wake: Arc::new(Notify::new()),
            host: mediaparse_core::ids::new_request_id()
                .replacen("req_", "host_", 1)
                .into(),
        }
    }

    fn store(&self) -> &Store {
        &self.services.store
    }

    pub fn limits(&self) -> JobLimits {
        self.services.config.load().jobs.limits()
    }
    /// Job `id` if it is `account`'s (another account's is `None`).
    pub async fn find(&self, id: &str, account: &str) -> StoreResult<Option<JobView>> {
        let Some(record) = self.store().job_async(id).await? else {
            return Ok(None);
        };
        if record.account_id != account {
            return Ok(None);
        }
        let stored = self.store().job_answers_async(id).await?;
        let items = stored
            .into_iter()
            .map(|(i, answer)| (i, item_body(&answer)))
            .collect();
        Ok(Some(JobView { record, items }))
    }

    /// Job `id` once it is done, or as it is when `timeout` passed.
    pub async fn wait(
        &self,
        id: &str,
        account: &str,
        timeout: Duration,
    ) -> StoreResult<Option<JobView>> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut signals = self.signals.subscribe();
        loop {
            let view = self.find(id, account).await?;
            match &view {
                Some(v) if !v.done() && tokio::time::Instant::now() < deadline => {}
                _ => return Ok(view),
            }
            tokio::select! {
                _ = until_done(&mut signals, id) => {}
                _ = tokio::time::sleep(OTHER_HOST_POLL) => {}
                _ = tokio::time::sleep_until(deadline) => {}
            }
        }
    }

    /// This host's signals (an item finished, a job done).
    pub fn subscribe(&self) -> broadcast::Receiver<JobSignal> {
        self.signals.subscribe()
    }

    /// Start the runner on the current runtime.
    pub fn spawn_runner(&self) -> tokio::task::JoinHandle<()> {
        tokio::spawn(runner::run(self.clone()))
    }
}

/// Until `job` is done on this host (or signals were missed: read again).
async fn until_done(signals: &mut broadcast::Receiver<JobSignal>, job: &str) {
    loop {
        match signals.recv().await {
            Ok(s) if &*s.job == job && s.done => return,
            Ok(_) => {}
            Err(broadcast::error::RecvError::Lagged(_)) => return,
            Err(broadcast::error::RecvError::Closed) => std::future::pending::<()>().await,
        }
    }
}
