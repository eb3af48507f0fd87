//! `GET /api/v1/account`: a key holder's own view — the account balance, the
//! key's settings and the account's usage (totals, by platform, by key, the
//! most recent charges). Same bearer token and 401 codes as a parse; not rate
//! limited; costs nothing (`X-Credits-Charged: 0`).
//!
//! Query (all optional): `platform`, `from`, `to` (YYYY-MM-DD, RFC 3339 or
//! unix seconds, as for `mediaparse usage`), `entries` (default 20, max 1000).

use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;

use super::admin_keys::UsageQuery;
use super::envelope::{ApiError, CREDITS_HEADER};
use crate::operator;
use crate::state::AppState;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewQuery {
    platform: Option<String>,
    from: Option<String>,
    to: Option<String>,
    entries: Option<usize>,
}

pub async fn view(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    q: Result<Query<ViewQuery>, QueryRejection>,
) -> Response {
    let mut response = match answer(&state, &headers, q).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    };
    response
        .headers_mut()
        .insert(CREDITS_HEADER, HeaderValue::from(0));
    response
}

async fn answer(
    state: &Arc<AppState>,
    headers: &HeaderMap,
    q: Result<Query<ViewQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let key = super::parse::authenticate(state, headers).await?;
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
    let store = state.store.clone();
    let auth_now = state.auth_now();
    let catalogue = state.registry.known();
    let known: Vec<String> = catalogue.ids().into_iter().map(String::from).collect();
    let (balance, usage) = tokio::task::spawn_blocking(move || {
        let balance = store.balance(&filter.account.clone().unwrap_or_default());
        let usage = operator::usage(&store, &filter, &known);
        (balance, usage)
    })
    .await
    .map_err(super::envelope::internal)?;
    // An account row exists for every key (created with it).
    let balance = balance.map_err(super::envelope::internal)?;
    let usage = usage?;
    let data = json!({
        "account": key.account_id,
        "balance": balance,
        "key": operator::key_view(&key, auth_now),
        "usage": usage,
        "prices": crate::billing::price_table(&catalogue, &state.config.load()),
    });
    Ok((
        StatusCode::OK,
        axum::Json(json!({"status": 200, "data": data, "msg": "success"})),
    )
        .into_response())
}
