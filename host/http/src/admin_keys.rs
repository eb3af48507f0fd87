//! The admin HTTP API for keys, accounts, credits and usage, under
//! `/api/v1/admin/`, every route behind [`OperatorToken`].
//! Bodies and answers use the same JSON as the CLI's `--json`, in the
//! envelope `{"status","data","msg"}`; errors use the error envelope.
//!
//! | route | what |
//! |---|---|
//! | `GET /api/v1/admin/keys[?account=]` | list keys |
//! | `POST /api/v1/admin/keys` | create: `{name, account?, expiresOn?, platforms?, rateLimitPerMinute?}` → 201 with `token` |
//! | `GET /api/v1/admin/keys/{id}` | one key |
//! | `PATCH /api/v1/admin/keys/{id}` | edit any of `name`, `expiresOn`, `platforms`, `rateLimitPerMinute`, `delivery` (`direct`, `tunnel`, `null` = default) |
//! | `POST /api/v1/admin/keys/{id}/reset` | new token, shown once |
//! | `DELETE /api/v1/admin/keys/{id}` | delete |
//! | `GET /api/v1/admin/accounts` | accounts with balances |
//! | `POST /api/v1/admin/accounts` | create: `{id}` → 201 (409 if it exists) |
//! | `GET /api/v1/admin/accounts/{id}` | one account with its keys |
//! | `POST /api/v1/admin/accounts/{id}/credits` | `{add: N}` or `{set: N}` |
//! | `GET /api/v1/admin/usage?account=&key=&platform=&from=&to=&entries=` | usage |
//!
//! The key's webhook secret and deliveries: `admin_webhooks`.

use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use super::envelope::{ApiError, internal};
use super::extract::{JsonBody, OperatorToken, serde_body};
use super::state::AppState;
use mediaparse_auth as auth;
use mediaparse_core::ErrorCode;
use mediaparse_operator::{self as operator, KeySpec, OperatorError};
use mediaparse_store::{KeyEdit, Store, UsageFilter};

pub fn router(state: Arc<AppState>) -> Router<Arc<AppState>> {
    Router::new()
        .route("/api/v1/admin/keys", get(list_keys).post(create_key))
        .route(
            "/api/v1/admin/keys/{id}",
            get(get_key).patch(edit_key).delete(delete_key),
        )
        .route("/api/v1/admin/keys/{id}/reset", post(reset_key))
        .route(
            "/api/v1/admin/accounts",
            get(list_accounts).post(create_account),
        )
        .route("/api/v1/admin/accounts/{id}", get(get_account))
        .route("/api/v1/admin/accounts/{id}/credits", post(credits))
        .route("/api/v1/admin/usage", get(usage))
        .route_layer(axum::middleware::from_fn_with_state(state, guard))
}

/// The operator token before anything else of the request is read.
pub(super) async fn guard(_: OperatorToken, request: Request, next: Next) -> Response {
    next.run(request).await
}

pub(super) type Answer = Result<Response, ApiError>;

pub(super) fn ok(status: StatusCode, data: impl serde::Serialize) -> Answer {
    let data = serde_json::to_value(data).map_err(internal)?;
    Ok((
        status,
        axum::Json(json!({"status": status.as_u16(), "data": data, "msg": "success"})),
    )
        .into_response())
}

/// Run an operator call (`operator::*`, the store's awaited calls).
pub(super) async fn op<T>(
    state: &AppState,
    f: impl AsyncFnOnce(&Store, i64) -> Result<T, OperatorError>,
) -> Result<T, ApiError> {
    // The auth clock, so a key's `status` agrees with what a parse would see.
    Ok(f(&state.services.store, state.auth_now()).await?)
}

pub(super) fn query<T>(q: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    q.map(|Query(t)| t)
        .map_err(|e| ApiError::invalid_request(format!("invalid query: {e}")))
}

/// The platform ids the service knows (loaded, or removed while running).
fn known_platforms(state: &AppState) -> Vec<String> {
    state
        .services
        .registry
        .known()
        .ids()
        .into_iter()
        .map(String::from)
        .collect()
}

/// Present-but-null is `Some(None)`; absent is `None` (with `#[serde(default)]`).
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

fn expiry(value: Option<&str>) -> Result<Option<String>, ApiError> {
    auth::parse_expiry(value.unwrap_or("never")).map_err(ApiError::invalid_request)
}

/// `"all"`, `"p1,p2"`, `["p1","p2"]`, or null (all).
fn platforms(value: &Value, known: &[String]) -> Result<Option<Vec<String>>, ApiError> {
    let text = match value {
        Value::Null => "all".to_string(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(String::from)
                    .ok_or_else(|| ApiError::invalid_request("platforms must be strings"))
            })
            .collect::<Result<Vec<_>, _>>()?
            .join(","),
        _ => {
            return Err(ApiError::invalid_request(
                "platforms must be \"all\" or a list of platform ids",
            ));
        }
    };
    auth::parse_platforms(&text, known).map_err(ApiError::invalid_request)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AccountQuery {
    account: Option<String>,
}

