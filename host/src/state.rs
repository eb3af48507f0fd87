//! What every request handler shares.

use std::collections::BTreeMap;
use std::sync::Arc;

use mediaparse_sdk::Header;

use crate::fetch::Fetcher;
use crate::pipeline::ParseLimits;
use crate::registry::Registry;
use crate::store::Store;

pub struct AppState {
    pub store: Store,
    pub registry: Arc<Registry>,
    pub fetcher: Arc<Fetcher>,
    pub limits: ParseLimits,
    /// Operator settings per platform, handed to extractors as `context.config`.
    pub platform_config: BTreeMap<String, Vec<Header>>,
    /// A fixed `context.now-unix-ms` for replay and tests; `None` = the real clock.
    pub fixed_clock_ms: Option<u64>,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
}

impl AppState {
    pub fn now_unix_ms(&self) -> u64 {
        self.fixed_clock_ms
            .unwrap_or_else(|| chrono::Utc::now().timestamp_millis().max(0) as u64)
    }

    pub fn platform_config(&self, platform: &str) -> Vec<Header> {
        self.platform_config
            .get(platform)
            .cloned()
            .unwrap_or_default()
    }
}
