//! Health per platform, judged from the live outcome mix, and the circuit
//! breaker that stops spending exits on a platform that is broken.
//!
//! Every finished parse of a routed platform is recorded here (where
//! `parse()` counts its metrics) with its [`Verdict`]: a success, a failure
//! on the platform's side (`upstream_changed`, `upstream_error`,
//! `extractor_failed`, `login_required`, `upstream_rate_limited`,
//! `upstream_timeout`), or nothing about the platform (the caller's
//! mistakes, the service's own limits, cache hits). The last parses in a
//! [`window::Window`] give the state: `unknown` without parses (or too few
//! to condemn), `broken` from `broken_percent` platform-side failures among
//! at least `min_parses`, `degraded` from `degraded_percent`, else `ok`.
//!
//! When a platform turns broken its [`breaker::Breaker`] opens (unless the
//! operator switched it off): its parses are refused before any instance
//! exists (`503 platform_unavailable` with `Retry-After`) until the
//! cool-down ends; then [`HealthPolicy::half_open_probes`] parses try at
//! once. A success closes it (and the window starts afresh), a
//! platform-side failure opens it again for twice as long.
//!
//! Canaries (the service's `canary` module) weigh more than a live parse: a
//! canary is a post known to parse, so its failure (or an answer without
//! what it expects) is counted in the window as `upstream_changed` and, until
//! a live parse or a later canary of the platform succeeds, makes the platform
//! `broken` on its own (the breaker opens). A live success after a failed
//! canary leaves the platform at worst `degraded`: the canary's post may be
//! what changed. A canary's success counts as one success. While the
//! breaker is open, canaries are admitted like any parse: after the
//! cool-down they are the half-open probes.
//!
//! A change of state is sent (never awaited) to whoever listens — the
//! alerts (the service's `alerts` module).
//!
//! Time is passed in (`now`), so the tests drive it without sleeping.

pub mod breaker;
pub mod verdict;
pub mod window;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use breaker::{Breaker, Phase, Refusal};
pub use mediaparse_core::health::{HealthPolicy, HealthState};
pub use verdict::Verdict;
use window::{Tally, Window};

/// A recent platform-side failure, for the operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailureNote {
    pub code: &'static str,
    /// Configured secrets already scrubbed.
    pub message: String,
    pub at_unix_s: i64,
}

/// Recent failures kept per platform.
pub const LAST_FAILURES: usize = 5;

/// A platform's last canary parse, for the operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CanaryNote {
    pub url: String,
    /// `ok`, `unmet`, or the error code.
    pub outcome: String,
    pub detail: String,
    pub at_unix_s: i64,
}

/// Where a counted parse comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Live,
    Canary,
}

#[derive(Debug, Default)]
struct Tracker {
    window: Window,
    breaker: Breaker,
    last_failures: VecDeque<FailureNote>,
    /// Why the breaker last opened (shown while it is not closed).
    opened_because: String,
    /// The state after the last counted parse.
    last_state: HealthState,
    /// The last canary failed and no parse of the platform succeeded since: why.
    canary_failed: Option<String>,
    /// Only a live success came after the failed canary.
    live_ok_since_canary: bool,
    last_canary: Option<CanaryNote>,
}

impl Tracker {
    fn judge(&mut self, now: Instant, policy: &HealthPolicy) -> (HealthState, String, Tally) {
        let tally = self.window.tally(now, policy);
        if self.breaker.is_closed() {
            let (state, reason) = tally.judge(policy);
            match &self.canary_failed {
                Some(why) if !self.live_ok_since_canary => {
                    (HealthState::Broken, why.clone(), tally)
                }
                Some(why) if matches!(state, HealthState::Ok | HealthState::Unknown) => (
                    HealthState::Degraded,
                    format!("{why}; a live parse succeeded since"),
                    tally,
                ),
                _ => (state, reason, tally),
            }
        } else {
            let reason = format!("breaker {}: {}", self.breaker.name(), self.opened_because);
            (HealthState::Broken, reason, tally)
        }
    }
}

/// A platform's state changed with a counted parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateChange {
    pub platform: String,
    pub from: HealthState,
    pub to: HealthState,
    pub reason: String,
    pub at_unix_s: i64,
}

