//! Canaries: posts known to parse (a platform's `[[canary]]` in its
//! `platform.toml`, or the operator's `[platforms.<id>] canaries`), parsed
//! on schedule through the normal parse path — same exits, sessions and
//! pacing — for no one: no balance check, no charge, no ledger row, and the
//! parse cache bypassed. Each result is judged against the canary's
//! expectation and counted in the platform's health
//! ([`mediaparse_parse::health::PlatformHealth::record_canary`], which says how
//! a canary weighs against live parses).
//!
//! Schedule: each platform's canaries run once per its `canary_every`, one
//! after the other (two canaries of one platform never run together; a
//! round still running when the next is due is not doubled), and the
//! platforms are staggered across the interval: of `n` platforms with
//! canaries, the `i`-th (by id) first runs `i/n` of its interval after the
//! start.
//!
//! On: `--canaries on`, or `[health] canaries = "on"`; off by default.
//! Several hosts on one PostgreSQL database: the hosts with canaries on
//! take turns through a lease in the database (`mediaparse_store`, `canaries.rs`), so one
//! runs them at a time and another takes over within [`LEASE_TTL`] when it
//! stops. Every result is written to the database, and every PostgreSQL
//! host ([`follow`], canaries on or off) counts the results other hosts
//! wrote in its own platform health, so all hosts judge with the canaries
//! and open their breakers together. On SQLite the one host is the holder.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mediaparse_catalogue::Canary;

use mediaparse_core::clock::unix_now_s;
use mediaparse_parse::health::{CanaryNote, Verdict};
use mediaparse_parse::{self as parse, CacheUse, ParseError, ParseRequest, Purpose, Services};
use mediaparse_store::{CanaryRow, KeyRecord};

/// How long the scheduler sleeps at most: it notices reloaded extractors
/// and configuration at least this often.
const RESCAN: Duration = Duration::from_secs(1);

/// How long a host holds the canaries' lease without renewing it (it
/// renews every [`RESCAN`]).
pub const LEASE_TTL: Duration = Duration::from_secs(10);

/// This process's name in the lease and the results.
pub fn host_id() -> String {
    use rand::RngCore;
    let mut b = [0u8; 6];
    rand::rng().fill_bytes(&mut b);
    format!(
        "host-{}",
        b.iter().map(|x| format!("{x:02x}")).collect::<String>()
    )
}

fn shared(services: &Services) -> bool {
    services.store.backend_name() == "postgres"
}

/// Does `host` hold the canaries' lease now (taking or renewing it)?
async fn hold_lease(services: &Services, host: &str) -> bool {
    if !shared(services) {
        return true;
    }
    let now_ms = chrono::Utc::now().timestamp_millis();
    let until = now_ms + LEASE_TTL.as_millis() as i64;
    match services
        .store
        .take_canary_lease_async(host, now_ms, until)
        .await
    {
        Ok(held) => held,
        Err(e) => {
            tracing::warn!(error = %e, "canary lease unreadable: not running canaries now");
            false
        }
    }
}

/// The key a canary parses under: no account is charged, every platform allowed.
fn canary_key() -> KeyRecord {
    KeyRecord {
        id: "canary".into(),
        account_id: "canary".into(),
        name: "canary".into(),
        token_prefix: String::new(),
        expires_on: None,
        platforms: None,
        created_at: 0,
        rotated_at: None,
        rate_limit_per_minute: None,
        delivery: None,
    }
}

/// The platforms with canaries now, by id, with their interval.
fn platforms_with_canaries(services: &Services) -> Vec<(String, Vec<Canary>, Duration)> {
    let config = services.config.load();
    let mut out: Vec<_> = services
        .registry
        .known()
        .iter()
        .filter(|m| config.enabled(&m.id))
        .map(|m| {
            (
                m.id.clone(),
                config.canaries(&m.id, &m.canaries),
                config.canary_every(&m.id),
            )
        })
        .filter(|(_, canaries, _)| !canaries.is_empty())
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The `i`-th of `n` platforms first runs this long after the start.
pub fn stagger(i: usize, n: usize, every: Duration) -> Duration {
    if n == 0 {
        return Duration::ZERO;
    }
    every.mul_f64(i as f64 / n as f64)
}

/// Run the canaries (while this host holds the lease) until the process ends.
pub async fn run(services: Arc<Services>, host: String) {
    let mut started = Instant::now();
    let mut next_due: HashMap<String, Instant> = HashMap::new();
    let running: Arc<Mutex<HashSet<String>>> = Arc::default();
    let mut held = false;
    tracing::info!(host, "canaries on");
    loop {
        if !hold_lease(&services, &host).await {
            if held {
                tracing::info!(host, "canary lease lost: another host runs them");
            }
            held = false;
            tokio::time::sleep(RESCAN).await;
            continue;
        }
        if !held {
            tracing::info!(host, "this host runs the canaries");
            // A fresh schedule from the moment it took over.
            held = true;
            started = Instant::now();
            next_due.clear();
        }
        let platforms = platforms_with_canaries(&services);
        let n = platforms.len();
        next_due.retain(|p, _| platforms.iter().any(|(q, _, _)| q == p));
        let now = Instant::now();
        for (i, (platform, canaries, every)) in platforms.into_iter().enumerate() {
            let due = *next_due
                .entry(platform.clone())
                .or_insert_with(|| started + stagger(i, n, every));
            if due > now {
                continue;
            }
            next_due.insert(platform.clone(), due.max(now - every) + every);
            let busy = !running
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(platform.clone());
            if busy {
                tracing::debug!(platform, "canaries still running: this round skipped");
                continue;
            }
            let (services, running, host) = (services.clone(), running.clone(), host.clone());
            tokio::spawn(async move {
                for canary in &canaries {
                    run_one(&services, &platform, canary, &host).await;
                }
                running
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&platform);
            });
        }
        let wake = next_due
            .values()
            .min()
            .copied()
            .unwrap_or(now + RESCAN)
            .min(Instant::now() + RESCAN);
        tokio::time::sleep_until(tokio::time::Instant::from_std(wake)).await;
    }
}

