//! The delivery worker: one task per service. Each round it claims the due
//! deliveries (a lease of [`LEASE`], so on PostgreSQL exactly one host
//! sends each attempt and a dead host's claim expires), sends them at once
//! (at most [`BATCH`]), records each attempt and schedules the next; then it
//! waits for a new event queued on this host or [`Schedule::poll`].
//!
//! Ended deliveries are kept [`RETENTION`] (7 days), then removed.
//!
//! An attempt succeeds on a 2xx answer. A refused destination, a timeout, a
//! connection error or any other status is retried on the schedule until
//! it gives up. A key without a webhook secret (or deleted) is not retried:
//! its delivery fails at once with that reason.

use std::time::{Duration, Instant};

use rand::Rng;

use super::destination::{self, Destination};
use super::{Schedule, Webhooks, now_ms};
use mediaparse_core::clock::rfc3339;
use mediaparse_signing as signature;
use mediaparse_store::{AttemptOutcome, AttemptRecord, ClaimedDelivery, StoreError};

/// How long a claim holds: longer than the resolution and the request
/// together (each at most [`destination::TIMEOUT`]).
pub const LEASE: Duration = Duration::from_secs(60);

/// Deliveries claimed and sent at once by one host.
pub const BATCH: u32 = 16;

/// How long ended deliveries (delivered or given up) stay listed.
pub const RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

/// How often the ended deliveries past [`RETENTION`] are removed.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// Claim, send and record until the runtime ends.
pub async fn run(webhooks: Webhooks) {
    let mut pruned_at: Option<Instant> = None;
    loop {
        if pruned_at.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
            pruned_at = Some(Instant::now());
            prune(&webhooks).await;
        }
        let schedule = webhooks.schedule();
        let lease = mediaparse_core::ids::new_request_id();
        let claimed = webhooks
            .store
            .claim_webhooks_async(now_ms(), LEASE.as_millis() as i64, BATCH, &lease)
            .await;
        let claimed = match claimed {
            Ok(claimed) => claimed,
            Err(e) => {
                tracing::warn!(error = %e, "webhooks: cannot claim due deliveries");
                Vec::new()
            }
        };
        let full = claimed.len() as u32 == BATCH;
        let sends = claimed.into_iter().map(|d| attempt(&webhooks, d, schedule));
        futures::future::join_all(sends).await;
        if !full {
            tokio::select! {
                () = webhooks.wake.notified() => {}
                () = tokio::time::sleep(schedule.poll) => {}
            }
        }
    }
}

/// Remove the deliveries that ended more than [`RETENTION`] ago.
async fn prune(webhooks: &Webhooks) {
    let before = now_ms() - RETENTION.as_millis() as i64;
    match webhooks.store.prune_webhooks_async(before).await {
        Ok(0) => {}
        Ok(removed) => tracing::info!(removed, "webhooks: old deliveries removed"),
        Err(e) => tracing::warn!(error = %e, "webhooks: cannot remove old deliveries"),
    }
}

/// What one attempt came to, before it is recorded.
enum Sent {
    Delivered(u16),
    /// Worth trying again: the status if the receiver answered, and why.
    Failed(Option<u16>, String),
    /// Never deliverable as things stand (no secret, key deleted).
    Refused(String),
}

