//! One platform's circuit breaker: closed (parses run), open (parses are
//! refused until a cool-down ends), half-open (a few parses try; a success
//! closes it, a platform-side failure opens it again for twice as long, up
//! to the policy's longest cool-down). Time is passed in, never read.

use std::time::{Duration, Instant};

use super::HealthPolicy;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Closed,
    /// Refusing until `until`.
    Open {
        until: Instant,
    },
    /// `probes` parses are trying now.
    HalfOpen {
        probes: usize,
    },
}

/// Why a parse may not run now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// How long until a parse may try again.
    pub retry_after: Duration,
}

/// How long a parse refused while the probes run waits before retrying.
const PROBE_WAIT: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub struct Breaker {
    pub phase: Phase,
    /// The cool-down of the last open (`None` while closed).
    pub cooldown: Option<Duration>,
    /// Times it opened (from closed or half-open).
    pub opens: u64,
}

impl Default for Breaker {
    fn default() -> Self {
        Breaker {
            phase: Phase::Closed,
            cooldown: None,
            opens: 0,
        }
    }
}

impl Breaker {
    /// May a parse run at `now`? `Ok(true)`: yes, as a probe of a
    /// half-open breaker (it must give its slot back when it ends).
    pub fn admit(&mut self, now: Instant, policy: &HealthPolicy) -> Result<bool, Refusal> {
        if !policy.breaker_on() {
            // Switched off: never refuses, and forgets an open state.
            self.close();
            return Ok(false);
        }
        match self.phase {
            Phase::Closed => Ok(false),
            Phase::Open { until } if now < until => Err(Refusal {
                retry_after: until - now,
            }),
            Phase::Open { .. } => {
                self.phase = Phase::HalfOpen { probes: 1 };
                Ok(true)
            }
            Phase::HalfOpen { probes } if probes < policy.half_open_probes.max(1) => {
                self.phase = Phase::HalfOpen { probes: probes + 1 };
                Ok(true)
            }
            Phase::HalfOpen { .. } => Err(Refusal {
                retry_after: PROBE_WAIT,
            }),
        }
    }

    /// A probe ended (whatever its outcome): its slot is free.
    pub fn probe_done(&mut self) {
        if let Phase::HalfOpen { probes } = &mut self.phase {
            *probes = probes.saturating_sub(1);
        }
    }

    /// Open for the policy's first cool-down (the window judged the platform broken).
    pub fn open(&mut self, now: Instant, policy: &HealthPolicy) {
        self.open_for(now, policy.cooldown);
    }

    /// A probe failed on the platform's side: open again, for twice as long.
    pub fn reopen(&mut self, now: Instant, policy: &HealthPolicy) {
        let last = self.cooldown.unwrap_or(policy.cooldown);
        self.open_for(now, last.saturating_mul(2).min(policy.cooldown_max));
    }

    fn open_for(&mut self, now: Instant, cooldown: Duration) {
        self.phase = Phase::Open {
            until: now + cooldown,
        };
        self.cooldown = Some(cooldown);
        self.opens += 1;
    }

    /// A probe succeeded (or the breaker was switched off).
    pub fn close(&mut self) {
        self.phase = Phase::Closed;
        self.cooldown = None;
    }

    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    pub fn name(&self) -> &'static str {
        match self.phase {
            Phase::Closed => "closed",
            Phase::Open { .. } => "open",
            Phase::HalfOpen { .. } => "half_open",
        }
    }
}
