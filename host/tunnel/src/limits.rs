//! The tunnel's limits and accounting: per key, requests per
//! minute (HEAD included), concurrent streams and bytes per UTC day (over →
//! `429 tunnel_limited` with `Retry-After`); per platform, concurrent upstream streams (over →
//! `503 overloaded`). Every admitted stream holds a [`Ticket`] that counts
//! the bytes it serves and writes them to the store (every
//! [`FLUSH_BYTES`] and when the stream ends), by UTC day, key and platform.
//!
//! The day's bytes of a key are read from the store the first time the key
//! streams that day (so restarts and other processes' earlier bytes count),
//! then kept in memory.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::Claims;
use mediaparse_store::{Store, StoreError, TunnelTraffic};

/// Seconds in a UTC day.
const DAY: i64 = 86_400;

/// A stream's bytes are written to the store at least this often.
pub const FLUSH_BYTES: u64 = 8 << 20;

/// Past this many keys in the request limiter, keys whose buckets are full again are forgotten.
const KEYS_REMEMBERED: usize = 10_000;

/// How long a caller over its stream limit should wait.
const STREAMS_RETRY_SECS: u64 = 1;

/// The limits; 0 means no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TunnelLimits {
    /// Tunnel requests (GET and HEAD, merge inputs included) one key may
    /// make per minute, refilled evenly (a token bucket of that size).
    pub requests_per_key_per_minute: u32,
    /// Streams one key may have open at once (merges count their two inputs).
    pub streams_per_key: u32,
    /// Bytes one key may be served per UTC day.
    pub bytes_per_key_per_day: u64,
    /// Streams open to one platform's CDN at once, all keys together.
    pub upstream_per_platform: u32,
}

impl Default for TunnelLimits {
    fn default() -> Self {
        TunnelLimits {
            requests_per_key_per_minute: 600,
            streams_per_key: 8,
            bytes_per_key_per_day: 0,
            upstream_per_platform: 256,
        }
    }
}

/// Why a stream was not admitted.
#[derive(Debug, thiserror::Error)]
pub enum LimitError {
    #[error("the key made more than {limit} tunnel requests in a minute")]
    Rate { limit: u32, retry_after_secs: u64 },
    #[error("the key has {open} tunnel streams open (limit {limit})")]
    Streams { open: u32, limit: u32 },
    #[error("the key was served {served} tunnel bytes today (limit {limit})")]
    Bytes {
        served: u64,
        limit: u64,
        /// Seconds until the next UTC day.
        retry_after_secs: u64,
    },
    #[error("{0} tunnel streams are open to this platform")]
    PlatformBusy(u32),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl LimitError {
    /// Seconds the caller should wait, for `Retry-After`.
    pub fn retry_after_secs(&self) -> u64 {
        match self {
            LimitError::Streams { .. } | LimitError::PlatformBusy(_) => STREAMS_RETRY_SECS,
            LimitError::Bytes {
                retry_after_secs, ..
            }
            | LimitError::Rate {
                retry_after_secs, ..
            } => *retry_after_secs,
            LimitError::Store(_) => 1,
        }
    }
}

/// One key's counts for the current day.
#[derive(Default)]
struct KeyCount {
    open: u32,
    day: i64,
    /// The day's bytes in the store when this process first saw the key that day.
    stored: Option<u64>,
    /// Bytes this process served the key since then.
    served: u64,
}

impl KeyCount {
    fn roll_to(&mut self, day: i64) {
        if self.day != day {
            self.day = day;
            self.stored = None;
            self.served = 0;
        }
    }
}

/// The counts every tunnel stream goes through.
pub struct Meter {
    limits: TunnelLimits,
    store: Store,
    keys: Mutex<HashMap<String, KeyCount>>,
    platforms: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// Requests per key per minute; `None`: no limit.
    requests: Option<DefaultKeyedRateLimiter<String>>,
}

impl Meter {
    pub fn new(limits: TunnelLimits, store: Store) -> Arc<Meter> {
        let requests = NonZeroU32::new(limits.requests_per_key_per_minute)
            .map(|n| RateLimiter::keyed(Quota::per_minute(n)));
        Arc::new(Meter {
            limits,
            store,
            keys: Mutex::new(HashMap::new()),
            platforms: Mutex::new(HashMap::new()),
            requests,
        })
    }

