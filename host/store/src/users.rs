//! Console users: people who sign in to the web console for an account
//! (several per account). A user is invited with a one-time link (stored as
//! the hex SHA-256 of its secret) and sets an argon2id password through it.
//! Portable SQL only: the PostgreSQL backend runs the same statements.

use crate::accounts::validate_account_id;
use crate::{Backend, Store, StoreError, StoreResult, dispatch, dispatch_tx, sqlite};

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
        dispatch_tx!(
            self,
            |c| sqlite::users::invite_user(
                c,
                user_id,
                account,
                &email,
                invite_hash,
                invite_expires_at,
                now
            ),
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
            |c| sqlite::users::user_by_invite(c, invite_hash, now),
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
        dispatch_tx!(
            self,
            |c| sqlite::users::accept_invite(c, invite_hash, password_hash, now),
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
        dispatch_tx!(
            self,
            |c| sqlite::users::sign_up(
                c,
                user_id,
                &email,
                invite_hash,
                invite_expires_at,
                now,
                credits
            ),
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
        dispatch!(self, |c| sqlite::users::user_for_sign_in(c, &email), |p| p
            .user_for_sign_in(&email))
    }

    pub fn user(&self, id: &str) -> StoreResult<UserRecord> {
        dispatch!(self, |c| sqlite::users::user(c, id), |p| p.user(id))
    }

    /// Users of one account (or all), oldest first.
    pub fn users(&self, account: Option<&str>) -> StoreResult<Vec<UserRecord>> {
        dispatch!(self, |c| sqlite::users::users(c, account), |p| p
            .users(account))
    }
}

/// The awaited twins of the console user calls (see `awaited`).
impl Store {
    /// [`Store::invite_user`], awaited.
    pub async fn invite_user_async(
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
        let owned = [user_id, account, &email, invite_hash].map(str::to_string);
        let again = owned.clone();
        self.write_or_off_thread(
            move |c| {
                let [user_id, account, email, invite_hash] = &owned;
                sqlite::users::invite_user(
                    c,
                    user_id,
                    account,
                    email,
                    invite_hash,
                    invite_expires_at,
                    now,
                )
            },
            move |s| {
                let [user_id, account, email, invite_hash] = &again;
                s.invite_user(user_id, account, email, invite_hash, invite_expires_at, now)
            },
        )
        .await
    }

    /// [`Store::user_by_invite`], awaited.
    pub async fn user_by_invite_async(
        &self,
        invite_hash: &str,
        now: i64,
    ) -> StoreResult<Option<UserRecord>> {
        let invite_hash = invite_hash.to_string();
        self.off_thread(move |s| s.user_by_invite(&invite_hash, now))
            .await
    }

    /// [`Store::accept_invite`], awaited.
    pub async fn accept_invite_async(
        &self,
        invite_hash: &str,
        password_hash: &str,
        now: i64,
    ) -> StoreResult<UserRecord> {
        let owned = [invite_hash, password_hash].map(str::to_string);
        let again = owned.clone();
        self.write_or_off_thread(
            move |c| sqlite::users::accept_invite(c, &owned[0], &owned[1], now),
            move |s| s.accept_invite(&again[0], &again[1], now),
        )
        .await
    }

    /// [`Store::sign_up`], awaited.
    pub async fn sign_up_async(
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
        let owned = [user_id, &email, invite_hash].map(str::to_string);
        let again = owned.clone();
        self.write_or_off_thread(
            move |c| {
                let [user_id, email, invite_hash] = &owned;
                sqlite::users::sign_up(
                    c,
                    user_id,
                    email,
                    invite_hash,
                    invite_expires_at,
                    now,
                    credits,
                )
            },
            move |s| {
                let [user_id, email, invite_hash] = &again;
                s.sign_up(user_id, email, invite_hash, invite_expires_at, credits, now)
            },
        )
        .await
    }

    /// [`Store::user_for_sign_in`], awaited.
    pub async fn user_for_sign_in_async(&self, email: &str) -> StoreResult<Option<SignInRecord>> {
        let email = email.to_string();
        self.off_thread(move |s| s.user_for_sign_in(&email)).await
    }

    /// [`Store::user`], awaited.
    pub async fn user_async(&self, id: &str) -> StoreResult<UserRecord> {
        let id = id.to_string();
        self.off_thread(move |s| s.user(&id)).await
    }

    /// [`Store::users`], awaited.
    pub async fn users_async(&self, account: Option<&str>) -> StoreResult<Vec<UserRecord>> {
        let account = account.map(str::to_string);
        self.off_thread(move |s| s.users(account.as_deref())).await
    }
}
