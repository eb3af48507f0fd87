//! The parse cache: concurrent parses of the same post
//! share one extraction (single flight), and a result may be served again
//! for a while — a per-platform TTL, never past the earliest expiry the
//! media URLs carry. Every parse is still charged; only the upstream work
//! and the guest are saved.
//!
//! A result whose media URLs carry no expiry parameter is kept (and shared
//! with concurrent parses) only when the operator declared a TTL for the
//! platform (`parse_cache_ttl_ms`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mediaparse_sdk as sdk;

use mediaparse_core::GuestPlatformData;
use tokio::sync::watch;

/// What a cached parse hands out again.
#[derive(Clone, Debug)]
pub struct CachedParse {
    pub media: sdk::Media,
    /// As the guest wrote it: sanitized once, by the first answer that shows it.
    pub platform_data: GuestPlatformData,
    /// The label of the exit the extraction left through.
    pub egress: String,
}

/// How a parse met the cache (the `Cache-Status` header, RFC 9211).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Served from a stored result.
    Hit,
    /// Shared the extraction of a concurrent parse of the same post.
    Shared,
    /// Extracted by this parse.
    Miss,
    /// The request said `Cache-Control: no-cache`.
    Bypass,
}

impl CacheOutcome {
    pub const ALL: [CacheOutcome; 4] = [
        CacheOutcome::Hit,
        CacheOutcome::Shared,
        CacheOutcome::Miss,
        CacheOutcome::Bypass,
    ];

    /// The `Cache-Status` header value.
    pub fn header(self) -> &'static str {
        match self {
            CacheOutcome::Hit => "mediaparse; hit",
            CacheOutcome::Shared => "mediaparse; hit; detail=shared",
            CacheOutcome::Miss => "mediaparse; fwd=miss",
            CacheOutcome::Bypass => "mediaparse; fwd=request",
        }
    }
}

/// A result is dropped this long before its earliest media URL expires.
const EXPIRY_MARGIN_S: u64 = 60;
/// Entries at most; past it, expired entries are dropped, then the oldest.
const MAX_ENTRIES: usize = 10_000;

type Flight = watch::Receiver<Option<Option<Arc<CachedParse>>>>;

enum Entry {
    Ready {
        value: Arc<CachedParse>,
        until: Instant,
    },
    InFlight(Flight),
}

#[derive(Default)]
pub struct ParseCache {
    entries: Mutex<HashMap<String, Entry>>,
}

/// What [`ParseCache::join`] found.
pub enum Joined {
    Hit(Arc<CachedParse>),
    /// Another parse is extracting this post: wait for it.
    Wait(Flight),
    /// This parse extracts; it must [`Lead::finish`] (dropping it releases the waiters empty-handed).
    Lead(Lead),
}

/// The duty of the parse that extracts for everyone waiting.
pub struct Lead {
    cache: Arc<ParseCache>,
    key: String,
    tx: watch::Sender<Option<Option<Arc<CachedParse>>>>,
    done: bool,
}

