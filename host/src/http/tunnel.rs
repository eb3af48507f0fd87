//! Media delivery over HTTP (issue 15): which delivery a parse answer uses
//! (`?delivery=` / the MCP argument, else the key's default, else direct),
//! the rewrite of its media URLs into tunnel URLs, and
//! `GET|HEAD /api/v1/tunnel/{token}`, which needs no `Authorization`: the
//! token is the capability (so `<video src>` works).

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use mediaparse_sdk::Header;

use crate::parse::Parsed;
use crate::store::KeyRecord;
use crate::tunnel::stream::{self, Sources};
use crate::tunnel::{Delivery, Grant};

use super::envelope::{ApiError, internal};
use super::state::AppState;

pub fn router() -> Router<Arc<AppState>> {
    // `get` answers HEAD too; the handler sends no body then.
    Router::new().route("/api/v1/tunnel/{token}", get(tunnel))
}

async fn tunnel(
    State(state): State<Arc<AppState>>,
    Path(token): Path<String>,
    method: Method,
    headers: HeaderMap,
) -> Response {
    let client_headers: Vec<Header> = headers
        .iter()
        .filter_map(|(name, value)| Some(Header::new(name.as_str(), value.to_str().ok()?)))
        .collect();
    let config = state.services.config.load();
    let sources = Sources {
        settings: &state.tunnel,
        registry: &state.services.registry,
        config: &config,
        now: crate::core::clock::unix_now_s(),
    };
    let streamed =
        match stream::serve(&sources, &token, method == Method::HEAD, &client_headers).await {
            Ok(s) => s,
            Err(e) => {
                let code = e.code();
                // The detail may name the upstream URL or host: logged, never answered.
                tracing::info!(code = code.as_str(), error = %e, "tunnel refused");
                return ApiError::of(code).into_response();
            }
        };
    tracing::info!(platform = %streamed.claims.platform, status = streamed.status, "tunnel");
    let mut builder = Response::builder()
        .status(StatusCode::from_u16(streamed.status).unwrap_or(StatusCode::BAD_GATEWAY));
    for (name, value) in &streamed.headers {
        builder = builder.header(*name, value);
    }
    let body = match streamed.body {
        Some(stream) => Body::from_stream(stream),
        None => Body::empty(),
    };
    builder
        .body(body)
        .unwrap_or_else(|e| internal(e).into_response())
}

/// The delivery for this request: `requested` when given (a bad value is
/// `400 invalid_request`), else the key's default.
pub async fn resolve(
    state: &AppState,
    key: &KeyRecord,
    requested: Option<&str>,
) -> Result<Delivery, ApiError> {
    if let Some(requested) = requested {
        return requested.parse().map_err(ApiError::invalid_request);
    }
    let store = state.services.store.clone();
    let id = key.id.clone();
    let stored = tokio::task::spawn_blocking(move || store.key_delivery(&id, None, 0))
        .await
        .map_err(internal)?;
    match stored {
        Ok(Some(d)) => d.parse().map_err(internal),
        // A key deleted since it was authenticated parses as direct.
        Ok(None) | Err(crate::store::StoreError::NotFound(..)) => Ok(Delivery::Direct),
        Err(e) => Err(super::envelope::store_failure(e)),
    }
}

/// Point every media URL of `parsed` at the tunnel when `delivery` says so.
pub fn apply(state: &AppState, key: &KeyRecord, delivery: Delivery, parsed: &mut Parsed) {
    if delivery != Delivery::Tunnel {
        return;
    }
    let grant = Grant {
        platform: parsed.platform.clone(),
        account: key.account_id.clone(),
        key_id: key.id.clone(),
        egress: None,
        now: crate::core::clock::unix_now_s(),
    };
    state.tunnel.deliver(&grant, &mut parsed.media);
}
