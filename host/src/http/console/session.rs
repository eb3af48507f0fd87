//! Console sessions and their rules: argon2id passwords, random session
//! tokens stored hashed, the cookie (`HttpOnly`, `SameSite=Lax`, `Secure`
//! behind https), idle and absolute expiry, CSRF tokens, and the sign-in
//! throttle (per e-mail and per client address).

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Redirect, Response};
use base64::Engine as _;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use rand::RngCore;
use sha2::{Digest, Sha256};

use super::super::envelope::internal;
use super::super::state::AppState;
use crate::store::{SessionRecord, UserRecord};

pub const SESSION_COOKIE: &str = "mp_session";
/// The pre-session CSRF cookie of the sign-in, invitation and sign-up forms.
pub const FORM_COOKIE: &str = "mp_form";
/// A session unused this long ends.
pub const IDLE_SECS: i64 = 2 * 3600;
/// A session ends this long after sign-in, used or not.
pub const ABSOLUTE_SECS: i64 = 7 * 86_400;
/// One-time links are valid this long.
pub const INVITE_SECS: i64 = 7 * 86_400;

/// 32 random bytes, base64url: session tokens, CSRF tokens, invitation secrets.
pub fn random_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// How a secret is stored: hex SHA-256 (the secret itself has 256 random bits).
pub fn digest(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// Equal secrets, compared through their digests so timing says nothing.
pub fn same_secret(a: &str, b: &str) -> bool {
    !a.is_empty() && Sha256::digest(a.as_bytes()) == Sha256::digest(b.as_bytes())
}

#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error("a password must be 10 to 200 characters")]
    Rule,
    #[error("cannot hash the password: {0}")]
    Hash(argon2::password_hash::Error),
}

/// An argon2id PHC string (the crate's default parameters: m=19 MiB, t=2, p=1).
pub fn hash_password(password: &str) -> Result<String, PasswordError> {
    let length = password.chars().count();
    if !(10..=200).contains(&length) {
        return Err(PasswordError::Rule);
    }
    let mut salt = [0u8; 16];
    rand::rng().fill_bytes(&mut salt);
    let salt = SaltString::encode_b64(&salt).map_err(PasswordError::Hash)?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(PasswordError::Hash)
}

/// Verify against a stored hash; with none (unknown e-mail, invited user
/// without a password) a dummy hash is checked so the answer takes as long.
pub fn verify_password(password: &str, stored: Option<&str>) -> bool {
    static DUMMY: LazyLock<String> =
        LazyLock::new(|| hash_password(&random_secret()).unwrap_or_default());
    let (phc, real) = match stored {
        Some(s) => (s, true),
        None => (DUMMY.as_str(), false),
    };
    let Ok(parsed) = PasswordHash::new(phc) else {
        return false;
    };
    Argon2::default()
        .verify_password(password.as_bytes(), &parsed)
        .is_ok()
        && real
}

/// Sign-in attempts: per e-mail 5 at once then one per 3 minutes; per
/// client address 20 at once then one per 30 s. In memory (a restart
/// refills them), like the API's rate limits.
pub struct Throttle {
    by_email: DefaultKeyedRateLimiter<String>,
    by_address: DefaultKeyedRateLimiter<IpAddr>,
}

impl Default for Throttle {
    fn default() -> Self {
        let quota = |period_s: u64, burst: u32| {
            Quota::with_period(Duration::from_secs(period_s))
                .unwrap_or_else(|| Quota::per_minute(NonZeroU32::MIN))
                .allow_burst(NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN))
        };
        Throttle {
            by_email: RateLimiter::keyed(quota(180, 5)),
            by_address: RateLimiter::keyed(quota(30, 20)),
        }
    }
}

impl Throttle {
    /// Take one attempt for this e-mail and address; `false`: too many.
    pub fn allow(&self, email: &str, address: Option<IpAddr>) -> bool {
        // Forget idle buckets now and then so the maps stay small.
        if rand::rng().next_u32().is_multiple_of(256) {
            self.by_email.retain_recent();
            self.by_address.retain_recent();
        }
        let address_ok = address.is_none_or(|a| self.by_address.check_key(&a).is_ok());
        let email_ok = self
            .by_email
            .check_key(&email.trim().to_ascii_lowercase())
            .is_ok();
        address_ok && email_ok
    }
}

/// The client's address (the accept loop records it on each request).
pub fn client_address(parts_extensions: &axum::http::Extensions) -> Option<IpAddr> {
    parts_extensions
        .get::<ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0.ip())
}

pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
        .filter(|v| !v.is_empty())
}

