//! `[health]`: how a platform's health is judged from its recent parses and
//! how its circuit breaker cools down (`parse/health`; the policy type lives in `core/health.rs`). Every key is
//! optional; `breaker = "off"` here keeps every platform's breaker from
//! ever refusing a parse, `[platforms.<id>] breaker` sets one platform's
//! (`"on"` or `"off"`, over this default).
//!
//! ```toml
//! [health]
//! window_parses = 50        # the last N parses of a platform are judged…
//! window_secs = 600         # …as long as they are younger than this
//! min_parses = 10           # fewer: too few to call a platform degraded or broken
//! degraded_percent = 30     # platform-side failures from this share: degraded
//! broken_percent = 80       # from this share: broken (the breaker opens)
//! cooldown_ms = 60000       # first open: refuse for this long, then let one parse try
//! cooldown_max_ms = 900000  # a failed try doubles the cool-down, up to this
//! half_open_probes = 1      # parses that may try at once after a cool-down
//! breaker = "on"            # "off": judge and show, never refuse
//! alert_urls = ["https://ops.internal/hooks/mediaparse"]  # POSTed on a change (crate::alerts)
//! alert_secret = "whsec_…"  # signs them (Standard Webhooks); required with alert_urls
//! alert_min_interval_secs = 60  # at most one alert per platform this often
//! canaries = "on"           # parse the canary posts on schedule (default "off"; `--canaries`)
//! canary_every = "15m"      # each platform's canaries once per this (`ms`, `s`, `m`, `h`)
//! failures_per_platform = 20    # failing parses kept as fixture cases per platform
//! failure_max_bytes = 4194304   # a failure with more body bytes is not kept
//! ```
//!
//! The alert URLs and the secret are secrets: never logged or echoed.

use std::time::Duration;

use serde::Deserialize;

use mediaparse_core::health::HealthPolicy;

/// `[health]` as written; [`HealthSettings::policy`] fills in the defaults.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HealthSettings {
    pub window_parses: Option<usize>,
    pub window_secs: Option<u64>,
    pub min_parses: Option<usize>,
    pub degraded_percent: Option<u8>,
    pub broken_percent: Option<u8>,
    pub cooldown_ms: Option<u64>,
    pub cooldown_max_ms: Option<u64>,
    pub half_open_probes: Option<usize>,
    /// Every platform's breaker unless its own section says otherwise.
    pub breaker: Option<BreakerSwitch>,
    /// Where a platform's change of health is POSTed (`http`/`https`).
    #[serde(default)]
    pub alert_urls: Vec<String>,
    /// `whsec_` and the base64 of 16 to 64 bytes: the HMAC-SHA256 key.
    pub alert_secret: Option<String>,
    /// Alerts of one platform at most this often (default 60; 0: every change).
    pub alert_min_interval_secs: Option<u64>,
    /// Run the canaries (`crate::canary`); `--canaries` wins.
    pub canaries: Option<BreakerSwitch>,
    /// How often each platform's canaries run (default 15m).
    pub canary_every: Option<String>,
    /// Failing parses kept per platform (`authoring/failures.rs`; default 20).
    pub failures_per_platform: Option<usize>,
    /// Largest failure kept, its bodies together (default 4 MiB).
    pub failure_max_bytes: Option<usize>,
}

/// Canaries of one platform run once per this unless configured.
pub const DEFAULT_CANARY_EVERY: Duration = Duration::from_secs(15 * 60);

/// The shortest canary interval (a canary is a real request to the platform).
pub const MIN_CANARY_EVERY: Duration = Duration::from_millis(100);

/// Most failures kept per platform.
pub const MAX_FAILURES_PER_PLATFORM: usize = 1000;

/// `"15m"`, `"30s"`, `"1h"`, `"500ms"`: a whole number and its unit.
pub fn parse_interval(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("{text:?}: a number and a unit (ms, s, m, h)"))?;
    let (n, unit) = text.split_at(split);
    let n: u64 = n
        .parse()
        .map_err(|_| format!("{text:?}: a number and a unit (ms, s, m, h)"))?;
    let d = match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.saturating_mul(60)),
        "h" => Duration::from_secs(n.saturating_mul(3600)),
        _ => return Err(format!("{text:?}: the unit is one of ms, s, m, h")),
    };
    Ok(d)
}

/// An interval as configured, checked.
pub fn canary_interval(text: Option<&str>) -> Result<Duration, String> {
    let Some(text) = text else {
        return Ok(DEFAULT_CANARY_EVERY);
    };
    let d = parse_interval(text)?;
    if d < MIN_CANARY_EVERY {
        return Err(format!("canary_every {text:?} is shorter than 100ms"));
    }
    Ok(d)
}

/// `[platforms.<id>] breaker`: whether a broken platform's parses are refused.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum BreakerSwitch {
    #[default]
    On,
    Off,
}

/// The most parses one platform's window may hold (bounded memory).
pub const MAX_WINDOW_PARSES: usize = 10_000;

/// The most alert URLs.
pub const MAX_ALERT_URLS: usize = 8;

/// The alerts' settings, checked: where to, the key, how often.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlertSettings {
    pub urls: Vec<String>,
    pub key: Vec<u8>,
    pub min_interval: Duration,
}

