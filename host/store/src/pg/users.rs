//! Console users on PostgreSQL (`users`).

use postgres::Row;

use super::Pg;
use crate::users::{SIGN_UP_GRANT_REASON, SignInRecord, SignUpOutcome, UserRecord};
use crate::{StoreError, StoreResult};

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
}
