//! Per-key rate limits: one token bucket (governor's GCRA) per key, holding
//! `N` requests and refilling `N` per minute. `N` is the key's own limit when
//! it has one, else the service default (`serve --rate-limit`, else the
//! configuration file's `[limits] rate_limit_per_minute`, else
//! [`DEFAULT_PER_MINUTE`]); `0` means unlimited.
//!
//! One host (SQLite): buckets live in memory; a restart refills them. A key
//! whose limit changes gets a fresh bucket on its next request, so edits
//! apply at once.
//!
//! Several hosts (PostgreSQL, [`RateLimits::shared`]): the count is a row per
//! key and minute in the database (`Store::count_request`, one upsert, one
//! round trip), so a key allowed N per minute gets N in total across hosts.
//! If the count cannot be taken (the database is down or failing) the
//! request is refused with `503 database_unavailable` and `Retry-After`:
//! a limit that lets everything through while the database struggles
//! would be no limit at all.
//!
//! Every check that applies a limit says where the key stands
//! ([`Allowance`]: the limit, what is left, when it is whole again), which the
//! HTTP layer sends as the `RateLimit-Policy` and `RateLimit` headers.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};

use mediaparse_core::api_error::unavailable;
use mediaparse_core::{ApiError, ErrorCode};
use mediaparse_store::{KeyRecord, Store};

/// Requests per minute per key when nothing else says.
pub const DEFAULT_PER_MINUTE: u32 = 600;

/// Requests per window, and the window every limit is counted over.
pub const WINDOW_SECS: u64 = 60;

/// Where a key stands in one limit after a request was counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allowance {
    /// The limit's name (`parse`, `account`): limits are counted apart.
    pub policy: &'static str,
    /// Requests allowed per [`WINDOW_SECS`].
    pub limit: u32,
    /// Requests still allowed now (0 when this one was refused).
    pub remaining: u32,
    /// Whole seconds until the whole limit is available again (on a
    /// refusal: until one request is).
    pub reset_secs: u64,
}

/// A request over its key's limit.
#[derive(Debug, thiserror::Error)]
#[error("rate limit of {limit} requests per minute exceeded; retry in {retry_after_secs} s")]
pub struct RateLimited {
    /// The limit's name, as in [`Allowance::policy`].
    pub policy: &'static str,
    pub limit: u32,
    /// Whole seconds until one request is allowed again (at least 1).
    pub retry_after_secs: u64,
}

impl RateLimited {
    /// Where the refused key stands: nothing left until the retry.
    pub fn allowance(&self) -> Allowance {
        Allowance {
            policy: self.policy,
            limit: self.limit,
            remaining: 0,
            reset_secs: self.retry_after_secs,
        }
    }
}

type Bucket = RateLimiter<NotKeyed, InMemoryState, DefaultClock, StateInformationMiddleware>;

/// Why a request was not let through.
#[derive(Debug, thiserror::Error)]
pub enum RateRefused {
    #[error(transparent)]
    Limited(#[from] RateLimited),
    /// The shared count could not be taken (fail closed).
    #[error("the shared rate limit could not be counted: {0}")]
    Unavailable(String),
}

pub struct RateLimits {
    /// The `--rate-limit` flag, which wins over the configuration file.
    flag_default: Option<u32>,
    buckets: Mutex<HashMap<String, (u32, Arc<Bucket>)>>,
    clock: DefaultClock,
    /// The limit's name: its policy in the headers, its row prefix in the
    /// database; separate limits (parses, account views) count apart.
    scope: &'static str,
    /// Shared counts in the database.
    shared: Option<Store>,
}

impl RateLimits {
    pub fn new(flag_default: Option<u32>, scope: &'static str) -> RateLimits {
        RateLimits {
            flag_default,
            buckets: Mutex::new(HashMap::new()),
            clock: DefaultClock::default(),
            scope,
            shared: None,
        }
    }

    /// Limits counted in `store`, shared by every host on it.
    pub fn shared(flag_default: Option<u32>, store: Store, scope: &'static str) -> RateLimits {
        RateLimits {
            shared: Some(store),
            ..RateLimits::new(flag_default, scope)
        }
    }

    /// Take one request from `key`'s allowance and say what is left (`None`:
    /// the key is unlimited), or say how long to wait.
    pub async fn check(
        &self,
        key: &KeyRecord,
        config_default: Option<u32>,
    ) -> Result<Option<Allowance>, RateRefused> {
        self.check_n(key, config_default, NonZeroU32::MIN).await
    }

