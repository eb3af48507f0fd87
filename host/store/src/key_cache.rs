//! The key lookup cache: token hash → key, so a parse does not read
//! `api_keys` every time. A cached key must never outlive a change made
//! anywhere (this host, another host, the CLI), so every entry is dropped
//! when the books say keys changed:
//!
//! - PostgreSQL: every key change sends `NOTIFY mediaparse_keys` in its own
//!   transaction; a listener thread per host (its own connection) clears the
//!   cache on each notification. While the listener is not connected the
//!   cache is bypassed, and it is cleared when the listener reconnects (it
//!   may have missed notifications).
//! - SQLite: `PRAGMA data_version` changes when another connection (the CLI)
//!   commits; this process's own changes clear the cache directly.
//!
//! A generation counter keeps a lookup that raced with an invalidation from
//! storing what it read before the change. Unknown tokens are not cached.
//!
//! Notifications can be lost without the connection looking lost (a network
//! path that drops packets silently), so two more bounds hold whatever the
//! listener hears: every entry expires after its TTL (default
//! [`DEFAULT_TTL`], `serve --key-cache-ttl-secs`), and the listener proves
//! its connection with a ping every half second; when no ping has succeeded
//! for [`HEALTH_TIMEOUT`] the cache is bypassed (and
//! `mediaparse_key_cache_listener_up` in `/metrics` reads 0). The listener is
//! `pg/key_cache.rs`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::KeyRecord;

/// The channel key changes are announced on (PostgreSQL).
pub const CHANNEL: &str = "mediaparse_keys";
/// Cached keys per host; past this the cache starts over (a bound, not an LRU).
const CAPACITY: usize = 100_000;

/// How long a cached key is used before it is read again.
pub const DEFAULT_TTL: Duration = Duration::from_secs(30);

/// PostgreSQL: the cache is bypassed when the listener's last good ping is older.
pub const HEALTH_TIMEOUT: Duration = Duration::from_secs(3);

pub struct KeyCache {
    entries: Mutex<HashMap<Vec<u8>, (KeyRecord, Instant)>>,
    generation: AtomicU64,
    /// Entry lifetime, in milliseconds.
    ttl_ms: AtomicU64,
    /// PostgreSQL: the listener is connected, so the cache may be used.
    pub(crate) listening: AtomicBool,
    /// PostgreSQL: when the listener's connection last answered a ping.
    pub(crate) last_healthy: Mutex<Option<Instant>>,
    /// PostgreSQL: the listener thread was started.
    pub(crate) started: AtomicBool,
    /// SQLite: the `data_version` the entries were read under.
    data_version: Mutex<Option<i64>>,
}

impl Default for KeyCache {
    fn default() -> Self {
        KeyCache {
            entries: Mutex::default(),
            generation: AtomicU64::default(),
            ttl_ms: AtomicU64::new(DEFAULT_TTL.as_millis() as u64),
            listening: AtomicBool::default(),
            last_healthy: Mutex::default(),
            started: AtomicBool::default(),
            data_version: Mutex::default(),
        }
    }
}

impl KeyCache {
    /// Use cached keys for at most `ttl` (zero: never cache).
    pub fn set_ttl(&self, ttl: Duration) {
        self.ttl_ms.store(
            u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            Ordering::SeqCst,
        );
    }

    fn ttl(&self) -> Duration {
        Duration::from_millis(self.ttl_ms.load(Ordering::SeqCst))
    }

    /// The cached key of `hash` (unless older than the TTL) and the
    /// generation to store a fresh read under.
    pub fn get(&self, hash: &[u8]) -> (Option<KeyRecord>, u64) {
        let generation = self.generation.load(Ordering::SeqCst);
        let ttl = self.ttl();
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let fresh = entries
            .get(hash)
            .filter(|(_, at)| at.elapsed() < ttl)
            .map(|(key, _)| key.clone());
        (fresh, generation)
    }

    /// Remember `key`, unless an invalidation happened since `generation`.
    pub fn put(&self, hash: &[u8], key: &KeyRecord, generation: u64) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if self.generation.load(Ordering::SeqCst) != generation {
            return;
        }
        if entries.len() >= CAPACITY {
            entries.clear();
        }
        entries.insert(hash.to_vec(), (key.clone(), Instant::now()));
    }

    /// Forget every key (some key changed).
    pub fn invalidate(&self) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        self.generation.fetch_add(1, Ordering::SeqCst);
        entries.clear();
    }

    /// SQLite: note the database's `data_version`; a change means another
    /// connection committed, so the cache is cleared.
    pub fn observe_data_version(&self, version: i64) {
        let mut seen = self.data_version.lock().unwrap_or_else(|p| p.into_inner());
        if *seen != Some(version) {
            if seen.is_some() {
                self.invalidate();
            }
            *seen = Some(version);
        }
    }

    /// SQLite: whether a `data_version` was noted (the baseline later
    /// changes are seen against).
    pub fn data_version_known(&self) -> bool {
        self.data_version
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// PostgreSQL: whether the cache may answer: the listener is connected
    /// and its connection answered a ping within [`HEALTH_TIMEOUT`].
    pub fn usable(&self) -> bool {
        let healthy = self.listening.load(Ordering::SeqCst)
            && self
                .last_healthy
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .is_some_and(|at| at.elapsed() < HEALTH_TIMEOUT);
        if !healthy && self.started.load(Ordering::SeqCst) {
            mediaparse_metrics::global().key_cache_listener(false);
        }
        healthy
    }

    /// PostgreSQL: the listener's connection answered a ping now.
    pub(crate) fn healthy_now(&self) {
        *self.last_healthy.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
        mediaparse_metrics::global().key_cache_listener(true);
    }

    /// PostgreSQL: the listener lost its connection.
    pub(crate) fn lost(&self) {
        self.listening.store(false, Ordering::SeqCst);
        *self.last_healthy.lock().unwrap_or_else(|p| p.into_inner()) = None;
        mediaparse_metrics::global().key_cache_listener(false);
        self.invalidate();
    }
}