/// Every platform's health (one per service; platforms appear on their first parse).
#[derive(Clone, Default)]
pub struct PlatformHealth {
    trackers: Arc<Mutex<HashMap<String, Tracker>>>,
    /// Where state changes go (dropped when the listener is behind).
    changes: Option<tokio::sync::mpsc::Sender<StateChange>>,
    /// The breaker of a platform whose configuration says nothing is off:
    /// under the test-mode upstream override every answer is scripted, no
    /// real exit's reputation is at stake, and a test replaying many
    /// failure captures through one service must see each one's own answer.
    breaker_off_by_default: bool,
}

/// A parse trying a half-open breaker: gives its slot back when dropped,
/// however the parse ends (a cancelled parse too).
pub struct Probe {
    trackers: Arc<Mutex<HashMap<String, Tracker>>>,
    platform: String,
}

impl Drop for Probe {
    fn drop(&mut self) {
        if let Some(t) = lock(&self.trackers).get_mut(&self.platform) {
            t.breaker.probe_done();
        }
    }
}

fn lock(trackers: &Mutex<HashMap<String, Tracker>>) -> MutexGuard<'_, HashMap<String, Tracker>> {
    // A panic elsewhere never stops parses: the data stays usable.
    trackers.lock().unwrap_or_else(|e| e.into_inner())
}

/// The breaker's side of a platform's view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BreakerView {
    pub enabled: bool,
    /// `closed`, `open` or `half_open`.
    pub phase: &'static str,
    /// While open: how long parses are still refused.
    pub retry_after: Option<Duration>,
    /// The cool-down of the current open (`None` while closed).
    pub cooldown: Option<Duration>,
    pub opens: u64,
}

/// One platform's health, for the status and admin views.
#[derive(Clone, Debug)]
pub struct PlatformView {
    pub state: HealthState,
    pub reason: String,
    pub tally: Tally,
    pub breaker: BreakerView,
    /// Newest first.
    pub last_failures: Vec<FailureNote>,
    pub last_canary: Option<CanaryNote>,
}

impl PlatformHealth {
    /// Health that sends every change of a platform's state to `changes`.
    pub fn with_changes(changes: tokio::sync::mpsc::Sender<StateChange>) -> PlatformHealth {
        PlatformHealth {
            trackers: Arc::default(),
            changes: Some(changes),
            breaker_off_by_default: false,
        }
    }

    /// The same health with every unconfigured breaker off (the service
    /// under the test-mode upstream override).
    pub fn breaker_off_unless_configured(mut self) -> PlatformHealth {
        self.breaker_off_by_default = true;
        self
    }

    /// `policy` with this service's default where the breaker is unset.
    fn resolved(&self, policy: &HealthPolicy) -> HealthPolicy {
        policy.with_default_breaker(!self.breaker_off_by_default)
    }

    /// May a parse of `platform` run at `now`? `Ok(Some)`: as a probe of a
    /// half-open breaker, to be held until the parse ends.
    pub fn admit(
        &self,
        platform: &str,
        policy: &HealthPolicy,
        now: Instant,
    ) -> Result<Option<Probe>, Refusal> {
        let policy = &self.resolved(policy);
        let mut trackers = lock(&self.trackers);
        let Some(t) = trackers.get_mut(platform) else {
            return Ok(None);
        };
        let probe = t.breaker.admit(now, policy)?;
        Ok(probe.then(|| Probe {
            trackers: self.trackers.clone(),
            platform: platform.to_string(),
        }))
    }

    /// Count one finished parse of `platform` (at `now`; `unix_s` for the
    /// failure notes) and move the breaker; the state after it.
    pub fn record(
        &self,
        platform: &str,
        policy: &HealthPolicy,
        verdict: Verdict,
        now: Instant,
        unix_s: i64,
    ) -> HealthState {
        self.count(platform, policy, verdict, Source::Live, now, unix_s)
    }