async fn list_keys(
    State(state): State<Arc<AppState>>,
    q: Result<Query<AccountQuery>, QueryRejection>,
) -> Answer {
    let account = query(q)?.account;
    let keys = op(&state, async move |s, now| {
        operator::list_keys(s, account.as_deref(), now).await
    })
    .await?;
    ok(StatusCode::OK, keys)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CreateKey {
    name: String,
    account: Option<String>,
    expires_on: Option<String>,
    #[serde(default)]
    platforms: Value,
    rate_limit_per_minute: Option<u32>,
}

async fn create_key(
    State(state): State<Arc<AppState>>,
    JsonBody(b): JsonBody<CreateKey>,
) -> Answer {
    let spec = KeySpec {
        name: b.name,
        account: b.account.unwrap_or_else(|| "default".into()),
        expires_on: expiry(b.expires_on.as_deref())?,
        platforms: platforms(&b.platforms, &known_platforms(&state))?,
        rate_limit_per_minute: b.rate_limit_per_minute,
    };
    let max_keys = state.guards.max_keys_per_account;
    let issued = op(&state, async move |s, now| {
        operator::create_key_within(s, spec, max_keys, now).await
    })
    .await?;
    ok(StatusCode::CREATED, issued)
}

async fn get_key(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Answer {
    ok(
        StatusCode::OK,
        op(&state, async move |s, now| {
            operator::get_key(s, &id, now).await
        })
        .await?,
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct EditKey {
    name: Option<String>,
    #[serde(default, deserialize_with = "present")]
    expires_on: Option<Option<String>>,
    platforms: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    rate_limit_per_minute: Option<Option<u32>>,
    #[serde(default, deserialize_with = "present")]
    delivery: Option<Option<String>>,
}

async fn edit_key(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    JsonBody(b): JsonBody<EditKey>,
) -> Answer {
    let edit = KeyEdit {
        name: b.name,
        expires_on: b.expires_on.map(|e| expiry(e.as_deref())).transpose()?,
        platforms: b
            .platforms
            .as_ref()
            .map(|p| platforms(p, &known_platforms(&state)))
            .transpose()?,
        rate_limit_per_minute: b.rate_limit_per_minute,
    };
    if let Some(delivery) = b.delivery {
        // `null` goes back to the service default.
        let delivery = delivery.unwrap_or_else(|| "default".into());
        let key = op(&state, async move |s, now| {
            if !edit.is_empty() {
                operator::edit_key(s, &id, edit, now).await?;
            }
            operator::set_key_delivery(s, &id, &delivery, now).await
        })
        .await?;
        return ok(StatusCode::OK, key);
    }
    let key = op(&state, async move |s, now| {
        operator::edit_key(s, &id, edit, now).await
    })
    .await?;
    ok(StatusCode::OK, key)
}

async fn reset_key(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Answer {
    ok(
        StatusCode::OK,
        op(&state, async move |s, now| {
            operator::reset_key(s, &id, now).await
        })
        .await?,
    )
}

async fn delete_key(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Answer {
    let key = op(&state, async move |s, now| {
        operator::delete_key(s, &id, now).await
    })
    .await?;
    ok(StatusCode::OK, json!({"deleted": key}))
}

async fn list_accounts(State(state): State<Arc<AppState>>) -> Answer {
    ok(
        StatusCode::OK,
        op(&state, async |s, _| Ok(s.accounts_async().await?)).await?,
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateAccount {
    id: String,
}

async fn create_account(
    State(state): State<Arc<AppState>>,
    JsonBody(b): JsonBody<CreateAccount>,
) -> Answer {
    let id = b.id.clone();
    let created = op(&state, async move |s, now| {
        Ok(s.create_account_async(&id, now).await?)
    })
    .await?;
    if !created {
        return Err(ApiError::new(
            ErrorCode::AccountExists,
            format!("account {} already exists", b.id),
        ));
    }
    let view = op(&state, async move |s, now| {
        operator::account(s, &b.id, now).await
    })
    .await?;
    ok(StatusCode::CREATED, view)
}

async fn get_account(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Answer {
    ok(
        StatusCode::OK,
        op(&state, async move |s, now| {
            operator::account(s, &id, now).await
        })
        .await?,
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Credits {
    add: Option<i64>,
    set: Option<i64>,
    /// Kept in the account's grants log.
    reason: Option<String>,
}

async fn credits(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<Credits>,
) -> Answer {
    let change = match body {
        Credits {
            add: Some(n),
            set: None,
            reason,
        } => {
            op(&state, async move |s, now| {
                operator::add_credits(s, &id, n, reason.as_deref(), now).await
            })
            .await?
        }
        Credits {
            add: None,
            set: Some(n),
            reason,
        } => {
            op(&state, async move |s, now| {
                operator::set_credits(s, &id, n, reason.as_deref(), now).await
            })
            .await?
        }
        _ => {
            return Err(ApiError::invalid_request(
                "give exactly one of `add` or `set`",
            ));
        }
    };
    ok(StatusCode::OK, change)
}

serde_body!(CreateKey, EditKey, CreateAccount, Credits);

/// Query of `GET /api/v1/admin/usage` (and, without account and key, of the customer view).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct UsageQuery {
    pub account: Option<String>,
    pub key: Option<String>,
    pub platform: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub entries: Option<usize>,
}

impl UsageQuery {
    pub fn filter(self) -> Result<UsageFilter, ApiError> {
        let bound = |v: Option<String>, end| {
            v.as_deref()
                .map(|v| operator::parse_time_bound(v, end))
                .transpose()
                .map_err(ApiError::from)
        };
        Ok(UsageFilter {
            account: self.account,
            key: self.key,
            platform: self.platform.map(|p| p.to_ascii_lowercase()),
            from: bound(self.from, false)?,
            until: bound(self.to, true)?,
            entries: self.entries.unwrap_or(20).min(1000),
        })
    }
}

async fn usage(
    State(state): State<Arc<AppState>>,
    q: Result<Query<UsageQuery>, QueryRejection>,
) -> Answer {
    let filter = query(q)?.filter()?;
    let known = known_platforms(&state);
    ok(
        StatusCode::OK,
        op(&state, async move |s, _| {
            operator::usage(s, &filter, &known).await
        })
        .await?,
    )
}
