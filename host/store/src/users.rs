//! Console users: people who sign in to the web console for an account
//! (several per account). A user is invited with a one-time link (stored as
//! the hex SHA-256 of its secret) and sets an argon2id password through it.
//! Portable SQL only: the PostgreSQL backend runs the same statements.

use rusqlite::{OptionalExtension, params};

use super::accounts::validate_account_id;
use super::{Backend, Store, StoreError, StoreResult, dispatch};

/// A user as the console and the admin API show it (never a secret).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserRecord {
    pub id: String,
    pub account_id: String,
    pub email: String,
    /// Whether a password was set (an invited user has none until then).
    pub active: bool,
    pub created_at: i64,
}

/// What a sign-in checks: the user and its password hash, if any.
#[derive(Clone, Debug)]
pub struct SignInRecord {
    pub user: UserRecord,
    pub password_hash: Option<String>,
}

const USER_COLUMNS: &str = "id, account_id, email, password_hash, created_at";

fn user_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SignInRecord> {
    let password_hash: Option<String> = r.get(3)?;
    Ok(SignInRecord {
        user: UserRecord {
            id: r.get(0)?,
            account_id: r.get(1)?,
            email: r.get(2)?,
            active: password_hash.is_some(),
            created_at: r.get(4)?,
        },
        password_hash,
    })
}

/// What an open sign-up did with an address ([`Store::sign_up`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SignUpOutcome {
    /// A new account and its user, waiting for the link to be used.
    Created(UserRecord),
    /// The address signed up before and is still unverified; it has a new link.
    Pending(UserRecord),
    /// The address has an account or a user already; nothing changed.
    Taken,
}

/// The grants log's reason for a verified sign-up's starting credits.
pub const SIGN_UP_GRANT_REASON: &str = "open sign-up, address verified";

/// E-mail addresses are compared lower-case and trimmed.
pub fn normalize_email(email: &str) -> StoreResult<String> {
    let email = email.trim().to_ascii_lowercase();
    let ok = email.len() <= 254
        && email.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty() && domain.contains('.') && !domain.starts_with('.')
        })
        && !email.chars().any(|c| c.is_whitespace() || c.is_control());
    if ok {
        Ok(email)
    } else {
        Err(StoreError::Invalid(format!(
            "{email:?} is not an e-mail address"
        )))
    }
}

impl Store {
    /// Invite `email` to `account` (creating the account): a new user, or
    /// for a known user of the same account a fresh one-time link (which
    /// also serves as a password reset). `invite_hash` replaces any earlier
    /// link. A user of another account is refused.
    pub fn invite_user(
        &self,
        user_id: &str,
        account: &str,
        email: &str,
        invite_hash: &str,
        invite_expires_at: i64,
        now: i64,
    ) -> StoreResult<UserRecord> {
        validate_account_id(account)?;
        let email = normalize_email(email)?;
        dispatch!(
            self,
            |c| {
                let tx = c.transaction()?;
                tx.execute(
                    "INSERT INTO accounts (id, balance, created_at) VALUES (?1, 0, ?2)
                 ON CONFLICT (id) DO NOTHING",
                    params![account, now],
                )?;
                let existing = tx
                    .query_row(
                        &format!("SELECT {USER_COLUMNS} FROM users WHERE email = ?1"),
                        [&email],
                        user_from_row,
                    )
                    .optional()?;
                let id = match existing {
                    Some(found) if found.user.account_id != account => {
                        return Err(StoreError::Invalid(format!(
                            "{email} is a user of another account"
                        )));
                    }
                    Some(found) => {
                        tx.execute(
                        "UPDATE users SET invite_hash = ?2, invite_expires_at = ?3 WHERE id = ?1",
                        params![found.user.id, invite_hash, invite_expires_at],
                    )?;
                        found.user.id
                    }
                    None => {
                        tx.execute(
                        "INSERT INTO users (id, account_id, email, invite_hash, invite_expires_at, created_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        params![user_id, account, email, invite_hash, invite_expires_at, now],
                    )?;
                        user_id.to_string()
                    }
                };
                let user = tx.query_row(
                    &format!("SELECT {USER_COLUMNS} FROM users WHERE id = ?1"),
                    [&id],
                    user_from_row,
                )?;
                tx.commit()?;
                Ok(user.user)
            },
            |p| p.invite_user(
                user_id,
                account,
                &email,
                invite_hash,
                invite_expires_at,
                now
            )
        )
    }

    /// The user a one-time link names, while it is valid at `now`.
    pub fn user_by_invite(&self, invite_hash: &str, now: i64) -> StoreResult<Option<UserRecord>> {
        dispatch!(
            self,
            |c| {
                Ok(c.query_row(
                &format!(
                    "SELECT {USER_COLUMNS} FROM users WHERE invite_hash = ?1 AND invite_expires_at > ?2"
                ),
                params![invite_hash, now],
                user_from_row,
            )
            .optional()?
            .map(|r| r.user))
            },
            |p| p.user_by_invite(invite_hash, now)
        )
    }

