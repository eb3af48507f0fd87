//! Alerts on a platform's change of health: a JSON POST to each of
//! `[health] alert_urls`, signed the Standard Webhooks way (`webhook-id`,
//! `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>`, keyed
//! with `alert_secret`), at most one per platform per
//! `alert_min_interval_secs` (changes in between are merged into the next).
//! Only changes into or out of `degraded` or `broken` are sent.
//!
//! The body: `{"type": "platform.health", "timestamp": "<RFC 3339>",
//! "data": {"platform", "from", "to", "reason", "at"}}`.
//!
//! One attempt per URL (10 s at most), sent in order by one task; a
//! failure is logged (without the URL, a secret) and counted in
//! `mediaparse_health_alerts_total{outcome}`.
pub mod throttle;

use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use rand::RngCore;
use serde_json::json;
use tokio::sync::mpsc;

use mediaparse_config::OperatorConfig;
use mediaparse_config::health::AlertSettings;
use mediaparse_core::clock::{rfc3339, unix_now_s};
use mediaparse_parse::health::StateChange;
use throttle::{Throttle, worth_alerting};

/// Changes waiting for the alert task at most (more are dropped and logged).
pub const QUEUE: usize = 1024;

/// How long one alert POST may take.
const POST_TIMEOUT: Duration = Duration::from_secs(10);

/// Send alerts for the changes arriving on `changes`, under the
/// configuration in force when each is sent; ends when every sender is gone.
pub async fn run(config: Arc<ArcSwap<OperatorConfig>>, mut changes: mpsc::Receiver<StateChange>) {
    let client = match reqwest::Client::builder()
        .timeout(POST_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        // Only the configuration names where alerts go.
        .no_proxy()
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "alerts are off: no HTTP client");
            return;
        }
    };
    let mut throttle = Throttle::default();
    loop {
        let interval = config
            .load()
            .health
            .alerts()
            .map_or(Duration::ZERO, |a| a.min_interval);
        let wake = throttle.next_due(interval);
        let received = match wake {
            Some(at) => {
                tokio::select! {
                    c = changes.recv() => Some(c),
                    _ = tokio::time::sleep_until(tokio::time::Instant::from_std(at)) => None,
                }
            }
            None => Some(changes.recv().await),
        };
        let mut to_send = Vec::new();
        match received {
            Some(None) => return,
            Some(Some(change)) if worth_alerting(&change) => {
                to_send.extend(throttle.offer(change, Instant::now(), interval));
            }
            Some(Some(_)) => {}
            None => {}
        }
        to_send.extend(throttle.due(Instant::now(), interval));
        let Some(settings) = config.load().health.alerts() else {
            continue;
        };
        for change in to_send {
            deliver(&client, &settings, &change).await;
        }
    }
}

/// The alert's body.
pub fn body(change: &StateChange, now_unix_s: i64) -> Vec<u8> {
    json!({
        "type": "platform.health",
        "timestamp": rfc3339(now_unix_s),
        "data": {
            "platform": change.platform,
            "from": change.from.as_str(),
            "to": change.to.as_str(),
            "reason": change.reason,
            "at": rfc3339(change.at_unix_s),
        },
    })
    .to_string()
    .into_bytes()
}

/// POST `change` to every alert URL, signed.
async fn deliver(client: &reqwest::Client, settings: &AlertSettings, change: &StateChange) {
    let now = unix_now_s();
    let body = body(change, now);
    let mut id = [0u8; 16];
    rand::rng().fill_bytes(&mut id);
    let id = format!("msg_{}", hex::encode(id));
    let signature = mediaparse_signing::sign(&settings.key, &id, now, &body);
    let metrics = mediaparse_metrics::global();
    for (i, url) in settings.urls.iter().enumerate() {
        let sent = client
            .post(url)
            .header("content-type", "application/json")
            .header("webhook-id", &id)
            .header("webhook-timestamp", now.to_string())
            .header("webhook-signature", &signature)
            .body(body.clone())
            .send()
            .await;
        let outcome = match sent {
            Ok(resp) if resp.status().is_success() => "sent",
            Ok(resp) => {
                tracing::warn!(url = i + 1, status = resp.status().as_u16(), platform = %change.platform, "health alert refused");
                "failed"
            }
            Err(e) => {
                // The error's text can quote the URL: only its kind is logged.
                let kind = if e.is_timeout() {
                    "timeout"
                } else if e.is_connect() {
                    "connect"
                } else {
                    "request"
                };
                tracing::warn!(url = i + 1, error = kind, platform = %change.platform, "health alert not delivered");
                "failed"
            }
        };
        metrics.health_alert(outcome);
    }
}

#[cfg(test)]
mod tests;