    pub fn limits(&self) -> TunnelLimits {
        self.limits
    }

    fn keys(&self) -> std::sync::MutexGuard<'_, HashMap<String, KeyCount>> {
        // A panic elsewhere leaves plain counters behind: still usable.
        self.keys.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Take one request from the key's per-minute allowance.
    fn take_request(&self, key: &str) -> Result<(), LimitError> {
        let Some(requests) = &self.requests else {
            return Ok(());
        };
        if requests.len() > KEYS_REMEMBERED {
            requests.retain_recent();
        }
        requests.check_key(&key.to_string()).map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            LimitError::Rate {
                limit: self.limits.requests_per_key_per_minute,
                retry_after_secs: wait.as_secs() + u64::from(wait.subsec_nanos() > 0),
            }
        })
    }

    /// Admit one stream for `claims` at `now` (unix seconds), or say why not.
    pub async fn admit(self: &Arc<Self>, claims: &Claims, now: i64) -> Result<Ticket, LimitError> {
        self.take_request(&claims.key_id)?;
        let day = now.div_euclid(DAY);
        let limits = self.limits;
        if limits.bytes_per_key_per_day > 0 {
            let known = self
                .keys()
                .get(&claims.key_id)
                .is_some_and(|k| k.day == day && k.stored.is_some());
            if !known {
                let stored = self
                    .store
                    .tunnel_bytes_on_day_async(&claims.key_id, now)
                    .await?;
                let mut keys = self.keys();
                let count = keys.entry(claims.key_id.clone()).or_default();
                count.roll_to(day);
                count
                    .stored
                    .get_or_insert(u64::try_from(stored).unwrap_or(0));
            }
        }
        let permit = self.platform_permit(&claims.platform)?;
        let mut keys = self.keys();
        let count = keys.entry(claims.key_id.clone()).or_default();
        count.roll_to(day);
        if limits.streams_per_key > 0 && count.open >= limits.streams_per_key {
            return Err(LimitError::Streams {
                open: count.open,
                limit: limits.streams_per_key,
            });
        }
        let served = count.stored.unwrap_or(0) + count.served;
        if limits.bytes_per_key_per_day > 0 && served >= limits.bytes_per_key_per_day {
            return Err(LimitError::Bytes {
                served,
                limit: limits.bytes_per_key_per_day,
                retry_after_secs: u64::try_from(DAY - now.rem_euclid(DAY)).unwrap_or(1),
            });
        }
        count.open += 1;
        mediaparse_metrics::global().tunnel_stream(&claims.platform, 1);
        Ok(Ticket {
            meter: self.clone(),
            account: claims.account.clone(),
            key: claims.key_id.clone(),
            platform: claims.platform.clone(),
            _permit: permit,
            unflushed: 0,
            admitted_at: now,
        })
    }

    fn platform_permit(&self, platform: &str) -> Result<Option<OwnedSemaphorePermit>, LimitError> {
        let limit = self.limits.upstream_per_platform;
        if limit == 0 {
            return Ok(None);
        }
        let semaphore = self
            .platforms
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(platform.to_string())
            .or_insert_with(|| Arc::new(Semaphore::new(limit as usize)))
            .clone();
        semaphore
            .try_acquire_owned()
            .map(Some)
            .map_err(|_| LimitError::PlatformBusy(limit))
    }

    /// Write `bytes` (and `streams` ended) to the store, without waiting
    /// for it, on the day the stream was admitted.
    fn record(&self, ticket: &Ticket, bytes: u64, streams: i64) {
        if bytes == 0 && streams == 0 {
            return;
        }
        let store = self.store.clone();
        let (account, key, platform, ticket_at) = (
            ticket.account.clone(),
            ticket.key.clone(),
            ticket.platform.clone(),
            ticket.admitted_at,
        );
        let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
        let failed = |e: StoreError| tracing::error!(error = %e, "recording tunnel traffic failed");
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => drop(rt.spawn(async move {
                let traffic = TunnelTraffic {
                    account: &account,
                    key: &key,
                    platform: &platform,
                    at: ticket_at,
                    bytes,
                    streams,
                };
                if let Err(e) = store.record_tunnel_traffic_async(&traffic).await {
                    failed(e);
                }
            })),
            // Outside a runtime (a ticket dropped after it ended): written here.
            Err(_) => {
                let traffic = TunnelTraffic {
                    account: &account,
                    key: &key,
                    platform: &platform,
                    at: ticket_at,
                    bytes,
                    streams,
                };
                if let Err(e) = store.record_tunnel_traffic(&traffic) {
                    failed(e);
                }
            }
        }
    }
}

