//! The health policy (`[health]`) and the states a platform's health can
//! be in: plain values the configuration builds and `parse/health` applies.

use std::time::Duration;

/// How health is judged and the breaker cools down (`[health]`).
#[derive(Clone, Debug, PartialEq)]
pub struct HealthPolicy {
    /// The most recent parses judged.
    pub window_parses: usize,
    /// Parses older than this are forgotten.
    pub window: Duration,
    /// Fewer counted parses never make a platform degraded or broken.
    pub min_parses: usize,
    pub degraded_percent: u8,
    pub broken_percent: u8,
    /// The first cool-down of an opened breaker.
    pub cooldown: Duration,
    /// The longest cool-down (a failed try doubles it).
    pub cooldown_max: Duration,
    /// Parses that may try at once after a cool-down.
    pub half_open_probes: usize,
    /// Whether a broken platform's parses are refused, as configured;
    /// `None`: the service's default ([`HealthPolicy::with_default_breaker`]).
    pub breaker: Option<bool>,
}

impl HealthPolicy {
    /// Whether the breaker refuses (on unless configured or defaulted off).
    pub fn breaker_on(&self) -> bool {
        self.breaker.unwrap_or(true)
    }

    /// This policy with `on` where the configuration left the breaker unset.
    pub fn with_default_breaker(&self, on: bool) -> HealthPolicy {
        HealthPolicy {
            breaker: Some(self.breaker.unwrap_or(on)),
            ..self.clone()
        }
    }
}

impl Default for HealthPolicy {
    fn default() -> Self {
        HealthPolicy {
            window_parses: 50,
            window: Duration::from_secs(600),
            min_parses: 10,
            degraded_percent: 30,
            broken_percent: 80,
            cooldown: Duration::from_secs(60),
            cooldown_max: Duration::from_secs(900),
            half_open_probes: 1,
            breaker: None,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HealthState {
    Ok,
    Degraded,
    Broken,
    #[default]
    Unknown,
}

impl HealthState {
    pub const ALL: [HealthState; 4] = [
        HealthState::Ok,
        HealthState::Degraded,
        HealthState::Broken,
        HealthState::Unknown,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HealthState::Ok => "ok",
            HealthState::Degraded => "degraded",
            HealthState::Broken => "broken",
            HealthState::Unknown => "unknown",
        }
    }
}
