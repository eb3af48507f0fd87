//! `[jobs]` in the operator configuration.

use std::time::Duration;

use serde::Deserialize;

/// `[jobs]`; every key optional.
///
/// ```toml
/// [jobs]
/// retention_secs = 86400   # a finished job and its results are kept this long, then removed
/// lease_ms = 30000         # a host's claim on a running job; renewed while it runs, another host takes the job over once it lapses
/// poll_ms = 1000           # how often a host looks for jobs queued elsewhere or left by a dead host
/// concurrent = 4           # jobs one host runs at once
/// ```
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSettings {
    pub retention_secs: Option<u64>,
    pub lease_ms: Option<u64>,
    pub poll_ms: Option<u64>,
    pub concurrent: Option<u32>,
}

/// [`JobSettings`] with the defaults filled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobLimits {
    pub retention: Duration,
    pub lease: Duration,
    pub poll: Duration,
    pub concurrent: u32,
}

impl Default for JobLimits {
    fn default() -> Self {
        JobLimits {
            retention: Duration::from_secs(24 * 3600),
            lease: Duration::from_secs(30),
            poll: Duration::from_secs(1),
            concurrent: 4,
        }
    }
}

impl JobSettings {
    pub fn limits(&self) -> JobLimits {
        let d = JobLimits::default();
        JobLimits {
            retention: self.retention_secs.map_or(d.retention, Duration::from_secs),
            lease: self.lease_ms.map_or(d.lease, Duration::from_millis),
            poll: self.poll_ms.map_or(d.poll, Duration::from_millis),
            concurrent: self.concurrent.unwrap_or(d.concurrent),
        }
    }

    /// Refuse values that cannot work.
    pub fn check(&self) -> Result<(), String> {
        let l = self.limits();
        if l.retention < Duration::from_secs(1) {
            return Err("[jobs] retention_secs must be at least 1".into());
        }
        if l.lease < Duration::from_secs(1) {
            return Err("[jobs] lease_ms must be at least 1000".into());
        }
        if l.poll < Duration::from_millis(10) || l.poll > Duration::from_secs(60) {
            return Err("[jobs] poll_ms must be 10 to 60000".into());
        }
        if !(1..=64).contains(&l.concurrent) {
            return Err("[jobs] concurrent must be 1 to 64".into());
        }
        Ok(())
    }
}
