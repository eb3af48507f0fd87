//! Process-wide metrics, served at `GET /metrics` in the Prometheus text
//! format (OpenMetrics flavour, `prometheus-client`).
//!
//! Labels carry only platform ids, outcome codes and fixed reason words:
//! never a URL, a key, a token or a configured value.
//!
//! | metric | labels |
//! |---|---|
//! | `mediaparse_parses_total` | `platform`, `outcome` (`ok`, `no_media`, or the error code) |
//! | `mediaparse_parse_duration_seconds` | `platform` |
//! | `mediaparse_upstream_request_duration_seconds` | `platform`, `outcome` (`ok`, `timeout`, `error`) |
//! | `mediaparse_credits_charged_total` | `platform` |
//! | `mediaparse_parse_thread_handoffs_total` | `platform`: thread hand-offs of parses (per parse: divide by `parses_total`) |
//! | `mediaparse_extractor_reloads_total` | `platform`, `outcome` (`loaded`, `failed`, `removed`) |
//! | `mediaparse_sandbox_kills_total` | `platform`, `reason` (`deadline`, `memory`, `trap`, `output_limit`) |
//! | `mediaparse_guest_memory_grows_total` | `platform`: times a guest's linear memory grew past its initial size |
//! | `mediaparse_config_reloads_total` | `outcome` (`loaded`, `failed`) |
//! | `mediaparse_extractors_loaded` | none |
//! | `mediaparse_egress_outcomes_total` | `platform`, `pool` (`exit`), `label` (the operator's label, never the URL), `outcome` (`ok`, `403`, `429`, `challenge`, `login_wall`, `connect_error`) |
//! | `mediaparse_egress_cooling_until_seconds` | `platform`, `pool`, `label`: Unix time the entry cools off until (0: serving) |
//! | `mediaparse_tunnel_bytes_total` | `platform`: media bytes the tunnel served (per key: the usage views) |
//! | `mediaparse_tunnel_streams` | `platform`: tunnel streams open now |
//! | `mediaparse_tunnel_refusals_total` | `reason` (`streams`, `bytes`, `platform_busy`) |
//! | `mediaparse_tunnel_merges_total` | `outcome` (`ok`, `failed`, `timeout`, `cancelled`, `busy`) |
//! | `mediaparse_store_commit_groups_total` | none: SQLite transactions the writer thread committed (one `fsync` each) |
//! | `mediaparse_store_commit_writes_total` | none: writes (charges, idempotency keys) those transactions carried |
//! | `mediaparse_platform_health` | `platform`, `state` (`ok`, `degraded`, `broken`, `unknown`): 1 for the state its last counted parse left it in, 0 for the others |
//! | `mediaparse_breaker_opens_total` | `platform`: times its circuit breaker opened |
//! | `mediaparse_health_alerts_total` | `outcome` (`sent`, `failed`): health alert POSTs, one per URL |
//! | `mediaparse_canary_runs_total` | `platform`, `outcome` (`ok`, `unmet` (answered without what its expectation asks), `skipped` (refused by the open breaker or paced), or the error code) |
//! | `mediaparse_failures_kept_total` | `platform`, `outcome` (`kept`, `too_large`, `failed`): failing parses written as fixture cases |
//! | `mediaparse_webhook_deliveries_total` | `outcome` (`delivered`, `retrying`, `failed`): webhook delivery attempts by what they led to (`failed`: given up) |

