//! What an operator does to keys, accounts and credits, shared by the CLI
//! (`mediaparse keys|accounts|credits|usage`) and the admin HTTP API
//! (`/api/v1/admin/`): both parse their input into these types, call these
//! functions and print or serve the same JSON views.

use serde::Serialize;

use mediaparse_auth as auth;
use mediaparse_core::api_error::{internal, unavailable};
pub use mediaparse_core::clock::rfc3339;
use mediaparse_core::ids::new_id;
use mediaparse_core::{ApiError, ErrorCode};
use mediaparse_store::{
    AccountSummary, CreditChange, KeyEdit, KeyRecord, Store, StoreError, Usage, UsageFilter,
};

#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    #[error("no such {0}: {1}")]
    NotFound(&'static str, String),
    #[error("{0}")]
    Invalid(String),
    /// The account has as many keys as it may have.
    #[error("{0}")]
    KeyLimit(String),
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for OperatorError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound(what, id) => OperatorError::NotFound(what, id),
            StoreError::Invalid(m) => OperatorError::Invalid(m),
            e @ StoreError::KeyLimit(_) => OperatorError::KeyLimit(e.to_string()),
            e @ (StoreError::Sqlite(_)
            | StoreError::SchemaTooNew { .. }
            | StoreError::Unsupported(_)
            | StoreError::Postgres(_)
            | StoreError::Unavailable(_)
            | StoreError::LedgerIdTaken(_)) => OperatorError::Store(e),
        }
    }
}

impl OperatorError {
    /// This error's row in the error table.
    pub fn code(&self) -> ErrorCode {
        match self {
            OperatorError::NotFound("key", _) => ErrorCode::KeyNotFound,
            OperatorError::NotFound("account", _) => ErrorCode::AccountNotFound,
            OperatorError::NotFound(..) => ErrorCode::NotFound,
            OperatorError::Invalid(_) => ErrorCode::InvalidRequest,
            OperatorError::KeyLimit(_) => ErrorCode::KeyLimitReached,
            OperatorError::Store(_) => ErrorCode::Internal,
        }
    }
}

/// The error as every door shows it: a database that cannot be reached is
/// `database_unavailable`, another store failure is internal (its detail
/// logged, never shown), the rest keep their own row and message.
impl From<OperatorError> for ApiError {
    fn from(e: OperatorError) -> Self {
        match e {
            OperatorError::Store(StoreError::Unavailable(m)) => unavailable(m),
            OperatorError::Store(e) => internal(e),
            OperatorError::Invalid(m) => ApiError::invalid_request(m),
            OperatorError::NotFound(..) | OperatorError::KeyLimit(_) => {
                ApiError::new(e.code(), e.to_string())
            }
        }
    }
}

pub type Result<T, E = OperatorError> = std::result::Result<T, E>;

/// A new key, already validated.
#[derive(Clone, Debug)]
pub struct KeySpec {
    pub name: String,
    pub account: String,
    pub expires_on: Option<String>,
    pub platforms: Option<Vec<String>>,
    pub rate_limit_per_minute: Option<u32>,
}

/// A key as operators see it: never the token, only its display prefix.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyView {
    pub id: String,
    pub account: String,
    pub name: String,
    pub token_prefix: String,
    /// Last valid day (UTC); `null` = permanent.
    pub expires_on: Option<String>,
    /// `"all"` or the list of allowed platform ids.
    pub platforms: serde_json::Value,
    /// `null` = the service default; `0` = unlimited.
    pub rate_limit_per_minute: Option<u32>,
    /// `active` or `expired` (at the time of the view).
    pub status: &'static str,
    pub created_at: String,
    pub rotated_at: Option<String>,
}

/// A key with its token: the answer to create and reset, the only time the token is shown.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IssuedKey {
    #[serde(flatten)]
    pub key: KeyView,
    pub token: String,
}

pub fn key_view(key: &KeyRecord, now: i64) -> KeyView {
    KeyView {
        id: key.id.clone(),
        account: key.account_id.clone(),
        name: key.name.clone(),
        token_prefix: key.token_prefix.clone(),
        expires_on: key.expires_on.clone(),
        platforms: platforms_json(&key.platforms),
        rate_limit_per_minute: key.rate_limit_per_minute,
        status: if auth::is_expired(key, now) {
            "expired"
        } else {
            "active"
        },
        created_at: rfc3339(key.created_at),
        rotated_at: key.rotated_at.map(rfc3339),
    }
}

pub fn platforms_json(platforms: &Option<Vec<String>>) -> serde_json::Value {
    match platforms {
        Some(list) => list.clone().into(),
        None => "all".into(),
    }
}

