//! Bounds on MCP sessions: at most `per_key` open sessions per API key and
//! `overall` in all. A session opens with a POST that carries no
//! `Mcp-Session-Id` (the `initialize` request) and whose answer names one;
//! it ends when the client deletes it or rmcp's session manager drops it
//! after its idle keep-alive (5 minutes), which [`McpSessions`] learns by
//! looking at the manager's live sessions before each new one.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::super::envelope::ApiError;
use crate::core::ErrorCode;
use crate::store::KeyRecord;

const SESSION_HEADER: &str = "mcp-session-id";

/// How many MCP sessions may be open.
#[derive(Clone, Copy, Debug)]
pub struct SessionLimits {
    pub per_key: usize,
    pub overall: usize,
}

impl Default for SessionLimits {
    fn default() -> Self {
        SessionLimits {
            per_key: 16,
            overall: 1024,
        }
    }
}

pub struct McpSessions {
    limits: SessionLimits,
    manager: Arc<LocalSessionManager>,
    /// Open session id → the id of the key that opened it. Held across the
    /// opening request, so concurrent openings cannot overshoot the bounds.
    owners: tokio::sync::Mutex<HashMap<String, String>>,
}

impl McpSessions {
    pub fn new(limits: SessionLimits, manager: Arc<LocalSessionManager>) -> Self {
        McpSessions {
            limits,
            manager,
            owners: tokio::sync::Mutex::new(HashMap::new()),
        }
    }
}

/// Middleware (after authentication): refuse a new session past the bounds
/// with `503 overloaded`; record the sessions opened.
pub async fn bound(
    State(sessions): State<Arc<McpSessions>>,
    request: Request,
    next: Next,
) -> Response {
    let opens = request.method() == Method::POST && !request.headers().contains_key(SESSION_HEADER);
    let key = request
        .extensions()
        .get::<KeyRecord>()
        .map(|k| k.id.clone());
    let (true, Some(key)) = (opens, key) else {
        return next.run(request).await;
    };
    let mut owners = sessions.owners.lock().await;
    let live: HashSet<String> = sessions
        .manager
        .sessions
        .read()
        .await
        .keys()
        .map(|id| id.to_string())
        .collect();
    owners.retain(|id, _| live.contains(id));
    let of_key = owners.values().filter(|k| **k == key).count();
    if of_key >= sessions.limits.per_key || owners.len() >= sessions.limits.overall {
        let why = if of_key >= sessions.limits.per_key {
            format!(
                "this key has {of_key} open MCP sessions, the most allowed; close one (DELETE /mcp) first"
            )
        } else {
            "too many open MCP sessions".to_string()
        };
        return ApiError::new(ErrorCode::Overloaded, why).into_response();
    }
    let response = next.run(request).await;
    if let Some(id) = response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
    {
        owners.insert(id.to_string(), key);
    }
    response
}
