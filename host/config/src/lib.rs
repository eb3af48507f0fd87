//! The operator configuration file (TOML, `--config` / `MEDIAPARSE_CONFIG`),
//! hot-reloaded while the service runs: per-platform switches, the values
//! handed to extractors as `context.config` (cookies, tokens, query ids), an
//! outbound proxy per platform, timeouts and limits (defaults in `[limits]`,
//! overrides per platform) and the rate-limit default.
//!
//! Configured values and proxy URLs are secrets: they are never logged,
//! never put in an error or a metric, and scrubbed from anything an
//! extractor returns ([`Secrets`]).
//!
//! ```toml
//! [limits]
//! call_timeout_ms = 5000
//! rate_limit_per_minute = 120
//!
//! [health]                            # platform health and the breaker (config/health.rs)
//! cooldown_ms = 60000
//!
//! [platforms.twitter]
//! enabled = true
//! breaker = "on"
//! proxy = "http://user:pass@proxy.internal:3128"
//! [[platforms.twitter.exits]]          # an exit pool (fetch/exits.rs)
//! label = "dc-1"
//! url = "socks5h://user:pass@exit1.internal:1080"
//! fetch_profile = "chrome"   # TLS/HTTP2 identity; absent: the platform.toml default
//! [platforms.twitter.limits]
//! request_timeout_ms = 4000
//! [platforms.twitter.config]
//! cookie = "auth_token=…; ct0=…"
//! ```

pub mod health;
pub mod jobs;
pub mod test_mode;
pub mod webhooks;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use mediaparse_sdk::Header;
use serde::Deserialize;

pub use health::{BreakerSwitch, HealthSettings};
use mediaparse_core::ParseLimits;
pub use mediaparse_core::Secrets;
use mediaparse_core::health::HealthPolicy;
use mediaparse_fetch::{Cooling, ExitSpec, FetchLimits, Pace, ProfileSetting, SessionSpec};
use mediaparse_registry::SandboxLimits;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperatorConfig {
    /// Defaults for every platform.
    #[serde(default)]
    pub limits: LimitSettings,
    #[serde(default)]
    pub platforms: BTreeMap<String, PlatformSettings>,
    /// The web console (`[console]`): who may sign up.
    #[serde(default)]
    pub console: ConsoleSettings,
    /// Reverse proxies (CIDRs) whose `Forwarded` / `X-Forwarded-For` names
    /// the client, besides `--trusted-proxy`.
    #[serde(default)]
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// `[health]`: how platform health is judged and the breaker cools down.
    #[serde(default)]
    pub health: HealthSettings,
    /// `[webhooks]`: the retry schedule and bounds of webhook deliveries.
    #[serde(default)]
    pub webhooks: webhooks::WebhookSettings,
    /// `[jobs]`: how long finished jobs are kept, leases and polling.
    #[serde(default)]
    pub jobs: jobs::JobSettings,
}

/// `[console]`: `signup = "invite"` (default: only invited users) or
/// `"open"` (anyone may create an account, granted `starting_credits` once
/// its e-mail address is verified through a link sent by `mail_command`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsoleSettings {
    #[serde(default)]
    pub signup: Signup,
    #[serde(default)]
    pub starting_credits: u32,
    /// The program that sends the console's e-mail, as an argument vector
    /// (`["/usr/sbin/sendmail", "-i", "--"]`): run without a shell, the
    /// message (headers, blank line, text) on its standard input, the
    /// recipient appended as the last argument and in `MEDIAPARSE_MAIL_TO`.
    /// Required by `signup = "open"`.
    #[serde(default)]
    pub mail_command: Option<Vec<String>>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Signup {
    #[default]
    Invite,
    Open,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlatformSettings {
    /// A disabled platform answers `503 extractor_unavailable`.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Credits one successful parse costs; overrides the platform's
    /// `platform.toml` price.
    #[serde(default)]
    pub price: Option<i64>,
    /// Outbound proxy for this platform's upstream requests (`http://` or
    /// `https://`, credentials allowed in the URL).
    #[serde(default)]
    pub proxy: Option<String>,
    /// The platform's exit pool (`http://`, `https://`, `socks5h://`
    /// proxies, credentials allowed in the URL). `proxy` counts as one more
    /// exit labelled `proxy`. None at all: direct.
    #[serde(default)]
    pub exits: Vec<ExitSettings>,
    /// The platform's session pool (fetch/sessions.rs): one per parse.
    #[serde(default)]
    pub sessions: Vec<SessionSettings>,
    /// Forces the TLS/HTTP2 identity of this platform's upstream requests
    /// (`browser`, `chrome`, `safari`, `firefox`, `okhttp`, `rustls`);
    /// absent: the platform's `platform.toml` default.
    #[serde(default)]
    pub fetch_profile: Option<String>,
    /// Overrides of `[limits]` for this platform.
    #[serde(default)]
    pub limits: LimitSettings,
    /// Name/value pairs for the extractor's `context.config`.
    #[serde(default)]
    pub config: BTreeMap<String, String>,
    /// Hosts of operator-run helper services (a token provider, say) the
    /// extractor may call besides its manifest's api-hosts: exact host
    /// names or IP literals, reached directly, private addresses allowed.
    #[serde(default)]
    pub helper_hosts: Vec<String>,
    /// Names in `config` whose values are not secrets, so not redacted
    /// from answers (a client version that is part of a User-Agent the
    /// extractor hands out, say). Every other value is a secret.
    #[serde(default)]
    pub public_config: Vec<String>,
    /// `"on"`: while the platform is broken its parses are refused at once
    /// (`503 platform_unavailable`); `"off"`: never. Unset: `[health] breaker`
    /// (default on).
    #[serde(default)]
    pub breaker: Option<BreakerSwitch>,
    /// Canary posts replacing the platform's own (`platform.toml`
    /// `[[canary]]`): `[{ url = "…", expect = { min_videos = 1 } }]`; `[]`: none.
    #[serde(default)]
    pub canaries: Option<Vec<mediaparse_catalogue::Canary>>,
    /// How often this platform's canaries run (over `[health] canary_every`).
    #[serde(default)]
    pub canary_every: Option<String>,
}

/// One exit of a pool: the label operators see, the URL they never do.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExitSettings {
    pub label: String,
    pub url: String,
}

