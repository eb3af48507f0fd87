//! What every request handler shares.

use std::sync::Arc;

use arc_swap::ArcSwap;
use mediaparse_sdk::Header;

use crate::config::OperatorConfig;

use crate::fetch::Fetcher;
use crate::pipeline::ParseLimits;
use crate::registry::Registry;
use crate::store::Store;

pub struct AppState {
    pub store: Store,
    pub registry: Arc<Registry>,
    pub fetcher: Arc<Fetcher>,
    pub limits: ParseLimits,
    /// The operator configuration (platform switches, `context.config` values).
    pub config: ArcSwap<OperatorConfig>,
    /// The configuration file and the state of its hot reload.
    pub config_source: crate::reload::ConfigSource,
    /// The operator token guarding `/api/v1/admin/` (`None`: admin API off).
    pub admin_token: Option<String>,
    /// A fixed `context.now-unix-ms` for replay and tests; `None` = the real clock.
    pub fixed_clock_ms: Option<u64>,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// Per-key token buckets.
    pub rate_limits: crate::ratelimit::RateLimits,
    /// A fixed clock for key expiry (unix seconds; tests only); `None` = the real clock.
    pub auth_clock: Option<i64>,
    /// The MCP endpoint's settings (allowed hosts, shutdown).
    pub mcp: crate::mcp::McpSettings,
}

impl AppState {
    pub fn now_unix_ms(&self) -> u64 {
        self.fixed_clock_ms
            .unwrap_or_else(|| chrono::Utc::now().timestamp_millis().max(0) as u64)
    }

    /// Now, for key expiry checks.
    pub fn auth_now(&self) -> i64 {
        self.auth_clock
            .unwrap_or_else(|| chrono::Utc::now().timestamp())
    }

    pub fn platform_config(&self, platform: &str) -> Vec<Header> {
        self.config.load().extractor_config(platform)
    }

    pub fn platform_enabled(&self, platform: &str) -> bool {
        self.config.load().enabled(platform)
    }
}