/// One canary parse, counted in the platform's health and the metrics, and
/// written to the database for the other hosts.
pub async fn run_one(services: &Services, platform: &str, canary: &Canary, host: &str) {
    let key = canary_key();
    let request = ParseRequest {
        key: &key,
        input: &canary.url,
        platform: Some(platform),
        request_id: "canary",
        cache: CacheUse::Bypass,
        purpose: Purpose::Canary,
        hold: None,
    };
    let result = parse::parse(services, &request).await;
    let (verdict, outcome, detail) = judge(canary, &result);
    let metrics = mediaparse_metrics::global();
    let Some(verdict) = verdict else {
        metrics.canary_run(platform, "skipped");
        tracing::debug!(platform, reason = %detail, "canary skipped");
        return;
    };
    metrics.canary_run(platform, &outcome);
    tracing::info!(platform, outcome, detail = %detail, "canary ran");
    let row = CanaryRow {
        id: 0,
        platform: platform.to_string(),
        url: canary.url.clone(),
        outcome: outcome.clone(),
        detail: detail.clone(),
        failure_code: match &verdict {
            Verdict::Failure { code, .. } => Some(code.to_string()),
            _ => None,
        },
        at_unix_s: unix_now_s(),
        host: host.to_string(),
    };
    let config = services.config.load();
    services.health.record_canary(
        platform,
        &config.health_policy(platform),
        verdict,
        CanaryNote {
            url: canary.url.clone(),
            outcome,
            detail,
            at_unix_s: row.at_unix_s,
        },
        Instant::now(),
    );
    if let Err(e) = services.store.add_canary_result_async(&row).await {
        tracing::warn!(platform, error = %e, "canary result not stored");
    }
}

/// The platform-side codes a stored result may name (a code this binary
/// does not know counts as `upstream_changed`).
const CODES: &[&str] = &[
    "upstream_changed",
    "upstream_error",
    "extractor_failed",
    "login_required",
    "upstream_rate_limited",
    "upstream_timeout",
];

/// A stored result as the verdict it was counted as.
pub fn stored_verdict(row: &CanaryRow) -> Verdict {
    match &row.failure_code {
        None => Verdict::Success,
        Some(code) => Verdict::Failure {
            code: CODES
                .iter()
                .find(|c| **c == code.as_str())
                .copied()
                .unwrap_or("upstream_changed"),
            message: format!("canary {}: {}", row.outcome, row.detail),
        },
    }
}

