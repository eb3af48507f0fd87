//! `GET /api/v1/account`: a key holder's own view — the account balance, the
//! key's settings and the account's usage (totals, by platform, by key, the
//! most recent charges). Same bearer token and 401 codes as a parse; rate
//! limited in a bucket of its own (policy `account` in the `RateLimit`
//! headers); costs nothing (`X-Credits-Charged: 0`).
//!
//! Query (all optional): `platform`, `from`, `to` (YYYY-MM-DD, RFC 3339 or
//! unix seconds, as for `mediaparse usage`), `entries` (default 20, max 1000).

use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Extension, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use serde_json::json;

use super::admin_keys::UsageQuery;
use super::envelope::{ApiError, credits_zero_unless_set};
use super::extract::ApiKey;
use super::rate_headers::{self, RateSlot};
use super::state::AppState;
use mediaparse_operator as operator;

pub fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/api/v1/account", get(view))
        .layer(axum::middleware::map_response(credits_zero_unless_set))
        .layer(axum::middleware::from_fn(rate_headers::layer))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewQuery {
    platform: Option<String>,
    from: Option<String>,
    to: Option<String>,
    entries: Option<usize>,
}

async fn view(
    State(state): State<Arc<AppState>>,
    ApiKey(key): ApiKey,
    slot: Option<Extension<RateSlot>>,
    q: Result<Query<ViewQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    // The account view reads the ledger: rate limited like a parse, in a bucket of its own.
    let default = state.services.config.load().limits.rate_limit_per_minute;
    let slot = slot.as_ref().map(|Extension(s)| s);
    rate_headers::check(&state.account_rate_limits, &key, default, slot).await?;
    let Query(q) = q.map_err(|e| ApiError::invalid_request(format!("invalid query: {e}")))?;
    let filter = UsageQuery {
        account: Some(key.account_id.clone()),
        platform: q.platform,
        from: q.from,
        to: q.to,
        entries: q.entries,
        key: None,
    }
    .filter()?;
    let store = &state.services.store;
    let auth_now = state.auth_now();
    let catalogue = state.services.registry.known();
    let known: Vec<String> = catalogue.ids().into_iter().map(String::from).collect();
    let balance = store
        .balance_async(&filter.account.clone().unwrap_or_default())
        .await;
    let usage = operator::usage(store, &filter, &known).await;
    // An account row exists for every key (created with it).
    let balance = balance.map_err(super::envelope::store_failure)?;
    let usage = usage?;
    let data = json!({
        "account": key.account_id,
        "balance": balance,
        "key": operator::key_view(&key, auth_now),
        "usage": usage,
        "prices": mediaparse_billing::price_table(&catalogue, |id| {
            state.services.config.load().price_override(id)
        }),
    });
    Ok((
        StatusCode::OK,
        axum::Json(json!({"status": 200, "data": data, "msg": "success"})),
    )
        .into_response())
}
