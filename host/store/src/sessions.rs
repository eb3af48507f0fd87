//! Console sessions: a random token in an HttpOnly cookie, stored here only
//! as its hex SHA-256, with the session's CSRF token and its times. A
//! session belongs to a user, or to the operator (signed in with the
//! operator token). Expiry (idle and absolute) is the caller's rule: it
//! passes the cut-off times.

use rusqlite::{OptionalExtension, params};

use super::{Backend, Store, StoreResult, dispatch};

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
            |c| {
                c.execute(
                "INSERT INTO console_sessions (token_hash, user_id, operator, csrf, created_at, last_seen_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    session.token_hash,
                    session.user_id,
                    i64::from(session.operator),
                    session.csrf,
                    session.created_at,
                    session.last_seen_at
                ],
            )?;
                Ok(())
            },
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
        dispatch!(
            self,
            |c| {
                let tx = c.transaction()?;
                let found = tx
                    .query_row(
                        "SELECT token_hash, user_id, operator, csrf, created_at, last_seen_at
                     FROM console_sessions WHERE token_hash = ?1",
                        [token_hash],
                        |r| {
                            Ok(SessionRecord {
                                token_hash: r.get(0)?,
                                user_id: r.get(1)?,
                                operator: r.get::<_, i64>(2)? != 0,
                                csrf: r.get(3)?,
                                created_at: r.get(4)?,
                                last_seen_at: r.get(5)?,
                            })
                        },
                    )
                    .optional()?;
                let live = match found {
                    Some(s) if s.created_at > created_after && s.last_seen_at > seen_after => {
                        tx.execute(
                            "UPDATE console_sessions SET last_seen_at = ?2 WHERE token_hash = ?1",
                            params![token_hash, now],
                        )?;
                        Some(SessionRecord {
                            last_seen_at: now,
                            ..s
                        })
                    }
                    Some(_) => {
                        tx.execute(
                            "DELETE FROM console_sessions WHERE token_hash = ?1",
                            [token_hash],
                        )?;
                        None
                    }
                    None => None,
                };
                tx.commit()?;
                Ok(live)
            },
            |p| p.live_session(token_hash, created_after, seen_after, now)
        )
    }

    pub fn delete_session(&self, token_hash: &str) -> StoreResult<()> {
        dispatch!(
            self,
            |c| {
                c.execute(
                    "DELETE FROM console_sessions WHERE token_hash = ?1",
                    [token_hash],
                )?;
                Ok(())
            },
            |p| p.delete_session(token_hash)
        )
    }

    /// Sign out everywhere: every session of the user (or, for `None`, every
    /// operator session). Returns how many ended.
    pub fn delete_sessions_of(&self, user_id: Option<&str>) -> StoreResult<usize> {
        dispatch!(
            self,
            |c| {
                Ok(match user_id {
                    Some(u) => c.execute("DELETE FROM console_sessions WHERE user_id = ?1", [u])?,
                    None => c.execute("DELETE FROM console_sessions WHERE operator = 1", [])?,
                })
            },
            |p| p.delete_sessions_of(user_id)
        )
    }

    /// Forget sessions that can no longer be used.
    pub fn prune_sessions(&self, created_after: i64, seen_after: i64) -> StoreResult<usize> {
        dispatch!(
            self,
            |c| {
                Ok(c.execute(
                    "DELETE FROM console_sessions WHERE created_at <= ?1 OR last_seen_at <= ?2",
                    params![created_after, seen_after],
                )?)
            },
            |p| p.prune_sessions(created_after, seen_after)
        )
    }
}