pub fn validate_name(name: &str) -> Result<String> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err(OperatorError::Invalid(
            "a key name must be 1-100 printable characters".into(),
        ));
    }
    Ok(name.to_string())
}

/// `N` requests per minute, `off`/`unlimited` (0), or `default` (`None`).
pub fn parse_rate_limit(value: &str) -> Result<Option<u32>> {
    match value.trim().to_ascii_lowercase().as_str() {
        "default" => Ok(None),
        "off" | "unlimited" | "0" => Ok(Some(0)),
        v => v.parse::<u32>().map(Some).map_err(|_| {
            OperatorError::Invalid(format!(
                "rate limit must be a number of requests per minute, `off` or `default`, got {value:?}"
            ))
        }),
    }
}

pub use mediaparse_store::DEFAULT_MAX_KEYS_PER_ACCOUNT;

/// [`create_key_within`] at the default bound, blocking (for tests that
/// set up keys without a runtime).
pub fn create_key(store: &Store, spec: KeySpec, now: i64) -> Result<IssuedKey> {
    let (key, token) = new_key(spec, now)?;
    store.insert_key_within(
        &key,
        &auth::hash_token(&token),
        Some(DEFAULT_MAX_KEYS_PER_ACCOUNT),
    )?;
    Ok(issued(key, token, now))
}

/// Create a key unless its account already has `max_keys` keys
/// (`KeyLimit`, `409 key_limit_reached`).
pub async fn create_key_within(
    store: &Store,
    spec: KeySpec,
    max_keys: u32,
    now: i64,
) -> Result<IssuedKey> {
    let (key, token) = new_key(spec, now)?;
    store
        .insert_key_within_async(&key, &auth::hash_token(&token), Some(max_keys))
        .await?;
    Ok(issued(key, token, now))
}

/// The key `spec` asks for, with its freshly minted token.
fn new_key(spec: KeySpec, now: i64) -> Result<(KeyRecord, String)> {
    let token = auth::mint_token();
    let key = KeyRecord {
        id: new_id("key"),
        account_id: spec.account,
        name: validate_name(&spec.name)?,
        token_prefix: auth::display_prefix(&token),
        expires_on: spec.expires_on,
        platforms: spec.platforms,
        created_at: now,
        rotated_at: None,
        rate_limit_per_minute: spec.rate_limit_per_minute,
        delivery: None,
    };
    Ok((key, token))
}

fn issued(key: KeyRecord, token: String, now: i64) -> IssuedKey {
    IssuedKey {
        key: key_view(&key, now),
        token,
    }
}

pub async fn edit_key(store: &Store, id: &str, mut edit: KeyEdit, now: i64) -> Result<KeyView> {
    if edit.is_empty() {
        return Err(OperatorError::Invalid(
            "nothing to change: give a name, an expiry, platforms or a rate limit".into(),
        ));
    }
    if let Some(name) = &edit.name {
        edit.name = Some(validate_name(name)?);
    }
    Ok(key_view(&store.edit_key_async(id, &edit, now).await?, now))
}

/// Set key `id`'s default media delivery: `direct`, `tunnel`, or `default`
/// (the service default, direct). Returns the key with its delivery.
pub async fn set_key_delivery(
    store: &Store,
    id: &str,
    value: &str,
    now: i64,
) -> Result<KeyDelivery> {
    let set = match value {
        "direct" | "tunnel" => Some(value),
        "default" => None,
        other => {
            return Err(OperatorError::Invalid(format!(
                "delivery must be direct, tunnel or default, not {other:?}"
            )));
        }
    };
    let delivery = store.key_delivery_async(id, Some(set), now).await?;
    Ok(KeyDelivery {
        key: get_key(store, id, now).await?,
        delivery,
    })
}

/// A key with its default media delivery (`null`: the service default).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyDelivery {
    #[serde(flatten)]
    pub key: KeyView,
    pub delivery: Option<String>,
}

/// A new token for key `id`; the old one stops working with this commit.
pub async fn reset_key(store: &Store, id: &str, now: i64) -> Result<IssuedKey> {
    let token = auth::mint_token();
    let key = store
        .rotate_key_async(
            id,
            &auth::hash_token(&token),
            &auth::display_prefix(&token),
            now,
        )
        .await?;
    Ok(IssuedKey {
        key: key_view(&key, now),
        token,
    })
}

pub async fn delete_key(store: &Store, id: &str, now: i64) -> Result<KeyView> {
    Ok(key_view(&store.delete_key_async(id).await?, now))
}

pub async fn list_keys(store: &Store, account: Option<&str>, now: i64) -> Result<Vec<KeyView>> {
    let keys = match account {
        Some(a) => store.keys_of_account_async(a).await?,
        None => store.keys_async().await?,
    };
    Ok(keys.iter().map(|k| key_view(k, now)).collect())
}

