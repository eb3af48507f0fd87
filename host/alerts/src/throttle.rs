//! At most one alert per platform per interval. A change inside the
//! interval is held, merged with later ones, and sent when the interval
//! ends — unless the platform is back where the last alert left it. Time is
//! passed in.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use mediaparse_core::health::HealthState;
use mediaparse_parse::health::StateChange;

/// Whether a change is worth an alert: it enters or leaves `degraded` or
/// `broken` (`unknown` ↔ `ok` is a platform's first parses, or its quiet).
pub fn worth_alerting(change: &StateChange) -> bool {
    let bad = |s: HealthState| matches!(s, HealthState::Degraded | HealthState::Broken);
    change.from != change.to && (bad(change.from) || bad(change.to))
}

#[derive(Debug, Default)]
pub struct Throttle {
    /// When each platform's last alert went, and the state it announced.
    sent: HashMap<String, (Instant, HealthState)>,
    /// Changes held until their platform's interval ends.
    held: HashMap<String, StateChange>,
}

impl Throttle {
    /// `change` arrived at `now`: the alert to send now, if any.
    pub fn offer(
        &mut self,
        change: StateChange,
        now: Instant,
        interval: Duration,
    ) -> Option<StateChange> {
        match self.sent.get(&change.platform) {
            Some((at, announced)) if now < *at + interval => {
                let announced = *announced;
                let held =
                    self.held
                        .entry(change.platform.clone())
                        .or_insert_with(|| StateChange {
                            from: announced,
                            ..change.clone()
                        });
                held.to = change.to;
                held.reason = change.reason;
                held.at_unix_s = change.at_unix_s;
                None
            }
            _ => {
                self.held.remove(&change.platform);
                self.sent.insert(change.platform.clone(), (now, change.to));
                Some(change)
            }
        }
    }

    /// The held changes whose interval ended by `now`; one that ends where
    /// the last alert left the platform is dropped.
    pub fn due(&mut self, now: Instant, interval: Duration) -> Vec<StateChange> {
        let ready: Vec<String> = self
            .held
            .keys()
            .filter(|p| {
                self.sent
                    .get(*p)
                    .is_none_or(|(at, _)| now >= *at + interval)
            })
            .cloned()
            .collect();
        let mut out = Vec::new();
        for platform in ready {
            let Some(change) = self.held.remove(&platform) else {
                continue;
            };
            if change.from != change.to {
                self.sent.insert(platform, (now, change.to));
                out.push(change);
            }
        }
        out
    }

    /// When the next held change is due.
    pub fn next_due(&self, interval: Duration) -> Option<Instant> {
        self.held
            .keys()
            .filter_map(|p| self.sent.get(p).map(|(at, _)| *at + interval))
            .min()
    }
}
