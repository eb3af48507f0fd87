//! What every request handler shares. Only the HTTP layer names it: the
//! layers below receive the services they need, one by one.

use std::sync::Arc;

use mediaparse_auth::ratelimit::RateLimits;
use mediaparse_parse::Services;
use mediaparse_reload::ConfigSource;

pub struct AppState {
    /// The store, registry, fetcher, configuration and clocks a parse uses.
    pub services: Arc<Services>,
    /// The configuration file and the state of its hot reload.
    pub config_source: Arc<ConfigSource>,
    /// The operator token guarding `/api/v1/admin/` (`None`: admin API off).
    pub admin_token: Option<String>,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// Per-key token buckets, for parses (REST and MCP).
    pub rate_limits: RateLimits,
    /// Per-key token buckets for the account view (`GET /api/v1/account`):
    /// the same rate, a bucket of its own so a key that spent its parses can
    /// still read its balance.
    pub account_rate_limits: RateLimits,
    /// The MCP endpoint's settings (allowed hosts, shutdown).
    pub mcp: super::mcp::McpSettings,
    /// Media delivery through the tunnel: base URL, token TTL and keys.
    pub tunnel: Arc<mediaparse_tunnel::TunnelSettings>,
    /// Client addresses, the password pool, failure throttles, key bound.
    pub guards: mediaparse_auth::Guards,
    /// `/metrics` is served on its own address (`--metrics-listen`), not here.
    pub metrics_elsewhere: bool,
    /// The webhook delivery queue.
    pub webhooks: mediaparse_webhooks::Webhooks,
    /// Batches run in the background, and this host's runner of them.
    pub jobs: mediaparse_jobs::Jobs,
}

impl AppState {
    /// The client's address as throttles count it (see `auth::client_ip`).
    pub fn client_address(
        &self,
        extensions: &axum::http::Extensions,
        headers: &axum::http::HeaderMap,
    ) -> Option<std::net::IpAddr> {
        let peer = extensions
            .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
            .map(|c| c.0.ip());
        let config = self.services.config.load();
        self.guards
            .client_address(peer, headers, &config.trusted_proxies)
    }

    /// A fingerprint of the operator token: operator console sessions are
    /// bound to it, so they end when the token changes.
    pub fn operator_fingerprint(&self) -> Option<String> {
        self.admin_token
            .as_deref()
            .map(crate::console::operator_fingerprint)
    }

    /// What a parse call needs below the doors.
    pub fn callee(&self) -> mediaparse_call::Callee<'_> {
        mediaparse_call::Callee {
            services: &self.services,
            tunnel: &self.tunnel,
        }
    }

    /// Now, for key expiry checks.
    pub fn auth_now(&self) -> i64 {
        self.services.clock.auth_now_s()
    }
}