/// One admitted stream: counts its bytes; ending it (drop) frees its place
/// and writes what is left to the store.
pub struct Ticket {
    meter: Arc<Meter>,
    account: String,
    key: String,
    platform: String,
    _permit: Option<OwnedSemaphorePermit>,
    unflushed: u64,
    /// Unix seconds; the stream's bytes count on this UTC day.
    admitted_at: i64,
}

impl Ticket {
    /// `n` more bytes went to the caller.
    pub fn served(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        if let Some(count) = self.meter.keys().get_mut(&self.key) {
            count.served += n;
        }
        mediaparse_metrics::global().tunnel_bytes(&self.platform, n);
        self.unflushed += n;
        if self.unflushed >= FLUSH_BYTES {
            self.meter.record(self, self.unflushed, 0);
            self.unflushed = 0;
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(count) = self.meter.keys().get_mut(&self.key) {
            count.open = count.open.saturating_sub(1);
        }
        mediaparse_metrics::global().tunnel_stream(&self.platform, -1);
        self.meter.record(self, self.unflushed, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(key: &str, platform: &str) -> Claims {
        Claims {
            url: "https://cdn.example/v.mp4".into(),
            headers: Vec::new(),
            egress: None,
            platform: platform.into(),
            account: "acme".into(),
            key_id: key.into(),
            key_rotated_at: None,
            key_token_prefix: None,
            expires_at: i64::MAX,
        }
    }

    #[tokio::test]
    async fn streams_bytes_and_platform_slots_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).unwrap();
        let now = 10 * DAY + 3600;
        // Bytes served earlier today (another process, before a restart) count.
        store
            .record_tunnel_traffic(&TunnelTraffic {
                account: "acme",
                key: "k1",
                platform: "tiktok",
                at: now - 60,
                bytes: 900,
                streams: 1,
            })
            .unwrap();
        let meter = Meter::new(
            TunnelLimits {
                requests_per_key_per_minute: 0,
                streams_per_key: 2,
                bytes_per_key_per_day: 1000,
                upstream_per_platform: 3,
            },
            store.clone(),
        );
        let mut a = meter.admit(&claims("k1", "tiktok"), now).await.unwrap();
        let b = meter.admit(&claims("k1", "tiktok"), now).await.unwrap();
        let third = meter.admit(&claims("k1", "tiktok"), now).await;
        assert!(matches!(
            third,
            Err(LimitError::Streams { open: 2, limit: 2 })
        ));
        // Another key has its own streams but shares the platform's slots.
        let c = meter.admit(&claims("k2", "tiktok"), now).await.unwrap();
        let busy = meter.admit(&claims("k3", "tiktok"), now).await;
        assert!(matches!(busy, Err(LimitError::PlatformBusy(3))));
        assert!(meter.admit(&claims("k3", "bilibili"), now).await.is_ok());
        drop((b, c));
        a.served(100);
        let over = meter.admit(&claims("k1", "tiktok"), now).await;
        match over {
            Err(e @ LimitError::Bytes { served: 1000, .. }) => {
                assert_eq!(e.retry_after_secs(), (DAY - 3600) as u64);
            }
            other => panic!("{:?}", other.err()),
        }
        // The next UTC day starts from zero.
        assert!(
            meter
                .admit(&claims("k1", "tiktok"), now + DAY)
                .await
                .is_ok()
        );
        drop(a);
        // The store has every byte and stream (written off-thread: wait for it).
        for _ in 0..100 {
            if store.tunnel_bytes_on_day("k1", now).unwrap() == 1000 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(store.tunnel_bytes_on_day("k1", now).unwrap(), 1000);
    }
}
