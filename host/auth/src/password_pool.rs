//! Where password hashing runs: argon2id costs tens of milliseconds of CPU
//! and 19 MiB of memory per call, so it never runs on an async worker and
//! never more than a few at once. A hash takes a permit of a small
//! semaphore and runs on a blocking thread that keeps the permit until the
//! hash is done (even if the client went away); with every permit taken
//! the caller is told to come back ([`PoolBusy`], a `503` with `Retry-After`).
//!
//! The pool also knows how long a verification takes (a running average),
//! so a sign-in for an unknown e-mail can take as long without hashing.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

/// Why a hash did not run: every permit taken (retry after
/// [`RETRY_AFTER_S`]), or the blocking task failed.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    #[error("too many password checks in flight")]
    Busy,
    #[error("password check failed: {0}")]
    Join(#[from] tokio::task::JoinError),
}

/// Seconds a client refused with [`PoolError::Busy`] is told to wait.
pub const RETRY_AFTER_S: u64 = 1;

pub struct PasswordPool {
    permits: Arc<Semaphore>,
    /// Running average of one verification, in microseconds (0: not known yet).
    verify_us: Arc<AtomicU64>,
}

impl PasswordPool {
    /// At most `max_in_flight` hashes at once (at least one).
    pub fn new(max_in_flight: usize) -> PasswordPool {
        PasswordPool {
            permits: Arc::new(Semaphore::new(max_in_flight.max(1))),
            verify_us: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The default bound: half the machine's cores, at least one, so
    /// hashing never takes every core from the request workers.
    pub fn default_size() -> usize {
        std::thread::available_parallelism()
            .map(|n| n.get() / 2)
            .unwrap_or(1)
            .max(1)
    }

    /// Measure one verification now (on a blocking thread), so the first
    /// unknown-e-mail sign-in already has a duration to match.
    pub fn calibrate(&self, verify: impl FnOnce() + Send + 'static) {
        let verify_us = self.verify_us.clone();
        // Blocks: argon2id is CPU work (not a store call).
        std::mem::drop(tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            verify();
            record(&verify_us, started.elapsed());
        }));
    }

    /// Run `work` (a hash or a verification) on a blocking thread under a
    /// permit; `Busy` at once when every permit is taken.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, PoolError> {
        let permit = self
            .permits
            .clone()
            .try_acquire_owned()
            .map_err(|_| PoolError::Busy)?;
        // Blocks: argon2id is CPU work (not a store call), one per permit.
        Ok(tokio::task::spawn_blocking(move || {
            let answer = work();
            drop(permit);
            answer
        })
        .await?)
    }

    /// Verify a password under a permit and remember how long it took.
    pub async fn verify(
        &self,
        verify: impl FnOnce() -> bool + Send + 'static,
    ) -> Result<bool, PoolError> {
        let verify_us = self.verify_us.clone();
        self.run(move || {
            let started = Instant::now();
            let ok = verify();
            record(&verify_us, started.elapsed());
            ok
        })
        .await
    }

    /// Every permit is taken (a hash would be refused now).
    pub fn is_full(&self) -> bool {
        self.permits.available_permits() == 0
    }

    /// Take as long as a verification does (±10 %), without using a core:
    /// what a sign-in for an unknown e-mail does instead of hashing.
    pub async fn pretend_verify(&self) {
        let us = self.verify_us.load(Ordering::Relaxed);
        let jitter = 0.9 + rand::random::<f64>() * 0.2;
        // Truncation is fine: microseconds of a sleep.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let us = (us as f64 * jitter) as u64;
        tokio::time::sleep(Duration::from_micros(us)).await;
    }

    /// The current estimate of one verification.
    pub fn verify_estimate(&self) -> Duration {
        Duration::from_micros(self.verify_us.load(Ordering::Relaxed))
    }
}

/// Fold one measured verification into the running average (weight 1/8).
fn record(verify_us: &AtomicU64, took: Duration) {
    let sample = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
    let _ = verify_us.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
        Some(if old == 0 {
            sample
        } else {
            old - old / 8 + sample / 8
        })
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn beyond_the_cap_work_is_refused_not_queued() {
        let pool = Arc::new(PasswordPool::new(1));
        let (started_tx, started_rx) = tokio::sync::oneshot::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let first = {
            let pool = pool.clone();
            tokio::spawn(async move {
                pool.run(move || {
                    let _ = started_tx.send(());
                    let _ = release_rx.recv();
                    1
                })
                .await
            })
        };
        started_rx.await.unwrap();
        assert!(pool.is_full());
        assert!(matches!(pool.run(|| 2).await, Err(PoolError::Busy)));
        release_tx.send(()).unwrap();
        assert_eq!(first.await.unwrap().unwrap(), 1);
        assert_eq!(pool.run(|| 3).await.unwrap(), 3);
    }

    #[tokio::test]
    async fn verifications_are_timed_for_the_pretence() {
        let pool = PasswordPool::new(2);
        assert_eq!(pool.verify_estimate(), Duration::ZERO);
        let ok = pool
            .verify(|| {
                std::thread::sleep(Duration::from_millis(20));
                true
            })
            .await
            .unwrap();
        assert!(ok);
        assert!(pool.verify_estimate() >= Duration::from_millis(20));
        let started = Instant::now();
        pool.pretend_verify().await;
        assert!(started.elapsed() >= Duration::from_millis(17));
    }
}
