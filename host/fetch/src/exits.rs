//! Exit pools: which outbound proxy a parse leaves through, and the health
//! of every exit. One parse keeps one exit for all its requests (tokens and
//! media URLs can be bound to the requesting address); across parses the
//! exit with the least recent failure is chosen. An exit that answers 403,
//! 429, a challenge or fails to connect cools off (exponential, capped);
//! when every exit of a platform is cooling, the parse is refused at once.
//!
//! Health is keyed by platform, label and URL: a configuration reload that
//! keeps an entry keeps its health, a changed URL starts fresh, a removed
//! entry is forgotten. Labels are shown to operators; URLs never leave.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// One configured exit: a label for operators, and the proxy URL (a
/// secret), or `None` for a direct connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExitSpec {
    pub label: String,
    pub url: Option<String>,
}

impl ExitSpec {
    /// The direct exit used when a platform names no proxy.
    pub fn direct() -> ExitSpec {
        ExitSpec {
            label: "direct".into(),
            url: None,
        }
    }
}

/// How long a failing exit rests: `base · 2^(failures-1)`, at most `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cooling {
    pub base: Duration,
    pub max: Duration,
}

impl Default for Cooling {
    /// 30 s doubling to 30 min: a 429 window on the platforms we serve is
    /// typically one to several minutes; a burned exit should rest long.
    fn default() -> Self {
        Cooling {
            base: Duration::from_secs(30),
            max: Duration::from_secs(30 * 60),
        }
    }
}

impl Cooling {
    fn after(&self, consecutive_failures: u32) -> Duration {
        let doublings = consecutive_failures.saturating_sub(1).min(20);
        self.base
            .saturating_mul(1u32 << doublings)
            .min(self.max)
            .max(self.base.min(self.max))
    }
}

/// What one upstream request (or, for a challenge or login wall, a whole
/// parse) told about the exit or session that served it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    Ok,
    Forbidden,
    RateLimited,
    Challenge,
    LoginWall,
    ConnectError,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Forbidden => "403",
            Outcome::RateLimited => "429",
            Outcome::Challenge => "challenge",
            Outcome::LoginWall => "login_wall",
            Outcome::ConnectError => "connect_error",
        }
    }

    /// Outcomes that put an exit on cooling-off (a login wall is the
    /// session's business, not the address's).
    pub fn cools_exit(self) -> bool {
        matches!(
            self,
            Outcome::Forbidden | Outcome::RateLimited | Outcome::Challenge | Outcome::ConnectError
        )
    }

    /// The outcome of one HTTP status, if it says anything about the exit.
    pub fn of_status(status: u16) -> Outcome {
        match status {
            403 => Outcome::Forbidden,
            429 => Outcome::RateLimited,
            _ => Outcome::Ok,
        }
    }
}

/// The exit a parse holds.
#[derive(Clone, Debug)]
pub struct ExitLease {
    pub platform: String,
    pub label: String,
    /// The proxy URL (a secret); `None`: direct.
    pub url: Option<String>,
    /// Whether this exit may cool off (a direct exit that is the only way
    /// out is never refused: there is nothing to rotate to).
    pool: bool,
}

/// Every exit of one platform is cooling.
#[derive(Debug, thiserror::Error)]
#[error("every exit for {platform} is cooling off; retry in {retry_after_secs} s")]
pub struct AllCooling {
    pub platform: String,
    pub retry_after_secs: u64,
}

#[derive(Clone, Debug, Default)]
struct Health {
    consecutive_failures: u32,
    last_failure: Option<Instant>,
    last_lease: Option<Instant>,
    cooling_until: Option<Instant>,
    outcomes: BTreeMap<Outcome, u64>,
    requests: u64,
}

/// One exit as operators see it (label, never URL).
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExitStatus {
    pub label: String,
    pub requests: u64,
    pub outcomes: BTreeMap<&'static str, u64>,
    pub cooling: bool,
    /// RFC 3339, when cooling.
    pub cooling_until: Option<String>,
}

type Key = (String, String, Option<String>);

/// Last failure, then last lease: the smallest is chosen (`None` is oldest).
type Rank = (Option<Instant>, Option<Instant>);

/// The health of every exit (or, with [`ExitPools::for_sessions`], every
/// session: the same rules, keyed by a digest instead of a URL), shared by
/// all parses.
pub struct ExitPools {
    /// The `pool` label of the metrics: `exit` or `session`.
    kind: &'static str,
    health: Mutex<HashMap<Key, Health>>,
}

impl Default for ExitPools {
    fn default() -> Self {
        ExitPools::new()
    }
}

impl ExitPools {
    pub fn new() -> ExitPools {
        ExitPools {
            kind: "exit",
            health: Mutex::new(HashMap::new()),
        }
    }

    pub fn for_sessions() -> ExitPools {
        ExitPools {
            kind: "session",
            health: Mutex::new(HashMap::new()),
        }
    }

