//! When a failed delivery is tried again: exponential backoff with jitter,
//! from `first_retry` doubling up to `max_retry_interval`, until
//! `give_up_after` has passed since the delivery was queued or
//! `max_attempts` were made.

use std::time::Duration;

use serde::Deserialize;

/// `[webhooks]` in the operator configuration; every key optional.
///
/// ```toml
/// [webhooks]
/// first_retry_ms = 5000            # the first retry comes this long after the first attempt…
/// max_retry_interval_ms = 3600000  # …each next one twice as late, up to this (±25 % jitter)
/// give_up_after_secs = 86400       # no attempt later than this after the event
/// max_attempts = 40                # nor more attempts than this
/// max_pending_per_key = 1000       # deliveries waiting per key; more are refused
/// poll_ms = 1000                   # how often a host looks for due deliveries
/// ```
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookSettings {
    pub first_retry_ms: Option<u64>,
    pub max_retry_interval_ms: Option<u64>,
    pub give_up_after_secs: Option<u64>,
    pub max_attempts: Option<u32>,
    pub max_pending_per_key: Option<u32>,
    pub poll_ms: Option<u64>,
}

/// [`WebhookSettings`] with the defaults filled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub first_retry: Duration,
    pub max_retry_interval: Duration,
    pub give_up_after: Duration,
    pub max_attempts: u32,
    pub max_pending_per_key: u32,
    pub poll: Duration,
}

/// The most attempts any configuration may ask for.
pub const MAX_ATTEMPTS: u32 = 100;

impl Default for Schedule {
    fn default() -> Self {
        Schedule {
            first_retry: Duration::from_secs(5),
            max_retry_interval: Duration::from_secs(3600),
            give_up_after: Duration::from_secs(24 * 3600),
            max_attempts: 40,
            max_pending_per_key: 1000,
            poll: Duration::from_secs(1),
        }
    }
}

impl WebhookSettings {
    pub fn schedule(&self) -> Schedule {
        let d = Schedule::default();
        Schedule {
            first_retry: self
                .first_retry_ms
                .map_or(d.first_retry, Duration::from_millis),
            max_retry_interval: self
                .max_retry_interval_ms
                .map_or(d.max_retry_interval, Duration::from_millis),
            give_up_after: self
                .give_up_after_secs
                .map_or(d.give_up_after, Duration::from_secs),
            max_attempts: self.max_attempts.unwrap_or(d.max_attempts),
            max_pending_per_key: self.max_pending_per_key.unwrap_or(d.max_pending_per_key),
            poll: self.poll_ms.map_or(d.poll, Duration::from_millis),
        }
    }

    /// Refuse values that cannot work.
    pub fn check(&self) -> Result<(), String> {
        let s = self.schedule();
        if s.first_retry.is_zero() || s.first_retry > s.max_retry_interval {
            return Err(
                "[webhooks] first_retry_ms must be above 0 and at most max_retry_interval_ms"
                    .into(),
            );
        }
        if s.give_up_after > Duration::from_secs(7 * 24 * 3600) {
            return Err("[webhooks] give_up_after_secs is at most 604800 (7 days)".into());
        }
        if !(1..=MAX_ATTEMPTS).contains(&s.max_attempts) {
            return Err(format!(
                "[webhooks] max_attempts must be 1 to {MAX_ATTEMPTS}"
            ));
        }
        if !(1..=100_000).contains(&s.max_pending_per_key) {
            return Err("[webhooks] max_pending_per_key must be 1 to 100000".into());
        }
        if !(10..=60_000).contains(&s.poll.as_millis()) {
            return Err("[webhooks] poll_ms must be 10 to 60000".into());
        }
        Ok(())
    }
}

impl Schedule {
    /// The delay before attempt `made + 1`, after `made` failed attempts
    /// (`made >= 1`), without jitter.
    pub fn base_delay(&self, made: u32) -> Duration {
        let doublings = made.saturating_sub(1).min(30);
        self.first_retry
            .saturating_mul(1u32 << doublings)
            .min(self.max_retry_interval)
    }

    /// When to try again (Unix ms) after `made` failed attempts at `now_ms`
    /// of a delivery queued at `created_ms`; `None`: give up. `jitter` in
    /// [0, 1) spreads retries by ±25 %.
    pub fn next_attempt(
        &self,
        made: u32,
        created_ms: i64,
        now_ms: i64,
        jitter: f64,
    ) -> Option<i64> {
        if made >= self.max_attempts {
            return None;
        }
        let base = self.base_delay(made).as_millis() as f64;
        let delay = (base * (0.75 + 0.5 * jitter.clamp(0.0, 1.0))).max(1.0) as i64;
        let at = now_ms.saturating_add(delay);
        let deadline = created_ms.saturating_add(self.give_up_after.as_millis() as i64);
        (at <= deadline).then_some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_double_up_to_the_cap_and_stop_after_a_day() {
        let s = Schedule::default();
        assert_eq!(s.base_delay(1), Duration::from_secs(5));
        assert_eq!(s.base_delay(2), Duration::from_secs(10));
        assert_eq!(s.base_delay(5), Duration::from_secs(80));
        assert_eq!(s.base_delay(20), Duration::from_secs(3600));
        assert_eq!(s.base_delay(u32::MAX), Duration::from_secs(3600));
        // Jitter stays within ±25 %.
        assert_eq!(s.next_attempt(1, 0, 0, 0.0), Some(3750));
        assert_eq!(s.next_attempt(1, 0, 0, 0.999_999), Some(6249));
        // Not past 24 h after the event.
        let day = 24 * 3600 * 1000;
        assert_eq!(s.next_attempt(10, 0, day - 1000, 0.5), None);
        // Nor past max_attempts.
        assert_eq!(s.next_attempt(40, 0, 0, 0.5), None);
        // A whole day of failures makes a bounded number of attempts.
        let (mut now, mut made) = (0i64, 1u32);
        while let Some(at) = s.next_attempt(made, 0, now, 0.5) {
            now = at;
            made += 1;
        }
        assert!((20..=40).contains(&made), "{made} attempts");
    }

    #[test]
    fn settings_are_checked() {
        let bad = WebhookSettings {
            first_retry_ms: Some(0),
            ..Default::default()
        };
        assert!(bad.check().is_err());
        let bad = WebhookSettings {
            max_attempts: Some(0),
            ..Default::default()
        };
        assert!(bad.check().is_err());
        assert!(WebhookSettings::default().check().is_ok());
        let short = WebhookSettings {
            first_retry_ms: Some(100),
            max_retry_interval_ms: Some(200),
            ..Default::default()
        };
        assert_eq!(short.schedule().base_delay(3), Duration::from_millis(200));
    }
}
