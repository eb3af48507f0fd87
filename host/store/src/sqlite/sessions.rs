//! Console sessions on SQLite (`sessions`).

use rusqlite::{Connection, OptionalExtension, params};

use crate::StoreResult;
use crate::sessions::SessionRecord;

pub(crate) fn create_session(c: &Connection, session: &SessionRecord) -> StoreResult<()> {
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
}

pub(crate) fn live_session(
    c: &Connection,
    token_hash: &str,
    created_after: i64,
    seen_after: i64,
    now: i64,
) -> StoreResult<Option<SessionRecord>> {
    let found = c
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
            c.execute(
                "UPDATE console_sessions SET last_seen_at = ?2 WHERE token_hash = ?1",
                params![token_hash, now],
            )?;
            Some(SessionRecord {
                last_seen_at: now,
                ..s
            })
        }
        Some(_) => {
            c.execute(
                "DELETE FROM console_sessions WHERE token_hash = ?1",
                [token_hash],
            )?;
            None
        }
        None => None,
    };
    Ok(live)
}

pub(crate) fn delete_session(c: &Connection, token_hash: &str) -> StoreResult<()> {
    c.execute(
        "DELETE FROM console_sessions WHERE token_hash = ?1",
        [token_hash],
    )?;
    Ok(())
}

pub(crate) fn delete_sessions_of(c: &Connection, user_id: Option<&str>) -> StoreResult<usize> {
    Ok(match user_id {
        Some(u) => c.execute("DELETE FROM console_sessions WHERE user_id = ?1", [u])?,
        None => c.execute("DELETE FROM console_sessions WHERE operator = 1", [])?,
    })
}

pub(crate) fn prune_sessions(
    c: &Connection,
    created_after: i64,
    seen_after: i64,
) -> StoreResult<usize> {
    Ok(c.execute(
        "DELETE FROM console_sessions WHERE created_at <= ?1 OR last_seen_at <= ?2",
        params![created_after, seen_after],
    )?)
}
