//! Webhooks in the database: each key's signing secret and the delivery
//! queue (`webhook_deliveries`, one row per event) with every attempt
//! (`webhook_attempts`). A host claims due deliveries for a lease
//! ([`Store::claim_webhooks`]; on PostgreSQL with `FOR UPDATE SKIP LOCKED`,
//! so two hosts never claim the same one), sends them and records the
//! attempt under that lease ([`Store::finish_webhook_attempt`]); a host
//! that dies mid-send leaves a lease that expires, and another host (or
//! this one, restarted) claims the delivery again. Times are Unix ms.

use serde::Serialize;

use crate::{Backend, Store, StoreError, StoreResult, dispatch, dispatch_tx, sqlite};

/// One delivery claimed for sending.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimedDelivery {
    pub id: String,
    pub key_id: String,
    pub url: String,
    pub event_type: String,
    pub data: String,
    /// Attempts made before this one.
    pub attempts: u32,
    pub created_ms: i64,
    /// The claim's token: the attempt is recorded only under it.
    pub lease: String,
}

/// One attempt as recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttemptRecord {
    /// 1 for the first attempt.
    pub attempt: u32,
    pub at_ms: i64,
    /// The receiver's HTTP status, when it answered.
    pub status: Option<u16>,
    /// Why the attempt failed without a 2xx (refused destination, timeout,
    /// connection error, non-2xx status).
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// What an attempt leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptOutcome {
    Delivered,
    /// Try again at this time (Unix ms).
    RetryAt(i64),
    GiveUp,
}

/// A delivery with its attempts, as the admin API and the console list it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryRecord {
    pub id: String,
    pub key_id: String,
    pub account_id: String,
    pub url: String,
    pub event_type: String,
    /// `pending`, `delivered` or `failed`.
    pub state: String,
    pub created_ms: i64,
    pub next_attempt_ms: Option<i64>,
    pub finished_ms: Option<i64>,
    pub last_error: Option<String>,
    pub attempts: Vec<AttemptRecord>,
}

/// Which deliveries to list.
#[derive(Clone, Debug, Default)]
pub struct DeliveryFilter {
    pub key: Option<String>,
    pub account: Option<String>,
    pub limit: usize,
}

/// The longest error text kept per attempt.
const MAX_ERROR_CHARS: usize = 300;

/// The most deliveries one listing returns.
pub const MAX_LISTED: usize = 200;

fn clip(error: Option<&str>) -> Option<String> {
    error.map(|e| e.chars().take(MAX_ERROR_CHARS).collect())
}

/// What one attempt writes to its delivery's and its own row, computed
/// once for both backends.
#[derive(Clone, Copy)]
pub(crate) struct AttemptColumns<'a> {
    pub id: &'a str,
    pub lease: &'a str,
    pub state: &'static str,
    pub next: Option<i64>,
    pub finished: Option<i64>,
    pub error: Option<&'a str>,
    pub status: Option<i32>,
    pub number: i32,
}

fn outcome_columns(
    outcome: AttemptOutcome,
    now_ms: i64,
) -> (&'static str, Option<i64>, Option<i64>) {
    match outcome {
        AttemptOutcome::Delivered => ("delivered", None, Some(now_ms)),
        AttemptOutcome::RetryAt(at) => ("pending", Some(at), None),
        AttemptOutcome::GiveUp => ("failed", None, Some(now_ms)),
    }
}

pub(crate) const DELIVERY_COLUMNS: &str = "id, key_id, account_id, url, event_type, state, created_ms, next_attempt_ms, finished_ms, last_error";

impl Store {
    /// Set key `id`'s webhook secret (`whsec_…`), replacing any before.
    pub fn set_webhook_secret(&self, id: &str, secret: &str, now: i64) -> StoreResult<()> {
        let updated = dispatch!(
            self,
            |c| sqlite::webhooks::set_webhook_secret(c, id, secret, now),
            |p| p.set_webhook_secret(id, secret, now)
        )?;
        if updated == 0 {
            return Err(StoreError::NotFound("key", id.into()));
        }
        Ok(())
    }

