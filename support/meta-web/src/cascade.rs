//! Meta sites are read by a cascade of strategies (GraphQL, the post page,
//! the embed page): each answer either yields the post, ends the cascade
//! (the post is gone, or gated), or misses so the next strategy runs. When
//! all miss, the most telling failure is reported.
//!
//! The ranking is Meta's own (a post that is gone or gated says more than
//! a rate limit: Meta rate-limits anonymous reads so often that a later
//! strategy's "deleted" is the better answer); the pick is the SDK's
//! [`most_telling`].

use mediaparse_sdk::cascade::most_telling;
use mediaparse_sdk::{Exchange, Extraction, Failure, HttpRequest, Result, Step};

/// A strategy's failure; `definitive` ones end the cascade.
#[derive(Debug)]
pub struct Miss {
    /// What went wrong.
    pub failure: Failure,
    /// True when no later strategy can do better (deleted, gated).
    pub definitive: bool,
}

/// A failure the next strategy may recover from.
pub fn miss(failure: Failure) -> Miss {
    Miss {
        failure,
        definitive: false,
    }
}

/// A failure that ends the cascade.
pub fn stop(failure: Failure) -> Miss {
    Miss {
        failure,
        definitive: true,
    }
}

/// What the cascade needs next.
#[derive(Debug)]
pub enum Next<T> {
    /// These requests.
    Fetch(Vec<HttpRequest>),
    /// Nothing: here is the post.
    Found(T),
}

impl<T> Next<T> {
    /// The flow step: the requests, or the found post mapped.
    pub fn into_step(self, map: impl FnOnce(T) -> Result<Extraction>) -> Result<Step> {
        Ok(match self {
            Next::Fetch(requests) => Step::Fetch(requests),
            Next::Found(found) => Step::Done(map(found)?),
        })
    }
}

/// The failures of the strategies tried so far.
#[derive(Default)]
pub struct Cascade {
    misses: Vec<Failure>,
}

impl Cascade {
    /// One strategy: its request when `answer` is not fetched yet, else its
    /// evaluation. `Some` ends the flow (a request, the post, or a definitive
    /// failure); `None` means it missed and the next strategy runs.
    ///
    /// ```
    /// use mediaparse_meta_web::cascade::{Cascade, Next, miss};
    /// use mediaparse_sdk::{Failure, HttpRequest};
    /// let mut cascade = Cascade::default();
    /// let fetch = cascade.attempt(None, || HttpRequest::get("https://x.test/a"), |_| Ok(1));
    /// assert!(matches!(fetch, Some(Ok(Next::Fetch(r))) if r[0].url == "https://x.test/a"));
    /// cascade.missed(Failure::upstream("HTTP 500"));
    /// cascade.missed(Failure::unavailable("deleted"));
    /// assert!(matches!(cascade.most_telling(), Failure::Unavailable(_)));
    /// ```
    pub fn attempt<T>(
        &mut self,
        answer: Option<&Exchange>,
        request: impl FnOnce() -> HttpRequest,
        eval: impl FnOnce(&Exchange) -> std::result::Result<T, Miss>,
    ) -> Option<Result<Next<T>>> {
        let Some(answer) = answer else {
            return Some(Ok(Next::Fetch(vec![request()])));
        };
        match eval(answer) {
            Ok(found) => Some(Ok(Next::Found(found))),
            Err(m) if m.definitive => Some(Err(m.failure)),
            Err(m) => {
                self.misses.push(m.failure);
                None
            }
        }
    }

    /// Record a strategy that could not even be tried.
    pub fn missed(&mut self, failure: Failure) {
        self.misses.push(failure);
    }

    /// Of the strategies' failures, the one that says most about the post
    /// (the earliest of equals).
    pub fn most_telling(self) -> Failure {
        most_telling(self.misses, rank)
            .unwrap_or_else(|| Failure::upstream("no strategy produced the post"))
    }
}

/// How much a failure tells about a Meta post (higher tells more).
pub fn rank(failure: &Failure) -> u8 {
    match failure {
        Failure::Unavailable(_) => 5,
        Failure::LoginRequired(_) => 4,
        Failure::RateLimited(_) => 3,
        Failure::UpstreamChanged(_) => 2,
        Failure::UpstreamError(_) => 1,
        Failure::UnsupportedUrl(_) => 0,
    }
}
