//! API keys and sign-in: token minting and hashing, bearer authentication,
//! expiry, platform permissions and per-key rate limits, plus the console's
//! sign-in throttles and the pool password hashing runs on. Tokens are shown
//! once and stored only as SHA-256. This crate names nothing of the host
//! above it but `mediaparse-core` and `mediaparse-store`.

pub mod client_ip;
pub mod failures;
mod guards;
pub mod password_pool;
pub mod ratelimit;

use base64::Engine as _;
use rand::RngCore;
use sha2::{Digest, Sha256};

pub use guards::Guards;

use mediaparse_core::api_error::{internal, unavailable};
use mediaparse_core::{ApiError, ErrorCode};
use mediaparse_store::{KeyRecord, Store, StoreError};

/// Every customer token starts with this, so leaked tokens are recognisable.
pub const TOKEN_PREFIX: &str = "mp_live_";
/// Characters of a token shown in listings.
const DISPLAY_PREFIX_LEN: usize = TOKEN_PREFIX.len() + 6;

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("Authorization header missing")]
    MissingToken,
    #[error("token invalid")]
    InvalidToken,
    #[error("token expired")]
    TokenExpired,
    #[error("token not allowed to access platform {0}")]
    PlatformNotAllowed(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl AuthError {
    /// This error's row in the error table.
    pub fn code(&self) -> ErrorCode {
        match self {
            AuthError::MissingToken => ErrorCode::MissingToken,
            AuthError::InvalidToken => ErrorCode::InvalidToken,
            AuthError::TokenExpired => ErrorCode::TokenExpired,
            AuthError::PlatformNotAllowed(_) => ErrorCode::PlatformNotAllowed,
            AuthError::Store(StoreError::Unavailable(_)) => ErrorCode::DatabaseUnavailable,
            AuthError::Store(_) => ErrorCode::Internal,
        }
    }
}

/// A fresh random token: the prefix plus 32 random bytes, base64url.
pub fn mint_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!(
        "{TOKEN_PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

pub fn hash_token(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

pub fn display_prefix(token: &str) -> String {
    token.chars().take(DISPLAY_PREFIX_LEN).collect()
}

/// The bearer token of an `Authorization` header value.
pub fn bearer(header: Option<&str>) -> Result<&str, AuthError> {
    let value = header
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .ok_or(AuthError::MissingToken)?;
    // `Bearer` with nothing after it names the scheme but carries no token.
    if value.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::MissingToken);
    }
    let (scheme, token) = value.split_once(' ').ok_or(AuthError::InvalidToken)?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::InvalidToken);
    }
    let token = token.trim();
    if token.is_empty() {
        Err(AuthError::MissingToken)
    } else {
        Ok(token)
    }
}

