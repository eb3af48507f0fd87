//! Pacing per platform and exit: at most N requests per second (evenly
//! spaced) and M in flight, so a burst of parses cannot burn an exit's
//! reputation. A request that cannot start before its parse's deadline is
//! refused at once rather than left to time out.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The pace configured for one platform's exits (`None`: unlimited).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pace {
    pub requests_per_second: Option<f64>,
    pub max_in_flight: Option<usize>,
}

/// A request could not start within the parse deadline.
#[derive(Debug, thiserror::Error)]
#[error(
    "the pace for {platform} leaves no room before the deadline; retry in {retry_after_secs} s"
)]
pub struct Paced {
    pub platform: String,
    pub retry_after_secs: u64,
}

struct Gate {
    pace: Pace,
    next_slot: Instant,
    in_flight: Option<Arc<Semaphore>>,
}

/// Held while a request is in flight.
pub struct Slot {
    _permit: Option<OwnedSemaphorePermit>,
}

/// Every (platform, exit label)'s gate, shared by all parses.
#[derive(Default)]
pub struct Pacer {
    gates: Mutex<HashMap<(String, String), Gate>>,
}

impl Pacer {
    pub fn new() -> Pacer {
        Pacer::default()
    }

    /// Wait for the right to send one request through `exit` of
    /// `platform`, or fail when that cannot happen before `deadline`.
    pub async fn slot(
        &self,
        platform: &str,
        exit: &str,
        pace: Pace,
        deadline: Instant,
    ) -> Result<Slot, Paced> {
        if pace == Pace::default() {
            return Ok(Slot { _permit: None });
        }
        let now = Instant::now();
        let refuse = |at: Instant| Paced {
            platform: platform.to_string(),
            retry_after_secs: secs_ceil(at.saturating_duration_since(now)).max(1),
        };
        let (start, semaphore) = {
            let mut gates = self.gates.lock().unwrap_or_else(|p| p.into_inner());
            let gate = gates
                .entry((platform.to_string(), exit.to_string()))
                .or_insert_with(|| Gate {
                    pace,
                    next_slot: now,
                    in_flight: None,
                });
            if gate.pace != pace {
                // Reloaded: the new pace starts now.
                *gate = Gate {
                    pace,
                    next_slot: now,
                    in_flight: None,
                };
            }
            if gate.in_flight.is_none() {
                gate.in_flight = pace
                    .max_in_flight
                    .map(|m| Arc::new(Semaphore::new(m.max(1))));
            }
            let start = gate.next_slot.max(now);
            if start > deadline {
                return Err(refuse(start));
            }
            if let Some(rate) = pace.requests_per_second.filter(|r| *r > 0.0) {
                gate.next_slot = start + Duration::from_secs_f64(1.0 / rate);
            }
            (start, gate.in_flight.clone())
        };
        tokio::time::sleep_until(start.into()).await;
        let permit = match semaphore {
            None => None,
            Some(s) => Some(
                tokio::time::timeout_at(deadline.into(), s.acquire_owned())
                    .await
                    .map_err(|_| refuse(Instant::now() + Duration::from_secs(1)))?
                    .map_err(|_| refuse(Instant::now()))?,
            ),
        };
        Ok(Slot { _permit: permit })
    }
}

fn secs_ceil(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn requests_are_spaced() {
        let pacer = Pacer::new();
        let pace = Pace {
            requests_per_second: Some(20.0),
            max_in_flight: None,
        };
        let far = Instant::now() + Duration::from_secs(10);
        let started = Instant::now();
        for _ in 0..3 {
            pacer.slot("tiktok", "a", pace, far).await.unwrap();
        }
        // Three slots 50 ms apart: the third starts at 100 ms at the earliest
        // (a lower bound: load only makes it later).
        assert!(
            started.elapsed() >= Duration::from_millis(95),
            "{:?}",
            started.elapsed()
        );
    }

    /// One request per 100 s against deadlines 30 s ahead: the margins are
    /// wide enough for any load, and a refusal cannot come from a timer (it
    /// would take 30 s), only from the check before any wait.
    #[tokio::test]
    async fn each_exit_has_its_own_gate_and_a_slot_past_the_deadline_is_refused_at_once() {
        let pacer = Pacer::new();
        let pace = Pace {
            requests_per_second: Some(0.01),
            max_in_flight: None,
        };
        let within = || Instant::now() + Duration::from_secs(30);
        let started = Instant::now();
        pacer.slot("tiktok", "a", pace, within()).await.unwrap();
        // Another exit has its own gate: free now, though `a`'s next slot is 100 s away.
        pacer.slot("tiktok", "b", pace, within()).await.unwrap();
        // `a`'s next slot is past the deadline: refused, with the wait it would need.
        let refused = pacer
            .slot("tiktok", "a", pace, within())
            .await
            .err()
            .expect("refused");
        assert!((90..=100).contains(&refused.retry_after_secs), "{refused}");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "a refusal waited for its deadline: {:?}",
            started.elapsed()
        );
    }

    #[tokio::test]
    async fn in_flight_is_capped_until_a_slot_is_released() {
        let pacer = Pacer::new();
        let pace = Pace {
            requests_per_second: None,
            max_in_flight: Some(1),
        };
        let far = Instant::now() + Duration::from_secs(10);
        let held = pacer.slot("tiktok", "a", pace, far).await.unwrap();
        let near = Instant::now() + Duration::from_millis(50);
        assert!(pacer.slot("tiktok", "a", pace, near).await.is_err());
        drop(held);
        assert!(pacer.slot("tiktok", "a", pace, far).await.is_ok());
    }
}
