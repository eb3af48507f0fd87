//! Fallback strategies: try ways of getting a post in order, moving on
//! only on the failures a later way can get past (an anti-bot page, an
//! empty answer), and report the most telling failure when all fail.
//!
//! A strategy answers `Ok(Attempt::Got(x))` (done, or still fetching: in a
//! flow `x` is a [`crate::Step`]), `Ok(Attempt::Missed(failure))` (try the
//! next one) or `Err(failure)` (final: a later strategy cannot help, e.g.
//! the post is private). In a flow the cascade is re-run on every call: a
//! strategy that missed misses again from the same `done`, so the cascade
//! reaches the strategy still fetching, or the first that finished.
//!
//! ```
//! use mediaparse_sdk::cascade::{Attempt, Cascade};
//! use mediaparse_sdk::Failure;
//!
//! let result = Cascade::new()
//!     .attempt(|| Ok(Attempt::<&str>::Missed(Failure::changed("no data in page"))))
//!     .attempt(|| Ok(Attempt::Missed(Failure::RateLimited("challenge page".into()))))
//!     .attempt_if(false, || Ok(Attempt::Got("the app API is not configured, so never tried")))
//!     .finish();
//! // Both missed: being blocked says more than a shape change.
//! assert_eq!(result, Err(Failure::RateLimited("challenge page".into())));
//!
//! let stops = Cascade::new()
//!     .attempt(|| Err::<Attempt<&str>, _>(Failure::unavailable("private")))
//!     .attempt(|| Ok(Attempt::Got("never reached")))
//!     .finish();
//! assert_eq!(stops, Err(Failure::unavailable("private")));
//!
//! // A plain result, moving on only on some failures:
//! let page: mediaparse_sdk::Result<&str> = Err(Failure::RateLimited("waf".into()));
//! let attempt = Attempt::moving_on(page, |f| matches!(f, Failure::RateLimited(_)));
//! assert!(matches!(attempt, Ok(Attempt::Missed(_))));
//! ```

use crate::{Failure, Result};

/// What one strategy made of the post.
#[derive(Clone, Debug, PartialEq)]
pub enum Attempt<T> {
    /// It got (or is getting) the post: the cascade stops here.
    Got(T),
    /// It missed for a reason a later strategy may get past.
    Missed(Failure),
}

impl<T> Attempt<T> {
    /// A plain result as an attempt: failures for which `moves_on` holds
    /// are misses, any other failure stays final.
    pub fn moving_on(result: Result<T>, moves_on: impl Fn(&Failure) -> bool) -> Result<Self> {
        match result {
            Ok(x) => Ok(Attempt::Got(x)),
            Err(f) if moves_on(&f) => Ok(Attempt::Missed(f)),
            Err(f) => Err(f),
        }
    }
}

/// A cascade under way: settled once a strategy got the post or failed
/// finally.
#[must_use = "a cascade does nothing until finish()"]
pub struct Cascade<T> {
    settled: Option<Result<T>>,
    misses: Vec<Failure>,
}

impl<T> Default for Cascade<T> {
    fn default() -> Self {
        Cascade::new()
    }
}

impl<T> Cascade<T> {
    /// An empty cascade.
    pub fn new() -> Self {
        Cascade {
            settled: None,
            misses: Vec::new(),
        }
    }

    /// Try `strategy` unless an earlier one settled the cascade.
    pub fn attempt(self, strategy: impl FnOnce() -> Result<Attempt<T>>) -> Self {
        self.attempt_if(true, strategy)
    }

    /// As [`Cascade::attempt`], only when `applies` (an optional strategy).
    pub fn attempt_if(
        mut self,
        applies: bool,
        strategy: impl FnOnce() -> Result<Attempt<T>>,
    ) -> Self {
        if self.settled.is_some() || !applies {
            return self;
        }
        match strategy() {
            Ok(Attempt::Got(x)) => self.settled = Some(Ok(x)),
            Ok(Attempt::Missed(failure)) => self.misses.push(failure),
            Err(failure) => self.settled = Some(Err(failure)),
        }
        self
    }

    /// The misses so far, in order.
    pub fn misses(&self) -> &[Failure] {
        &self.misses
    }

    /// The strategy that settled, or when every one missed the most
    /// telling miss ([`telling`]; the earliest wins a tie).
    pub fn finish(self) -> Result<T> {
        self.finish_ranked(telling)
    }

    /// The strategy that settled, or when every one missed the last miss
    /// (for fallbacks whose own answer is the one to report).
    pub fn finish_last(self) -> Result<T> {
        match self.settled {
            Some(result) => result,
            None => Err(self
                .misses
                .into_iter()
                .next_back()
                .unwrap_or_else(|| Failure::changed("no strategy applied to this post"))),
        }
    }

    /// As [`Cascade::finish`] with the platform's own ranking (higher tells more).
    pub fn finish_ranked(self, rank: impl Fn(&Failure) -> u8) -> Result<T> {
        match self.settled {
            Some(result) => result,
            None => Err(most_telling(self.misses, rank)
                .unwrap_or_else(|| Failure::changed("no strategy applied to this post"))),
        }
    }
}

/// The highest-ranked failure (the earliest on a tie); `None` when empty.
pub fn most_telling(
    failures: impl IntoIterator<Item = Failure>,
    rank: impl Fn(&Failure) -> u8,
) -> Option<Failure> {
    let mut best: Option<Failure> = None;
    for failure in failures {
        if best.as_ref().is_none_or(|b| rank(&failure) > rank(b)) {
            best = Some(failure);
        }
    }
    best
}

/// How much a miss tells the caller when every strategy missed: being
/// blocked (the others may have been blocked too, in disguise) beats
/// "log in", which beats "not there", then an upstream error, a shape
/// change and an unsupported URL.
pub fn telling(failure: &Failure) -> u8 {
    match failure {
        Failure::RateLimited(_) => 5,
        Failure::LoginRequired(_) => 4,
        Failure::Unavailable(_) => 3,
        Failure::UpstreamError(_) => 2,
        Failure::UpstreamChanged(_) => 1,
        Failure::UnsupportedUrl(_) => 0,
    }
}