/// Send one claimed delivery and record the attempt.
async fn attempt(webhooks: &Webhooks, delivery: ClaimedDelivery, schedule: Schedule) {
    let started = Instant::now();
    let at_ms = now_ms();
    let sent = send(webhooks, &delivery).await;
    let duration_ms = started.elapsed().as_millis() as i64;
    let number = delivery.attempts + 1;
    let (status, error, outcome) = match sent {
        Sent::Delivered(status) => (Some(status), None, AttemptOutcome::Delivered),
        Sent::Failed(status, why) => {
            let jitter = rand::rng().random::<f64>();
            let outcome = match schedule.next_attempt(number, delivery.created_ms, now_ms(), jitter)
            {
                Some(at) => AttemptOutcome::RetryAt(at),
                None => AttemptOutcome::GiveUp,
            };
            (status, Some(why), outcome)
        }
        Sent::Refused(why) => (None, Some(why), AttemptOutcome::GiveUp),
    };
    let metric = match outcome {
        AttemptOutcome::Delivered => "delivered",
        AttemptOutcome::RetryAt(_) => "retrying",
        AttemptOutcome::GiveUp => "failed",
    };
    tracing::info!(
        delivery = %delivery.id,
        key = %delivery.key_id,
        attempt = number,
        status,
        error = error.as_deref().unwrap_or(""),
        outcome = metric,
        duration_ms,
        "webhook attempt"
    );
    let record = AttemptRecord {
        attempt: number,
        at_ms,
        status,
        error,
        duration_ms,
    };
    let finished = webhooks
        .store
        .finish_webhook_attempt_async(&delivery, &record, outcome, now_ms())
        .await;
    match finished {
        Ok(true) => mediaparse_metrics::global().webhook_delivery(metric),
        Ok(false) => {
            tracing::warn!("webhooks: a claim expired before its attempt was recorded")
        }
        Err(e) => tracing::warn!(error = %e, "webhooks: cannot record an attempt"),
    }
}

/// Sign and POST one delivery to its checked destination.
async fn send(webhooks: &Webhooks, delivery: &ClaimedDelivery) -> Sent {
    let secret = webhooks.store.webhook_secret_async(&delivery.key_id).await;
    let key = match secret {
        Ok(Some(secret)) => match signature::secret_key(&secret) {
            Ok(key) => key,
            Err(e) => return Sent::Refused(format!("the key's webhook secret {e}")),
        },
        Ok(None) => {
            return Sent::Refused(
                "the key has no webhook secret: create one (console, CLI or admin API)".into(),
            );
        }
        Err(StoreError::NotFound(..)) => return Sent::Refused("the key was deleted".into()),
        Err(e) => return Sent::Failed(None, format!("cannot read the key's secret: {e}")),
    };
    let destination = match destination::resolve(
        &delivery.url,
        webhooks.mode,
        webhooks.resolver.as_ref(),
    )
    .await
    {
        Ok(d) => d,
        Err(e) => return Sent::Failed(None, e.to_string()),
    };
    post(&destination, delivery, &key).await
}

/// The POST itself.
async fn post(destination: &Destination, delivery: &ClaimedDelivery, key: &[u8]) -> Sent {
    let client = match destination.client() {
        Ok(c) => c,
        Err(e) => return Sent::Failed(None, e.to_string()),
    };
    let timestamp = chrono::Utc::now().timestamp();
    let body = body(&delivery.event_type, timestamp, &delivery.data);
    let signature = signature::sign(key, &delivery.id, timestamp, body.as_bytes());
    let answer = client
        .post(destination.url.clone())
        .header("content-type", "application/json")
        .header("webhook-id", &delivery.id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature)
        .body(body)
        .send()
        .await;
    match answer {
        // The answer's body is not read: only its status counts.
        Ok(resp) if resp.status().is_success() => Sent::Delivered(resp.status().as_u16()),
        Ok(resp) => Sent::Failed(
            Some(resp.status().as_u16()),
            format!("the receiver answered {}", resp.status().as_u16()),
        ),
        Err(e) => {
            let kind = if e.is_timeout() {
                "timed out"
            } else if e.is_connect() {
                "cannot connect"
            } else {
                "request failed"
            };
            Sent::Failed(None, format!("{kind}: {}", causes(&e.without_url())))
        }
    }
}

/// The body POSTed: `data` is the stored JSON text, placed as it is.
pub fn body(event_type: &str, timestamp: i64, data: &str) -> String {
    format!(
        "{{\"type\":{},\"timestamp\":{},\"data\":{data}}}",
        serde_json::Value::from(event_type),
        serde_json::Value::from(rfc3339(timestamp)),
    )
}

/// An error and its causes, one line.
fn causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        cause = c.source();
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_body_is_the_event_with_its_data_as_queued() {
        let body = super::body("job.done", 1_700_000_000, r#"{"id":"job_1","n":1}"#);
        let parsed: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(parsed["type"], "job.done");
        assert_eq!(parsed["timestamp"], "2023-11-14T22:13:20Z");
        assert_eq!(parsed["data"]["id"], "job_1");
    }
}