    /// Key `id`'s webhook secret (`None`: it has none).
    pub fn webhook_secret(&self, id: &str) -> StoreResult<Option<String>> {
        let found: Option<Option<String>> =
            dispatch!(self, |c| sqlite::webhooks::webhook_secret(c, id), |p| p
                .webhook_secret(id))?;
        found.ok_or_else(|| StoreError::NotFound("key", id.into()))
    }

    /// Queue one event for key `key_id` to `url`, due at once; refused
    /// while the key has `max_pending` deliveries waiting. An event already
    /// queued under `id` is left as it is.
    #[allow(clippy::too_many_arguments)]
    pub fn enqueue_webhook(
        &self,
        id: &str,
        key_id: &str,
        url: &str,
        event_type: &str,
        data: &str,
        now_ms: i64,
        max_pending: u32,
    ) -> StoreResult<()> {
        let full = || pending_full(key_id, max_pending);
        dispatch_tx!(
            self,
            |c| sqlite::webhooks::enqueue_webhook(
                c,
                id,
                key_id,
                url,
                event_type,
                data,
                now_ms,
                max_pending,
                full
            ),
            |p| p.enqueue_webhook(id, key_id, url, event_type, data, now_ms, max_pending, full)
        )
    }

    /// Claim up to `limit` deliveries due at `now_ms` and not claimed by a
    /// live lease, for `lease_ms`, under the token `lease`.
    pub fn claim_webhooks(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: u32,
        lease: &str,
    ) -> StoreResult<Vec<ClaimedDelivery>> {
        let until = now_ms.saturating_add(lease_ms);
        let limit = i64::from(limit);
        dispatch_tx!(
            self,
            |c| sqlite::webhooks::claim_webhooks(c, now_ms, limit, lease, until),
            |p| p.claim_webhooks(now_ms, limit, lease, until)
        )
    }

    /// Record an attempt of a claimed delivery and what it leads to; only
    /// while the claim is still `lease`'s (`false`: the lease was lost and
    /// nothing was recorded).
    pub fn finish_webhook_attempt(
        &self,
        delivery: &ClaimedDelivery,
        attempt: &AttemptRecord,
        outcome: AttemptOutcome,
        now_ms: i64,
    ) -> StoreResult<bool> {
        with_attempt_columns(delivery, attempt, outcome, now_ms, |columns| {
            dispatch_tx!(
                self,
                |c| sqlite::webhooks::finish_webhook_attempt(c, attempt, columns),
                |p| p.finish_webhook_attempt(attempt, columns)
            )
        })
    }

    /// Remove deliveries that ended (delivered or given up) before
    /// `finished_before_ms`, with their attempts; returns how many.
    pub fn prune_webhooks(&self, finished_before_ms: i64) -> StoreResult<usize> {
        dispatch_tx!(
            self,
            |c| sqlite::webhooks::prune_webhooks(c, finished_before_ms),
            |p| p.prune_webhooks(finished_before_ms)
        )
    }

    /// Deliveries, newest first, with their attempts.
    pub fn webhook_deliveries(&self, filter: &DeliveryFilter) -> StoreResult<Vec<DeliveryRecord>> {
        let limit = filter.limit.clamp(1, MAX_LISTED) as i64;
        let (key, account) = (filter.key.as_deref(), filter.account.as_deref());
        let sql_where = "(?1 IS NULL OR key_id = ?1) AND (?2 IS NULL OR account_id = ?2)";
        dispatch!(
            self,
            |c| sqlite::webhooks::webhook_deliveries(c, limit, (key, account), sql_where),
            |p| p.webhook_deliveries(limit, (key, account), sql_where)
        )
    }
}

/// The awaited twins of the webhook calls (see `awaited`).
impl Store {
    /// [`Store::set_webhook_secret`], awaited.
    pub async fn set_webhook_secret_async(
        &self,
        id: &str,
        secret: &str,
        now: i64,
    ) -> StoreResult<()> {
        let (i1, s1) = (id.to_string(), secret.to_string());
        let (i2, s2) = (i1.clone(), s1.clone());
        self.write_or_off_thread(
            move |c| {
                let updated = sqlite::webhooks::set_webhook_secret(c, &i1, &s1, now)?;
                if updated == 0 {
                    return Err(StoreError::NotFound("key", i1));
                }
                Ok(())
            },
            move |s| s.set_webhook_secret(&i2, &s2, now),
        )
        .await
    }

