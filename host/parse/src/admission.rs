//! Admission control: at most `max_in_flight` parses at once overall and
//! `max_per_account` per account; a parse beyond either waits in a bounded
//! queue for at most `max_wait`, then answers `503 overloaded`. The overall
//! bound stays below the instance pool, so a busy service never reaches the
//! pool's end (where instantiation fails with `500 extractor_failed`).
//!
//! A slot is released when its parse ends: the parse's guest calls run
//! inside it (`guest.rs`), so a parse that timed out has no guest left running.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::ParseError;

/// The bounds; see the module documentation.
#[derive(Clone, Copy, Debug)]
pub struct AdmissionLimits {
    pub max_in_flight: usize,
    pub max_per_account: usize,
    /// Parses waiting for a slot at most; past it a parse is refused at once.
    pub max_queued: usize,
    pub max_wait: Duration,
}

/// Instances the runtime's pool holds (`registry::runtime`); admission keeps
/// the parses in flight below it.
pub const INSTANCE_POOL: usize = 1000;

impl Default for AdmissionLimits {
    fn default() -> Self {
        AdmissionLimits {
            max_in_flight: 256,
            max_per_account: 64,
            max_queued: 1024,
            max_wait: Duration::from_secs(2),
        }
    }
}

pub struct Admission {
    limits: AdmissionLimits,
    overall: Arc<Semaphore>,
    accounts: Mutex<HashMap<String, Arc<Semaphore>>>,
    queued: AtomicUsize,
}

/// A parse's admission; dropping it frees its places.
pub struct Slot {
    _account: OwnedSemaphorePermit,
    _overall: OwnedSemaphorePermit,
}

impl Slot {
    /// Run `parse` holding `slot`.
    pub async fn hold<T>(slot: Slot, parse: impl Future<Output = T>) -> T {
        let out = parse.await;
        drop(slot);
        out
    }
}

impl Admission {
    pub fn new(limits: AdmissionLimits) -> Admission {
        let max_in_flight = limits.max_in_flight.clamp(1, INSTANCE_POOL);
        Admission {
            limits: AdmissionLimits {
                max_in_flight,
                max_per_account: limits.max_per_account.max(1),
                ..limits
            },
            overall: Arc::new(Semaphore::new(max_in_flight)),
            accounts: Mutex::new(HashMap::new()),
            queued: AtomicUsize::new(0),
        }
    }

    pub fn limits(&self) -> AdmissionLimits {
        self.limits
    }

    /// Parses in flight now (the `/metrics` gauge and tests).
    pub fn in_flight(&self) -> usize {
        self.limits.max_in_flight - self.overall.available_permits()
    }

    /// A slot for a parse by `account`, after a wait of at most `max_wait`
    /// in the queue, or `ParseError::Overloaded`.
    pub async fn admit(&self, account: &str) -> Result<Slot, ParseError> {
        let account_places = self.account(account);
        if let (Ok(a), Ok(o)) = (
            account_places.clone().try_acquire_owned(),
            self.overall.clone().try_acquire_owned(),
        ) {
            return Ok(Slot {
                _account: a,
                _overall: o,
            });
        }
        if self.queued.fetch_add(1, Ordering::AcqRel) >= self.limits.max_queued {
            self.queued.fetch_sub(1, Ordering::AcqRel);
            return Err(ParseError::Overloaded("the wait queue is full".into()));
        }
        let waited = tokio::time::timeout(self.limits.max_wait, async {
            // Account first: one busy account does not hold overall places.
            let a = account_places.acquire_owned().await;
            let o = self.overall.clone().acquire_owned().await;
            (a, o)
        })
        .await;
        self.queued.fetch_sub(1, Ordering::AcqRel);
        match waited {
            Ok((Ok(a), Ok(o))) => Ok(Slot {
                _account: a,
                _overall: o,
            }),
            Ok(_) => Err(ParseError::Internal("admission semaphore closed".into())),
            Err(_) => Err(ParseError::Overloaded(format!(
                "no parse slot freed within {} ms",
                self.limits.max_wait.as_millis()
            ))),
        }
    }

    fn account(&self, account: &str) -> Arc<Semaphore> {
        let mut accounts = match self.accounts.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        // Forget idle accounts now and then so the map stays as small as the
        // set of accounts with parses in flight.
        if accounts.len() > 4 * self.limits.max_in_flight {
            let full = self.limits.max_per_account;
            accounts.retain(|_, s| s.available_permits() < full || Arc::strong_count(s) > 1);
        }
        accounts
            .entry(account.to_string())
            .or_insert_with(|| Arc::new(Semaphore::new(self.limits.max_per_account)))
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admission(in_flight: usize, per_account: usize, queued: usize) -> Admission {
        admission_waiting(in_flight, per_account, queued, Duration::from_millis(50))
    }

    fn admission_waiting(
        in_flight: usize,
        per_account: usize,
        queued: usize,
        max_wait: Duration,
    ) -> Admission {
        Admission::new(AdmissionLimits {
            max_in_flight: in_flight,
            max_per_account: per_account,
            max_queued: queued,
            max_wait,
        })
    }

    /// Longer than any test runs: a test that waited this long would hang,
    /// so one that passes did not wait for it.
    const FOREVER: Duration = Duration::from_secs(3600);

    #[tokio::test]
    async fn bounds_in_flight_overall_and_per_account() {
        let a = admission(3, 2, 10);
        let _a1 = a.admit("a").await.unwrap();
        let _a2 = a.admit("a").await.unwrap();
        // Account `a` is full; `b` still gets the last overall place.
        assert!(matches!(a.admit("a").await, Err(ParseError::Overloaded(_))));
        let _b1 = a.admit("b").await.unwrap();
        assert!(matches!(a.admit("c").await, Err(ParseError::Overloaded(_))));
        assert_eq!(a.in_flight(), 3);
    }

    #[tokio::test]
    async fn a_waiting_parse_gets_a_freed_slot() {
        let a = admission_waiting(1, 1, 10, FOREVER);
        let first = a.admit("a").await.unwrap();
        let mut second = std::pin::pin!(a.admit("a"));
        assert!(
            futures::poll!(second.as_mut()).is_pending(),
            "the second parse waits while the first holds the slot"
        );
        drop(first);
        assert!(second.await.is_ok());
    }

    /// Refused on the first poll: no timer, no clock, no margin.
    #[tokio::test]
    async fn a_full_queue_refuses_at_once() {
        let a = admission_waiting(1, 1, 0, FOREVER);
        let _first = a.admit("a").await.unwrap();
        let refused = futures::FutureExt::now_or_never(a.admit("b"));
        assert!(
            matches!(&refused, Some(Err(ParseError::Overloaded(m))) if m.contains("queue is full")),
            "{:?}",
            refused.map(|r| r.err())
        );
    }
}