/// The key of a `whsec_…` secret; the error never quotes it.
pub fn alert_key(secret: &str) -> Result<Vec<u8>, String> {
    mediaparse_signing::secret_key(secret).map_err(|e| format!("[health] alert_secret {e}"))
}

/// Failing parses kept per platform unless configured.
pub const DEFAULT_FAILURES_PER_PLATFORM: usize = 20;

/// Largest failure kept unless configured: request and response bodies together.
pub const DEFAULT_FAILURE_MAX_BYTES: usize = 4 * 1024 * 1024;

impl HealthSettings {
    /// Failing parses kept per platform.
    pub fn failures_per_platform(&self) -> usize {
        self.failures_per_platform
            .unwrap_or(DEFAULT_FAILURES_PER_PLATFORM)
    }

    /// Largest failure kept, in body bytes.
    pub fn failure_max_bytes(&self) -> usize {
        self.failure_max_bytes.unwrap_or(DEFAULT_FAILURE_MAX_BYTES)
    }

    /// Whether the configuration runs the canaries.
    pub fn canaries_on(&self) -> bool {
        self.canaries == Some(BreakerSwitch::On)
    }

    /// Every platform's canary interval unless its own section says otherwise.
    pub fn canary_every(&self) -> Duration {
        canary_interval(self.canary_every.as_deref()).unwrap_or(DEFAULT_CANARY_EVERY)
    }

    /// The policy in force, defaults filled in; `platform_breaker` (the
    /// platform's own switch) wins over `[health] breaker`.
    pub fn policy(&self, platform_breaker: Option<BreakerSwitch>) -> HealthPolicy {
        let breaker = platform_breaker.or(self.breaker);
        let d = HealthPolicy::default();
        let cooldown = self
            .cooldown_ms
            .map(Duration::from_millis)
            .unwrap_or(d.cooldown);
        HealthPolicy {
            window_parses: self.window_parses.unwrap_or(d.window_parses),
            window: self
                .window_secs
                .map(Duration::from_secs)
                .unwrap_or(d.window),
            min_parses: self.min_parses.unwrap_or(d.min_parses),
            degraded_percent: self.degraded_percent.unwrap_or(d.degraded_percent),
            broken_percent: self.broken_percent.unwrap_or(d.broken_percent),
            cooldown,
            cooldown_max: self
                .cooldown_max_ms
                .map(Duration::from_millis)
                .unwrap_or(d.cooldown_max)
                .max(cooldown),
            half_open_probes: self.half_open_probes.unwrap_or(d.half_open_probes),
            breaker: breaker.map(|b| b == BreakerSwitch::On),
        }
    }

    /// The alerts to send, `None` when no URL is configured.
    pub fn alerts(&self) -> Option<AlertSettings> {
        if self.alert_urls.is_empty() {
            return None;
        }
        Some(AlertSettings {
            urls: self.alert_urls.clone(),
            // Checked when the file was loaded.
            key: alert_key(self.alert_secret.as_deref().unwrap_or_default()).ok()?,
            min_interval: Duration::from_secs(self.alert_min_interval_secs.unwrap_or(60)),
        })
    }

    /// Whether the values make sense together; the error names the key.
    pub fn check(&self) -> Result<(), String> {
        if self.alert_urls.len() > MAX_ALERT_URLS {
            return Err(format!("[health] alert_urls: at most {MAX_ALERT_URLS}"));
        }
        for (i, raw) in self.alert_urls.iter().enumerate() {
            let ok = url::Url::parse(raw)
                .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some());
            if !ok {
                return Err(format!(
                    "[health] alert_urls entry {} is not an http or https URL",
                    i + 1
                ));
            }
        }
        match &self.alert_secret {
            Some(secret) => {
                alert_key(secret)?;
            }
            None if !self.alert_urls.is_empty() => {
                return Err("[health] alert_urls needs alert_secret (whsec_ and base64)".into());
            }
            None => {}
        }
        canary_interval(self.canary_every.as_deref()).map_err(|e| format!("[health] {e}"))?;
        if self.failures_per_platform() > MAX_FAILURES_PER_PLATFORM {
            return Err(format!(
                "[health] failures_per_platform must be 0 to {MAX_FAILURES_PER_PLATFORM}"
            ));
        }
        let p = self.policy(None);
        if p.window_parses == 0 || p.window_parses > MAX_WINDOW_PARSES {
            return Err(format!(
                "[health] window_parses must be 1 to {MAX_WINDOW_PARSES}"
            ));
        }
        if p.min_parses == 0 || p.min_parses > p.window_parses {
            return Err("[health] min_parses must be 1 to window_parses".into());
        }
        if p.window.is_zero() {
            return Err("[health] window_secs must be at least 1".into());
        }
        for (name, percent) in [
            ("degraded_percent", p.degraded_percent),
            ("broken_percent", p.broken_percent),
        ] {
            if !(1..=100).contains(&percent) {
                return Err(format!("[health] {name} must be 1 to 100"));
            }
        }
        if p.degraded_percent > p.broken_percent {
            return Err("[health] degraded_percent must not exceed broken_percent".into());
        }
        if p.cooldown.is_zero() {
            return Err("[health] cooldown_ms must be at least 1".into());
        }
        if p.half_open_probes == 0 {
            return Err("[health] half_open_probes must be at least 1".into());
        }
        Ok(())
    }
}