/// One operator session: its label, its cookie string and extra
/// `context.config` values (all secrets), and optionally the exit it must use.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionSettings {
    pub label: String,
    #[serde(default)]
    pub cookie: String,
    #[serde(default)]
    pub config: BTreeMap<String, String>,
    /// The label of one of the platform's exits.
    #[serde(default)]
    pub exit: Option<String>,
}

/// Timeouts and limits; every field is optional and falls back to the
/// platform-wide `[limits]`, then to the built-in default.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitSettings {
    /// Whole parse, every round included (default 30000).
    pub parse_timeout_ms: Option<u64>,
    /// One upstream request, connect to last byte (default 10000).
    pub request_timeout_ms: Option<u64>,
    /// Largest upstream response body (default 8 MiB).
    pub max_response_bytes: Option<usize>,
    /// One guest call (detect, plan or map), enforced by epoch interruption (default 5000).
    pub call_timeout_ms: Option<u64>,
    /// Guest linear memory cap (default 256 MiB).
    pub memory_bytes: Option<usize>,
    /// Largest `map` output: platform-data JSON plus every media string (default 16 MiB).
    pub max_output_bytes: Option<usize>,
    /// Requests per minute per API key; read by the rate limiter.
    /// Global only: not allowed under `[platforms.X.limits]`.
    pub rate_limit_per_minute: Option<u32>,
    /// First cooling-off of a failing exit; doubles per consecutive failure (default 30000).
    pub exit_cooldown_ms: Option<u64>,
    /// Longest cooling-off of an exit (default 1800000).
    pub exit_cooldown_max_ms: Option<u64>,
    /// Upstream requests per second per exit (default: unlimited).
    pub requests_per_second: Option<f64>,
    /// Upstream requests in flight per exit (default: unlimited).
    pub max_in_flight: Option<usize>,
    /// How long a parse result may be served again (default 60000; 0: never).
    /// Never past the earliest expiry its media URLs carry; results whose
    /// URLs carry none are kept only when this is set.
    pub parse_cache_ttl_ms: Option<u64>,
}

impl LimitSettings {
    fn or(&self, base: &LimitSettings) -> LimitSettings {
        LimitSettings {
            parse_timeout_ms: self.parse_timeout_ms.or(base.parse_timeout_ms),
            request_timeout_ms: self.request_timeout_ms.or(base.request_timeout_ms),
            max_response_bytes: self.max_response_bytes.or(base.max_response_bytes),
            call_timeout_ms: self.call_timeout_ms.or(base.call_timeout_ms),
            memory_bytes: self.memory_bytes.or(base.memory_bytes),
            max_output_bytes: self.max_output_bytes.or(base.max_output_bytes),
            rate_limit_per_minute: base.rate_limit_per_minute,
            exit_cooldown_ms: self.exit_cooldown_ms.or(base.exit_cooldown_ms),
            exit_cooldown_max_ms: self.exit_cooldown_max_ms.or(base.exit_cooldown_max_ms),
            requests_per_second: self.requests_per_second.or(base.requests_per_second),
            max_in_flight: self.max_in_flight.or(base.max_in_flight),
            parse_cache_ttl_ms: self.parse_cache_ttl_ms.or(base.parse_cache_ttl_ms),
        }
    }
}