pub async fn get_key(store: &Store, id: &str, now: i64) -> Result<KeyView> {
    Ok(key_view(&store.key_async(id).await?, now))
}

/// An account with its keys.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountView {
    #[serde(flatten)]
    pub account: AccountSummary,
    pub key_list: Vec<KeyView>,
}

pub async fn account(store: &Store, id: &str, now: i64) -> Result<AccountView> {
    Ok(AccountView {
        account: store.account_async(id).await?,
        key_list: list_keys(store, Some(id), now).await?,
    })
}

/// Add credits; `reason` (the operator's words) lands in the grants log.
pub async fn add_credits(
    store: &Store,
    account: &str,
    amount: i64,
    reason: Option<&str>,
    now: i64,
) -> Result<CreditChange> {
    let balance = store
        .add_credits_noted_async(account, amount, reason, now)
        .await?;
    Ok(CreditChange {
        account: account.to_string(),
        previous: balance - amount,
        balance,
        change: amount,
    })
}

/// Set a balance; `reason` lands in the grants log with the difference.
pub async fn set_credits(
    store: &Store,
    account: &str,
    amount: i64,
    reason: Option<&str>,
    now: i64,
) -> Result<CreditChange> {
    Ok(store
        .set_credits_noted_async(account, amount, reason, now)
        .await?)
}

/// Usage with the filter echoed back (times as RFC 3339).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageView {
    pub account: Option<String>,
    pub key: Option<String>,
    pub platform: Option<String>,
    pub from: Option<String>,
    pub until: Option<String>,
    #[serde(flatten)]
    pub usage: Usage,
    /// Media bytes the tunnel served (whole UTC days of the range); no credits.
    pub tunnel: mediaparse_store::TunnelUsage,
}

/// Usage by `filter`; a platform filter must name one of the `known` platforms.
pub async fn usage(store: &Store, filter: &UsageFilter, known: &[String]) -> Result<UsageView> {
    if let Some(p) = &filter.platform
        && !known.contains(p)
    {
        return Err(OperatorError::Invalid(format!("unknown platform {p:?}")));
    }
    if let (Some(from), Some(until)) = (filter.from, filter.until)
        && from >= until
    {
        return Err(OperatorError::Invalid(
            "the time range is empty: `from` must come before `to`".into(),
        ));
    }
    Ok(UsageView {
        account: filter.account.clone(),
        key: filter.key.clone(),
        platform: filter.platform.clone(),
        from: filter.from.map(rfc3339),
        until: filter.until.map(rfc3339),
        usage: store.usage_bounded_async(filter).await?,
        tunnel: store.tunnel_usage_async(filter).await?,
    })
}