use std::sync::LazyLock;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PlatformOutcome {
    platform: String,
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PlatformLabel {
    platform: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PlatformReason {
    platform: String,
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EgressEntry {
    platform: String,
    pool: String,
    label: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EgressOutcome {
    platform: String,
    pool: String,
    label: String,
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PlatformState {
    platform: String,
    state: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabel {
    outcome: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// Every metric the service exports.
pub struct Metrics {
    registry: Registry,
    parses: Family<PlatformOutcome, Counter>,
    parse_seconds: HistogramFamily<PlatformLabel>,
    upstream_seconds: HistogramFamily<PlatformOutcome>,
    credits: Family<PlatformLabel, Counter>,
    handoffs: Family<PlatformLabel, Counter>,
    reloads: Family<PlatformOutcome, Counter>,
    kills: Family<PlatformReason, Counter>,
    memory_grows: Family<PlatformLabel, Counter>,
    config_reloads: Family<OutcomeLabel, Counter>,
    loaded: Gauge,
    egress: Family<EgressOutcome, Counter>,
    egress_cooling: Family<EgressEntry, Gauge>,
    tunnel_bytes: Family<PlatformLabel, Counter>,
    tunnel_streams: Family<PlatformLabel, Gauge>,
    tunnel_refusals: Family<ReasonLabel, Counter>,
    tunnel_merges: Family<OutcomeLabel, Counter>,
    key_cache_listener_up: Gauge,
    commit_groups: Counter,
    commit_writes: Counter,
    platform_health: Family<PlatformState, Gauge>,
    breaker_opens: Family<PlatformLabel, Counter>,
    health_alerts: Family<OutcomeLabel, Counter>,
    canary_runs: Family<PlatformOutcome, Counter>,
    failures_kept: Family<PlatformOutcome, Counter>,
    webhook_deliveries: Family<OutcomeLabel, Counter>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabel {
    reason: String,
}

fn upstream_buckets() -> Histogram {
    // 5 ms … ~20 s
    Histogram::new(exponential_buckets(0.005, 2.0, 13))
}

fn parse_buckets() -> Histogram {
    // 10 ms … ~40 s
    Histogram::new(exponential_buckets(0.01, 2.0, 13))
}

static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);

/// The process's metrics.
pub fn global() -> &'static Metrics {
    &METRICS
}

impl Metrics {
    fn new() -> Metrics {
        let mut registry = Registry::with_prefix("mediaparse");
        let parses = Family::<PlatformOutcome, Counter>::default();
        registry.register(
            "parses",
            "Parses by platform and outcome (ok, no_media, or the error code)",
            parses.clone(),
        );
        let parse_seconds =
            HistogramFamily::<PlatformLabel>::new_with_constructor(parse_buckets as fn() -> _);
        registry.register(
            "parse_duration_seconds",
            "Wall time of a parse, routing through charge",
            parse_seconds.clone(),
        );
        let upstream_seconds =
            HistogramFamily::<PlatformOutcome>::new_with_constructor(upstream_buckets as fn() -> _);
        registry.register(
            "upstream_request_duration_seconds",
            "Latency of one upstream request (one hop) by platform",
            upstream_seconds.clone(),
        );
        let handoffs = Family::<PlatformLabel, Counter>::default();
        registry.register(
            "parse_thread_handoffs",
            "Times parses sent their work to another thread or got it back (the SQLite writer thread, blocking store calls); divide by parses for the count per parse",
            handoffs.clone(),
        );
        let credits = Family::<PlatformLabel, Counter>::default();
        registry.register(
            "credits_charged",
            "Credits charged for successful parses",
            credits.clone(),
        );
        let reloads = Family::<PlatformOutcome, Counter>::default();
        registry.register(
            "extractor_reloads",
            "Extractor component (re)loads by outcome (loaded, failed, removed)",
            reloads.clone(),
        );
        let kills = Family::<PlatformReason, Counter>::default();
        registry.register(
            "sandbox_kills",
            "Guest calls stopped by the sandbox (deadline, memory, trap, output_limit)",
            kills.clone(),
        );
        let memory_grows = Family::<PlatformLabel, Counter>::default();
        registry.register(
            "guest_memory_grows",
            "Times a guest's linear memory grew past its initial size (each growth costs the pool an mprotect and a TLB shootdown)",
            memory_grows.clone(),
        );
        let config_reloads = Family::<OutcomeLabel, Counter>::default();
        registry.register(
            "config_reloads",
            "Operator configuration reloads by outcome (loaded, failed)",
            config_reloads.clone(),
        );
        let loaded = Gauge::default();
        registry.register(
            "extractors_loaded",
            "Extractor components currently serving",
            loaded.clone(),
        );
        let egress = Family::<EgressOutcome, Counter>::default();
        registry.register(
            "egress_outcomes",
            "Upstream requests (and challenge/login-wall verdicts) by exit or session label and outcome",
            egress.clone(),
        );
        let egress_cooling = Family::<EgressEntry, Gauge>::default();
        registry.register(
            "egress_cooling_until_seconds",
            "Unix time an exit or session cools off until (0: serving)",
            egress_cooling.clone(),
        );
        let tunnel_bytes = Family::<PlatformLabel, Counter>::default();
        registry.register(
            "tunnel_bytes",
            "Media bytes the tunnel served",
            tunnel_bytes.clone(),
        );
        let tunnel_streams = Family::<PlatformLabel, Gauge>::default();
        registry.register(
            "tunnel_streams",
            "Tunnel streams open now",
            tunnel_streams.clone(),
        );
        let tunnel_refusals = Family::<ReasonLabel, Counter>::default();
        registry.register(
            "tunnel_refusals",
            "Tunnel streams refused by a limit (streams, bytes, platform_busy)",
            tunnel_refusals.clone(),
        );
        let tunnel_merges = Family::<OutcomeLabel, Counter>::default();
        registry.register(
            "tunnel_merges",
            "Tunnel merges by outcome (ok, failed, timeout, cancelled, busy)",
            tunnel_merges.clone(),
        );
        let key_cache_listener_up = Gauge::default();
        registry.register(
            "key_cache_listener_up",
            "PostgreSQL: 1 while the key cache's LISTEN connection answers its pings in time, else 0 (the cache is bypassed)",
            key_cache_listener_up.clone(),
        );
        let commit_groups = Counter::default();
        registry.register(
            "store_commit_groups",
            "SQLite: transactions the writer thread committed, one fsync each",
            commit_groups.clone(),
        );
        let commit_writes = Counter::default();
        registry.register(
            "store_commit_writes",
            "SQLite: writes (charges, idempotency keys) carried by those transactions",
            commit_writes.clone(),
        );
        let platform_health = Family::<PlatformState, Gauge>::default();
        registry.register(
            "platform_health",
            "1 for a platform's health state (ok, degraded, broken, unknown) after its last counted parse, 0 for the others",
            platform_health.clone(),
        );
        let breaker_opens = Family::<PlatformLabel, Counter>::default();
        registry.register(
            "breaker_opens",
            "Times a platform's circuit breaker opened (its parses refused with platform_unavailable)",
            breaker_opens.clone(),
        );
        let health_alerts = Family::<OutcomeLabel, Counter>::default();
        registry.register(
            "health_alerts",
            "Health alert POSTs by outcome (sent, failed), one per alert URL",
            health_alerts.clone(),
        );
        let canary_runs = Family::<PlatformOutcome, Counter>::default();
        registry.register(
            "canary_runs",
            "Canary parses by platform and outcome (ok, unmet, skipped, or the error code)",
            canary_runs.clone(),
        );
        let failures_kept = Family::<PlatformOutcome, Counter>::default();
        registry.register(
            "failures_kept",
            "Failing parses written as fixture cases, by platform and outcome (kept, too_large, failed)",
            failures_kept.clone(),
        );
        let webhook_deliveries = Family::<OutcomeLabel, Counter>::default();
        registry.register(
            "webhook_deliveries",
            "Webhook delivery attempts by what they led to (delivered, retrying, failed: given up)",
            webhook_deliveries.clone(),
        );
        Metrics {
            canary_runs,
            failures_kept,
            health_alerts,
            webhook_deliveries,
            platform_health,
            breaker_opens,
            commit_groups,
            commit_writes,
            key_cache_listener_up,
            tunnel_bytes,
            tunnel_streams,
            tunnel_refusals,
            tunnel_merges,
            egress,
            egress_cooling,
            registry,
            parses,
            parse_seconds,
            upstream_seconds,
            credits,
            handoffs,
            reloads,
            kills,
            memory_grows,
            config_reloads,
            loaded,
        }
    }

    /// Whether the key cache's listener is healthy (PostgreSQL).
    pub fn key_cache_listener(&self, up: bool) {
        self.key_cache_listener_up.set(i64::from(up));
    }

    /// One SQLite group commit that carried `writes` writes.
    pub fn store_commit(&self, writes: u64) {
        self.commit_groups.inc();
        self.commit_writes.inc_by(writes);
    }

    /// One finished parse.
    pub fn parse(&self, platform: &str, outcome: &str, seconds: f64, credits: i64) {
        self.parses
            .get_or_create(&PlatformOutcome {
                platform: platform.into(),
                outcome: outcome.into(),
            })
            .inc();
        let p = PlatformLabel {
            platform: platform.into(),
        };
        self.parse_seconds.get_or_create(&p).observe(seconds);
        if credits > 0 {
            self.credits.get_or_create(&p).inc_by(credits as u64);
        }
    }

    /// `platform`'s health state now: 1 for `state`, 0 for the other `states`.
    pub fn platform_health(&self, platform: &str, state: &str, states: &[&str]) {
        for &s in states {
            self.platform_health
                .get_or_create(&PlatformState {
                    platform: platform.into(),
                    state: s.into(),
                })
                .set(i64::from(s == state));
        }
    }

    /// One health alert POST ended (`sent`, `failed`).
    pub fn health_alert(&self, outcome: &str) {
        self.health_alerts
            .get_or_create(&OutcomeLabel {
                outcome: outcome.into(),
            })
            .inc();
    }

    /// One canary parse of `platform` ended with `outcome`.
    pub fn canary_run(&self, platform: &str, outcome: &str) {
        self.canary_runs
            .get_or_create(&PlatformOutcome {
                platform: platform.into(),
                outcome: outcome.into(),
            })
            .inc();
    }

    /// A failing parse of `platform` was kept as a fixture case (or not: `outcome`).
    pub fn failure_kept(&self, platform: &str, outcome: &str) {
        self.failures_kept
            .get_or_create(&PlatformOutcome {
                platform: platform.into(),
                outcome: outcome.into(),
            })
            .inc();
    }

    /// One webhook delivery attempt ended (`delivered`, `retrying`, `failed`).
    pub fn webhook_delivery(&self, outcome: &str) {
        self.webhook_deliveries
            .get_or_create(&OutcomeLabel {
                outcome: outcome.into(),
            })
            .inc();
    }

    /// `platform`'s circuit breaker opened.
    pub fn breaker_opened(&self, platform: &str) {
        self.breaker_opens
            .get_or_create(&PlatformLabel {
                platform: platform.into(),
            })
            .inc();
    }

    /// The thread hand-offs one parse of `platform` made.
    pub fn handoffs(&self, platform: &str, count: u32) {
        self.handoffs
            .get_or_create(&PlatformLabel {
                platform: platform.into(),
            })
            .inc_by(u64::from(count));
    }

    /// One upstream request (one hop).
    pub fn upstream(&self, platform: &str, outcome: &str, seconds: f64) {
        self.upstream_seconds
            .get_or_create(&PlatformOutcome {
                platform: platform.into(),
                outcome: outcome.into(),
            })
            .observe(seconds);
    }

    /// A component file was (re)loaded, refused or removed.
    pub fn reload(&self, platform: &str, outcome: &str) {
        self.reloads
            .get_or_create(&PlatformOutcome {
                platform: platform.into(),
                outcome: outcome.into(),
            })
            .inc();
    }

    /// A guest's linear memory grew past the size it was instantiated
    /// with, `times` times in one instance.
    pub fn guest_memory_grows(&self, platform: &str, times: u64) {
        self.memory_grows
            .get_or_create(&PlatformLabel {
                platform: platform.into(),
            })
            .inc_by(times);
    }

    /// A guest call was stopped by the sandbox.
    pub fn sandbox_kill(&self, platform: &str, reason: &str) {
        self.kills
            .get_or_create(&PlatformReason {
                platform: platform.into(),
                reason: reason.into(),
            })
            .inc();
    }

    pub fn config_reload(&self, outcome: &str) {
        self.config_reloads
            .get_or_create(&OutcomeLabel {
                outcome: outcome.into(),
            })
            .inc();
    }

    /// What one exit or session (`pool`) met; `cooling_until_unix_s` is
    /// set when it went cooling (0 when it serves again).
    pub fn egress(
        &self,
        platform: &str,
        pool: &str,
        label: &str,
        outcome: &str,
        cooling_until_unix_s: Option<i64>,
    ) {
        self.egress
            .get_or_create(&EgressOutcome {
                platform: platform.into(),
                pool: pool.into(),
                label: label.into(),
                outcome: outcome.into(),
            })
            .inc();
        if let Some(until) = cooling_until_unix_s {
            self.egress_cooling
                .get_or_create(&EgressEntry {
                    platform: platform.into(),
                    pool: pool.into(),
                    label: label.into(),
                })
                .set(until);
        }
    }

    /// `n` more media bytes went through the tunnel.
    pub fn tunnel_bytes(&self, platform: &str, n: u64) {
        self.tunnel_bytes
            .get_or_create(&PlatformLabel {
                platform: platform.into(),
            })
            .inc_by(n);
    }

    /// A tunnel stream opened (`+1`) or closed (`-1`).
    pub fn tunnel_stream(&self, platform: &str, delta: i64) {
        self.tunnel_streams
            .get_or_create(&PlatformLabel {
                platform: platform.into(),
            })
            .inc_by(delta);
    }

    /// A tunnel stream refused by a limit.
    pub fn tunnel_refused(&self, reason: &str) {
        self.tunnel_refusals
            .get_or_create(&ReasonLabel {
                reason: reason.into(),
            })
            .inc();
    }

    /// A tunnel merge ended.
    pub fn tunnel_merge(&self, outcome: &str) {
        self.tunnel_merges
            .get_or_create(&OutcomeLabel {
                outcome: outcome.into(),
            })
            .inc();
    }

    pub fn set_loaded(&self, n: usize) {
        self.loaded.set(n as i64);
    }

    /// The text exposition.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            tracing::error!("encoding metrics failed");
        }
        out
    }
}

/// The content type of [`Metrics::encode`].
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[cfg(test)]
mod tests {
    #[test]
    fn encodes_labels() {
        let m = super::global();
        m.parse("tiktok", "ok", 0.2, 1);
        m.sandbox_kill("tiktok", "deadline");
        let text = m.encode();
        assert!(
            text.contains(r#"mediaparse_parses_total{platform="tiktok",outcome="ok"} 1"#),
            "{text}"
        );
        assert!(text.contains("mediaparse_credits_charged_total{platform=\"tiktok\"} 1"));
        assert!(text.contains("mediaparse_parse_duration_seconds_bucket{"));
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn group_commits_count_groups_and_writes() {
        let m = super::global();
        let counter = |name: &str| {
            let text = m.encode();
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse::<u64>().ok())
                .unwrap_or_else(|| panic!("{name} in {text}"))
        };
        let groups = counter("mediaparse_store_commit_groups_total");
        let writes = counter("mediaparse_store_commit_writes_total");
        m.store_commit(5);
        // Other tests of this process commit too: at least this group.
        assert!(counter("mediaparse_store_commit_groups_total") > groups);
        assert!(counter("mediaparse_store_commit_writes_total") >= writes + 5);
    }
}
