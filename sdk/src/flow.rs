//! Extractors as flows: one `step` function says what to do next given
//! everything fetched so far, and the WIT `plan`/`map` calls are derived
//! from it ([`plan_of`], [`map_of`]), so an extractor describes its rounds
//! once instead of re-deriving a private state in both calls.
//!
//! ```
//! use mediaparse_sdk::exchanges::Exchanges;
//! use mediaparse_sdk::flow::{Step, map_of, plan_of};
//! use mediaparse_sdk::*;
//!
//! fn step(done: &[Exchange]) -> Result<Step> {
//!     match done.last_to("https://api.example.com/") {
//!         None => Ok(Step::one(HttpRequest::get("https://api.example.com/v/1"))),
//!         Some(e) => Ok(Step::Done(Extraction { media: Media::default(), platform_data: e.response.json()? })),
//!     }
//! }
//! assert!(matches!(plan_of(step(&[])), Ok(Plan::Fetch(r)) if r.len() == 1));
//! assert!(map_of(step(&[])).is_err()); // mapping before the answer arrived is a failure
//! ```

use crate::{Extraction, Failure, HttpRequest, Memo, Plan, Result};

/// What an extractor does next, given everything fetched so far.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Perform these requests (concurrently) and call again with their
    /// exchanges appended to `done`.
    Fetch(Vec<HttpRequest>),
    /// Finished: the media and platform data.
    Done(Extraction),
}

impl Step {
    /// A round of exactly one request.
    pub fn one(request: HttpRequest) -> Step {
        Step::Fetch(vec![request])
    }
}

/// A step and the values the extractor asks the host to remember (the WIT
/// 1.1 `step` answer).
#[derive(Clone, Debug, PartialEq)]
pub struct Stepped {
    /// What to do next.
    pub next: Step,
    /// Values for the host to remember for this platform.
    pub remember: Vec<Memo>,
}

impl From<Step> for Stepped {
    fn from(next: Step) -> Stepped {
        Stepped {
            next,
            remember: Vec::new(),
        }
    }
}

/// The WIT `plan` answer of a step: more requests, or ready to map.
pub fn plan_of(step: Result<Step>) -> Result<Plan> {
    Ok(match step? {
        Step::Fetch(requests) => Plan::Fetch(requests),
        Step::Done(_) => Plan::Ready,
    })
}

/// The WIT `map` answer of a step: the finished extraction. A flow that
/// still wants requests when the host asks it to map is a broken contract,
/// reported as an upstream change rather than a trap.
pub fn map_of(step: Result<Step>) -> Result<Extraction> {
    match step? {
        Step::Done(extraction) => Ok(extraction),
        Step::Fetch(_) => Err(Failure::changed(
            "map was called while the flow still wanted requests",
        )),
    }
}
