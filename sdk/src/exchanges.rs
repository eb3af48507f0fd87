//! Finding earlier answers in `done`: extractors are stateless, so each
//! `plan`/`map` call re-reads what was fetched.

use crate::Exchange;

/// Lookups over the exchanges performed so far.
pub trait Exchanges {
    /// The latest exchange whose request URL starts with `prefix`.
    fn last_to(&self, prefix: &str) -> Option<&Exchange>;
    /// The latest exchange whose request URL satisfies `pred`.
    fn last_where(&self, pred: impl Fn(&Exchange) -> bool) -> Option<&Exchange>;
    /// How many requests went to URLs starting with `prefix`.
    fn count_to(&self, prefix: &str) -> usize;
}

impl Exchanges for [Exchange] {
    fn last_to(&self, prefix: &str) -> Option<&Exchange> {
        self.iter()
            .rev()
            .find(|e| e.request.url.starts_with(prefix))
    }

    fn last_where(&self, pred: impl Fn(&Exchange) -> bool) -> Option<&Exchange> {
        self.iter().rev().find(|e| pred(e))
    }

    fn count_to(&self, prefix: &str) -> usize {
        self.iter()
            .filter(|e| e.request.url.starts_with(prefix))
            .count()
    }
}
