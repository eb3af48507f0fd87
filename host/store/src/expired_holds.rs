//! The awaited twin of the expired holds' sweep (`holds` has the holds and
//! the blocking sweep, [`Store::release_expired_holds`]).

use crate::{Store, StoreResult, sqlite};

impl Store {
    /// [`Store::release_expired_holds`], awaited.
    pub async fn release_expired_holds_async(&self, now: i64) -> StoreResult<u64> {
        self.write_or_off_thread(
            move |c| sqlite::holds::release_expired(c, now),
            move |s| s.release_expired_holds(now),
        )
        .await
    }
}
