//! Webhooks: events POSTed to a customer's URL, signed the Standard
//! Webhooks way with the key's own secret, from a queue kept in the
//! database so a restart or a dead host loses none.
//!
//! - [`destination`]: where a webhook may go (https, public addresses only,
//!   checked at every attempt; the connection made to the checked address).
//! - [`signature`]: `webhook-id`, `webhook-timestamp`,
//!   `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`,
//!   secrets `whsec_<base64>` (shared with the health alerts).
//! - [`schedule`]: `[webhooks]` in the operator configuration, the retry schedule.
//! - [`worker`]: the task that claims due deliveries, sends and records them.
//!
//! [`Webhooks::enqueue`] queues one event; the body sent is
//! `{"type": <event type>, "timestamp": <RFC 3339 of the attempt>, "data": <data>}`,
//! signed at send time with the key's secret of that moment.

pub mod destination;
pub mod worker;

use std::sync::Arc;

use arc_swap::ArcSwap;
use tokio::sync::Notify;

pub use destination::{Mode, Resolver, SystemResolver, check_syntax};
use mediaparse_config::OperatorConfig;
pub use mediaparse_config::webhooks::{Schedule, WebhookSettings};
use mediaparse_store::{Store, StoreError};

/// The largest `data` of one event, serialized.
pub const MAX_DATA_BYTES: usize = 256 * 1024;

/// The longest event type.
pub const MAX_EVENT_TYPE_CHARS: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// The callback URL is refused by the destination policy.
    #[error("callback URL refused: {0}")]
    Destination(String),
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The service's webhook queue: where events are queued and the worker
/// that sends them is started. Cheap to clone.
#[derive(Clone)]
pub struct Webhooks {
    store: Store,
    config: Arc<ArcSwap<OperatorConfig>>,
    mode: Mode,
    resolver: Arc<dyn Resolver>,
    /// Wakes this host's worker when an event is queued here.
    wake: Arc<Notify>,
}

impl Webhooks {
    pub fn new(store: Store, config: Arc<ArcSwap<OperatorConfig>>, mode: Mode) -> Webhooks {
        Webhooks {
            store,
            config,
            mode,
            resolver: Arc::new(SystemResolver),
            wake: Arc::new(Notify::new()),
        }
    }

    /// The same queue resolving names with `resolver` (tests).
    pub fn with_resolver(mut self, resolver: Arc<dyn Resolver>) -> Webhooks {
        self.resolver = resolver;
        self
    }

    /// Whether loopback receivers are allowed (test mode).
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The retry schedule in force.
    pub fn schedule(&self) -> Schedule {
        self.config.load().webhooks.schedule()
    }

    /// [`check_syntax`] under this service's mode: what an endpoint taking
    /// a callback URL answers `400` with.
    pub fn check_url(&self, url: &str) -> Result<url::Url, WebhookError> {
        check_syntax(url, self.mode)
    }

    /// Queue `event_type` with `data` for key `key_id` to `url`; returns the
    /// delivery id (also its `webhook-id`). The URL's form is checked now,
    /// its addresses at every attempt.
    pub async fn enqueue(
        &self,
        key_id: &str,
        url: &str,
        event_type: &str,
        data: &serde_json::Value,
    ) -> Result<String, WebhookError> {
        let id = mediaparse_core::ids::new_request_id().replacen("req_", "msg_", 1);
        self.enqueue_with_id(&id, key_id, url, event_type, data)
            .await?;
        Ok(id)
    }

    /// [`Webhooks::enqueue`] under the delivery id `id`, chosen by the
    /// caller so that queueing one event again (a job finished again after
    /// a restart) queues nothing more.
    pub async fn enqueue_with_id(
        &self,
        id: &str,
        key_id: &str,
        url: &str,
        event_type: &str,
        data: &serde_json::Value,
    ) -> Result<(), WebhookError> {
        self.check_url(url)?;
        check_event_type(event_type)?;
        let data = data.to_string();
        if data.len() > MAX_DATA_BYTES {
            return Err(WebhookError::Invalid(format!(
                "webhook data is {} bytes, more than {MAX_DATA_BYTES}",
                data.len()
            )));
        }
        let max_pending = self.schedule().max_pending_per_key;
        self.store
            .enqueue_webhook_async(id, key_id, url, event_type, &data, now_ms(), max_pending)
            .await?;
        self.wake.notify_one();
        Ok(())
    }

    /// Start the delivery worker on the current runtime.
    pub fn spawn_worker(&self) -> tokio::task::JoinHandle<()> {
        tokio::spawn(worker::run(self.clone()))
    }
}

/// `[a-z0-9._-]`, 1 to [`MAX_EVENT_TYPE_CHARS`] characters.
fn check_event_type(event_type: &str) -> Result<(), WebhookError> {
    let ok = !event_type.is_empty()
        && event_type.len() <= MAX_EVENT_TYPE_CHARS
        && event_type
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(WebhookError::Invalid(format!(
            "an event type is 1 to {MAX_EVENT_TYPE_CHARS} of a-z, 0-9, '.', '_', '-'"
        )))
    }
}

/// Now, Unix milliseconds.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
