//! Bounds on MCP sessions, and whose they are: at most `per_key` open
//! sessions per API key and `overall` in all, and a session id answers only
//! the key that opened it (another key's `Mcp-Session-Id` is `404`, as if
//! it did not exist).
//!
//! A session opens with a POST that carries no `Mcp-Session-Id` (the
//! `initialize` request) and whose answer names one; it ends when the
//! client deletes it or rmcp's session manager drops it after its idle
//! keep-alive (5 minutes), which [`McpSessions`] learns by looking at the
//! manager's live sessions before each new one.
//!
//! No lock is held while a request's body is read or a tool runs: the
//! books are a std mutex taken for a few map operations. A POST without a
//! session id is checked against the bounds before it runs (a refusal costs
//! nothing), and the session it opened is recorded after it ran, under the
//! same mutex as the check; if concurrent openings filled the bounds in
//! between, the new session is closed again and the answer is `503`, so
//! the bounds are never overshot and stateless requests (which open no
//! session) are never counted or queued.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::super::envelope::ApiError;
use mediaparse_core::ErrorCode;
use mediaparse_store::KeyRecord;

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
    books: Mutex<Books>,
}

/// The open sessions this endpoint recorded.
#[derive(Default)]
struct Books {
    /// Session id → the key that opened it, and when it was recorded.
    owners: HashMap<String, Owner>,
    /// The next record's sequence number.
    next: u64,
}

struct Owner {
    key: String,
    recorded: u64,
}

impl Books {
    /// Forget the sessions the manager no longer holds. `live` was read
    /// when the sequence was at `seen`: later records are kept whatever it says.
    fn prune(&mut self, live: &HashSet<String>, seen: u64) {
        self.owners
            .retain(|id, o| o.recorded >= seen || live.contains(id));
    }

    /// Why `key` may not open another session now, if it may not.
    fn refusal(&self, key: &str, limits: SessionLimits) -> Option<String> {
        let of_key = self.owners.values().filter(|o| o.key == key).count();
        if of_key >= limits.per_key {
            Some(format!(
                "this key has {of_key} open MCP sessions, the most allowed; close one (DELETE /mcp) first"
            ))
        } else if self.owners.len() >= limits.overall {
            Some("too many open MCP sessions".to_string())
        } else {
            None
        }
    }
}

impl McpSessions {
    pub fn new(limits: SessionLimits, manager: Arc<LocalSessionManager>) -> Self {
        McpSessions {
            limits,
            manager,
            books: Mutex::new(Books::default()),
        }
    }

    /// The books; a poisoned lock only means a panic mid-update of a map
    /// that stays consistent, so it is taken anyway.
    fn books(&self) -> MutexGuard<'_, Books> {
        self.books.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `session` was opened by `key`.
    fn owned_by(&self, session: &str, key: &str) -> bool {
        self.books()
            .owners
            .get(session)
            .is_some_and(|o| o.key == key)
    }

    /// Prune the books against the manager's live sessions, then check
    /// whether `key` may open one more.
    async fn check(&self, key: &str) -> Option<String> {
        let seen = self.books().next;
        let live: HashSet<String> = self
            .manager
            .sessions
            .read()
            .await
            .keys()
            .map(|id| id.to_string())
            .collect();
        let mut books = self.books();
        books.prune(&live, seen);
        books.refusal(key, self.limits)
    }

    /// Record `session` as `key`'s, unless the bounds filled while it
    /// opened: then the refusal.
    fn record(&self, session: &str, key: &str) -> Result<(), String> {
        let mut books = self.books();
        if let Some(why) = books.refusal(key, self.limits) {
            return Err(why);
        }
        let recorded = books.next;
        books.next += 1;
        books.owners.insert(
            session.to_string(),
            Owner {
                key: key.to_string(),
                recorded,
            },
        );
        Ok(())
    }

    fn forget(&self, session: &str) {
        self.books().owners.remove(session);
    }
}

fn no_such_session() -> Response {
    ApiError::new(ErrorCode::NotFound, "no such MCP session").into_response()
}

/// Middleware (after authentication): refuse a new session past the bounds
/// with `503 overloaded`, record the sessions opened, and answer a session
/// id only for the key that opened it.
pub async fn bound(
    State(sessions): State<Arc<McpSessions>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(key) = request
        .extensions()
        .get::<KeyRecord>()
        .map(|k| k.id.clone())
    else {
        return next.run(request).await;
    };
    let named = request
        .headers()
        .get(SESSION_HEADER)
        .map(|v| v.to_str().unwrap_or_default().to_string());
    if let Some(session) = named {
        if !sessions.owned_by(&session, &key) {
            return no_such_session();
        }
        let deletes = request.method() == Method::DELETE;
        let response = next.run(request).await;
        if deletes && response.status().is_success() {
            sessions.forget(&session);
        }
        return response;
    }
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    if let Some(why) = sessions.check(&key).await {
        return ApiError::new(ErrorCode::Overloaded, why).into_response();
    }
    let response = next.run(request).await;
    let Some(opened) = response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(String::from)
    else {
        return response;
    };
    match sessions.record(&opened, &key) {
        Ok(()) => response,
        Err(why) => {
            // Concurrent openings filled the bounds while this one ran.
            if let Err(e) = sessions.manager.close_session(&opened.into()).await {
                tracing::warn!(error = %e, "could not close an MCP session past the bounds");
            }
            ApiError::new(ErrorCode::Overloaded, why).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sessions(per_key: usize, overall: usize) -> McpSessions {
        McpSessions::new(
            SessionLimits { per_key, overall },
            Arc::new(LocalSessionManager::default()),
        )
    }

    #[test]
    fn a_session_answers_only_the_key_that_opened_it() {
        let s = sessions(4, 8);
        s.record("s1", "a").unwrap();
        assert!(s.owned_by("s1", "a"));
        assert!(!s.owned_by("s1", "b"));
        assert!(!s.owned_by("s2", "a"));
        s.forget("s1");
        assert!(!s.owned_by("s1", "a"));
    }

    #[test]
    fn the_bounds_hold_at_record_time() {
        let s = sessions(2, 3);
        s.record("a1", "a").unwrap();
        s.record("a2", "a").unwrap();
        assert!(s.record("a3", "a").is_err(), "per key");
        s.record("b1", "b").unwrap();
        assert!(s.record("b2", "b").is_err(), "overall");
        assert!(!s.owned_by("a3", "a") && !s.owned_by("b2", "b"));
    }

    #[test]
    fn pruning_keeps_what_was_recorded_after_the_live_read() {
        let s = sessions(4, 8);
        s.record("old", "a").unwrap();
        let seen = s.books().next;
        // Recorded after the live set was read: not in it, but kept.
        s.record("new", "a").unwrap();
        s.books().prune(&HashSet::new(), seen);
        assert!(!s.owned_by("old", "a"), "closed by the manager: forgotten");
        assert!(s.owned_by("new", "a"));
    }
}
