//! One platform's recent parses that say something about the platform:
//! the last `window_parses` of them, no older than `window`. A caller's own
//! failures never enter it (see [`super::Verdict`]).

use std::collections::{BTreeMap, VecDeque};
use std::time::Instant;

use super::{HealthPolicy, HealthState};

/// One counted parse: when it ended and, if it failed on the platform's
/// side, its code.
#[derive(Clone, Copy, Debug)]
struct Entry {
    at: Instant,
    failure: Option<&'static str>,
}

/// The sliding window (at most `window_parses` entries).
#[derive(Debug, Default)]
pub struct Window {
    entries: VecDeque<Entry>,
}

/// What the window holds now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub parses: usize,
    pub failures: usize,
    /// Platform-side failures by code.
    pub by_code: BTreeMap<&'static str, usize>,
}

impl Window {
    /// Count one parse that ended at `at`; the oldest falls out past the size.
    pub fn push(&mut self, at: Instant, failure: Option<&'static str>, policy: &HealthPolicy) {
        self.entries.push_back(Entry { at, failure });
        while self.entries.len() > policy.window_parses.max(1) {
            self.entries.pop_front();
        }
    }

    /// Forget every parse (the breaker closed: the platform works again).
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// The parses younger than the window's age at `now` (older ones are dropped).
    pub fn tally(&mut self, now: Instant, policy: &HealthPolicy) -> Tally {
        while self
            .entries
            .front()
            .is_some_and(|e| now.saturating_duration_since(e.at) > policy.window)
        {
            self.entries.pop_front();
        }
        let mut tally = Tally {
            parses: self.entries.len(),
            ..Tally::default()
        };
        for code in self.entries.iter().filter_map(|e| e.failure) {
            tally.failures += 1;
            *tally.by_code.entry(code).or_default() += 1;
        }
        tally
    }
}

impl Tally {
    /// The state these parses show, and why.
    pub fn judge(&self, policy: &HealthPolicy) -> (HealthState, String) {
        if self.parses == 0 {
            return (HealthState::Unknown, "no recent parses".into());
        }
        let failed = if self.failures == 0 {
            format!(
                "{} recent parses, none failed on the platform's side",
                self.parses
            )
        } else {
            let codes = self
                .by_code
                .iter()
                .map(|(code, n)| format!("{code} {n}"))
                .collect::<Vec<_>>()
                .join(", ");
            format!(
                "{} of {} recent parses failed on the platform's side ({codes})",
                self.failures, self.parses
            )
        };
        // Whole-percent shares, compared without rounding down a threshold:
        // failures / parses >= p / 100.
        let at_least = |p: u8| self.failures * 100 >= usize::from(p) * self.parses;
        let state = if self.parses < policy.min_parses {
            if at_least(policy.degraded_percent) {
                return (
                    HealthState::Unknown,
                    format!(
                        "{failed}: too few to judge (at least {} needed)",
                        policy.min_parses
                    ),
                );
            }
            HealthState::Ok
        } else if at_least(policy.broken_percent) {
            HealthState::Broken
        } else if at_least(policy.degraded_percent) {
            HealthState::Degraded
        } else {
            HealthState::Ok
        };
        (state, failed)
    }
}
