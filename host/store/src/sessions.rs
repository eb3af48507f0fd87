//! Console sessions: a random token in an HttpOnly cookie, stored here only
//! as its hex SHA-256, with the session's CSRF token and its times. A
//! session belongs to a user, or to the operator (signed in with the
//! operator token). Expiry (idle and absolute) is the caller's rule: it
//! passes the cut-off times.

use crate::{Backend, Store, StoreResult, dispatch, dispatch_tx, sqlite};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRecord {
    pub token_hash: String,
    /// `None` for an operator session.
    pub user_id: Option<String>,
    pub operator: bool,
    pub csrf: String,
    pub created_at: i64,
    pub last_seen_at: i64,
}

impl Store {
    pub fn create_session(&self, session: &SessionRecord) -> StoreResult<()> {
        dispatch!(
            self,
            |c| sqlite::sessions::create_session(c, session),
            |p| p.create_session(session)
        )
    }

    /// The session of `token_hash` if it was created after `created_after`
    /// and seen after `seen_after`; a live one is marked seen at `now`, an
    /// expired one is deleted.
    pub fn live_session(
        &self,
        token_hash: &str,
        created_after: i64,
        seen_after: i64,
        now: i64,
    ) -> StoreResult<Option<SessionRecord>> {
        dispatch_tx!(
            self,
            |c| sqlite::sessions::live_session(c, token_hash, created_after, seen_after, now),
            |p| p.live_session(token_hash, created_after, seen_after, now)
        )
    }

    pub fn delete_session(&self, token_hash: &str) -> StoreResult<()> {
        dispatch!(
            self,
            |c| sqlite::sessions::delete_session(c, token_hash),
            |p| p.delete_session(token_hash)
        )
    }

    /// Sign out everywhere: every session of the user (or, for `None`, every
    /// operator session). Returns how many ended.
    pub fn delete_sessions_of(&self, user_id: Option<&str>) -> StoreResult<usize> {
        dispatch!(
            self,
            |c| sqlite::sessions::delete_sessions_of(c, user_id),
            |p| p.delete_sessions_of(user_id)
        )
    }

    /// Forget sessions that can no longer be used.
    pub fn prune_sessions(&self, created_after: i64, seen_after: i64) -> StoreResult<usize> {
        dispatch!(
            self,
            |c| sqlite::sessions::prune_sessions(c, created_after, seen_after),
            |p| p.prune_sessions(created_after, seen_after)
        )
    }
}

/// The awaited twins of the session calls (see `awaited`).
impl Store {
    /// [`Store::create_session`], awaited.
    pub async fn create_session_async(&self, session: &SessionRecord) -> StoreResult<()> {
        let (a, b) = (session.clone(), session.clone());
        self.write_or_off_thread(
            move |c| sqlite::sessions::create_session(c, &a),
            move |s| s.create_session(&b),
        )
        .await
    }

    /// [`Store::live_session`], awaited.
    pub async fn live_session_async(
        &self,
        token_hash: &str,
        created_after: i64,
        seen_after: i64,
        now: i64,
    ) -> StoreResult<Option<SessionRecord>> {
        let (a, b) = (token_hash.to_string(), token_hash.to_string());
        self.write_or_off_thread(
            move |c| sqlite::sessions::live_session(c, &a, created_after, seen_after, now),
            move |s| s.live_session(&b, created_after, seen_after, now),
        )
        .await
    }

    /// [`Store::delete_session`], awaited.
    pub async fn delete_session_async(&self, token_hash: &str) -> StoreResult<()> {
        let (a, b) = (token_hash.to_string(), token_hash.to_string());
        self.write_or_off_thread(
            move |c| sqlite::sessions::delete_session(c, &a),
            move |s| s.delete_session(&b),
        )
        .await
    }

    /// [`Store::delete_sessions_of`], awaited.
    pub async fn delete_sessions_of_async(&self, user_id: Option<&str>) -> StoreResult<usize> {
        let (a, b) = (user_id.map(str::to_string), user_id.map(str::to_string));
        self.write_or_off_thread(
            move |c| sqlite::sessions::delete_sessions_of(c, a.as_deref()),
            move |s| s.delete_sessions_of(b.as_deref()),
        )
        .await
    }

    /// [`Store::prune_sessions`], awaited.
    pub async fn prune_sessions_async(
        &self,
        created_after: i64,
        seen_after: i64,
    ) -> StoreResult<usize> {
        self.write_or_off_thread(
            move |c| sqlite::sessions::prune_sessions(c, created_after, seen_after),
            move |s| s.prune_sessions(created_after, seen_after),
        )
        .await
    }
}