/// A `Set-Cookie` value for the console's path; `None` value clears it.
pub fn set_cookie(state: &AppState, name: &str, value: Option<&str>, max_age: i64) -> String {
    let secure = if state.tunnel.public_base_url.starts_with("https://") {
        "; Secure"
    } else {
        ""
    };
    let (value, max_age) = value.map_or(("", 0), |v| (v, max_age));
    format!("{name}={value}; Path=/console; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}")
}

/// Start a session for a user (or the operator, `user_id` `None`); returns
/// the `Set-Cookie` value.
pub async fn start(
    state: &AppState,
    user_id: Option<String>,
    operator: bool,
) -> Result<String, Response> {
    let token = random_secret();
    let now = state.auth_now();
    let record = SessionRecord {
        token_hash: digest(&token),
        user_id,
        operator,
        csrf: random_secret(),
        created_at: now,
        last_seen_at: now,
    };
    let store = state.services.store.clone();
    tokio::task::spawn_blocking(move || {
        store.prune_sessions(now - ABSOLUTE_SECS, now - IDLE_SECS)?;
        store.create_session(&record)
    })
    .await
    .map_err(|e| internal(e).into_response())?
    .map_err(|e| internal(e).into_response())?;
    Ok(set_cookie(
        state,
        SESSION_COOKIE,
        Some(&token),
        ABSOLUTE_SECS,
    ))
}

/// The live session of the request's cookie, if any.
pub async fn current(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<Option<SessionRecord>, Response> {
    let Some(token) = cookie(headers, SESSION_COOKIE) else {
        return Ok(None);
    };
    let hash = digest(token);
    let now = state.auth_now();
    let store = state.services.store.clone();
    tokio::task::spawn_blocking(move || {
        store.live_session(&hash, now - ABSOLUTE_SECS, now - IDLE_SECS, now)
    })
    .await
    .map_err(|e| internal(e).into_response())?
    .map_err(|e| internal(e).into_response())
}

/// A signed-in customer: the session and its user.
pub struct Customer {
    pub session: SessionRecord,
    pub user: UserRecord,
}

impl FromRequestParts<Arc<AppState>> for Customer {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, Response> {
        let session = current(state, &parts.headers).await?;
        let Some(session) = session else {
            return Err(Redirect::to("/console/sign-in").into_response());
        };
        let Some(user_id) = session.user_id.clone() else {
            return Err(Redirect::to("/console/admin").into_response());
        };
        let store = state.services.store.clone();
        let user = tokio::task::spawn_blocking(move || store.user(&user_id))
            .await
            .map_err(|e| internal(e).into_response())?
            .map_err(|_| Redirect::to("/console/sign-in").into_response())?;
        Ok(Customer { session, user })
    }
}

/// A signed-in operator (operator token sign-in).
pub struct Operator {
    pub session: SessionRecord,
}

impl FromRequestParts<Arc<AppState>> for Operator {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, Response> {
        match current(state, &parts.headers).await? {
            // An operator session is only honoured while the admin API is on.
            Some(session) if session.operator && state.admin_token.is_some() => {
                Ok(Operator { session })
            }
            _ => Err(Redirect::to("/console/admin/sign-in").into_response()),
        }
    }
}

/// The form's CSRF field against the session's token.
pub fn csrf_ok(session: &SessionRecord, form: &super::form::Form) -> bool {
    same_secret(form.get("csrf"), &session.csrf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_verify_only_with_the_right_hash() {
        let hash = hash_password("correct horse battery").unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_password("correct horse battery", Some(&hash)));
        assert!(!verify_password("wrong horse battery", Some(&hash)));
        assert!(!verify_password("correct horse battery", None));
        assert!(matches!(hash_password("short"), Err(PasswordError::Rule)));
    }

    #[test]
    fn throttle_per_email_and_per_address() {
        let t = Throttle::default();
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        for _ in 0..5 {
            assert!(t.allow("A@x.io", Some(a)));
        }
        assert!(!t.allow("a@x.io", Some(a)), "sixth try of one e-mail");
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        let mut allowed = 0;
        for i in 0..30 {
            allowed += usize::from(t.allow(&format!("u{i}@x.io"), Some(b)));
        }
        assert_eq!(allowed, 20, "per address");
    }

    #[test]
    fn cookies_are_read_by_name() {
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, "a=1; mp_session=tok; b=".parse().unwrap());
        assert_eq!(cookie(&h, SESSION_COOKIE), Some("tok"));
        assert_eq!(cookie(&h, "b"), None);
    }
}