    /// Take `n` requests at once (a batch's items) from `key`'s allowance,
    /// or none of them: more than what is left is refused with the wait
    /// until they fit (more than the whole limit: a whole window).
    pub async fn check_n(
        &self,
        key: &KeyRecord,
        config_default: Option<u32>,
        n: NonZeroU32,
    ) -> Result<Option<Allowance>, RateRefused> {
        let Some(store) = &self.shared else {
            return Ok(self.check_local_n(key, config_default, n)?);
        };
        let (limit, scope) = (self.limit_for(key, config_default), self.scope);
        if limit == 0 {
            return Ok(None);
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let minute = (now / WINDOW_SECS) as i64;
        let window_left = (WINDOW_SECS - now % WINDOW_SECS).max(1);
        let bucket = format!("{scope}:{}", key.id);
        let counted = if n.get() == 1 {
            store.count_request_async(&bucket, minute).await
        } else {
            // Counted only if they all fit; else over the limit.
            store
                .count_requests_within_async(&bucket, minute, n.get(), limit)
                .await
                .map(|fits| fits.unwrap_or(i64::MAX))
        };
        match counted {
            Ok(count) if count > i64::from(limit) => Err(RateLimited {
                policy: scope,
                limit,
                retry_after_secs: window_left,
            }
            .into()),
            Ok(count) => Ok(Some(Allowance {
                policy: scope,
                limit,
                remaining: u32::try_from(i64::from(limit) - count.max(0)).unwrap_or(0),
                reset_secs: window_left,
            })),
            Err(e) => {
                tracing::warn!(error = %e, "shared rate limit not counted; request refused");
                Err(RateRefused::Unavailable(e.to_string()))
            }
        }
    }

    /// The limit that applies to `key`, given the configuration file's default.
    pub fn limit_for(&self, key: &KeyRecord, config_default: Option<u32>) -> u32 {
        key.rate_limit_per_minute
            .or(self.flag_default)
            .or(config_default)
            .unwrap_or(DEFAULT_PER_MINUTE)
    }

    /// Take one request from `key`'s in-memory bucket and say what is left
    /// (`None`: unlimited), or say how long to wait.
    pub fn check_local(
        &self,
        key: &KeyRecord,
        config_default: Option<u32>,
    ) -> Result<Option<Allowance>, RateLimited> {
        self.check_local_n(key, config_default, NonZeroU32::MIN)
    }

    /// [`RateLimits::check_local`] of `n` requests at once, all or none.
    pub fn check_local_n(
        &self,
        key: &KeyRecord,
        config_default: Option<u32>,
        n: NonZeroU32,
    ) -> Result<Option<Allowance>, RateLimited> {
        let limit = self.limit_for(key, config_default);
        let Some(per_minute) = NonZeroU32::new(limit) else {
            return Ok(None);
        };
        let bucket = {
            let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
            match buckets.get(&key.id) {
                Some((l, b)) if *l == limit => b.clone(),
                _ => {
                    let b = Arc::new(
                        RateLimiter::direct(Quota::per_minute(per_minute))
                            .with_middleware::<StateInformationMiddleware>(),
                    );
                    buckets.insert(key.id.clone(), (limit, b.clone()));
                    b
                }
            }
        };
        let Ok(checked) = bucket.check_n(n) else {
            // More than the whole limit: never at once.
            return Err(RateLimited {
                policy: self.scope,
                limit,
                retry_after_secs: WINDOW_SECS,
            });
        };
        match checked {
            Ok(state) => {
                let remaining = state.remaining_burst_capacity().min(limit);
                // The bucket refills one request per replenish interval; counted
                // from whole requests, so at most one interval more than exact.
                let refill = state.quota().replenish_interval() * (limit - remaining);
                Ok(Some(Allowance {
                    policy: self.scope,
                    limit,
                    remaining,
                    reset_secs: whole_seconds(refill),
                }))
            }
            Err(not_until) => Err(RateLimited {
                policy: self.scope,
                limit,
                retry_after_secs: whole_seconds(not_until.wait_time_from(self.clock.now())),
            }),
        }
    }
}

fn whole_seconds(d: Duration) -> u64 {
    (d.as_secs() + u64::from(d.subsec_nanos() > 0)).max(1)
}

/// A refused request's envelope: `rate_limited` with its `Retry-After`.
impl From<RateLimited> for ApiError {
    fn from(e: RateLimited) -> Self {
        let mut err = ApiError::new(ErrorCode::RateLimited, e.to_string());
        err.retry_after = Some(e.retry_after_secs);
        err
    }
}

/// A count that could not be made answers `database_unavailable`.
impl From<RateRefused> for ApiError {
    fn from(e: RateRefused) -> Self {
        match e {
            RateRefused::Limited(e) => e.into(),
            RateRefused::Unavailable(detail) => unavailable(detail),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(limit: Option<u32>) -> KeyRecord {
        KeyRecord {
            id: "k".into(),
            account_id: "a".into(),
            name: "n".into(),
            token_prefix: "p".into(),
            expires_on: None,
            platforms: None,
            created_at: 0,
            rotated_at: None,
            rate_limit_per_minute: limit,
            delivery: None,
        }
    }

    #[test]
    fn bucket_holds_the_limit_then_refuses_with_a_wait() {
        let limits = RateLimits::new(None, "parse");
        let k = key(Some(3));
        for _ in 0..3 {
            limits.check_local(&k, None).unwrap();
        }
        let refused = limits.check_local(&k, None).unwrap_err();
        assert_eq!(refused.limit, 3);
        // One request refills every 20 s.
        assert!((1..=20).contains(&refused.retry_after_secs), "{refused:?}");
        assert_eq!(refused.allowance().remaining, 0);
        assert_eq!(refused.allowance().reset_secs, refused.retry_after_secs);
        // A changed limit is a fresh bucket.
        limits.check_local(&key(Some(4)), None).unwrap();
        // Unlimited never refuses.
        for _ in 0..1000 {
            limits.check_local(&key(Some(0)), None).unwrap();
        }
    }

    #[test]
    fn each_request_takes_one_from_what_is_left() {
        let limits = RateLimits::new(None, "parse");
        let k = key(Some(3));
        let left: Vec<(u32, u64)> = (0..3)
            .map(|_| {
                let a = limits.check_local(&k, None).unwrap().unwrap();
                assert_eq!((a.policy, a.limit), ("parse", 3));
                (a.remaining, a.reset_secs)
            })
            .collect();
        assert_eq!(
            left.iter().map(|l| l.0).collect::<Vec<_>>(),
            [2, 1, 0],
            "{left:?}"
        );
        // One request refills every 20 s: the whole limit in 20, 40, 60 s.
        assert!((1..=20).contains(&left[0].1), "{left:?}");
        assert!((41..=60).contains(&left[2].1), "{left:?}");
        // Unlimited keys have nothing to say.
        assert_eq!(limits.check_local(&key(Some(0)), None).unwrap(), None);
    }

    #[test]
    fn key_then_flag_then_config_then_builtin() {
        let k = key(None);
        assert_eq!(
            RateLimits::new(None, "parse").limit_for(&k, None),
            DEFAULT_PER_MINUTE
        );
        assert_eq!(RateLimits::new(None, "parse").limit_for(&k, Some(7)), 7);
        assert_eq!(RateLimits::new(Some(9), "parse").limit_for(&k, Some(7)), 9);
        assert_eq!(
            RateLimits::new(Some(9), "parse").limit_for(&key(Some(2)), Some(7)),
            2
        );
    }

    #[tokio::test]
    async fn a_shared_limit_fails_closed_when_the_database_fails() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let store = Store::open(&path).unwrap();
        let limits = RateLimits::shared(None, store, "parse");
        let k = key(Some(5));
        let first = limits.check(&k, None).await.unwrap().unwrap();
        let second = limits.check(&k, None).await.unwrap().unwrap();
        assert_eq!((first.policy, first.limit), ("parse", 5));
        assert!((1..=WINDOW_SECS).contains(&first.reset_secs), "{first:?}");
        // The count is per minute: a new minute between the two starts over.
        let new_minute = second.reset_secs > first.reset_secs;
        let expected = if new_minute { (4, 4) } else { (4, 3) };
        assert_eq!((first.remaining, second.remaining), expected, "{second:?}");
        // The counts' table is gone: every count fails.
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch("DROP TABLE rate_buckets")
            .unwrap();
        match limits.check(&k, None).await {
            Err(RateRefused::Unavailable(_)) => {}
            other => panic!("a failed count must refuse, got {other:?}"),
        }
        // Unlimited keys do not need the count.
        limits.check(&key(Some(0)), None).await.unwrap();
    }

    #[test]
    fn retry_after_rounds_up() {
        assert_eq!(whole_seconds(Duration::from_millis(1)), 1);
        assert_eq!(whole_seconds(Duration::from_millis(1001)), 2);
        assert_eq!(whole_seconds(Duration::ZERO), 1);
    }
}