    /// [`Store::webhook_deliveries`], awaited.
    pub async fn webhook_deliveries_async(
        &self,
        filter: &DeliveryFilter,
    ) -> StoreResult<Vec<DeliveryRecord>> {
        let filter = filter.clone();
        self.off_thread(move |s| s.webhook_deliveries(&filter))
            .await
    }

    /// [`Store::webhook_secret`], awaited.
    pub async fn webhook_secret_async(&self, id: &str) -> StoreResult<Option<String>> {
        let id = id.to_string();
        self.off_thread(move |s| s.webhook_secret(&id)).await
    }

    /// [`Store::enqueue_webhook`], awaited.
    #[allow(clippy::too_many_arguments)]
    pub async fn enqueue_webhook_async(
        &self,
        id: &str,
        key_id: &str,
        url: &str,
        event_type: &str,
        data: &str,
        now_ms: i64,
        max_pending: u32,
    ) -> StoreResult<()> {
        let owned = [id, key_id, url, event_type, data].map(str::to_string);
        let again = owned.clone();
        self.write_or_off_thread(
            move |c| {
                let [id, key_id, url, event_type, data] = &owned;
                let full = || pending_full(key_id, max_pending);
                sqlite::webhooks::enqueue_webhook(
                    c,
                    id,
                    key_id,
                    url,
                    event_type,
                    data,
                    now_ms,
                    max_pending,
                    full,
                )
            },
            move |s| {
                let [id, key_id, url, event_type, data] = &again;
                s.enqueue_webhook(id, key_id, url, event_type, data, now_ms, max_pending)
            },
        )
        .await
    }

    /// [`Store::claim_webhooks`], awaited.
    pub async fn claim_webhooks_async(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: u32,
        lease: &str,
    ) -> StoreResult<Vec<ClaimedDelivery>> {
        let until = now_ms.saturating_add(lease_ms);
        let (a, b) = (lease.to_string(), lease.to_string());
        self.write_or_off_thread(
            move |c| sqlite::webhooks::claim_webhooks(c, now_ms, i64::from(limit), &a, until),
            move |s| s.claim_webhooks(now_ms, lease_ms, limit, &b),
        )
        .await
    }

    /// [`Store::finish_webhook_attempt`], awaited.
    pub async fn finish_webhook_attempt_async(
        &self,
        delivery: &ClaimedDelivery,
        attempt: &AttemptRecord,
        outcome: AttemptOutcome,
        now_ms: i64,
    ) -> StoreResult<bool> {
        let (d1, a1) = (delivery.clone(), attempt.clone());
        let (d2, a2) = (delivery.clone(), attempt.clone());
        self.write_or_off_thread(
            move |c| {
                with_attempt_columns(&d1, &a1, outcome, now_ms, |columns| {
                    sqlite::webhooks::finish_webhook_attempt(c, &a1, columns)
                })
            },
            move |s| s.finish_webhook_attempt(&d2, &a2, outcome, now_ms),
        )
        .await
    }

    /// [`Store::prune_webhooks`], awaited.
    pub async fn prune_webhooks_async(&self, finished_before_ms: i64) -> StoreResult<usize> {
        self.write_or_off_thread(
            move |c| sqlite::webhooks::prune_webhooks(c, finished_before_ms),
            move |s| s.prune_webhooks(finished_before_ms),
        )
        .await
    }
}

/// Run `f` with the columns `attempt` of `delivery` and its `outcome` set.
fn with_attempt_columns<T>(
    delivery: &ClaimedDelivery,
    attempt: &AttemptRecord,
    outcome: AttemptOutcome,
    now_ms: i64,
    f: impl FnOnce(AttemptColumns<'_>) -> T,
) -> T {
    let (state, next, finished) = outcome_columns(outcome, now_ms);
    let error = clip(attempt.error.as_deref());
    f(AttemptColumns {
        id: &delivery.id,
        lease: &delivery.lease,
        state,
        next,
        finished,
        error: error.as_deref(),
        status: attempt.status.map(i32::from),
        number: attempt.attempt as i32,
    })
}

/// The refusal of a delivery past the key's bound of waiting ones.
fn pending_full(key_id: &str, max_pending: u32) -> StoreError {
    StoreError::Invalid(format!(
        "key {key_id} already has {max_pending} webhook deliveries waiting"
    ))
}
