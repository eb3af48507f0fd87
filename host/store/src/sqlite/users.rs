//! Console users on SQLite (`users`).

use rusqlite::{Connection, OptionalExtension, params};

use crate::users::{SIGN_UP_GRANT_REASON, SignInRecord, SignUpOutcome, UserRecord};
use crate::{StoreError, StoreResult};

pub(crate) fn invite_user(
    c: &Connection,
    user_id: &str,
    account: &str,
    email: &str,
    invite_hash: &str,
    invite_expires_at: i64,
    now: i64,
) -> StoreResult<UserRecord> {
    c.execute(
        "INSERT INTO accounts (id, balance, created_at) VALUES (?1, 0, ?2)
     ON CONFLICT (id) DO NOTHING",
        params![account, now],
    )?;
    let existing = c
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
            c.execute(
                "UPDATE users SET invite_hash = ?2, invite_expires_at = ?3 WHERE id = ?1",
                params![found.user.id, invite_hash, invite_expires_at],
            )?;
            found.user.id
        }
        None => {
            c.execute(
            "INSERT INTO users (id, account_id, email, invite_hash, invite_expires_at, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![user_id, account, email, invite_hash, invite_expires_at, now],
        )?;
            user_id.to_string()
        }
    };
    let user = c.query_row(
        &format!("SELECT {USER_COLUMNS} FROM users WHERE id = ?1"),
        [&id],
        user_from_row,
    )?;
    Ok(user.user)
}

pub(crate) fn user_by_invite(
    c: &mut Connection,
    invite_hash: &str,
    now: i64,
) -> StoreResult<Option<UserRecord>> {
    Ok(c.query_row(
        &format!(
            "SELECT {USER_COLUMNS} FROM users WHERE invite_hash = ?1 AND invite_expires_at > ?2"
        ),
        params![invite_hash, now],
        user_from_row,
    )
    .optional()?
    .map(|r| r.user))
}

pub(crate) fn accept_invite(
    c: &Connection,
    invite_hash: &str,
    password_hash: &str,
    now: i64,
) -> StoreResult<UserRecord> {
    let user = c
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
    let waiting: Option<i64> = c.query_row(
        "SELECT signup_credits FROM users WHERE id = ?1",
        [&user.user.id],
        |r| r.get(0),
    )?;
    if let Some(credits) = waiting.filter(|c| *c > 0) {
        c.execute(
            "UPDATE accounts SET balance = balance + ?2 WHERE id = ?1",
            params![user.user.account_id, credits],
        )?;
        c.execute(
            "INSERT INTO credit_grants (account_id, credits, created_at, reason) VALUES (?1, ?2, ?3, ?4)",
            params![user.user.account_id, credits, now, SIGN_UP_GRANT_REASON],
        )?;
    }
    c.execute(
        "UPDATE users SET password_hash = ?2, invite_hash = NULL, invite_expires_at = NULL, signup_credits = NULL WHERE id = ?1",
        params![user.user.id, password_hash],
    )?;
    c.execute(
        "DELETE FROM console_sessions WHERE user_id = ?1",
        [&user.user.id],
    )?;
    Ok(UserRecord {
        active: true,
        ..user.user
    })
}

pub(crate) fn sign_up(
    c: &Connection,
    user_id: &str,
    email: &str,
    invite_hash: &str,
    invite_expires_at: i64,
    now: i64,
    credits: i64,
) -> StoreResult<SignUpOutcome> {
    let existing = c
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
            c.execute(
                "UPDATE users SET invite_hash = ?2, invite_expires_at = ?3 WHERE id = ?1",
                params![found.user.id, invite_hash, invite_expires_at],
            )?;
            SignUpOutcome::Pending(found.user)
        }
        Some(_) => SignUpOutcome::Taken,
        None => {
            let made = c.execute(
                "INSERT INTO accounts (id, balance, created_at) VALUES (?1, 0, ?2)
                 ON CONFLICT (id) DO NOTHING",
                params![email, now],
            )?;
            if made == 0 {
                SignUpOutcome::Taken
            } else {
                c.execute(
                    "INSERT INTO users (id, account_id, email, invite_hash, invite_expires_at, signup_credits, created_at)
                     VALUES (?1, ?2, ?2, ?3, ?4, ?5, ?6)",
                    params![user_id, email, invite_hash, invite_expires_at, credits, now],
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
    Ok(outcome)
}

pub(crate) fn user_for_sign_in(
    c: &mut Connection,
    email: &str,
) -> StoreResult<Option<SignInRecord>> {
    Ok(c.query_row(
        &format!("SELECT {USER_COLUMNS} FROM users WHERE email = ?1"),
        [&email],
        user_from_row,
    )
    .optional()?)
}

pub(crate) fn user(c: &mut Connection, id: &str) -> StoreResult<UserRecord> {
    c.query_row(
        &format!("SELECT {USER_COLUMNS} FROM users WHERE id = ?1"),
        [id],
        user_from_row,
    )
    .optional()?
    .map(|r| r.user)
    .ok_or_else(|| StoreError::NotFound("user", id.into()))
}

pub(crate) fn users(c: &mut Connection, account: Option<&str>) -> StoreResult<Vec<UserRecord>> {
    let mut stmt = c.prepare(&format!(
    "SELECT {USER_COLUMNS} FROM users WHERE ?1 IS NULL OR account_id = ?1 ORDER BY created_at, id"
))?;
    let rows = stmt.query_map([account], |r| user_from_row(r).map(|u| u.user))?;
    Ok(rows.collect::<Result<_, _>>()?)
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