/// Could `token` be one this service minted? The prefix and base64url
/// after it, of a sane length: anything else is refused without a lookup.
pub fn plausible_token(token: &str) -> bool {
    token.len() <= 128
        && token.strip_prefix(TOKEN_PREFIX).is_some_and(|rest| {
            !rest.is_empty()
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// Look a token up and check its expiry at `now_unix_s`.
pub fn authenticate(store: &Store, token: &str, now_unix_s: i64) -> Result<KeyRecord, AuthError> {
    authenticate_hash(store, &hash_token(token), now_unix_s)
}

/// [`authenticate`] by the token's hash.
pub fn authenticate_hash(
    store: &Store,
    token_hash: &[u8],
    now_unix_s: i64,
) -> Result<KeyRecord, AuthError> {
    usable(store.key_by_token_hash(token_hash)?, now_unix_s)
}

/// [`authenticate_hash`], awaited.
pub async fn authenticate_hash_async(
    store: &Store,
    token_hash: &[u8],
    now_unix_s: i64,
) -> Result<KeyRecord, AuthError> {
    usable(store.key_by_token_hash_async(token_hash).await?, now_unix_s)
}

/// The key a token found, if there is one and it has not expired.
fn usable(found: Option<KeyRecord>, now_unix_s: i64) -> Result<KeyRecord, AuthError> {
    let key = found.ok_or(AuthError::InvalidToken)?;
    if is_expired(&key, now_unix_s) {
        return Err(AuthError::TokenExpired);
    }
    Ok(key)
}

/// [`authenticate_hash`] answered from the key cache alone, when it can be
/// without waiting (`None`: the lookup needs the database).
pub fn authenticate_cached(
    store: &Store,
    token_hash: &[u8],
    now_unix_s: i64,
) -> Option<Result<KeyRecord, AuthError>> {
    let key = store.cached_key(token_hash).ok().flatten()?;
    Some(if is_expired(&key, now_unix_s) {
        Err(AuthError::TokenExpired)
    } else {
        Ok(key)
    })
}

/// A key is valid through the end of its expiry date in UTC.
pub fn is_expired(key: &KeyRecord, now_unix_s: i64) -> bool {
    match key.expires_on.as_deref().and_then(end_of_day_utc) {
        Some(end) => now_unix_s >= end,
        // An unparseable stored date cannot be honoured; fail closed.
        None => key.expires_on.is_some(),
    }
}

/// First second after the given `YYYY-MM-DD` day (UTC), as unix seconds.
pub fn end_of_day_utc(date: &str) -> Option<i64> {
    let day = chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").ok()?;
    Some(day.succ_opt()?.and_hms_opt(0, 0, 0)?.and_utc().timestamp())
}

/// Parse an expiry argument: a `YYYY-MM-DD` date, or `never`/empty for none.
pub fn parse_expiry(value: &str) -> Result<Option<String>, String> {
    let v = value.trim();
    if v.is_empty() || v.eq_ignore_ascii_case("never") {
        return Ok(None);
    }
    chrono::NaiveDate::parse_from_str(v, "%Y-%m-%d")
        .map(|d| Some(d.format("%Y-%m-%d").to_string()))
        .map_err(|_| format!("expiry must be YYYY-MM-DD or never, got {v:?}"))
}

/// Parse a platform permission argument: `all`, or a comma list of ids,
/// each one of the `known` platforms.
pub fn parse_platforms(value: &str, known: &[String]) -> Result<Option<Vec<String>>, String> {
    let v = value.trim();
    if v.eq_ignore_ascii_case("all") {
        return Ok(None);
    }
    let mut list: Vec<String> = Vec::new();
    for p in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let p = p.to_ascii_lowercase();
        if !known.contains(&p) {
            return Err(format!(
                "unknown platform {p:?}; known: {}",
                known.join(", ")
            ));
        }
        if !list.contains(&p) {
            list.push(p);
        }
    }
    if list.is_empty() {
        return Err("platforms must be `all` or a comma-separated list of platform ids".into());
    }
    Ok(Some(list))
}

/// Is the key allowed to parse `platform`?
pub fn check_platform(key: &KeyRecord, platform: &str) -> Result<(), AuthError> {
    match &key.platforms {
        Some(list) if !list.iter().any(|p| p == platform) => {
            Err(AuthError::PlatformNotAllowed(platform.into()))
        }
        _ => Ok(()),
    }
}

/// What the caller is told when a key is refused.
impl From<AuthError> for ApiError {
    fn from(e: AuthError) -> Self {
        match e {
            AuthError::PlatformNotAllowed(p) => ApiError::new(
                ErrorCode::PlatformNotAllowed,
                format!("Forbidden: this token may not parse {p}"),
            ),
            AuthError::Store(StoreError::Unavailable(m)) => unavailable(m),
            AuthError::Store(e) => internal(e),
            other => ApiError::of(other.code()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_is_inclusive_of_the_whole_utc_day() {
        let key = |exp: Option<&str>| KeyRecord {
            id: "k".into(),
            account_id: "a".into(),
            name: "n".into(),
            token_prefix: "p".into(),
            expires_on: exp.map(String::from),
            platforms: None,
            created_at: 0,
            rotated_at: None,
            rate_limit_per_minute: None,
            delivery: None,
        };
        // 2026-11-22T00:00:00Z = 1795305600
        let start = 1_795_305_600;
        let k = key(Some("2026-11-22"));
        assert!(!is_expired(&k, start));
        assert!(!is_expired(&k, start + 86_399));
        assert!(is_expired(&k, start + 86_400));
        assert!(!is_expired(&key(None), i64::MAX));
        assert!(is_expired(&key(Some("garbage")), 0));
    }

    #[test]
    fn bearer_parsing() {
        assert!(matches!(bearer(None), Err(AuthError::MissingToken)));
        assert!(matches!(bearer(Some("  ")), Err(AuthError::MissingToken)));
        assert!(matches!(
            bearer(Some("Bearer")),
            Err(AuthError::MissingToken)
        ));
        assert!(matches!(
            bearer(Some("mp_live_x")),
            Err(AuthError::InvalidToken)
        ));
        assert!(matches!(
            bearer(Some("Basic abc")),
            Err(AuthError::InvalidToken)
        ));
        assert_eq!(bearer(Some("bearer  mp_live_x ")).ok(), Some("mp_live_x"));
    }

    #[test]
    fn implausible_tokens_are_known_without_a_lookup() {
        assert!(plausible_token(&mint_token()));
        assert!(!plausible_token("mp_live_"));
        assert!(!plausible_token("sk-abc"));
        assert!(!plausible_token("mp_live_abc$def"));
        assert!(!plausible_token(&format!("mp_live_{}", "a".repeat(200))));
    }

    #[test]
    fn tokens_are_long_prefixed_and_distinct() {
        let (a, b) = (mint_token(), mint_token());
        assert!(a.starts_with(TOKEN_PREFIX) && a.len() >= TOKEN_PREFIX.len() + 43);
        assert_ne!(a, b);
        assert_eq!(hash_token(&a).len(), 32);
    }

    #[test]
    fn platform_lists() {
        let known = vec!["tiktok".to_string(), "youtube".to_string()];
        assert_eq!(parse_platforms("all", &known).unwrap(), None);
        assert_eq!(
            parse_platforms("TikTok, youtube,tiktok", &known).unwrap(),
            Some(vec!["tiktok".into(), "youtube".into()])
        );
        assert!(parse_platforms("myspace", &known).is_err());
        assert!(parse_platforms(",", &known).is_err());
        assert_eq!(parse_expiry("never").unwrap(), None);
        assert!(parse_expiry("2026-02-30").is_err());
    }
}
