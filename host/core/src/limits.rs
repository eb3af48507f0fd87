//! Bounds on one parse that do not depend on the platform.

use std::time::Duration;

/// Bounds on one parse.
#[derive(Clone, Debug)]
pub struct ParseLimits {
    pub max_rounds: usize,
    pub max_requests_per_round: usize,
    /// Wall time for the whole parse, all rounds included.
    pub deadline: Duration,
    /// Longest accepted input (URL or share text), in bytes.
    pub max_input_bytes: usize,
}

impl Default for ParseLimits {
    fn default() -> Self {
        ParseLimits {
            max_rounds: 8,
            max_requests_per_round: 16,
            deadline: Duration::from_secs(30),
            max_input_bytes: 4096,
        }
    }
}
