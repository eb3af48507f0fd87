//! Test mode: the knobs that bend the service for tests —
//! a fixed extractor clock (`--fixed-clock-ms` / `MEDIAPARSE_FIXED_CLOCK_MS`),
//! a fixed key-expiry clock (`MEDIAPARSE_FIXED_AUTH_CLOCK`), upstream
//! timeout and body cap (`MEDIAPARSE_UPSTREAM_TIMEOUT_MS`,
//! `MEDIAPARSE_UPSTREAM_MAX_BODY_BYTES`) and the upstream override
//! (`--upstream` / `MEDIAPARSE_UPSTREAM`) — are honoured only under
//! `--test-mode` (`MEDIAPARSE_TEST_MODE=1`), and test mode listens on a
//! loopback address only. Without it, `serve` refuses to start while a knob
//! is set, naming it: a leftover variable never silently changes money or
//! time on a public service.

use std::net::SocketAddr;

/// The environment knobs (the flags' values are passed in).
pub const ENV_KNOBS: &[&str] = &[
    "MEDIAPARSE_UPSTREAM_TIMEOUT_MS",
    "MEDIAPARSE_UPSTREAM_MAX_BODY_BYTES",
];

/// The test knobs `serve` was given.
#[derive(Clone, Debug, Default)]
pub struct Knobs {
    pub upstream: bool,
    pub fixed_clock_ms: bool,
    pub fixed_auth_clock: bool,
    /// Names of the environment knobs set (non-empty).
    pub env: Vec<String>,
}

impl Knobs {
    /// The flags' presence, plus the environment knobs read now.
    pub fn with_env(upstream: bool, fixed_clock_ms: bool, fixed_auth_clock: bool) -> Knobs {
        let env = ENV_KNOBS
            .iter()
            .filter(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
            .map(|name| name.to_string())
            .collect();
        Knobs {
            upstream,
            fixed_clock_ms,
            fixed_auth_clock,
            env,
        }
    }

    fn names(&self) -> Vec<String> {
        let flags = [
            (self.upstream, "--upstream (MEDIAPARSE_UPSTREAM)"),
            (
                self.fixed_clock_ms,
                "--fixed-clock-ms (MEDIAPARSE_FIXED_CLOCK_MS)",
            ),
            (
                self.fixed_auth_clock,
                "--fixed-auth-clock (MEDIAPARSE_FIXED_AUTH_CLOCK)",
            ),
        ];
        let mut names: Vec<String> = flags
            .iter()
            .filter(|(set, _)| *set)
            .map(|(_, name)| name.to_string())
            .collect();
        names.extend(self.env.iter().cloned());
        names
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TestModeError {
    #[error(
        "{0}: test knobs, honoured only with --test-mode (MEDIAPARSE_TEST_MODE=1), which listens on loopback only; unset them to serve"
    )]
    KnobsWithoutTestMode(String),
    #[error("--test-mode listens on a loopback address only, not {0}")]
    NotLoopback(SocketAddr),
}

/// Test mode is on: `--test-mode`, or `MEDIAPARSE_TEST_MODE` set to `1` or `true`.
pub fn enabled(flag: bool) -> bool {
    flag || std::env::var("MEDIAPARSE_TEST_MODE").is_ok_and(|v| matches!(v.trim(), "1" | "true"))
}

/// Whether `serve` may start: test mode on loopback, or no knob at all.
pub fn check(test_mode: bool, listen: SocketAddr, knobs: &Knobs) -> Result<(), TestModeError> {
    if test_mode {
        if !listen.ip().is_loopback() {
            return Err(TestModeError::NotLoopback(listen));
        }
        return Ok(());
    }
    let names = knobs.names();
    if names.is_empty() {
        Ok(())
    } else {
        Err(TestModeError::KnobsWithoutTestMode(names.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn knobs_need_test_mode_and_test_mode_needs_loopback() {
        let none = Knobs::default();
        let clock = Knobs {
            fixed_clock_ms: true,
            ..Default::default()
        };
        let env = Knobs {
            env: vec!["MEDIAPARSE_UPSTREAM_TIMEOUT_MS".into()],
            ..Default::default()
        };
        assert_eq!(check(false, addr("0.0.0.0:80"), &none), Ok(()));
        assert!(matches!(
            check(false, addr("127.0.0.1:80"), &clock),
            Err(TestModeError::KnobsWithoutTestMode(n)) if n.contains("--fixed-clock-ms")
        ));
        assert!(matches!(
            check(false, addr("127.0.0.1:80"), &env),
            Err(TestModeError::KnobsWithoutTestMode(n)) if n.contains("UPSTREAM_TIMEOUT_MS")
        ));
        assert_eq!(check(true, addr("127.0.0.1:80"), &clock), Ok(()));
        assert_eq!(check(true, addr("[::1]:80"), &env), Ok(()));
        assert_eq!(
            check(true, addr("0.0.0.0:80"), &none),
            Err(TestModeError::NotLoopback(addr("0.0.0.0:80")))
        );
        assert!(check(true, addr("192.168.1.2:80"), &clock).is_err());
    }
}
