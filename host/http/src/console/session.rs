//! Console sessions and their rules: argon2id passwords, random session
//! tokens stored hashed, the cookie (`HttpOnly`, `SameSite=Lax`; behind
//! https `__Host-` and `Secure`), idle and absolute expiry, operator
//! sessions bound to the operator token, CSRF tokens, and the sign-in
//! throttle (per client address, then per e-mail).

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Redirect, Response};
use base64::Engine as _;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use rand::RngCore;
use sha2::{Digest, Sha256};

use super::super::envelope::internal;
use super::super::state::AppState;
use mediaparse_auth::client_ip::bucket;
use mediaparse_store::{SessionRecord, UserRecord};

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

/// Verify against a stored PHC string (blocking: argon2id; run it on the
/// password pool). A stored value that does not parse never verifies.
pub fn verify_password(password: &str, stored: &str) -> bool {
    let Ok(parsed) = PasswordHash::new(stored) else {
        return false;
    };
    Argon2::default()
        .verify_password(password.as_bytes(), &parsed)
        .is_ok()
}

/// One verification against a throwaway hash: what the password pool
/// measures so an unknown e-mail's answer takes as long as a real check.
pub fn calibrate_password_check() {
    if let Ok(hash) = hash_password(&random_secret()) {
        let _ = verify_password("not the password", &hash);
    }
}

/// Sign-in attempts: per client address 20 at once then one per 30 s, and
/// only then per e-mail 5 at once then one per 3 minutes (an address
/// refused spends nothing of the e-mail's allowance, so nobody can lock a
/// user out from one address); the operator sign-in per address 10 at
/// once then one per 30 s. Addresses are counted as `auth::client_ip`
/// says (IPv6 per /64). In memory (a restart refills them), like the
/// API's rate limits.
pub struct Throttle {
    by_email: DefaultKeyedRateLimiter<String>,
    by_address: DefaultKeyedRateLimiter<IpAddr>,
    operator_by_address: DefaultKeyedRateLimiter<IpAddr>,
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
            operator_by_address: RateLimiter::keyed(quota(30, 10)),
        }
    }
}

/// The key of a request without a known peer (in-process tests): one bucket.
const NO_ADDRESS: IpAddr = IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED);

impl Throttle {
    fn forget_idle(&self) {
        // Now and then, so the maps stay small.
        if rand::rng().next_u32().is_multiple_of(256) {
            self.by_email.retain_recent();
            self.by_address.retain_recent();
            self.operator_by_address.retain_recent();
        }
    }

    /// Take one attempt for this address, then for this e-mail; `false`: too many.
    pub fn allow(&self, email: &str, address: Option<IpAddr>) -> bool {
        self.forget_idle();
        let address = bucket(address.unwrap_or(NO_ADDRESS));
        if self.by_address.check_key(&address).is_err() {
            return false;
        }
        self.by_email
            .check_key(&email.trim().to_ascii_lowercase())
            .is_ok()
    }

    /// Take one operator sign-in attempt for this address; `false`: too many.
    pub fn allow_operator(&self, address: Option<IpAddr>) -> bool {
        self.forget_idle();
        let address = bucket(address.unwrap_or(NO_ADDRESS));
        self.operator_by_address.check_key(&address).is_ok()
    }
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

/// A cookie's name: behind https with the `__Host-` prefix (the browser
/// then insists on `Secure`, `Path=/` and no `Domain`, so no other site or
/// plain-http page can set or shadow it).
pub fn cookie_name(state: &AppState, name: &str) -> String {
    if https(state) {
        format!("__Host-{name}")
    } else {
        name.to_string()
    }
}

fn https(state: &AppState) -> bool {
    state.tunnel.public_base_url.starts_with("https://")
}

/// The request's value of the console cookie `name` (as [`cookie_name`] names it).
pub fn read_cookie<'a>(state: &AppState, headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    cookie(headers, &cookie_name(state, name))
}

/// A `Set-Cookie` value; `None` value clears it. Behind https: `__Host-`,
/// `Path=/` and `Secure`; otherwise the console's path.
pub fn set_cookie(state: &AppState, name: &str, value: Option<&str>, max_age: i64) -> String {
    let (value, max_age) = value.map_or(("", 0), |v| (v, max_age));
    let name = cookie_name(state, name);
    if https(state) {
        format!("{name}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}; Secure")
    } else {
        format!("{name}={value}; Path=/console; HttpOnly; SameSite=Lax; Max-Age={max_age}")
    }
}