    fn key(platform: &str, spec: &ExitSpec) -> Key {
        (platform.to_string(), spec.label.clone(), spec.url.clone())
    }

    /// Forget the health of `platform`'s exits that are no longer configured.
    fn reconcile(health: &mut HashMap<Key, Health>, platform: &str, exits: &[ExitSpec]) {
        health.retain(|(p, label, url), _| {
            p != platform || exits.iter().any(|e| &e.label == label && &e.url == url)
        });
    }

    /// Choose the exit for one parse of `platform` among `exits` (the
    /// configured pool; empty: direct).
    pub fn lease(&self, platform: &str, exits: &[ExitSpec]) -> Result<ExitLease, AllCooling> {
        self.lease_among(platform, exits, None)
    }

    /// [`ExitPools::lease`] restricted to the exit labelled `only` (a
    /// session pinned to an exit), if given.
    pub fn lease_among(
        &self,
        platform: &str,
        exits: &[ExitSpec],
        only: Option<&str>,
    ) -> Result<ExitLease, AllCooling> {
        self.lease_where(platform, exits, &|e| only.is_none_or(|o| o == e.label))
    }

    /// Whether the exit labelled `label` of `platform` is cooling now.
    pub fn is_cooling(&self, platform: &str, exits: &[ExitSpec], label: &str) -> bool {
        let now = Instant::now();
        let health = self.health.lock().unwrap_or_else(|p| p.into_inner());
        exits.iter().filter(|e| e.label == label).any(|e| {
            health
                .get(&Self::key(platform, e))
                .and_then(|h| h.cooling_until)
                .is_some_and(|u| u > now)
        })
    }

    /// [`ExitPools::lease`] among the entries `usable` accepts (the others
    /// keep their health: the whole list is the configuration).
    pub fn lease_where(
        &self,
        platform: &str,
        exits: &[ExitSpec],
        usable: &dyn Fn(&ExitSpec) -> bool,
    ) -> Result<ExitLease, AllCooling> {
        let now = Instant::now();
        let mut health = self.health.lock().unwrap_or_else(|p| p.into_inner());
        let direct = [ExitSpec::direct()];
        let (exits, pool) = if exits.is_empty() {
            (&direct[..], false)
        } else {
            (exits, true)
        };
        Self::reconcile(&mut health, platform, exits);
        let mut best: Option<(&ExitSpec, Rank)> = None;
        let mut soonest: Option<Instant> = None;
        for spec in exits.iter().filter(|e| usable(e)) {
            let h = health.entry(Self::key(platform, spec)).or_default();
            if let Some(until) = h.cooling_until.filter(|u| *u > now) {
                soonest = Some(soonest.map_or(until, |s| s.min(until)));
                continue;
            }
            // Least recent failure first (never failed is oldest), then
            // least recently leased, so healthy exits share the load.
            let rank = (h.last_failure, h.last_lease);
            if best.as_ref().is_none_or(|(_, r)| rank < *r) {
                best = Some((spec, rank));
            }
        }
        let Some((spec, _)) = best else {
            let wait = soonest.map_or(Duration::from_secs(1), |s| s - now);
            return Err(AllCooling {
                platform: platform.to_string(),
                retry_after_secs: wait.as_secs() + u64::from(wait.subsec_nanos() > 0),
            });
        };
        let spec = spec.clone();
        if let Some(h) = health.get_mut(&Self::key(platform, &spec)) {
            h.last_lease = Some(now);
        }
        Ok(ExitLease {
            platform: platform.to_string(),
            label: spec.label,
            url: spec.url,
            pool,
        })
    }

    /// Record what the exit of `lease` met; a bad outcome cools it off.
    /// Returns the cooling-off period started, if any (for the log).
    pub fn record(
        &self,
        lease: &ExitLease,
        outcome: Outcome,
        cooling: &Cooling,
    ) -> Option<Duration> {
        let now = Instant::now();
        let mut health = self.health.lock().unwrap_or_else(|p| p.into_inner());
        let key = (
            lease.platform.clone(),
            lease.label.clone(),
            lease.url.clone(),
        );
        let h = health.entry(key).or_default();
        *h.outcomes.entry(outcome).or_default() += 1;
        if !matches!(outcome, Outcome::Challenge | Outcome::LoginWall) {
            h.requests += 1;
        }
        let metric = |until: Option<i64>| {
            mediaparse_metrics::global().egress(
                &lease.platform,
                self.kind,
                &lease.label,
                outcome.as_str(),
                until,
            )
        };
        // A login wall is a session's fault, not an address's.
        let cools =
            outcome.cools_exit() || (self.kind == "session" && outcome == Outcome::LoginWall);
        if !cools {
            if outcome == Outcome::Ok {
                h.consecutive_failures = 0;
            }
            let served_again = h.cooling_until.is_some_and(|u| u <= now);
            if served_again {
                h.cooling_until = None;
            }
            metric(served_again.then_some(0));
            return None;
        }
        h.consecutive_failures = h.consecutive_failures.saturating_add(1);
        h.last_failure = Some(now);
        if !lease.pool {
            metric(None);
            return None;
        }
        let rest = cooling.after(h.consecutive_failures);
        h.cooling_until = Some(now + rest);
        metric(Some(unix_after(rest)));
        tracing::warn!(platform = %lease.platform, pool = self.kind, label = %lease.label, outcome = outcome.as_str(), cooling_s = rest.as_secs(), "cooling off");
        Some(rest)
    }