    fn count(
        &self,
        platform: &str,
        policy: &HealthPolicy,
        verdict: Verdict,
        source: Source,
        now: Instant,
        unix_s: i64,
    ) -> HealthState {
        let policy = &self.resolved(policy);
        let failure = match verdict {
            Verdict::Ignored => return self.state(platform, policy, now),
            Verdict::Success => None,
            Verdict::Failure { code, message } => Some((code, message)),
        };
        let mut trackers = lock(&self.trackers);
        let t = trackers.entry(platform.to_string()).or_default();
        if let Some((code, message)) = &failure {
            t.last_failures.push_front(FailureNote {
                code,
                message: message.clone(),
                at_unix_s: unix_s,
            });
            t.last_failures.truncate(LAST_FAILURES);
        }
        let code = failure.as_ref().map(|(c, _)| *c);
        t.window.push(now, code, policy);
        match (source, &failure) {
            (Source::Canary, Some((code, message))) => {
                t.canary_failed = Some(format!("canary failed ({code}): {message}"));
                t.live_ok_since_canary = false;
            }
            (Source::Canary, None) => t.canary_failed = None,
            (Source::Live, None) => t.live_ok_since_canary = true,
            (Source::Live, Some(_)) => {}
        }
        let opens = t.breaker.opens;
        match t.breaker.phase {
            Phase::HalfOpen { .. } if code.is_none() => {
                // The platform works again: judge it afresh from here.
                t.breaker.close();
                t.window.clear();
                t.window.push(now, None, policy);
                t.canary_failed = None;
            }
            Phase::HalfOpen { .. } => {
                t.breaker.reopen(now, policy);
                t.opened_because = format!(
                    "a parse after the cool-down failed ({})",
                    code.unwrap_or_default()
                );
            }
            // Parses admitted before it opened end now: they change nothing.
            Phase::Open { .. } => {}
            Phase::Closed => {
                let (state, reason, _) = t.judge(now, policy);
                if state == HealthState::Broken && policy.breaker_on() {
                    t.breaker.open(now, policy);
                    t.opened_because = reason;
                }
            }
        }
        let (state, reason, _) = t.judge(now, policy);
        if state != t.last_state {
            let change = StateChange {
                platform: platform.to_string(),
                from: t.last_state,
                to: state,
                reason,
                at_unix_s: unix_s,
            };
            t.last_state = state;
            if let Some(tx) = &self.changes
                && tx.try_send(change).is_err()
            {
                tracing::warn!(
                    platform,
                    "health change not passed on: its listener is behind"
                );
            }
        }
        let metrics = mediaparse_metrics::global();
        if t.breaker.opens > opens {
            tracing::warn!(platform, cooldown_ms = t.breaker.cooldown.map(|d| d.as_millis() as u64), reason = %t.opened_because, "platform breaker opened");
            metrics.breaker_opened(platform);
        }
        metrics.platform_health(
            platform,
            state.as_str(),
            &HealthState::ALL.map(HealthState::as_str),
        );
        state
    }

    /// `platform`'s state at `now`.
    pub fn state(&self, platform: &str, policy: &HealthPolicy, now: Instant) -> HealthState {
        match lock(&self.trackers).get_mut(platform) {
            Some(t) => t.judge(now, policy).0,
            None => HealthState::Unknown,
        }
    }

    /// Count one canary parse of `platform` (its verdict judged against the
    /// canary's expectation by the runner), and note it for the operator.
    pub fn record_canary(
        &self,
        platform: &str,
        policy: &HealthPolicy,
        verdict: Verdict,
        note: CanaryNote,
        now: Instant,
    ) -> HealthState {
        {
            let mut trackers = lock(&self.trackers);
            let t = trackers.entry(platform.to_string()).or_default();
            t.last_canary = Some(note.clone());
        }
        self.count(
            platform,
            policy,
            verdict,
            Source::Canary,
            now,
            note.at_unix_s,
        )
    }

    /// Everything about `platform` at `now`.
    pub fn view(&self, platform: &str, policy: &HealthPolicy, now: Instant) -> PlatformView {
        let policy = &self.resolved(policy);
        let mut trackers = lock(&self.trackers);
        let Some(t) = trackers.get_mut(platform) else {
            let (state, reason) = Tally::default().judge(policy);
            return PlatformView {
                state,
                reason,
                tally: Tally::default(),
                breaker: BreakerView {
                    enabled: policy.breaker_on(),
                    phase: "closed",
                    retry_after: None,
                    cooldown: None,
                    opens: 0,
                },
                last_failures: Vec::new(),
                last_canary: None,
            };
        };
        let (state, reason, tally) = t.judge(now, policy);
        let retry_after = match t.breaker.phase {
            Phase::Open { until } => Some(until.saturating_duration_since(now)),
            _ => None,
        };
        PlatformView {
            state,
            reason,
            tally,
            breaker: BreakerView {
                enabled: policy.breaker_on(),
                phase: t.breaker.name(),
                retry_after,
                cooldown: t.breaker.cooldown,
                opens: t.breaker.opens,
            },
            last_failures: t.last_failures.iter().cloned().collect(),
            last_canary: t.last_canary.clone(),
        }
    }
}

#[cfg(test)]
mod tests;
