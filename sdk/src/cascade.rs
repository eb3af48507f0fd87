//! Fallback strategies: try ways of getting a post in order, moving on
//! only on the failures a later way can get past (an anti-bot page, an
//! empty answer), and report the most telling failure when all fail.
//!
//! In a flow, a strategy is re-run on every call: one that already failed
//! fails again from the same `done`, so the cascade reaches the strategy
//! that is still fetching, or the first that finished.
//!
//! ```
//! use mediaparse_sdk::cascade::Cascade;
//! use mediaparse_sdk::Failure;
//!
//! let result = Cascade::moving_on(|f| matches!(f, Failure::RateLimited(_) | Failure::UpstreamChanged(_)))
//!     .attempt(|| Err::<&str, _>(Failure::RateLimited("challenge page".into())))
//!     .attempt(|| Err(Failure::changed("no data in page")))
//!     .attempt_if(false, || Ok("the app API is not configured, so never tried"))
//!     .finish();
//! // Both failed: the rate limit says more than a shape change.
//! assert_eq!(result, Err(Failure::RateLimited("challenge page".into())));
//!
//! let stops = Cascade::moving_on(|f| matches!(f, Failure::RateLimited(_)))
//!     .attempt(|| Err::<&str, _>(Failure::unavailable("deleted")))
//!     .attempt(|| Ok("never reached"))
//!     .finish();
//! assert_eq!(stops, Err(Failure::unavailable("deleted")));
//! ```

use crate::{Failure, Result};

/// A cascade under way: settled once a strategy succeeds or fails for a
/// reason the next ones cannot help with.
#[must_use = "a cascade does nothing until finish()"]
pub struct Cascade<T, M> {
    settled: Option<Result<T>>,
    moves_on: M,
    failures: Vec<Failure>,
}

impl<T, M: Fn(&Failure) -> bool> Cascade<T, M> {
    /// A cascade that moves to the next strategy when `moves_on` holds for
    /// a failure, and stops with any other failure.
    pub fn moving_on(moves_on: M) -> Self {
        Cascade {
            settled: None,
            moves_on,
            failures: Vec::new(),
        }
    }

    /// Try `strategy` unless an earlier one settled the cascade.
    pub fn attempt(self, strategy: impl FnOnce() -> Result<T>) -> Self {
        self.attempt_if(true, strategy)
    }

    /// As [`Cascade::attempt`], only when `applies` (an optional strategy).
    pub fn attempt_if(mut self, applies: bool, strategy: impl FnOnce() -> Result<T>) -> Self {
        if self.settled.is_some() || !applies {
            return self;
        }
        match strategy() {
            Err(failure) if (self.moves_on)(&failure) => self.failures.push(failure),
            other => self.settled = Some(other),
        }
        self
    }

    /// Failures seen so far from strategies the cascade moved past.
    pub fn failures(&self) -> &[Failure] {
        &self.failures
    }

    /// The first success or stopping failure; when every strategy moved on,
    /// the most telling of their failures ([`telling`]; the earliest wins a
    /// tie).
    pub fn finish(self) -> Result<T> {
        self.finish_ranked(telling)
    }

    /// As [`Cascade::finish`] with the platform's own ranking (higher tells more).
    pub fn finish_ranked(self, rank: impl Fn(&Failure) -> u8) -> Result<T> {
        if let Some(result) = self.settled {
            return result;
        }
        let mut best: Option<Failure> = None;
        for failure in self.failures {
            if best.as_ref().is_none_or(|b| rank(&failure) > rank(b)) {
                best = Some(failure);
            }
        }
        Err(best.unwrap_or_else(|| Failure::changed("no strategy applied to this post")))
    }
}

/// How much a failure tells the caller, when several strategies failed:
/// "it is gone" beats "log in", which beats "we are blocked", which beats
/// an upstream error, a shape change, and an unsupported URL.
pub fn telling(failure: &Failure) -> u8 {
    match failure {
        Failure::Unavailable(_) => 5,
        Failure::LoginRequired(_) => 4,
        Failure::RateLimited(_) => 3,
        Failure::UpstreamError(_) => 2,
        Failure::UpstreamChanged(_) => 1,
        Failure::UnsupportedUrl(_) => 0,
    }
}