/// The limits in force for one platform, defaults filled in.
#[derive(Clone, Debug)]
pub struct PlatformLimits {
    pub parse_timeout: Duration,
    pub fetch: FetchLimits,
    pub sandbox: SandboxLimits,
    /// Cooling-off of the platform's failing exits.
    pub cooling: Cooling,
    /// Requests per second and in flight, per exit.
    pub pace: Pace,
    /// The parse cache TTL the operator declared (`None`: the default, and
    /// only for results whose media URLs carry an expiry).
    pub parse_cache_ttl: Option<Duration>,
}

fn yes() -> bool {
    true
}

/// Why a configuration file was refused. The message never quotes the
/// file's values (they may be secrets).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("reading {path}: {message}")]
    Read { path: String, message: String },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

impl OperatorConfig {
    pub fn load(path: &Path) -> Result<OperatorConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Read {
            path: path.display().to_string(),
            message: e.kind().to_string(),
        })?;
        Self::parse(&text).map_err(|message| ConfigError::Invalid {
            path: path.display().to_string(),
            message,
        })
    }

    /// Parse and check a configuration text; the error names the place, never a value.
    pub fn parse(text: &str) -> Result<OperatorConfig, String> {
        let config: OperatorConfig = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            let message = unquote(e.message());
            match line {
                Some(l) => format!("line {l}: {message}"),
                None => message,
            }
        })?;
        check_console(&config.console)?;
        config.health.check()?;
        config.webhooks.check()?;
        config.jobs.check()?;
        for (name, p) in &config.platforms {
            // Platforms are data: one can be dropped in at any time, so a
            // section for a platform not loaded (yet) is accepted when its
            // name is a platform id (and listed as such by the admin API).
            if !mediaparse_catalogue::is_platform_id(name) {
                return Err(format!(
                    "[platforms.{name}] is not a platform id ([a-z][a-z0-9_]*, at most 16 bytes)"
                ));
            }
            if let Some(i) = p.helper_hosts.iter().position(|h| !is_helper_host(h)) {
                return Err(format!(
                    "[platforms.{name}] helper_hosts entry {} is not a host name or IP literal (no scheme, port or path)",
                    i + 1
                ));
            }
            if let Some(every) = &p.canary_every {
                health::canary_interval(Some(every))
                    .map_err(|e| format!("[platforms.{name}] {e}"))?;
            }
            if let Some(i) = p.canaries.iter().flatten().position(|c| {
                !url::Url::parse(&c.url).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
            }) {
                return Err(format!(
                    "[platforms.{name}] canaries entry {} url is not an http or https URL",
                    i + 1
                ));
            }
            if p.price.is_some_and(|price| price < 0) {
                return Err(format!("[platforms.{name}] price is negative"));
            }
            if let Some(proxy) = &p.proxy
                && !is_proxy_url(proxy)
            {
                return Err(format!(
                    "[platforms.{name}] proxy is not an http, https or socks5h URL"
                ));
            }
            let mut labels = std::collections::BTreeSet::new();
            for (i, exit) in p.exits.iter().enumerate() {
                let place = format!("[platforms.{name}] exit {}", i + 1);
                if !is_proxy_url(&exit.url) {
                    return Err(format!("{place}: url is not an http, https or socks5h URL"));
                }
                if !is_label(&exit.label) {
                    return Err(format!(
                        "{place}: label must be 1-64 letters, digits, '-', '_' or '.'"
                    ));
                }
                if exit.label == "proxy" && p.proxy.is_some() || !labels.insert(&exit.label) {
                    return Err(format!("{place}: label {} is used twice", exit.label));
                }
            }
            let mut session_labels = std::collections::BTreeSet::new();
            for (i, s) in p.sessions.iter().enumerate() {
                let place = format!("[platforms.{name}] session {}", i + 1);
                if !is_label(&s.label) {
                    return Err(format!(
                        "{place}: label must be 1-64 letters, digits, '-', '_' or '.'"
                    ));
                }
                if !session_labels.insert(&s.label) {
                    return Err(format!("{place}: label {} is used twice", s.label));
                }
                let pinned_ok = s
                    .exit
                    .as_ref()
                    .is_none_or(|e| labels.contains(e) || (e == "proxy" && p.proxy.is_some()));
                if !pinned_ok {
                    return Err(format!("{place}: exit names no exit of the platform"));
                }
            }
            if let Some(profile) = &p.fetch_profile
                && let Err(e) = ProfileSetting::parse(profile)
            {
                return Err(format!("[platforms.{name}] {e}"));
            }
            if p.limits.rate_limit_per_minute.is_some() {
                return Err(format!(
                    "[platforms.{name}.limits] rate_limit_per_minute is global: set it in [limits]"
                ));
            }
        }
        Ok(config)
    }

    /// The operator's price for `platform` (`[platforms.<id>] price`), if set.
    pub fn price_override(&self, platform: &str) -> Option<i64> {
        self.platforms.get(platform).and_then(|p| p.price)
    }

    /// How `platform`'s health is judged, and whether its breaker refuses.
    pub fn health_policy(&self, platform: &str) -> HealthPolicy {
        self.health
            .policy(self.platforms.get(platform).and_then(|p| p.breaker))
    }

    /// `platform`'s canaries: the operator's list when set, else the
    /// platform's own (`declared`, from its `platform.toml`).
    pub fn canaries(
        &self,
        platform: &str,
        declared: &[mediaparse_catalogue::Canary],
    ) -> Vec<mediaparse_catalogue::Canary> {
        self.platforms
            .get(platform)
            .and_then(|p| p.canaries.clone())
            .unwrap_or_else(|| declared.to_vec())
    }

    /// How often `platform`'s canaries run.
    pub fn canary_every(&self, platform: &str) -> Duration {
        self.platforms
            .get(platform)
            .and_then(|p| p.canary_every.as_deref())
            .and_then(|e| health::canary_interval(Some(e)).ok())
            .unwrap_or_else(|| self.health.canary_every())
    }

    pub fn enabled(&self, platform: &str) -> bool {
        self.platforms.get(platform).is_none_or(|p| p.enabled)
    }

    pub fn extractor_config(&self, platform: &str) -> Vec<Header> {
        self.platforms
            .get(platform)
            .map(|p| {
                p.config
                    .iter()
                    .map(|(k, v)| Header::new(k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The identity `platform`'s requests leave with: the operator's
    /// `fetch_profile`, else the platform's default (`platform_default`,
    /// from its `platform.toml`), else rustls. Both were checked when loaded.
    pub fn fetch_profile(&self, platform: &str, platform_default: Option<&str>) -> ProfileSetting {
        self.platforms
            .get(platform)
            .and_then(|p| p.fetch_profile.as_deref())
            .or(platform_default)
            .and_then(|v| ProfileSetting::parse(v).ok())
            .unwrap_or_default()
    }

    /// The platform's exit pool (empty: direct); `proxy` is the exit labelled `proxy`.
    pub fn exits(&self, platform: &str) -> Vec<ExitSpec> {
        let Some(p) = self.platforms.get(platform) else {
            return Vec::new();
        };
        let legacy = p.proxy.iter().map(|url| ExitSpec {
            label: "proxy".into(),
            url: Some(url.clone()),
        });
        legacy
            .chain(p.exits.iter().map(|e| ExitSpec {
                label: e.label.clone(),
                url: Some(e.url.clone()),
            }))
            .collect()
    }

    /// The platform's session pool (empty: only `[platforms.X.config]`).
    pub fn sessions(&self, platform: &str) -> Vec<SessionSpec> {
        self.platforms
            .get(platform)
            .map(|p| {
                p.sessions
                    .iter()
                    .map(|s| SessionSpec {
                        label: s.label.clone(),
                        cookie: s.cookie.clone(),
                        config: s.config.clone(),
                        exit: s.exit.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The default requests-per-minute limit for a key (`None`: unlimited).
    pub fn rate_limit_per_minute(&self) -> Option<u32> {
        self.limits.rate_limit_per_minute.filter(|n| *n > 0)
    }

    /// The limits in force for `platform`: its overrides, then `[limits]`,
    /// then the built-in defaults.
    pub fn limits_for(&self, platform: &str) -> PlatformLimits {
        let l = match self.platforms.get(platform) {
            Some(p) => p.limits.or(&self.limits),
            None => self.limits.clone(),
        };
        let (parse, fetch, sandbox) = (
            ParseLimits::default(),
            // The built-in defaults, with the test-only environment knobs
            // (`MEDIAPARSE_UPSTREAM_TIMEOUT_MS`, `…_MAX_BODY_BYTES`) applied.
            FetchLimits::from_env(),
            SandboxLimits::default(),
        );
        let ms = Duration::from_millis;
        PlatformLimits {
            parse_timeout: l.parse_timeout_ms.map(ms).unwrap_or(parse.deadline),
            fetch: FetchLimits {
                request_timeout: l
                    .request_timeout_ms
                    .map(ms)
                    .unwrap_or(fetch.request_timeout),
                max_body_bytes: l.max_response_bytes.unwrap_or(fetch.max_body_bytes),
                max_redirects: fetch.max_redirects,
                profile: fetch.profile,
                helper_hosts: self
                    .platforms
                    .get(platform)
                    .map(|p| p.helper_hosts.clone())
                    .unwrap_or_default(),
            },
            sandbox: SandboxLimits {
                memory_bytes: l.memory_bytes.unwrap_or(sandbox.memory_bytes),
                call_timeout: l.call_timeout_ms.map(ms).unwrap_or(sandbox.call_timeout),
                max_output_bytes: l.max_output_bytes.unwrap_or(sandbox.max_output_bytes),
            },
            parse_cache_ttl: l.parse_cache_ttl_ms.map(ms),
            pace: Pace {
                requests_per_second: l.requests_per_second.filter(|r| *r > 0.0),
                max_in_flight: l.max_in_flight.filter(|m| *m > 0),
            },
            cooling: {
                let default = Cooling::default();
                let base = l.exit_cooldown_ms.map(ms).unwrap_or(default.base);
                Cooling {
                    base,
                    max: l
                        .exit_cooldown_max_ms
                        .map(ms)
                        .unwrap_or(default.max)
                        .max(base),
                }
            },
        }
    }

    /// `platform`'s extractor settings that are secrets: all but those its
    /// `public_config` lists.
    pub fn secret_settings(&self, platform: &str) -> Vec<Header> {
        self.platforms
            .get(platform)
            .map(|p| {
                p.config
                    .iter()
                    .filter(|(name, _)| !p.public_config.contains(name))
                    .map(|(k, v)| Header::new(k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Everything secret configured for `platform`.
    pub fn secrets(&self, platform: &str) -> Secrets {
        self.secrets_with(platform, Vec::new())
    }

    /// [`OperatorConfig::secrets`] plus `extra` (sessions' rotated cookies).
    pub fn secrets_with(&self, platform: &str, extra: Vec<String>) -> Secrets {
        let mut values = extra;
        values.extend(self.secret_settings(platform).into_iter().map(|h| h.value));
        if let Some(p) = self.platforms.get(platform) {
            for s in &p.sessions {
                values.push(s.cookie.clone());
                values.extend(s.config.values().cloned());
            }
            for proxy in p.proxy.iter().chain(p.exits.iter().map(|e| &e.url)) {
                values.push(proxy.clone());
                if let Ok(u) = url::Url::parse(proxy) {
                    values.push(u.username().to_string());
                    values.extend(u.password().map(String::from));
                }
            }
        }
        Secrets::new(values)
    }
}

/// A label operators see in the listing and the metrics.
/// Open sign-up verifies addresses by e-mail, so it needs a way to send one.
fn check_console(console: &ConsoleSettings) -> Result<(), String> {
    match &console.mail_command {
        Some(argv) if argv.first().is_none_or(|program| program.trim().is_empty()) => Err(
            "[console] mail_command must name a program: [\"/usr/sbin/sendmail\", \"-i\", \"--\"], say"
                .into(),
        ),
        None if console.signup == Signup::Open => Err(
            "[console] signup = \"open\" needs mail_command: a new address is verified by an e-mailed link before it gets credits (see the configuration reference in README)"
                .into(),
        ),
        _ => Ok(()),
    }
}

fn is_label(label: &str) -> bool {
    (1..=64).contains(&label.len())
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A helper host: what a URL's host part can be (a name or an IP literal).
fn is_helper_host(host: &str) -> bool {
    !host.is_empty()
        && url::Url::parse(&format!("http://{host}/")).is_ok_and(|u| {
            u.port().is_none() && u.host_str().is_some_and(|h| h.eq_ignore_ascii_case(host))
        })
}

/// An outbound proxy URL the fetcher can use.
fn is_proxy_url(raw: &str) -> bool {
    url::Url::parse(raw)
        .is_ok_and(|u| matches!(u.scheme(), "http" | "https" | "socks5h") && u.host().is_some())
}

/// Remove quoted parts of a parser message: they can echo a value.
fn unquote(message: &str) -> String {
    let mut out = String::new();
    let mut quote: Option<char> = None;
    for c in message.chars() {
        match quote {
            Some(q) if c == q => {
                out.push('…');
                out.push(c);
                quote = None;
            }
            Some(_) => {}
            None if c == '"' || c == '`' => {
                out.push(c);
                quote = Some(c);
            }
            None => out.push(c),
        }
    }
    if quote.is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_sign_up_needs_a_mail_command() {
        let err = OperatorConfig::parse("[console]\nsignup = \"open\"\n").unwrap_err();
        assert!(err.contains("mail_command"), "{err}");
        let err = OperatorConfig::parse("[console]\nmail_command = []\n").unwrap_err();
        assert!(err.contains("mail_command"), "{err}");
        let c = OperatorConfig::parse(
            "[console]\nsignup = \"open\"\nmail_command = [\"/usr/sbin/sendmail\", \"-i\", \"--\"]\n",
        )
        .unwrap();
        assert_eq!(c.console.mail_command.unwrap().len(), 3);
        assert!(OperatorConfig::parse("[console]\nsignup = \"invite\"\n").is_ok());
    }

    #[test]
    fn parses_and_accepts_platforms_not_loaded_yet() {
        let c: OperatorConfig = toml::from_str(
            "[platforms.twitter]\nenabled = false\n[platforms.weibo.config]\ncookie = \"SUB=x\"\n",
        )
        .unwrap();
        assert!(!c.enabled("twitter"));
        assert!(c.enabled("weibo") && c.enabled("tiktok"));
        assert_eq!(
            c.extractor_config("weibo"),
            vec![Header::new("cookie", "SUB=x")]
        );
        assert_eq!(c.limits.rate_limit_per_minute, None);
        let limited: OperatorConfig =
            toml::from_str("[limits]\nrate_limit_per_minute = 0\n").unwrap();
        assert_eq!(
            limited.limits.rate_limit_per_minute,
            Some(0),
            "0 (unlimited) is kept, not dropped"
        );
        let dir = std::env::temp_dir().join(format!("mp-config-{}", std::process::id()));
        // A platform not loaded (yet) may be configured; a bad id may not.
        std::fs::write(&dir, "[platforms.myspace]\nprice = 4\n").unwrap();
        let later = OperatorConfig::load(&dir).unwrap();
        assert_eq!(later.platforms["myspace"].price, Some(4));
        std::fs::write(&dir, "[platforms.My-Space]\n").unwrap();
        assert!(OperatorConfig::load(&dir).is_err());
        std::fs::write(&dir, "[platforms.myspace]\nprice = -1\n").unwrap();
        assert!(OperatorConfig::load(&dir).is_err());
        let _ = std::fs::remove_file(&dir);
    }

    #[test]
    fn limits_fall_back_platform_then_global_then_default() {
        let c = OperatorConfig::parse(
            "[limits]\ncall_timeout_ms = 700\nrate_limit_per_minute = 60\n\
             [platforms.twitter.limits]\ncall_timeout_ms = 300\nmemory_bytes = 1048576\n",
        )
        .unwrap();
        let tw = c.limits_for("twitter");
        assert_eq!(tw.sandbox.call_timeout, Duration::from_millis(300));
        assert_eq!(tw.sandbox.memory_bytes, 1 << 20);
        let tt = c.limits_for("tiktok");
        assert_eq!(tt.sandbox.call_timeout, Duration::from_millis(700));
        assert_eq!(
            tt.sandbox.memory_bytes,
            SandboxLimits::default().memory_bytes
        );
        assert_eq!(
            tt.fetch.request_timeout,
            FetchLimits::default().request_timeout
        );
        assert_eq!(c.rate_limit_per_minute(), Some(60));
        assert!(
            OperatorConfig::parse("[platforms.tiktok.limits]\nrate_limit_per_minute = 5\n")
                .is_err()
        );
    }

    #[test]
    fn helper_hosts_are_host_names_or_ip_literals_of_one_platform() {
        let c = OperatorConfig::parse(
            "[platforms.tiktok]\nhelper_hosts = [\"127.0.0.1\", \"pot.internal\", \"[::1]\"]\n",
        )
        .unwrap();
        assert_eq!(
            c.limits_for("tiktok").fetch.helper_hosts,
            ["127.0.0.1", "pot.internal", "[::1]"]
        );
        assert!(c.limits_for("twitter").fetch.helper_hosts.is_empty());
        for bad in [
            "http://127.0.0.1",
            "127.0.0.1:4416",
            "pot.internal/get_pot",
            "",
            "::1",
        ] {
            let e =
                OperatorConfig::parse(&format!("[platforms.tiktok]\nhelper_hosts = [\"{bad}\"]\n"))
                    .unwrap_err();
            assert!(e.contains("helper_hosts entry 1"), "{bad}: {e}");
        }
    }

    #[test]
    fn public_config_values_are_not_redacted() {
        let c = OperatorConfig::parse(
            "[platforms.tiktok]\npublic_config = [\"app_version\"]\n\
             [platforms.tiktok.config]\napp_version = \"21.03.36\"\ncookie = \"sid=SECRETVALUE\"\n",
        )
        .unwrap();
        let secrets = c.secrets_with("tiktok", Vec::new());
        assert_eq!(
            secrets.redact("UA app/21.03.36 sid=SECRETVALUE"),
            "UA app/21.03.36 [redacted]"
        );
        let all = OperatorConfig::parse("[platforms.tiktok.config]\napp_version = \"21.03.36\"\n")
            .unwrap();
        assert_eq!(
            all.secrets_with("tiktok", Vec::new())
                .redact("app/21.03.36"),
            "app/[redacted]"
        );
    }

    #[test]
    fn fetch_profile_operator_then_platform_default_then_rustls() {
        let c = OperatorConfig::parse("[platforms.tiktok]\nfetch_profile = \"okhttp\"\n").unwrap();
        let okhttp = ProfileSetting::Fixed(mediaparse_fetch::FetchProfile::OkHttp);
        assert_eq!(c.fetch_profile("tiktok", Some("browser")), okhttp);
        assert_eq!(
            c.fetch_profile("threads", Some("browser")),
            ProfileSetting::Browser
        );
        assert_eq!(c.fetch_profile("twitter", None), ProfileSetting::Rustls);
        let e =
            OperatorConfig::parse("[platforms.tiktok]\nfetch_profile = \"edge\"\n").unwrap_err();
        assert!(e.contains("fetch_profile"), "{e}");
    }

    #[test]
    fn errors_never_quote_values() {
        for bad in [
            "[platforms.twitter.config]\ncookie = \"auth_token=SECRETVALUE\n",
            "[platforms.twitter]\nenabled = \"SECRETVALUE\"\n",
            "[platforms.twitter]\nproxy = \"ftp://u:SECRETVALUE@h\"\n",
            "[[platforms.twitter.exits]]\nlabel = \"a\"\nurl = \"socks5://u:SECRETVALUE@h\"\n",
            "[[platforms.twitter.exits]]\nlabel = \"SECRETVALUE@\"\nurl = \"http://h\"\n",
            "[platforms.twitter.config]\ncookie = { a = \"SECRETVALUE\" }\n",
        ] {
            let e = OperatorConfig::parse(bad).unwrap_err();
            assert!(!e.contains("SECRETVALUE"), "{e}");
        }
    }

    #[test]
    fn secrets_are_scrubbed_whole_and_by_cookie_piece() {
        let c = OperatorConfig::parse(
            "[platforms.twitter]\nproxy = \"http://me:hunter22@proxy:3128\"\n\
             [platforms.twitter.config]\ncookie = \"auth_token=abcdef123; ct0=zyxwvu987\"\nflag = \"1\"\n",
        )
        .unwrap();
        let s = c.secrets("twitter");
        assert_eq!(
            s.redact("x auth_token=abcdef123; ct0=zyxwvu987 y"),
            "x [redacted] y"
        );
        assert_eq!(s.redact("ct0=zyxwvu987"), "[redacted]");
        assert_eq!(s.redact("ct0: zyxwvu987"), "ct0: [redacted]");
        assert_eq!(s.redact("pw hunter22"), "pw [redacted]");
        assert_eq!(s.redact("flag 1"), "flag 1");
        let mut v = serde_json::json!({"a": ["zyxwvu987"], "abcdef123": 1});
        s.redact_json(&mut v);
        assert_eq!(v, serde_json::json!({"a": ["[redacted]"], "[redacted]": 1}));
        assert!(c.secrets("tiktok").is_empty());
    }

    #[test]
    fn health_settings_fill_in_defaults_and_are_checked() {
        let c = OperatorConfig::parse(
            "[health]\nmin_parses = 4\ncooldown_ms = 3000\n[platforms.twitter]\nbreaker = \"off\"\n",
        )
        .unwrap();
        let tiktok = c.health_policy("tiktok");
        let defaults = HealthPolicy::default();
        assert_eq!(tiktok.min_parses, 4);
        assert_eq!(tiktok.cooldown, Duration::from_secs(3));
        assert_eq!(tiktok.window_parses, defaults.window_parses);
        assert_eq!(tiktok.broken_percent, 80);
        assert_eq!(tiktok.breaker, None, "unset: the service's default");
        assert!(tiktok.breaker_on(), "on unless switched off");
        assert_eq!(c.health_policy("twitter").breaker, Some(false));
        assert_eq!(OperatorConfig::default().health_policy("tiktok"), defaults);
        let off = OperatorConfig::parse(
            "[health]\nbreaker = \"off\"\n[platforms.twitter]\nbreaker = \"on\"\n",
        )
        .unwrap();
        assert_eq!(
            off.health_policy("tiktok").breaker,
            Some(false),
            "[health] breaker"
        );
        assert_eq!(
            off.health_policy("twitter").breaker,
            Some(true),
            "the platform's own wins"
        );
        for bad in [
            "[health]\nbroken_percent = 101\n",
            "[health]\ndegraded_percent = 90\n",
            "[health]\nmin_parses = 0\n",
            "[health]\nwindow_parses = 5\n",
            "[health]\nwindow_parses = 100000\n",
            "[health]\ncooldown_ms = 0\n",
            "[health]\nhalf_open_probes = 0\n",
            "[health]\nthreshold = 3\n",
            "[platforms.tiktok]\nbreaker = \"maybe\"\n",
            "[health]\nalert_urls = [\"https://ops.example/h\"]\n",
            "[health]\nalert_urls = [\"ftp://ops.example/SECRETVALUE\"]\nalert_secret = \"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\"\n",
            "[health]\nalert_secret = \"SECRETVALUE\"\n",
            "[health]\nalert_secret = \"whsec_SECRETVALUE!\"\n",
        ] {
            let e = OperatorConfig::parse(bad).unwrap_err();
            assert!(!e.contains("SECRETVALUE"), "{bad}: {e}");
        }
        let alerting = OperatorConfig::parse(
            "[health]\nalert_urls = [\"https://ops.example/h\"]\nalert_secret = \"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\"\n",
        )
        .unwrap();
        let alerts = alerting.health.alerts().expect("alerts");
        assert_eq!(alerts.key.len(), 24);
        assert_eq!(alerts.min_interval, Duration::from_secs(60));
        assert!(OperatorConfig::default().health.alerts().is_none());
    }

    #[test]
    fn exit_pools_parse_with_the_legacy_proxy_first() {
        let c = OperatorConfig::parse(
            "[platforms.tiktok]\nproxy = \"http://p:3128\"\n\
             [[platforms.tiktok.exits]]\nlabel = \"dc-1\"\nurl = \"socks5h://me:pw5678@s:1080\"\n\
             [platforms.tiktok.limits]\nexit_cooldown_ms = 1000\n",
        )
        .unwrap();
        let labels: Vec<String> = c.exits("tiktok").into_iter().map(|e| e.label).collect();
        assert_eq!(labels, ["proxy", "dc-1"]);
        assert!(c.exits("twitter").is_empty());
        assert_eq!(c.secrets("tiktok").redact("pw5678"), "[redacted]");
        let cooling = c.limits_for("tiktok").cooling;
        assert_eq!(cooling.base, Duration::from_secs(1));
        assert_eq!(cooling.max, Cooling::default().max);
        let twice = "[[platforms.tiktok.exits]]\nlabel = \"a\"\nurl = \"http://h\"\n\
                     [[platforms.tiktok.exits]]\nlabel = \"a\"\nurl = \"http://i\"\n";
        assert!(OperatorConfig::parse(twice).is_err());
    }

    #[test]
    fn canaries_are_the_operators_over_the_platforms_and_checked() {
        let declared = [mediaparse_catalogue::Canary {
            url: "https://www.tiktok.com/@a/video/1".into(),
            expect: Default::default(),
        }];
        let c = OperatorConfig::parse(
            "[health]\ncanaries = \"on\"\ncanary_every = \"30m\"\n\
             [platforms.twitter]\ncanary_every = \"90s\"\n\
             canaries = [{ url = \"https://x.com/a/status/2\", expect = { min_images = 1 } }]\n\
             [platforms.youtube]\ncanaries = []\n",
        )
        .expect("config");
        assert!(c.health.canaries_on());
        assert_eq!(
            c.canaries("tiktok", &declared),
            declared,
            "the platform's own"
        );
        let twitter = c.canaries("twitter", &declared);
        assert_eq!(twitter[0].expect.min_images, 1, "the operator's instead");
        assert!(c.canaries("youtube", &declared).is_empty(), "[] drops them");
        assert_eq!(c.canary_every("twitter"), Duration::from_secs(90));
        assert_eq!(c.canary_every("tiktok"), Duration::from_secs(1800));
        assert!(
            !OperatorConfig::default().health.canaries_on(),
            "off by default"
        );
        for bad in [
            "[health]\ncanary_every = \"15x\"\n",
            "[health]\ncanary_every = \"10ms\"\n",
            "[platforms.tiktok]\ncanary_every = \"soon\"\n",
            "[platforms.tiktok]\ncanaries = [{ url = \"ftp://h/p\" }]\n",
            "[platforms.tiktok]\ncanaries = [{ url = \"https://h/p\", expect = { min_clips = 1 } }]\n",
            "[health]\nfailures_per_platform = 100000\n",
        ] {
            assert!(OperatorConfig::parse(bad).is_err(), "{bad}");
        }
    }
}