    /// Set the password through a one-time link and use the link up; every
    /// session of the user ends (a reset must lock out whoever had it).
    pub fn accept_invite(
        &self,
        invite_hash: &str,
        password_hash: &str,
        now: i64,
    ) -> StoreResult<UserRecord> {
        dispatch!(
            self,
            |c| {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let user = tx
                .query_row(
                    &format!(
                        "SELECT {USER_COLUMNS} FROM users WHERE invite_hash = ?1 AND invite_expires_at > ?2"
                    ),
                    params![invite_hash, now],
                    user_from_row,
                )
                .optional()?
                .ok_or_else(|| StoreError::NotFound("invitation", "link".into()))?;
                // A sign-up's credits, granted once: the link that verifies
                // the address is used up in this transaction.
                let waiting: Option<i64> = tx.query_row(
                    "SELECT signup_credits FROM users WHERE id = ?1",
                    [&user.user.id],
                    |r| r.get(0),
                )?;
                if let Some(credits) = waiting.filter(|c| *c > 0) {
                    tx.execute(
                        "UPDATE accounts SET balance = balance + ?2 WHERE id = ?1",
                        params![user.user.account_id, credits],
                    )?;
                    tx.execute(
                        "INSERT INTO credit_grants (account_id, credits, created_at, reason) VALUES (?1, ?2, ?3, ?4)",
                        params![user.user.account_id, credits, now, SIGN_UP_GRANT_REASON],
                    )?;
                }
                tx.execute(
                    "UPDATE users SET password_hash = ?2, invite_hash = NULL, invite_expires_at = NULL, signup_credits = NULL WHERE id = ?1",
                    params![user.user.id, password_hash],
                )?;
                tx.execute(
                    "DELETE FROM console_sessions WHERE user_id = ?1",
                    [&user.user.id],
                )?;
                tx.commit()?;
                Ok(UserRecord {
                    active: true,
                    ..user.user
                })
            },
            |p| p.accept_invite(invite_hash, password_hash, now)
        )
    }

    /// Open sign-up of `email`, before its address is verified. A new
    /// address gets an account named after it (balance 0) and a user
    /// without a password whose one-time link is `invite_hash`;
    /// `starting_credits` wait in the user row until the link is used
    /// ([`Store::accept_invite`] grants them). An address still waiting
    /// gets `invite_hash` as its new link. An address with an account or a
    /// user already is left alone. Never two accounts for one address.
    pub fn sign_up(
        &self,
        user_id: &str,
        email: &str,
        invite_hash: &str,
        invite_expires_at: i64,
        starting_credits: i64,
        now: i64,
    ) -> StoreResult<SignUpOutcome> {
        let email = normalize_email(email)?;
        validate_account_id(&email)?;
        let credits = starting_credits.max(0);
        dispatch!(
            self,
            |c| {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let existing = tx
                    .query_row(
                        &format!(
                            "SELECT {USER_COLUMNS}, signup_credits IS NOT NULL FROM users WHERE email = ?1"
                        ),
                        [&email],
                        |r| Ok((user_from_row(r)?, r.get::<_, bool>(5)?)),
                    )
                    .optional()?;
                let outcome = match existing {
                    Some((found, true)) if found.password_hash.is_none() => {
                        tx.execute(
                            "UPDATE users SET invite_hash = ?2, invite_expires_at = ?3 WHERE id = ?1",
                            params![found.user.id, invite_hash, invite_expires_at],
                        )?;
                        SignUpOutcome::Pending(found.user)
                    }
                    Some(_) => SignUpOutcome::Taken,
                    None => {
                        let made = tx.execute(
                            "INSERT INTO accounts (id, balance, created_at) VALUES (?1, 0, ?2)
                             ON CONFLICT (id) DO NOTHING",
                            params![email, now],
                        )?;
                        if made == 0 {
                            SignUpOutcome::Taken
                        } else {
                            tx.execute(
                                "INSERT INTO users (id, account_id, email, invite_hash, invite_expires_at, signup_credits, created_at)
                                 VALUES (?1, ?2, ?2, ?3, ?4, ?5, ?6)",
                                params![user_id, email, invite_hash, invite_expires_at, credits, now],
                            )?;
                            SignUpOutcome::Created(UserRecord {
                                id: user_id.to_string(),
                                account_id: email.clone(),
                                email: email.clone(),
                                active: false,
                                created_at: now,
                            })
                        }
                    }
                };
                tx.commit()?;
                Ok(outcome)
            },
            |p| p.sign_up(
                user_id,
                &email,
                invite_hash,
                invite_expires_at,
                credits,
                now
            )
        )
    }

    /// The user signing in as `email` (normalised), with its password hash.
    pub fn user_for_sign_in(&self, email: &str) -> StoreResult<Option<SignInRecord>> {
        let Ok(email) = normalize_email(email) else {
            return Ok(None);
        };
        dispatch!(
            self,
            |c| {
                Ok(c.query_row(
                    &format!("SELECT {USER_COLUMNS} FROM users WHERE email = ?1"),
                    [&email],
                    user_from_row,
                )
                .optional()?)
            },
            |p| p.user_for_sign_in(&email)
        )
    }

    pub fn user(&self, id: &str) -> StoreResult<UserRecord> {
        dispatch!(
            self,
            |c| {
                c.query_row(
                    &format!("SELECT {USER_COLUMNS} FROM users WHERE id = ?1"),
                    [id],
                    user_from_row,
                )
                .optional()?
                .map(|r| r.user)
                .ok_or_else(|| StoreError::NotFound("user", id.into()))
            },
            |p| p.user(id)
        )
    }

    /// Users of one account (or all), oldest first.
    pub fn users(&self, account: Option<&str>) -> StoreResult<Vec<UserRecord>> {
        dispatch!(
            self,
            |c| {
                let mut stmt = c.prepare(&format!(
                "SELECT {USER_COLUMNS} FROM users WHERE ?1 IS NULL OR account_id = ?1 ORDER BY created_at, id"
            ))?;
                let rows = stmt.query_map([account], |r| user_from_row(r).map(|u| u.user))?;
                Ok(rows.collect::<Result<_, _>>()?)
            },
            |p| p.users(account)
        )
    }
}
