//! Credit holds: credits set aside for parses about to run (a batch's
//! items, reserved in item order before any of them runs), so the answer
//! does not depend on which item finishes first.
//!
//! A hold moves its credits out of the balance into a `credit_holds` row, in
//! the transaction that checks the balance covers them. Each hold then ends
//! exactly once, in one transaction: turned into the charge
//! ([`Store::charge_held_async`]: the row is deleted, its credits go back to
//! the balance, and the ordinary charge at most once per ledger id takes the
//! price from it), or released ([`Store::release_hold_async`]: deleted, its
//! credits given back). A hold whose parse never settled it (the process
//! died) expires: [`Store::release_expired_holds`] gives its credits back,
//! and a charge that finds its hold gone is the ordinary conditional charge.
//! So at every commit `Σ credit_grants − Σ ledger − Σ credit_holds = balance`.

use crate::sqlite::writer::Work;
use crate::{Backend, Bill, Charge, Store, StoreError, StoreResult, dispatch, sqlite};

/// One hold to take: its id (unique) and the credits it sets aside (> 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HoldRequest {
    pub id: String,
    pub credits: i64,
}

/// How one hold of a reservation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reserved {
    Held,
    /// The balance (after the earlier holds) did not cover it.
    Short {
        balance: i64,
    },
}

impl Store {
    /// Take `holds` of `account` in order, in one transaction: each hold the
    /// balance left by the earlier ones covers is taken, each other one is
    /// `Short` (a later, smaller one may still be taken).
    pub async fn reserve_credits_async(
        &self,
        account: &str,
        holds: &[HoldRequest],
        expires_at: i64,
        now: i64,
    ) -> StoreResult<Vec<Reserved>> {
        for h in holds {
            if h.credits <= 0 || h.id.is_empty() {
                return Err(StoreError::Invalid(format!(
                    "hold {:?} must be of a positive amount",
                    h.id
                )));
            }
        }
        match &self.backend {
            Backend::Sqlite(_) => {
                let (account, holds) = (account.to_string(), holds.to_vec());
                let work: Work<Vec<Reserved>> =
                    Box::new(move |c| sqlite::holds::reserve(c, &account, &holds, expires_at, now));
                self.write_async(work).await
            }
            Backend::Postgres(p) => {
                p.reserve_credits_async(account, holds, expires_at, now)
                    .await
            }
        }
    }

    /// Turn hold `hold` into the charge of `bill` (one transaction): the
    /// hold's credits go back to the balance and the ordinary charge at most
    /// once per `bill.request_id` takes the price. A hold already gone (it
    /// expired, or this charge already landed) leaves the ordinary charge.
    /// Retrying after an unknown outcome is safe.
    pub async fn charge_held_async(
        &self,
        hold: &str,
        bill: &Bill,
        now: i64,
    ) -> StoreResult<Charge> {
        match &self.backend {
            Backend::Sqlite(_) => {
                let (hold, bill) = (hold.to_string(), bill.clone());
                let work: Work<Charge> =
                    Box::new(move |c| sqlite::holds::charge_held(c, &hold, &bill, now));
                self.write_async(work).await
            }
            Backend::Postgres(p) => p.charge_held_async(hold, bill, now).await,
        }
    }

    /// Give hold `hold`'s credits back; `false` if it was already gone
    /// (charged, released or expired).
    pub async fn release_hold_async(&self, hold: &str) -> StoreResult<bool> {
        match &self.backend {
            Backend::Sqlite(_) => {
                let hold = hold.to_string();
                let work: Work<bool> = Box::new(move |c| sqlite::holds::release(c, &hold));
                self.write_async(work).await
            }
            Backend::Postgres(p) => p.release_hold_async(hold).await,
        }
    }

    /// Give back every hold that expired before `now` (its parse never
    /// settled it: the process running it died); how many were released.
    pub fn release_expired_holds(&self, now: i64) -> StoreResult<u64> {
        match &self.backend {
            Backend::Sqlite(_) => self.write(Box::new(move |c: &rusqlite::Connection| {
                sqlite::holds::release_expired(c, now)
            })),
            Backend::Postgres(p) => p.release_expired_holds(now),
        }
    }

    /// Credits held for `account` now (or for every account).
    pub fn held_credits(&self, account: Option<&str>) -> StoreResult<i64> {
        dispatch!(self, |c| sqlite::holds::held_credits(c, account), |p| p
            .held_credits(account))
    }
}
