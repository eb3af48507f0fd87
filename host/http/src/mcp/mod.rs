//! The MCP server at `/mcp` (streamable HTTP, rmcp).
//!
//! Every HTTP request to `/mcp` carries the same bearer token as the REST
//! API; a missing, unknown or expired token is refused before rmcp sees the
//! request (`401` with the REST envelope). The tools run the same
//! `pipeline::parse` as the REST handlers, so permissions, prices, the
//! balance pre-check, the charge and the ledger rows are the same.
//!
//! Protocol revisions: the stateless `2026-07-28` revision (no initialize,
//! no session) and the initialize-and-session revisions rmcp supports
//! (`2024-11-05` … `2025-11-25`), both on the one endpoint.
//!
//! rmcp checks the `Host` header against an allow-list (DNS-rebinding
//! protection; its default is loopback only). [`McpSettings::allowed_hosts`]
//! configures it: `--mcp-allowed-hosts` / `MEDIAPARSE_MCP_ALLOWED_HOSTS`.

mod jobs;
pub mod sessions;
mod tools;

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::envelope::ApiError;
use super::extract::ApiKey;
use super::state::AppState;

/// Operator settings of the MCP endpoint.
#[derive(Clone, Debug)]
pub struct McpSettings {
    /// `Host` values (`name` or `name:port`) the endpoint answers; empty
    /// means any host. Loopback names are always included.
    pub allowed_hosts: Vec<String>,
    /// Bounds on open sessions, per key and overall.
    pub sessions: sessions::SessionLimits,
    /// Cancelled at shutdown so open MCP streams end and shutdown can finish.
    pub shutdown: CancellationToken,
}

impl Default for McpSettings {
    fn default() -> Self {
        McpSettings::new(Vec::new())
    }
}

/// The loopback names rmcp allows by default.
const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

impl McpSettings {
    /// From the operator's list: loopback plus the given hosts; `*` allows any host.
    pub fn new(configured: Vec<String>) -> Self {
        let configured: Vec<String> = configured
            .into_iter()
            .map(|h| h.trim().to_ascii_lowercase())
            .filter(|h| !h.is_empty())
            .collect();
        let allowed_hosts = if configured.iter().any(|h| h == "*") {
            Vec::new()
        } else {
            LOOPBACK
                .iter()
                .map(|h| (*h).to_string())
                .chain(configured)
                .collect()
        };
        McpSettings {
            allowed_hosts,
            sessions: sessions::SessionLimits::default(),
            shutdown: CancellationToken::new(),
        }
    }
}

/// `/mcp`: the rmcp service behind the bearer-token check.
pub fn router(state: Arc<AppState>) -> Router<Arc<AppState>> {
    let settings = state.mcp.clone();
    let mut config = StreamableHttpServerConfig::default();
    config.cancellation_token = settings.shutdown.clone();
    config.max_request_body_bytes = state.max_body_bytes;
    config = if settings.allowed_hosts.is_empty() {
        config.disable_allowed_hosts()
    } else {
        config.with_allowed_hosts(settings.allowed_hosts.clone())
    };
    let factory_state = state.clone();
    let manager = Arc::new(LocalSessionManager::default());
    let bounds = Arc::new(sessions::McpSessions::new(
        settings.sessions,
        manager.clone(),
    ));
    let service = StreamableHttpService::new(
        move || Ok(tools::MediaparseMcp::new(factory_state.clone())),
        manager,
        config,
    );
    // Layers run outside in: authenticate, then bound the sessions.
    Router::new()
        .route_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(
            bounds,
            sessions::bound,
        ))
        .layer(axum::middleware::from_fn_with_state(state, authenticate))
}

/// Refuse a request without a valid customer token; hand the key to the tools.
async fn authenticate(key: Result<ApiKey, ApiError>, mut request: Request, next: Next) -> Response {
    match key {
        Ok(ApiKey(key)) => {
            request.extensions_mut().insert(key);
            next.run(request).await
        }
        Err(e) => {
            let mut response = e.into_response();
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"mediaparse\""),
            );
            response
        }
    }
}
