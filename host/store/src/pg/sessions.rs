//! Console sessions on PostgreSQL (`sessions`).

use postgres::Row;

use super::Pg;
use crate::StoreResult;
use crate::sessions::SessionRecord;

fn session_from_row(r: &Row) -> SessionRecord {
    SessionRecord {
        token_hash: r.get(0),
        user_id: r.get(1),
        operator: r.get::<_, i32>(2) != 0,
        csrf: r.get(3),
        created_at: r.get(4),
        last_seen_at: r.get(5),
    }
}

impl Pg {
    pub fn create_session(&self, session: &SessionRecord) -> StoreResult<()> {
        self.client()?.execute(
            "INSERT INTO console_sessions (token_hash, user_id, operator, csrf, created_at, last_seen_at)
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &session.token_hash,
                &session.user_id,
                &i32::from(session.operator),
                &session.csrf,
                &session.created_at,
                &session.last_seen_at,
            ],
        )?;
        Ok(())
    }

    pub fn live_session(
        &self,
        token_hash: &str,
        created_after: i64,
        seen_after: i64,
        now: i64,
    ) -> StoreResult<Option<SessionRecord>> {
        let mut c = self.client()?;
        let mut tx = c.transaction()?;
        let found = tx
            .query_opt(
                "SELECT token_hash, user_id, operator, csrf, created_at, last_seen_at
                 FROM console_sessions WHERE token_hash = $1",
                &[&token_hash],
            )?
            .map(|r| session_from_row(&r));
        let live = match found {
            Some(s) if s.created_at > created_after && s.last_seen_at > seen_after => {
                tx.execute(
                    "UPDATE console_sessions SET last_seen_at = $2 WHERE token_hash = $1",
                    &[&token_hash, &now],
                )?;
                Some(SessionRecord {
                    last_seen_at: now,
                    ..s
                })
            }
            Some(_) => {
                tx.execute(
                    "DELETE FROM console_sessions WHERE token_hash = $1",
                    &[&token_hash],
                )?;
                None
            }
            None => None,
        };
        tx.commit()?;
        Ok(live)
    }

    pub fn delete_session(&self, token_hash: &str) -> StoreResult<()> {
        self.client()?.execute(
            "DELETE FROM console_sessions WHERE token_hash = $1",
            &[&token_hash],
        )?;
        Ok(())
    }

    pub fn delete_sessions_of(&self, user_id: Option<&str>) -> StoreResult<usize> {
        let mut c = self.client()?;
        let n = match user_id {
            Some(u) => c.execute("DELETE FROM console_sessions WHERE user_id = $1", &[&u])?,
            None => c.execute("DELETE FROM console_sessions WHERE operator = 1", &[])?,
        };
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    pub fn prune_sessions(&self, created_after: i64, seen_after: i64) -> StoreResult<usize> {
        let n = self.client()?.execute(
            "DELETE FROM console_sessions WHERE created_at <= $1 OR last_seen_at <= $2",
            &[&created_after, &seen_after],
        )?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }
}
