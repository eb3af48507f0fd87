//! The service's clocks: the parse clock (`context.now-unix-ms`, fixed for
//! replay and tests) and the key-expiry clock (fixed for tests), and the one
//! way times are written in answers.

/// Now, or a fixed time for replay and tests.
#[derive(Clone, Copy, Debug, Default)]
pub struct Clock {
    /// A fixed `context.now-unix-ms`; `None` = the real clock.
    pub fixed_parse_ms: Option<u64>,
    /// A fixed time for key expiry checks (unix seconds); `None` = the real clock.
    pub fixed_auth_s: Option<i64>,
}

impl Clock {
    /// The time handed to extractors.
    pub fn parse_now_ms(&self) -> u64 {
        self.fixed_parse_ms.unwrap_or_else(unix_now_ms)
    }

    /// Now, for key expiry checks (and key views, so they agree with a parse).
    pub fn auth_now_s(&self) -> i64 {
        self.fixed_auth_s
            .unwrap_or_else(|| chrono::Utc::now().timestamp())
    }
}

/// The wall clock in unix seconds: ledger rows and operator records.
pub fn unix_now_s() -> i64 {
    chrono::Utc::now().timestamp()
}

/// The wall clock in unix milliseconds: the parse clock, request ids.
pub fn unix_now_ms() -> u64 {
    chrono::Utc::now().timestamp_millis().max(0) as u64
}

/// Unix seconds as `2026-11-22T03:04:05Z`.
pub fn rfc3339(unix_s: i64) -> String {
    chrono::DateTime::from_timestamp(unix_s, 0)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| unix_s.to_string())
}