impl ParseCache {
    pub fn new() -> Arc<ParseCache> {
        Arc::new(ParseCache::default())
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The stored result for `key`, the flight to wait on, or the lead.
    pub fn join(self: &Arc<Self>, key: &str) -> Joined {
        let mut entries = self.entries();
        match entries.get(key) {
            Some(Entry::Ready { value, until }) if *until > Instant::now() => {
                return Joined::Hit(value.clone());
            }
            Some(Entry::InFlight(rx)) => return Joined::Wait(rx.clone()),
            _ => {}
        }
        if entries.len() >= MAX_ENTRIES {
            let now = Instant::now();
            entries.retain(|_, e| match e {
                Entry::Ready { until, .. } => *until > now,
                Entry::InFlight(_) => true,
            });
        }
        if entries.len() >= MAX_ENTRIES {
            // Still full of live entries: serve without storing this one.
            let (tx, _) = watch::channel(None);
            return Joined::Lead(Lead {
                cache: self.clone(),
                key: String::new(),
                tx,
                done: false,
            });
        }
        let (tx, rx) = watch::channel(None);
        entries.insert(key.to_string(), Entry::InFlight(rx));
        Joined::Lead(Lead {
            cache: self.clone(),
            key: key.to_string(),
            tx,
            done: false,
        })
    }

    /// Wait for a flight: the shared result, or `None` if the leader failed
    /// (or kept nothing), when this parse extracts on its own.
    pub async fn wait(mut flight: Flight) -> Option<Arc<CachedParse>> {
        loop {
            if let Some(answer) = flight.borrow_and_update().clone() {
                return answer;
            }
            if flight.changed().await.is_err() {
                return flight.borrow().clone().flatten();
            }
        }
    }

    /// The parse cache as one call: the result kept for `key`, the
    /// extraction another parse runs for it, or `extract` run here — then
    /// kept for what `keep` says and handed to the parses waiting on it.
    /// Without a key (`Cache-Control: no-cache`) `extract` runs alone.
    /// A failed extraction keeps nothing; its waiters extract on their own.
    pub async fn run<E, Fut>(
        self: &Arc<Self>,
        key: Option<&str>,
        keep: impl FnOnce(&CachedParse) -> Option<Duration>,
        extract: impl FnOnce() -> Fut,
    ) -> Result<(Arc<CachedParse>, CacheOutcome), E>
    where
        Fut: std::future::Future<Output = Result<CachedParse, E>>,
    {
        let Some(key) = key else {
            return Ok((Arc::new(extract().await?), CacheOutcome::Bypass));
        };
        let lead = match self.join(key) {
            Joined::Hit(v) => return Ok((v, CacheOutcome::Hit)),
            Joined::Wait(flight) => match ParseCache::wait(flight).await {
                Some(v) => return Ok((v, CacheOutcome::Shared)),
                // The leader failed or kept nothing: this parse extracts.
                None => None,
            },
            Joined::Lead(lead) => Some(lead),
        };
        let value = Arc::new(extract().await?);
        if let Some(lead) = lead {
            let kept = keep(&value);
            lead.finish(value.clone(), kept);
        }
        Ok((value, CacheOutcome::Miss))
    }

    /// Entries stored now (expired ones included until they are replaced).
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Lead {
    /// Keep the result for `keep` and hand it to the waiters. A result that
    /// may not be kept (no expiry known, no TTL declared) is not shared
    /// either: the waiters extract on their own.
    pub fn finish(mut self, value: Arc<CachedParse>, keep: Option<Duration>) {
        self.done = true;
        let keep = keep.filter(|k| !k.is_zero());
        let mut entries = self.cache.entries();
        if !self.key.is_empty() {
            match keep {
                Some(keep) => {
                    entries.insert(
                        self.key.clone(),
                        Entry::Ready {
                            value: value.clone(),
                            until: Instant::now() + keep,
                        },
                    );
                }
                None => {
                    entries.remove(&self.key);
                }
            }
        }
        drop(entries);
        let _ = self.tx.send(Some(keep.map(|_| value)));
    }
}

impl Drop for Lead {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if !self.key.is_empty() {
            self.cache.entries().remove(&self.key);
        }
        let _ = self.tx.send(Some(None));
    }
}

/// How long a result may be kept: the platform's TTL, cut to a minute
/// before the earliest expiry its media URLs carry (`expire`, `x-expires`:
/// decimal Unix seconds; `oe`: hexadecimal Unix seconds). Without any such
/// parameter only a TTL the operator declared applies. `now_s`: the parse clock.
pub fn keep_for(
    media: &sdk::Media,
    declared_ttl: Option<Duration>,
    default_ttl: Duration,
    now_s: u64,
) -> Option<Duration> {
    let ttl = declared_ttl.unwrap_or(default_ttl);
    if ttl.is_zero() {
        return None;
    }
    match earliest_expiry(media) {
        Some(expiry) => {
            let left = expiry.checked_sub(now_s + EXPIRY_MARGIN_S)?;
            Some(ttl.min(Duration::from_secs(left))).filter(|d| !d.is_zero())
        }
        None => declared_ttl.filter(|d| !d.is_zero()),
    }
}

fn earliest_expiry(media: &sdk::Media) -> Option<u64> {
    let urls = std::iter::once(media.thumbnail.as_str())
        .chain(media.images.iter().map(|i| i.url.as_str()))
        .chain(media.videos.iter().map(|v| v.url.as_str()))
        .chain(media.audios.iter().map(|a| a.url.as_str()));
    urls.filter_map(url_expiry).min()
}

/// The expiry a media URL encodes, in Unix seconds.
fn url_expiry(url: &str) -> Option<u64> {
    let query = url.split_once('?')?.1;
    let query = query.split('#').next().unwrap_or(query);
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .filter_map(|(k, v)| match k {
            "expire" | "x-expires" => v.parse::<u64>().ok(),
            "oe" => u64::from_str_radix(v, 16).ok(),
            _ => None,
        })
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn media(urls: &[&str]) -> sdk::Media {
        sdk::Media {
            images: urls
                .iter()
                .map(|u| sdk::Image {
                    url: u.to_string(),
                    width: 0,
                    height: 0,
                })
                .collect(),
            ..Default::default()
        }
    }

    const MIN: Duration = Duration::from_secs(60);

    #[test]
    fn the_ttl_never_outlives_the_earliest_url_expiry() {
        let now = 1_700_000_000;
        let m = media(&[
            "https://v.example/a?x-expires=1700000600&sig=1",
            "https://v.example/b?expire=1700000300",
        ]);
        // 300 s left, minus the one-minute margin.
        assert_eq!(
            keep_for(&m, None, Duration::from_secs(3600), now),
            Some(Duration::from_secs(240))
        );
        assert_eq!(keep_for(&m, None, MIN, now), Some(MIN));
        // Instagram's `oe` is hexadecimal: 0x6553F180 = 1700000128.
        let ig = media(&["https://scontent.example/p.jpg?oe=6553F180&_nc_ht=x"]);
        assert_eq!(
            keep_for(&ig, None, Duration::from_secs(3600), now),
            Some(Duration::from_secs(68))
        );
        // Expiring within the margin, or already expired: not kept.
        assert_eq!(
            keep_for(&media(&["https://v/a?expire=1700000030"]), None, MIN, now),
            None
        );
        assert_eq!(
            keep_for(&media(&["https://v/a?expire=1600000000"]), None, MIN, now),
            None
        );
    }

    #[test]
    fn urls_without_expiry_are_kept_only_when_declared() {
        let m = media(&["https://i.example/p.jpg"]);
        assert_eq!(keep_for(&m, None, MIN, 0), None);
        assert_eq!(keep_for(&m, Some(MIN), MIN, 0), Some(MIN));
        assert_eq!(keep_for(&m, Some(Duration::ZERO), MIN, 0), None);
    }

    fn value() -> Arc<CachedParse> {
        Arc::new(CachedParse {
            media: media(&["https://i/1"]),
            platform_data: GuestPlatformData::new("{}".to_string()),
            egress: String::new(),
        })
    }

    #[tokio::test]
    async fn one_leader_the_others_wait_and_share_then_hit() {
        let cache = ParseCache::new();
        let Joined::Lead(lead) = cache.join("k") else {
            panic!("first is the leader")
        };
        let Joined::Wait(flight) = cache.join("k") else {
            panic!("second waits")
        };
        let waiter = tokio::spawn(ParseCache::wait(flight));
        lead.finish(value(), Some(MIN));
        assert!(waiter.await.unwrap().is_some());
        assert!(matches!(cache.join("k"), Joined::Hit(_)));
    }

    #[tokio::test]
    async fn a_failed_leader_releases_the_waiters_empty_handed() {
        let cache = ParseCache::new();
        let Joined::Lead(lead) = cache.join("k") else {
            panic!()
        };
        let Joined::Wait(flight) = cache.join("k") else {
            panic!()
        };
        drop(lead);
        assert!(ParseCache::wait(flight).await.is_none());
        assert!(matches!(cache.join("k"), Joined::Lead(_)), "nothing kept");
    }

    #[tokio::test]
    async fn a_result_that_may_not_be_kept_is_not_shared_either() {
        let cache = ParseCache::new();
        let Joined::Lead(lead) = cache.join("k") else {
            panic!()
        };
        let Joined::Wait(flight) = cache.join("k") else {
            panic!()
        };
        lead.finish(value(), None);
        assert!(ParseCache::wait(flight).await.is_none());
        assert!(cache.is_empty());
    }
}
