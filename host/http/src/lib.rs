//! The HTTP layer (axum): the REST API, `/mcp`, the OpenAPI documents, the
//! request id and the error envelope. Handlers are thin: extractors check
//! the caller ([`extract`]), the layers below do the work. Each route module
//! has its own `router()`; [`router`] merges them.

mod account;
mod admin_extractors;
mod admin_keys;
mod admin_webhooks;
mod batch;
pub mod body;
mod cache_status;
mod capabilities;
pub mod console;
pub mod envelope;
pub mod extract;
mod health;
pub mod idempotency;
mod jobs;
pub mod listener;
pub mod mcp;
pub mod openapi;
pub mod ops;
mod page_headers;
mod parse;
pub mod rate_headers;
mod request_id;
pub mod server;
pub mod state;
pub mod tunnel;
mod write_deadline;

pub use capabilities::capabilities_data;
pub use request_id::{ClientRequestId, RequestId};
pub use state::AppState;

use std::sync::Arc;

use axum::Router;

use envelope::ApiError;
use mediaparse_core::ErrorCode;

pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .merge(parse::router())
        .merge(batch::router())
        .merge(jobs::router())
        .merge(capabilities::router())
        .merge(account::router())
        .merge(admin_keys::router(state.clone()))
        .merge(admin_webhooks::router(state.clone()))
        .merge(admin_extractors::router())
        .merge(ops::router())
        .merge(health::router())
        .merge(openapi::router())
        .merge(tunnel::router())
        .merge(mcp::router(state.clone()))
        .merge(console::router(state.clone()))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn(request_id::middleware))
        .with_state(state)
}

async fn not_found() -> ApiError {
    ApiError::of(ErrorCode::NotFound)
}

async fn method_not_allowed() -> ApiError {
    ApiError::of(ErrorCode::MethodNotAllowed)
}

#[cfg(test)]
mod tests;