/// Operator session cookies start with this; their stored digest also
/// covers the operator token's fingerprint, so a new token ends them.
const OPERATOR_MARK: &str = "op.";

/// The fingerprint of an operator token that operator sessions are bound to.
pub fn operator_fingerprint(token: &str) -> String {
    digest(&format!("mediaparse operator session\n{token}"))
}

/// How a session cookie's value is stored: its digest; for an operator
/// session the digest of the value and the operator token's fingerprint
/// (`None`: an operator cookie while the admin API is off).
fn stored_digest(state: &AppState, cookie_value: &str) -> Option<String> {
    match cookie_value.strip_prefix(OPERATOR_MARK) {
        Some(secret) => state
            .operator_fingerprint()
            .map(|f| digest(&format!("{secret}.{f}"))),
        None => Some(digest(cookie_value)),
    }
}

/// Start a session for a user (or the operator, `user_id` `None`); returns
/// the `Set-Cookie` value.
pub async fn start(
    state: &AppState,
    user_id: Option<String>,
    operator: bool,
) -> Result<String, Response> {
    let secret = random_secret();
    let token = if operator {
        format!("{OPERATOR_MARK}{secret}")
    } else {
        secret
    };
    let Some(token_hash) = stored_digest(state, &token) else {
        return Err(Redirect::to("/console/admin/sign-in").into_response());
    };
    let now = state.auth_now();
    let record = SessionRecord {
        token_hash,
        user_id,
        operator,
        csrf: random_secret(),
        created_at: now,
        last_seen_at: now,
    };
    let store = &state.services.store;
    store
        .prune_sessions_async(now - ABSOLUTE_SECS, now - IDLE_SECS)
        .await
        .map_err(|e| internal(e).into_response())?;
    store
        .create_session_async(&record)
        .await
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
    let Some(token) = read_cookie(state, headers, SESSION_COOKIE) else {
        return Ok(None);
    };
    let operator_cookie = token.starts_with(OPERATOR_MARK);
    let Some(hash) = stored_digest(state, token) else {
        return Ok(None);
    };
    let now = state.auth_now();
    let found = state
        .services
        .store
        .live_session_async(&hash, now - ABSOLUTE_SECS, now - IDLE_SECS, now)
        .await
        .map_err(|e| internal(e).into_response())?;
    // An operator session is honoured only from a cookie bound to the token.
    Ok(found.filter(|s| s.operator == operator_cookie))
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
        let user = state
            .services
            .store
            .user_async(&user_id)
            .await
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
        assert!(verify_password("correct horse battery", &hash));
        assert!(!verify_password("wrong horse battery", &hash));
        assert!(!verify_password(
            "correct horse battery",
            "not a phc string"
        ));
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
    fn a_refused_address_does_not_spend_the_emails_allowance() {
        let t = Throttle::default();
        let flooder: IpAddr = "203.0.113.9".parse().unwrap();
        // The flooder uses up its address allowance on other e-mails...
        for i in 0..20 {
            assert!(t.allow(&format!("u{i}@x.io"), Some(flooder)));
        }
        // ...and goes on trying the victim's e-mail: refused by address.
        for _ in 0..10 {
            assert!(!t.allow("victim@x.io", Some(flooder)));
        }
        // The victim, from elsewhere, still has all five tries.
        let victim: IpAddr = "198.51.100.1".parse().unwrap();
        for _ in 0..5 {
            assert!(t.allow("victim@x.io", Some(victim)));
        }
    }

    #[test]
    fn operator_sign_in_is_throttled_per_address_and_ipv6_per_64() {
        let t = Throttle::default();
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        for _ in 0..10 {
            assert!(t.allow_operator(Some(a)));
        }
        assert!(!t.allow_operator(Some(a)));
        assert!(
            !t.allow_operator(Some("2001:db8:1:2:ffff::2".parse().unwrap())),
            "the same /64"
        );
        // Another address is not locked out by the first one's guesses.
        assert!(t.allow_operator(Some("2001:db8:1:3::1".parse().unwrap())));
        assert!(t.allow_operator(Some("192.0.2.7".parse().unwrap())));
    }

    #[test]
    fn cookies_are_read_by_name() {
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, "a=1; mp_session=tok; b=".parse().unwrap());
        assert_eq!(cookie(&h, SESSION_COOKIE), Some("tok"));
        assert_eq!(cookie(&h, "b"), None);
    }
}