/// On PostgreSQL: count the canary results other hosts write in this
/// host's health, as they arrive (polled every [`RESCAN`]), until the
/// process ends. Results written before this host started are not counted.
pub async fn follow(services: Arc<Services>, host: String) {
    let mut last_id = None;
    loop {
        let after = last_id.unwrap_or(0);
        let read = services
            .store
            .canary_results_after_async(after, mediaparse_store::CANARY_RESULTS_KEPT)
            .await;
        match read {
            Ok(rows) => {
                let first_read = last_id.is_none();
                if let Some(last) = rows.last() {
                    last_id = Some(last.id);
                } else if first_read {
                    last_id = Some(0);
                }
                if !first_read {
                    let config = services.config.load();
                    for row in rows.iter().filter(|r| r.host != host) {
                        services.health.record_canary(
                            &row.platform,
                            &config.health_policy(&row.platform),
                            stored_verdict(row),
                            CanaryNote {
                                url: row.url.clone(),
                                outcome: row.outcome.clone(),
                                detail: row.detail.clone(),
                                at_unix_s: row.at_unix_s,
                            },
                            Instant::now(),
                        );
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "canary results unreadable"),
        }
        tokio::time::sleep(RESCAN).await;
    }
}

/// What one canary's answer says: the verdict to count (`None`: the parse
/// did not run, it says nothing), the outcome word and a line for the operator.
pub fn judge(
    canary: &Canary,
    result: &Result<parse::Parsed, ParseError>,
) -> (Option<Verdict>, String, String) {
    match result {
        Ok(parsed) => {
            let m = &parsed.media;
            match canary
                .expect
                .unmet(m.videos.len(), m.images.len(), m.audios.len())
            {
                None => (
                    Some(Verdict::Success),
                    "ok".into(),
                    format!(
                        "{} videos, {} images, {} audios",
                        m.videos.len(),
                        m.images.len(),
                        m.audios.len()
                    ),
                ),
                Some(short) => (
                    Some(Verdict::Failure {
                        code: "upstream_changed",
                        message: format!("the canary's answer holds {short}"),
                    }),
                    "unmet".into(),
                    short,
                ),
            }
        }
        // Refused before it ran: the breaker is open, the platform is
        // switched off, or the service is at its limits.
        Err(
            e @ (ParseError::PlatformUnavailable { .. }
            | ParseError::ExtractorUnavailable(_)
            | ParseError::Overloaded(_)
            | ParseError::Paced(_)),
        ) => (None, "skipped".into(), e.to_string()),
        Err(e) => {
            let verdict = match Verdict::of(result) {
                // A canary fails on the platform's side or not at all: a
                // post known to parse that no longer does is a change.
                Verdict::Ignored => Verdict::Failure {
                    code: "upstream_changed",
                    message: format!("the canary failed: {} ({e})", e.outcome()),
                },
                v => v,
            };
            (Some(verdict), e.outcome().to_string(), e.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platforms_are_staggered_across_the_interval() {
        let every = Duration::from_secs(60);
        let starts: Vec<_> = (0..3).map(|i| stagger(i, 3, every)).collect();
        assert_eq!(
            starts,
            [
                Duration::ZERO,
                Duration::from_secs(20),
                Duration::from_secs(40)
            ]
        );
    }

    #[test]
    fn a_canary_failure_of_any_kind_counts_as_a_change() {
        let canary = Canary {
            url: "https://example.com/p/1".into(),
            expect: Default::default(),
        };
        let unavailable: Result<parse::Parsed, ParseError> = Err(ParseError::Failure(
            mediaparse_sdk::Failure::Unavailable("gone".into()),
        ));
        let (verdict, outcome, _) = judge(&canary, &unavailable);
        assert!(matches!(
            verdict,
            Some(Verdict::Failure {
                code: "upstream_changed",
                ..
            })
        ));
        assert_eq!(outcome, "content_unavailable");
        let refused: Result<parse::Parsed, ParseError> = Err(ParseError::PlatformUnavailable {
            platform: "demo".into(),
            retry_after_secs: 3,
        });
        assert_eq!(judge(&canary, &refused).0, None, "an open breaker: not run");
    }
}

#[cfg(test)]
mod bundled {
    use std::path::Path;

    use mediaparse_catalogue::Manifest;
    use mediaparse_sdk::fixture::Case;

    /// Every bundled platform declares a canary, and each canary is a post
    /// one of its fixture cases parses into what the canary expects.
    #[test]
    fn every_bundled_canary_is_a_fixture_post_meeting_its_expectation() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../extractors");
        let mut checked = 0;
        for entry in std::fs::read_dir(&root)
            .expect("extractors folder")
            .flatten()
        {
            let toml = entry.path().join("platform.toml");
            if !toml.is_file() {
                continue;
            }
            let manifest = Manifest::load(&toml).expect("platform.toml");
            assert!(
                !manifest.canaries.is_empty(),
                "{} has no canary",
                manifest.id
            );
            for canary in &manifest.canaries {
                let fixtures = entry.path().join("fixtures");
                let case = std::fs::read_dir(&fixtures)
                    .expect("fixtures")
                    .flatten()
                    .filter(|d| d.path().join("case.json").is_file())
                    .filter_map(|d| Case::load(&d.path()).ok())
                    .find(|c| c.input == canary.url)
                    .unwrap_or_else(|| panic!("{}: no fixture parses {}", manifest.id, canary.url));
                let media = case.expect.media.as_ref().expect("a case with media");
                let count = |kind: &str| media[kind].as_array().map_or(0, Vec::len);
                assert_eq!(
                    canary
                        .expect
                        .unmet(count("videos"), count("images"), count("audios")),
                    None,
                    "{}: {}",
                    manifest.id,
                    canary.url
                );
                checked += 1;
            }
        }
        assert!(checked >= 10, "{checked} canaries checked");
    }
}
