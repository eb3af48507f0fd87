//! Finding earlier answers in `done`: extractors are stateless, so each
//! call re-reads what was fetched.
//!
//! ```
//! use mediaparse_sdk::exchanges::Exchanges;
//! use mediaparse_sdk::*;
//! let answer = |url: &str, status: u16, body: &str| Exchange {
//!     request: HttpRequest::get(url),
//!     response: HttpResponse { request_url: url.into(), final_url: url.into(), status, headers: vec![], body: body.into() },
//! };
//! let done = vec![answer("https://api.example.com/v/1", 200, r#"{"ok":true}"#), answer("https://cdn.example.com/x", 429, "")];
//! assert!(done.last_at("https://api.example.com/v/1").is_some());
//! assert!(done.last_to_host("*.example.com").is_some_and(|e| e.response.status == 429));
//! let ok: serde_json::Value = done.json_to("https://api.example.com/", "the video API").unwrap();
//! assert_eq!(ok["ok"], true);
//! assert!(matches!(done.answer_to("https://cdn.example.com/", "the CDN"), Err(Failure::RateLimited(_))));
//! assert!(matches!(done.answer_to("https://other.example.com/", "x"), Err(Failure::UpstreamChanged(_))));
//! ```

use crate::urls::host_matches;
use crate::{Exchange, Failure, HttpResponse, Result};

/// Lookups over the exchanges performed so far.
pub trait Exchanges {
    /// The latest exchange whose request URL starts with `prefix`.
    fn last_to(&self, prefix: &str) -> Option<&Exchange>;
    /// The latest exchange whose request URL is exactly `url`.
    fn last_at(&self, url: &str) -> Option<&Exchange>;
    /// The latest exchange to a host matching `pattern` (`*.example.com` style).
    fn last_to_host(&self, pattern: &str) -> Option<&Exchange>;
    /// The latest exchange whose request URL satisfies `pred`.
    fn last_where(&self, pred: impl Fn(&Exchange) -> bool) -> Option<&Exchange>;
    /// How many requests went to URLs starting with `prefix`.
    fn count_to(&self, prefix: &str) -> usize;
    /// The latest answer from `prefix`, required to be a success
    /// ([`checked`]); `what` names the endpoint in failures.
    fn answer_to(&self, prefix: &str, what: &str) -> Result<&HttpResponse>;
    /// [`Exchanges::answer_to`]'s body as JSON (a shape we do not know is
    /// an upstream change).
    fn json_to<T: serde::de::DeserializeOwned>(&self, prefix: &str, what: &str) -> Result<T>;
}

impl Exchanges for [Exchange] {
    fn last_to(&self, prefix: &str) -> Option<&Exchange> {
        self.last_where(|e| e.request.url.starts_with(prefix))
    }

    fn last_at(&self, url: &str) -> Option<&Exchange> {
        self.last_where(|e| e.request.url == url)
    }

    fn last_to_host(&self, pattern: &str) -> Option<&Exchange> {
        self.last_where(|e| {
            url::Url::parse(&e.request.url)
                .ok()
                .and_then(|u| u.host_str().map(|h| host_matches(h, pattern)))
                .unwrap_or(false)
        })
    }

    fn last_where(&self, pred: impl Fn(&Exchange) -> bool) -> Option<&Exchange> {
        self.iter().rev().find(|e| pred(e))
    }

    fn count_to(&self, prefix: &str) -> usize {
        self.iter()
            .filter(|e| e.request.url.starts_with(prefix))
            .count()
    }

    fn answer_to(&self, prefix: &str, what: &str) -> Result<&HttpResponse> {
        let exchange = self
            .last_to(prefix)
            .ok_or_else(|| Failure::changed(format!("{what} was never fetched")))?;
        checked(&exchange.response, what)
    }

    fn json_to<T: serde::de::DeserializeOwned>(&self, prefix: &str, what: &str) -> Result<T> {
        self.answer_to(prefix, what)?
            .json()
            .map_err(|e| Failure::changed(format!("{what} answered unexpected JSON: {e}")))
    }
}

/// A 2xx answer as it is; 429 as rate limited; any other status as an
/// upstream error naming `what` and the status.
pub fn checked<'r>(response: &'r HttpResponse, what: &str) -> Result<&'r HttpResponse> {
    match response.status {
        200..=299 => Ok(response),
        429 => Err(Failure::RateLimited(format!("{what} answered 429"))),
        status => Err(Failure::upstream(format!("{what} answered {status}"))),
    }
}