    /// The state of `platform`'s configured exits, by label.
    pub fn status(&self, platform: &str, exits: &[ExitSpec]) -> Vec<ExitStatus> {
        let now = Instant::now();
        let wall = SystemTime::now();
        let health = self.health.lock().unwrap_or_else(|p| p.into_inner());
        let direct = [ExitSpec::direct()];
        let exits = if exits.is_empty() { &direct[..] } else { exits };
        exits
            .iter()
            .map(|spec| {
                let h = health
                    .get(&Self::key(platform, spec))
                    .cloned()
                    .unwrap_or_default();
                let until = h.cooling_until.filter(|u| *u > now);
                ExitStatus {
                    label: spec.label.clone(),
                    requests: h.requests,
                    outcomes: h.outcomes.iter().map(|(o, n)| (o.as_str(), *n)).collect(),
                    cooling: until.is_some(),
                    cooling_until: until.map(|u| {
                        chrono::DateTime::<chrono::Utc>::from(wall + (u - now))
                            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                    }),
                }
            })
            .collect()
    }
}

fn unix_after(d: Duration) -> i64 {
    (SystemTime::now() + d)
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |t| t.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit(label: &str) -> ExitSpec {
        ExitSpec {
            label: label.into(),
            url: Some(format!("http://{label}.proxy:3128")),
        }
    }

    #[test]
    fn cooling_doubles_and_is_capped() {
        let c = Cooling {
            base: Duration::from_secs(10),
            max: Duration::from_secs(60),
        };
        let secs: Vec<u64> = (1..=6).map(|n| c.after(n).as_secs()).collect();
        assert_eq!(secs, [10, 20, 40, 60, 60, 60]);
    }

    #[test]
    fn leases_rotate_and_avoid_cooling_exits_until_all_cool() {
        let pools = ExitPools::new();
        let exits = [exit("a"), exit("b")];
        let cooling = Cooling::default();
        let first = pools.lease("tiktok", &exits).unwrap();
        let second = pools.lease("tiktok", &exits).unwrap();
        assert_ne!(first.label, second.label, "healthy exits share the load");
        pools.record(&first, Outcome::RateLimited, &cooling);
        for _ in 0..3 {
            assert_eq!(pools.lease("tiktok", &exits).unwrap().label, second.label);
        }
        pools.record(&second, Outcome::ConnectError, &cooling);
        let refused = pools.lease("tiktok", &exits).unwrap_err();
        assert!((29..=30).contains(&refused.retry_after_secs), "{refused:?}");
        // Other platforms are not affected.
        assert!(pools.lease("twitter", &exits).is_ok());
        let status = pools.status("tiktok", &exits);
        assert!(
            status
                .iter()
                .all(|s| s.cooling && s.cooling_until.is_some())
        );
        assert_eq!(status[0].outcomes.get("429"), Some(&1));
    }

    #[test]
    fn reload_keeps_health_of_unchanged_exits_only() {
        let pools = ExitPools::new();
        let cooling = Cooling::default();
        let a = exit("a");
        let lease = pools.lease("tiktok", std::slice::from_ref(&a)).unwrap();
        pools.record(&lease, Outcome::Forbidden, &cooling);
        // Same entry plus a new one: `a` is still cooling, `b` serves.
        let grown = [a.clone(), exit("b")];
        assert_eq!(pools.lease("tiktok", &grown).unwrap().label, "b");
        assert!(pools.status("tiktok", &grown)[0].cooling);
        // `a` with another URL is a new entry: fresh health.
        let moved = [ExitSpec {
            label: "a".into(),
            url: Some("socks5h://elsewhere:1080".into()),
        }];
        assert_eq!(pools.lease("tiktok", &moved).unwrap().label, "a");
        assert!(!pools.status("tiktok", &moved)[0].cooling);
    }

    #[test]
    fn the_direct_exit_counts_but_never_refuses() {
        let pools = ExitPools::new();
        let lease = pools.lease("tiktok", &[]).unwrap();
        assert_eq!(lease.label, "direct");
        assert_eq!(
            pools.record(&lease, Outcome::RateLimited, &Cooling::default()),
            None
        );
        assert!(pools.lease("tiktok", &[]).is_ok());
        assert_eq!(pools.status("tiktok", &[])[0].outcomes.get("429"), Some(&1));
    }
}