/// A time bound for usage queries: `YYYY-MM-DD` (a whole UTC day: its first
/// second for `from`, the first second after it for `to`, so `to` includes
/// the day), an RFC 3339 time, or unix seconds (both exact).
pub fn parse_time_bound(value: &str, is_end: bool) -> Result<i64> {
    let v = value.trim();
    if let Ok(day) = chrono::NaiveDate::parse_from_str(v, "%Y-%m-%d") {
        let day = if is_end { day.succ_opt() } else { Some(day) };
        if let Some(t) = day.and_then(|d| d.and_hms_opt(0, 0, 0)) {
            return Ok(t.and_utc().timestamp());
        }
    }
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(v) {
        return Ok(t.timestamp());
    }
    v.parse::<i64>().map_err(|_| {
        OperatorError::Invalid(format!(
            "time must be YYYY-MM-DD, an RFC 3339 time or unix seconds, got {value:?}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_bounds_and_rate_limits() {
        // 2026-11-22T00:00:00Z = 1795305600
        assert_eq!(
            parse_time_bound("2026-11-22", false).unwrap(),
            1_795_305_600
        );
        assert_eq!(
            parse_time_bound("2026-11-22", true).unwrap(),
            1_795_305_600 + 86_400
        );
        assert_eq!(
            parse_time_bound("2026-11-22T01:00:00Z", true).unwrap(),
            1_795_305_600 + 3600
        );
        assert_eq!(parse_time_bound("12", false).unwrap(), 12);
        assert!(parse_time_bound("yesterday", false).is_err());
        assert_eq!(parse_rate_limit("default").unwrap(), None);
        assert_eq!(parse_rate_limit("off").unwrap(), Some(0));
        assert_eq!(parse_rate_limit("30").unwrap(), Some(30));
        assert!(parse_rate_limit("-1").is_err());
        assert_eq!(rfc3339(1_795_305_600), "2026-11-22T00:00:00Z");
    }

    #[test]
    fn an_account_has_twenty_keys_at_most_by_default() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).unwrap();
        let spec = || KeySpec {
            name: "app".into(),
            account: "acme".into(),
            expires_on: None,
            platforms: None,
            rate_limit_per_minute: Some(5),
        };
        for _ in 0..DEFAULT_MAX_KEYS_PER_ACCOUNT {
            create_key(&store, spec(), 100).unwrap();
        }
        let refused = create_key(&store, spec(), 100).unwrap_err();
        assert_eq!(refused.code(), ErrorCode::KeyLimitReached);
        assert_eq!(refused.code().status(), 409);
        assert_eq!(DEFAULT_MAX_KEYS_PER_ACCOUNT, 20);
    }

    #[tokio::test]
    async fn reset_keeps_permissions_and_shows_the_new_token_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).unwrap();
        let created = create_key(
            &store,
            KeySpec {
                name: " app ".into(),
                account: "acme".into(),
                expires_on: Some("2030-01-01".into()),
                platforms: Some(vec!["tiktok".into()]),
                rate_limit_per_minute: Some(10),
            },
            100,
        )
        .unwrap();
        assert_eq!(created.key.name, "app");
        let reset = reset_key(&store, &created.key.id, 200).await.unwrap();
        assert_ne!(reset.token, created.token);
        assert_eq!(reset.key.platforms, serde_json::json!(["tiktok"]));
        assert_eq!(reset.key.expires_on.as_deref(), Some("2030-01-01"));
        assert_eq!(reset.key.rate_limit_per_minute, Some(10));
        assert!(auth::authenticate(&store, &created.token, 300).is_err());
        assert!(auth::authenticate(&store, &reset.token, 300).is_ok());
        assert!(matches!(
            edit_key(&store, &created.key.id, KeyEdit::default(), 0).await,
            Err(OperatorError::Invalid(_))
        ));
        assert!(matches!(
            reset_key(&store, "key_nope", 0).await,
            Err(OperatorError::NotFound(..))
        ));
    }
}

/// A key's new webhook secret: the answer to creating or rotating it, the
/// only time the secret is shown.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IssuedWebhookSecret {
    pub key_id: String,
    /// `whsec_<base64>`: verifies the `webhook-signature` of this key's deliveries.
    pub secret: String,
    /// Whether a secret was replaced (deliveries sent from now on are
    /// signed with the new one only).
    pub rotated: bool,
}

/// Give key `id` a new webhook secret (replacing any it had).
pub async fn rotate_webhook_secret(
    store: &Store,
    id: &str,
    now: i64,
) -> Result<IssuedWebhookSecret> {
    let had = store.webhook_secret_async(id).await?.is_some();
    let secret = mediaparse_signing::mint_secret();
    store.set_webhook_secret_async(id, &secret, now).await?;
    Ok(IssuedWebhookSecret {
        key_id: id.to_string(),
        secret,
        rotated: had,
    })
}

/// Webhook deliveries as operators and customers list them: times in RFC 3339.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryView {
    pub id: String,
    pub key_id: String,
    pub account: String,
    pub url: String,
    pub event_type: String,
    /// `pending`, `delivered` or `failed` (given up).
    pub state: String,
    pub created_at: String,
    pub next_attempt_at: Option<String>,
    pub finished_at: Option<String>,
    pub last_error: Option<String>,
    pub attempts: Vec<AttemptView>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttemptView {
    pub attempt: u32,
    pub at: String,
    pub status: Option<u16>,
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// RFC 3339 with milliseconds of a Unix-ms time.
fn rfc3339_ms(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
        .unwrap_or_else(|| ms.to_string())
}

/// The newest deliveries (of one key and/or account), with their attempts.
pub async fn webhook_deliveries(
    store: &Store,
    filter: &mediaparse_store::DeliveryFilter,
) -> Result<Vec<DeliveryView>> {
    Ok(store
        .webhook_deliveries_async(filter)
        .await?
        .into_iter()
        .map(|d| DeliveryView {
            id: d.id,
            key_id: d.key_id,
            account: d.account_id,
            url: d.url,
            event_type: d.event_type,
            state: d.state,
            created_at: rfc3339_ms(d.created_ms),
            next_attempt_at: d.next_attempt_ms.map(rfc3339_ms),
            finished_at: d.finished_ms.map(rfc3339_ms),
            last_error: d.last_error,
            attempts: d
                .attempts
                .into_iter()
                .map(|a| AttemptView {
                    attempt: a.attempt,
                    at: rfc3339_ms(a.at_ms),
                    status: a.status,
                    error: a.error,
                    duration_ms: a.duration_ms,
                })
                .collect(),
        })
        .collect())
}
