//! Meta sites are read by a cascade of strategies (GraphQL, the post page,
//! the embed page) on the SDK's [`Cascade`]: a strategy first asks for its
//! request, then judges the answer: the post ([`found`]), a miss the next
//! strategy may get past ([`miss`]), or a final failure ([`stop`]: the post
//! is gone, or gated). The same kind of failure may be either: a GraphQL
//! "gated" null is a final login-required, a login-wall redirect of the
//! page is not.
//!
//! When every strategy missed, Meta's own ranking ([`rank`]) picks the
//! failure: a post that is gone or gated says more than a rate limit (Meta
//! rate-limits anonymous reads so often that a later strategy's "deleted"
//! is the better answer).
//!
//! ```
//! use mediaparse_meta_web::cascade::{Next, miss, rank, strategy};
//! use mediaparse_sdk::cascade::Cascade;
//! use mediaparse_sdk::{Failure, HttpRequest};
//!
//! // Nothing fetched yet: the first strategy asks for its request.
//! let next = Cascade::new()
//!     .attempt(|| strategy(None, || HttpRequest::get("https://x.test/a"), |_| miss::<u8>(Failure::changed("?"))))
//!     .finish_ranked(rank);
//! assert!(matches!(next, Ok(Next::Fetch(r)) if r[0].url == "https://x.test/a"));
//!
//! // Both missed: "deleted" tells more than "rate limited".
//! let failure = Cascade::<Next<u8>>::new()
//!     .attempt(|| miss(Failure::RateLimited("429".into())))
//!     .attempt(|| miss(Failure::unavailable("deleted")))
//!     .finish_ranked(rank);
//! assert!(matches!(failure, Err(Failure::Unavailable(_))));
//! ```

use mediaparse_sdk::cascade::Attempt;
pub use mediaparse_sdk::cascade::Cascade;
use mediaparse_sdk::{Exchange, Extraction, Failure, HttpRequest, Result, Step};

/// A judge's verdict on one answer.
pub type Judged<T> = Result<Attempt<T>>;

/// The answer holds the post.
pub fn found<T>(post: T) -> Judged<T> {
    Ok(Attempt::Got(post))
}

/// A failure the next strategy may get past.
pub fn miss<T>(failure: Failure) -> Judged<T> {
    Ok(Attempt::Missed(failure))
}

/// A failure that ends the cascade.
pub fn stop<T>(failure: Failure) -> Judged<T> {
    Err(failure)
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

/// One strategy: its request while `answer` is not fetched, else the
/// judge's verdict on it.
pub fn strategy<T>(
    answer: Option<&Exchange>,
    request: impl FnOnce() -> HttpRequest,
    judge: impl FnOnce(&Exchange) -> Judged<T>,
) -> Judged<Next<T>> {
    let Some(answer) = answer else {
        return found(Next::Fetch(vec![request()]));
    };
    Ok(match judge(answer)? {
        Attempt::Got(post) => Attempt::Got(Next::Found(post)),
        Attempt::Missed(failure) => Attempt::Missed(failure),
    })
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
