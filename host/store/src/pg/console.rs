//! The console's data on PostgreSQL: users, their sessions, and the
//! overview's credits by day. The same statements as the SQLite side.

use std::collections::BTreeMap;

use postgres::Row;

use super::Pg;
use crate::daily::{DailyCredits, LAST_CHARGED_USE};
use crate::sessions::SessionRecord;
use crate::users::{SIGN_UP_GRANT_REASON, SignInRecord, SignUpOutcome, UserRecord};
use crate::{StoreError, StoreResult, UsageEntry};

const USER_COLUMNS: &str = "id, account_id, email, password_hash, created_at";

fn user_from_row(r: &Row) -> SignInRecord {
    let password_hash: Option<String> = r.get(3);
    SignInRecord {
        user: UserRecord {
            id: r.get(0),
            account_id: r.get(1),
            email: r.get(2),
            active: password_hash.is_some(),
            created_at: r.get(4),
        },
        password_hash,
    }
}

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
    pub fn invite_user(
        &self,
        user_id: &str,
        account: &str,
        email: &str,
        invite_hash: &str,
        invite_expires_at: i64,
        now: i64,
    ) -> StoreResult<UserRecord> {
        let mut c = self.client()?;
        let mut tx = c.transaction()?;
        tx.execute(
            "INSERT INTO accounts (id, balance, created_at) VALUES ($1, 0, $2)
             ON CONFLICT (id) DO NOTHING",
            &[&account, &now],
        )?;
        let existing = tx
            .query_opt(
                &format!("SELECT {USER_COLUMNS} FROM users WHERE email = $1"),
                &[&email],
            )?
            .map(|r| user_from_row(&r));
        let id = match existing {
            Some(found) if found.user.account_id != account => {
                return Err(StoreError::Invalid(format!(
                    "{email} is a user of another account"
                )));
            }
            Some(found) => {
                tx.execute(
                    "UPDATE users SET invite_hash = $2, invite_expires_at = $3 WHERE id = $1",
                    &[&found.user.id, &invite_hash, &invite_expires_at],
                )?;
                found.user.id
            }
            None => {
                tx.execute(
                    "INSERT INTO users (id, account_id, email, invite_hash, invite_expires_at, created_at)
                     VALUES ($1, $2, $3, $4, $5, $6)",
                    &[&user_id, &account, &email, &invite_hash, &invite_expires_at, &now],
                )?;
                user_id.to_string()
            }
        };
        let user = user_from_row(&tx.query_one(
            &format!("SELECT {USER_COLUMNS} FROM users WHERE id = $1"),
            &[&id],
        )?);
        tx.commit()?;
        Ok(user.user)
    }

    pub fn user_by_invite(&self, invite_hash: &str, now: i64) -> StoreResult<Option<UserRecord>> {
        Ok(self
            .client()?
            .query_opt(
                &format!(
                    "SELECT {USER_COLUMNS} FROM users WHERE invite_hash = $1 AND invite_expires_at > $2"
                ),
                &[&invite_hash, &now],
            )?
            .map(|r| user_from_row(&r).user))
    }

    pub fn accept_invite(
        &self,
        invite_hash: &str,
        password_hash: &str,
        now: i64,
    ) -> StoreResult<UserRecord> {
        let mut c = self.client()?;
        let mut tx = c.transaction()?;
        let user = tx
            .query_opt(
                &format!(
                    "SELECT {USER_COLUMNS} FROM users WHERE invite_hash = $1 AND invite_expires_at > $2
                     FOR UPDATE"
                ),
                &[&invite_hash, &now],
            )?
            .map(|r| user_from_row(&r))
            .ok_or_else(|| StoreError::NotFound("invitation", "link".into()))?;
        // A sign-up's credits, granted once: the row is locked and its
        // link used up in this transaction.
        let waiting: Option<i64> = tx
            .query_one(
                "SELECT signup_credits FROM users WHERE id = $1",
                &[&user.user.id],
            )?
            .get(0);
        if let Some(credits) = waiting.filter(|c| *c > 0) {
            tx.execute(
                "UPDATE accounts SET balance = balance + $2 WHERE id = $1",
                &[&user.user.account_id, &credits],
            )?;
            tx.execute(
                "INSERT INTO credit_grants (account_id, credits, created_at, reason) VALUES ($1, $2, $3, $4)",
                &[&user.user.account_id, &credits, &now, &SIGN_UP_GRANT_REASON],
            )?;
        }
        tx.execute(
            "UPDATE users SET password_hash = $2, invite_hash = NULL, invite_expires_at = NULL, signup_credits = NULL WHERE id = $1",
            &[&user.user.id, &password_hash],
        )?;
        tx.execute(
            "DELETE FROM console_sessions WHERE user_id = $1",
            &[&user.user.id],
        )?;
        tx.commit()?;
        Ok(UserRecord {
            active: true,
            ..user.user
        })
    }

    pub fn sign_up(
        &self,
        user_id: &str,
        email: &str,
        invite_hash: &str,
        invite_expires_at: i64,
        starting_credits: i64,
        now: i64,
    ) -> StoreResult<SignUpOutcome> {
        let mut c = self.client()?;
        let mut tx = c.transaction()?;
        let existing = tx
            .query_opt(
                &format!(
                    "SELECT {USER_COLUMNS}, signup_credits IS NOT NULL FROM users WHERE email = $1
                     FOR UPDATE"
                ),
                &[&email],
            )?
            .map(|r| (user_from_row(&r), r.get::<_, bool>(5)));
        let outcome = match existing {
            Some((found, true)) if found.password_hash.is_none() => {
                tx.execute(
                    "UPDATE users SET invite_hash = $2, invite_expires_at = $3 WHERE id = $1",
                    &[&found.user.id, &invite_hash, &invite_expires_at],
                )?;
                SignUpOutcome::Pending(found.user)
            }
            Some(_) => SignUpOutcome::Taken,
            None => {
                // Two sign-ups racing for one address: the second waits for
                // the first's account row, then inserts nothing.
                let made = tx.execute(
                    "INSERT INTO accounts (id, balance, created_at) VALUES ($1, 0, $2)
                     ON CONFLICT (id) DO NOTHING",
                    &[&email, &now],
                )?;
                if made == 0 {
                    SignUpOutcome::Taken
                } else {
                    tx.execute(
                        "INSERT INTO users (id, account_id, email, invite_hash, invite_expires_at, signup_credits, created_at)
                         VALUES ($1, $2, $2, $3, $4, $5, $6)",
                        &[&user_id, &email, &invite_hash, &invite_expires_at, &starting_credits, &now],
                    )?;
                    SignUpOutcome::Created(UserRecord {
                        id: user_id.to_string(),
                        account_id: email.to_string(),
                        email: email.to_string(),
                        active: false,
                        created_at: now,
                    })
                }
            }
        };
        tx.commit()?;
        Ok(outcome)
    }

    pub fn user_for_sign_in(&self, email: &str) -> StoreResult<Option<SignInRecord>> {
        Ok(self
            .client()?
            .query_opt(
                &format!("SELECT {USER_COLUMNS} FROM users WHERE email = $1"),
                &[&email],
            )?
            .map(|r| user_from_row(&r)))
    }

    pub fn user(&self, id: &str) -> StoreResult<UserRecord> {
        self.client()?
            .query_opt(
                &format!("SELECT {USER_COLUMNS} FROM users WHERE id = $1"),
                &[&id],
            )?
            .map(|r| user_from_row(&r).user)
            .ok_or_else(|| StoreError::NotFound("user", id.into()))
    }

    pub fn users(&self, account: Option<&str>) -> StoreResult<Vec<UserRecord>> {
        Ok(self
            .client()?
            .query(
                &format!(
                    "SELECT {USER_COLUMNS} FROM users WHERE CAST($1 AS TEXT) IS NULL OR account_id = $1
                     ORDER BY created_at, id"
                ),
                &[&account],
            )?
            .iter()
            .map(|r| user_from_row(r).user)
            .collect())
    }

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

    /// `sql` is one of `store::daily`'s two statements, with its bounds.
    pub fn daily_credits(
        &self,
        sql: &str,
        account: &str,
        from: i64,
        until: i64,
    ) -> StoreResult<Vec<DailyCredits>> {
        Ok(self
            .client()?
            .query(sql, &[&account, &from, &until])?
            .iter()
            .map(|r| DailyCredits {
                day: r.get(0),
                platform: r.get(1),
                credits: r.get(2),
            })
            .collect())
    }

    pub fn last_charged_use(&self, account: &str) -> StoreResult<BTreeMap<String, i64>> {
        Ok(self
            .client()?
            .query(LAST_CHARGED_USE, &[&account])?
            .iter()
            .filter_map(|r| Some((r.get(0), r.get::<_, Option<i64>>(1)?)))
            .collect())
    }

    pub fn recent_charges(&self, account: &str, n: usize) -> StoreResult<Vec<UsageEntry>> {
        super::reports::recent_entries(
            &mut **self.client()?,
            " WHERE account_id = $1",
            &[&account],
            n,
        )
    }
}
