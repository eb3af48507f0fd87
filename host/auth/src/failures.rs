//! Failed authentications, counted per client address (IPv6 per /64): a
//! leaky bucket that fills by one per failure and drains at a steady rate.
//! While an address's bucket is full its requests are refused before any
//! token is looked up (`429 auth_throttled`), so guessing tokens or the
//! operator token is slow and a flood of bogus tokens never reaches the
//! database. Successful authentications cost nothing.
//!
//! [`UnknownTokens`] remembers recently refused token hashes (bounded), so
//! the same bogus token repeated is refused without a database read.

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::client_ip::bucket;

/// Addresses tracked at most; past this, drained buckets are forgotten and,
/// if that is not enough, the whole map starts over (a bound, not an LRU).
const MAX_ADDRESSES: usize = 100_000;

pub struct FailureThrottle {
    /// Failures an address may have in its bucket before it is refused.
    burst: f64,
    /// How long one failure stays in the bucket.
    drain: Duration,
    buckets: Mutex<HashMap<IpAddr, Level>>,
}

#[derive(Clone, Copy)]
struct Level {
    failures: f64,
    at: Instant,
}

impl FailureThrottle {
    /// `burst` failures at once, then one more per `drain`.
    pub fn new(burst: u32, drain: Duration) -> FailureThrottle {
        FailureThrottle {
            burst: f64::from(burst.max(1)),
            drain: drain.max(Duration::from_millis(1)),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    fn level_now(&self, level: Level, now: Instant) -> f64 {
        let drained = now.duration_since(level.at).as_secs_f64() / self.drain.as_secs_f64();
        (level.failures - drained).max(0.0)
    }

    /// `Err(seconds to wait)` while `address` has used up its failures.
    pub fn check(&self, address: IpAddr) -> Result<(), u64> {
        let now = Instant::now();
        let buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let Some(level) = buckets.get(&bucket(address)) else {
            return Ok(());
        };
        let failures = self.level_now(*level, now);
        if failures + 1.0 > self.burst {
            let wait = (failures + 1.0 - self.burst) * self.drain.as_secs_f64();
            // A whole second at least: what Retry-After can say.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            return Err((wait.ceil() as u64).max(1));
        }
        Ok(())
    }

    /// Count one failed authentication of `address`.
    pub fn failed(&self, address: IpAddr) {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() >= MAX_ADDRESSES {
            buckets.retain(|_, level| self.level_now(*level, now) > 0.0);
            if buckets.len() >= MAX_ADDRESSES {
                buckets.clear();
            }
        }
        let key = bucket(address);
        let failures = buckets
            .get(&key)
            .map_or(0.0, |level| self.level_now(*level, now));
        buckets.insert(
            key,
            Level {
                failures: (failures + 1.0).min(self.burst + 1.0),
                at: now,
            },
        );
    }
}

/// Token hashes recently found unknown, oldest forgotten first.
pub struct UnknownTokens {
    capacity: usize,
    ttl: Duration,
    inner: Mutex<Remembered>,
}

/// The hashes, and the same in the order they were added, with when.
#[derive(Default)]
struct Remembered {
    hashes: HashSet<Vec<u8>>,
    order: VecDeque<(Instant, Vec<u8>)>,
}

impl UnknownTokens {
    /// Remember up to `capacity` hashes, each for `ttl` (a key created
    /// meanwhile is found once the entry expires).
    pub fn new(capacity: usize, ttl: Duration) -> UnknownTokens {
        UnknownTokens {
            capacity: capacity.max(1),
            ttl,
            inner: Mutex::new(Remembered::default()),
        }
    }

    fn expire(&self, inner: &mut Remembered, now: Instant) {
        while let Some((at, _)) = inner.order.front() {
            if now.duration_since(*at) < self.ttl && inner.order.len() <= self.capacity {
                break;
            }
            if let Some((_, hash)) = inner.order.pop_front() {
                inner.hashes.remove(&hash);
            }
        }
    }

    /// Was `hash` refused recently?
    pub fn contains(&self, hash: &[u8]) -> bool {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        self.expire(&mut inner, Instant::now());
        inner.hashes.contains(hash)
    }

    pub fn insert(&self, hash: &[u8]) {
        let now = Instant::now();
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.hashes.insert(hash.to_vec()) {
            inner.order.push_back((now, hash.to_vec()));
        }
        self.expire(&mut inner, now);
    }

    /// Forget everything.
    pub fn clear(&self) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.hashes.clear();
        inner.order.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_refused_after_its_burst_and_per_64() {
        let t = FailureThrottle::new(3, Duration::from_secs(60));
        let a: IpAddr = "2001:db8::1".parse().unwrap();
        let same_64: IpAddr = "2001:db8::ffff:2".parse().unwrap();
        let other: IpAddr = "192.0.2.1".parse().unwrap();
        for _ in 0..3 {
            assert!(t.check(a).is_ok());
            t.failed(a);
        }
        assert!(t.check(a).is_err());
        assert!(t.check(same_64).is_err(), "IPv6 counted per /64");
        assert!(t.check(other).is_ok());
        let wait = t.check(a).unwrap_err();
        assert!((1..=60).contains(&wait), "{wait}");
    }

    #[test]
    fn failures_drain() {
        let t = FailureThrottle::new(1, Duration::from_millis(20));
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        t.failed(a);
        assert!(t.check(a).is_err());
        let deadline = Instant::now() + Duration::from_secs(5);
        while t.check(a).is_err() {
            assert!(Instant::now() < deadline, "never drained");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn unknown_tokens_are_bounded() {
        let u = UnknownTokens::new(2, Duration::from_secs(60));
        u.insert(b"a");
        u.insert(b"b");
        u.insert(b"c");
        assert!(!u.contains(b"a"), "oldest forgotten past the bound");
        assert!(u.contains(b"b") && u.contains(b"c"));
        u.clear();
        assert!(!u.contains(b"c"));
    }
}
