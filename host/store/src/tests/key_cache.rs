//! Tests of `key_cache`.

use crate::key_cache::*;
use crate::*;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

fn key() -> KeyRecord {
    KeyRecord::for_tests("k1", "acme")
}

#[test]
fn entries_expire_after_the_ttl_without_any_notification() {
    let cache = KeyCache::default();
    cache.set_ttl(Duration::from_millis(200));
    let (_, generation) = cache.get(b"h");
    cache.put(b"h", &key(), generation);
    assert!(cache.get(b"h").0.is_some(), "fresh");
    let started = Instant::now();
    while cache.get(b"h").0.is_some() {
        assert!(started.elapsed() < Duration::from_secs(10), "never expired");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert_eq!(DEFAULT_TTL, Duration::from_secs(30));
}

#[test]
fn a_listener_whose_pings_went_stale_is_not_trusted() {
    let cache = KeyCache::default();
    cache.started.store(true, Ordering::SeqCst);
    assert!(!cache.usable(), "not listening yet");
    cache.listening.store(true, Ordering::SeqCst);
    cache.healthy_now();
    assert!(cache.usable());
    *cache.last_healthy.lock().unwrap() = Instant::now().checked_sub(HEALTH_TIMEOUT);
    assert!(
        !cache.usable(),
        "no ping answered within the health timeout"
    );
}
