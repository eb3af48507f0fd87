//! The window and the breaker, time driven by hand (a base `Instant` plus
//! offsets): never a sleep.

use std::time::{Duration, Instant};

use mediaparse_sdk::Failure;

use super::verdict::platform_side;
use super::*;
use crate::ParseError;
use mediaparse_auth::AuthError;

const P: &str = "tiktok";

fn policy() -> HealthPolicy {
    HealthPolicy {
        window_parses: 20,
        window: Duration::from_secs(600),
        min_parses: 10,
        degraded_percent: 30,
        broken_percent: 80,
        cooldown: Duration::from_secs(60),
        cooldown_max: Duration::from_secs(200),
        half_open_probes: 1,
        breaker: Some(true),
    }
}

fn fail(code: &'static str) -> Verdict {
    Verdict::Failure {
        code,
        message: format!("{code} happened"),
    }
}

/// Record `n` verdicts like `v` at `at`.
fn record_n(h: &PlatformHealth, p: &HealthPolicy, n: usize, v: &Verdict, at: Instant) {
    for _ in 0..n {
        h.record(P, p, v.clone(), at, 1_000);
    }
}

#[test]
fn a_platform_never_parsed_is_unknown_and_admitted() {
    let (h, p, t0) = (PlatformHealth::default(), policy(), Instant::now());
    assert_eq!(h.state(P, &p, t0), HealthState::Unknown);
    assert!(matches!(h.admit(P, &p, t0), Ok(None)));
}

#[test]
fn thresholds_need_enough_parses_and_the_share() {
    let (h, p, t0) = (PlatformHealth::default(), policy(), Instant::now());
    // 9 failures: too few to judge, never broken.
    record_n(&h, &p, 9, &fail("upstream_error"), t0);
    assert_eq!(h.state(P, &p, t0), HealthState::Unknown);
    assert!(h.admit(P, &p, t0).is_ok());
    // 3 of 10 failed (30 %): degraded.
    let h = PlatformHealth::default();
    record_n(&h, &p, 7, &Verdict::Success, t0);
    record_n(&h, &p, 3, &fail("upstream_timeout"), t0);
    assert_eq!(h.state(P, &p, t0), HealthState::Degraded);
    let view = h.view(P, &p, t0);
    assert_eq!((view.tally.parses, view.tally.failures), (10, 3));
    assert_eq!(view.tally.by_code.get("upstream_timeout"), Some(&3));
    assert!(view.reason.contains("3 of 10"), "{}", view.reason);
    assert_eq!(view.last_failures.len(), 3);
    // 2 of 10 (20 %): ok.
    let h = PlatformHealth::default();
    record_n(&h, &p, 8, &Verdict::Success, t0);
    record_n(&h, &p, 2, &fail("upstream_error"), t0);
    assert_eq!(h.state(P, &p, t0), HealthState::Ok);
    // 8 of 10 (80 %): broken, and the breaker refuses with the cool-down.
    let h = PlatformHealth::default();
    record_n(&h, &p, 2, &Verdict::Success, t0);
    record_n(&h, &p, 7, &fail("upstream_changed"), t0);
    assert_eq!(h.state(P, &p, t0), HealthState::Unknown, "7 of 9: too few");
    assert!(h.admit(P, &p, t0).is_ok(), "not broken yet");
    h.record(P, &p, fail("login_required"), t0, 1_000);
    assert_eq!(h.state(P, &p, t0), HealthState::Broken);
    let refusal = h.admit(P, &p, t0).err().expect("refused");
    assert_eq!(refusal.retry_after, Duration::from_secs(60));
    let view = h.view(P, &p, t0);
    assert_eq!(view.breaker.phase, "open");
    assert_eq!(view.breaker.opens, 1);
    assert!(
        view.reason.contains("upstream_changed 7") && view.reason.contains("login_required 1"),
        "{}",
        view.reason
    );
}

#[test]
fn the_callers_failures_never_count() {
    for e in [
        ParseError::Unsupported("not a post".into()),
        ParseError::Failure(Failure::unsupported("x")),
        ParseError::Failure(Failure::unavailable("deleted")),
        ParseError::InsufficientCredits {
            platform: P.into(),
            price: 1,
            balance: 0,
        },
        ParseError::Auth(AuthError::PlatformNotAllowed(P.into())),
        ParseError::Overloaded("busy".into()),
        ParseError::StoreBusy,
        ParseError::ExtractorUnavailable(P.into()),
        ParseError::PlatformUnavailable {
            platform: P.into(),
            retry_after_secs: 5,
        },
    ] {
        assert_eq!(platform_side(&e), None, "{e:?}");
        assert_eq!(Verdict::of(&Err(e)), Verdict::Ignored);
    }
    for (e, code) in [
        (
            ParseError::Failure(Failure::changed("no data")),
            "upstream_changed",
        ),
        (
            ParseError::Failure(Failure::upstream("500")),
            "upstream_error",
        ),
        (
            ParseError::Failure(Failure::LoginRequired("wall".into())),
            "login_required",
        ),
        (
            ParseError::Failure(Failure::RateLimited("429".into())),
            "upstream_rate_limited",
        ),
        (
            ParseError::ExtractorFailed("trap".into()),
            "extractor_failed",
        ),
        (ParseError::UpstreamTimeout, "upstream_timeout"),
        (ParseError::Upstream("reset".into()), "upstream_error"),
    ] {
        assert_eq!(platform_side(&e), Some(code), "{e:?}");
    }
    // Many ignored outcomes between the failures change nothing.
    let (h, p, t0) = (PlatformHealth::default(), policy(), Instant::now());
    for _ in 0..10 {
        h.record(P, &p, Verdict::Ignored, t0, 1_000);
        h.record(P, &p, fail("upstream_error"), t0, 1_000);
    }
    let view = h.view(P, &p, t0);
    assert_eq!((view.tally.parses, view.tally.failures), (10, 10));
    assert_eq!(view.state, HealthState::Broken);
}

#[test]
fn the_window_forgets_old_parses_and_keeps_its_size() {
    let (h, p, t0) = (PlatformHealth::default(), policy(), Instant::now());
    let p = HealthPolicy {
        breaker: Some(false),
        ..p
    };
    record_n(&h, &p, 10, &fail("upstream_error"), t0);
    assert_eq!(h.state(P, &p, t0), HealthState::Broken);
    assert!(h.admit(P, &p, t0).is_ok(), "breaker off: never refuses");
    // Older than the window: forgotten.
    let later = t0 + p.window + Duration::from_secs(1);
    assert_eq!(h.state(P, &p, later), HealthState::Unknown);
    // At most window_parses entries: 20 successes push the failures out.
    record_n(&h, &p, 10, &fail("upstream_error"), later);
    record_n(&h, &p, 20, &Verdict::Success, later);
    let view = h.view(P, &p, later);
    assert_eq!((view.tally.parses, view.tally.failures), (20, 0));
    assert_eq!(view.state, HealthState::Ok);
}

/// Broken, refused for the cool-down, then one probe at a time; a success
/// closes the breaker and the platform is `ok` again.
#[test]
fn a_half_open_success_closes_the_breaker() {
    let (h, p, t0) = (PlatformHealth::default(), policy(), Instant::now());
    record_n(&h, &p, 10, &fail("upstream_error"), t0);
    let almost = t0 + p.cooldown - Duration::from_millis(1);
    assert_eq!(
        h.admit(P, &p, almost).err().map(|r| r.retry_after),
        Some(Duration::from_millis(1))
    );
    let after = t0 + p.cooldown;
    let probe = h.admit(P, &p, after).expect("a probe").expect("probe");
    assert_eq!(h.view(P, &p, after).breaker.phase, "half_open");
    // One at a time: the next parse waits.
    assert!(h.admit(P, &p, after).is_err());
    assert_eq!(h.state(P, &p, after), HealthState::Broken);
    h.record(P, &p, Verdict::Success, after, 1_000);
    drop(probe);
    assert_eq!(h.state(P, &p, after), HealthState::Ok);
    assert!(matches!(h.admit(P, &p, after), Ok(None)), "closed");
    let view = h.view(P, &p, after);
    assert_eq!(view.breaker.phase, "closed");
    assert_eq!(view.tally.parses, 1, "the window starts afresh");
    // The failures stay listed for the operator.
    assert_eq!(view.last_failures.len(), LAST_FAILURES);
}

/// A probe that fails on the platform's side reopens the breaker for twice
/// the cool-down, bounded by `cooldown_max`; a probe that says nothing
/// (cancelled, a caller's failure) frees its slot for the next.
#[test]
fn a_half_open_failure_reopens_with_a_longer_cool_down() {
    let (h, p, t0) = (PlatformHealth::default(), policy(), Instant::now());
    record_n(&h, &p, 10, &fail("upstream_error"), t0);
    let mut now = t0 + p.cooldown;
    // A probe dropped without an outcome (a cancelled parse) frees the slot.
    drop(h.admit(P, &p, now).expect("admitted").expect("probe"));
    let probe = h.admit(P, &p, now).expect("admitted again").expect("probe");
    h.record(P, &p, Verdict::Ignored, now, 1_000);
    drop(probe);
    let mut expected = p.cooldown;
    for _ in 0..3 {
        let probe = h.admit(P, &p, now).expect("probe admitted").expect("probe");
        h.record(P, &p, fail("upstream_timeout"), now, 1_000);
        drop(probe);
        expected = (expected * 2).min(p.cooldown_max);
        let refusal = h.admit(P, &p, now).err().expect("open again");
        assert_eq!(refusal.retry_after, expected);
        assert_eq!(h.view(P, &p, now).breaker.cooldown, Some(expected));
        now += expected;
    }
    assert_eq!(expected, p.cooldown_max, "120 s, then the 200 s bound");
    assert_eq!(h.view(P, &p, now).breaker.opens, 4);
    // A success closes it; the next open starts from the first cool-down.
    let probe = h.admit(P, &p, now).expect("probe").expect("probe");
    h.record(P, &p, Verdict::Success, now, 1_000);
    drop(probe);
    record_n(&h, &p, 40, &fail("upstream_error"), now);
    assert_eq!(
        h.admit(P, &p, now).err().map(|r| r.retry_after),
        Some(p.cooldown)
    );
}

/// Parses admitted before the breaker opened end while it is open: their
/// outcomes neither close it nor lengthen it.
#[test]
fn late_outcomes_leave_an_open_breaker_alone() {
    let (h, p, t0) = (PlatformHealth::default(), policy(), Instant::now());
    record_n(&h, &p, 10, &fail("upstream_error"), t0);
    h.record(P, &p, Verdict::Success, t0, 1_000);
    h.record(P, &p, fail("upstream_error"), t0, 1_000);
    let view = h.view(P, &p, t0);
    assert_eq!(view.breaker.phase, "open");
    assert_eq!(view.breaker.opens, 1);
    assert_eq!(view.breaker.retry_after, Some(p.cooldown));
}

/// Each change of state is passed on once, with where it came from.
#[test]
fn state_changes_are_passed_on_once_each() {
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let (h, p, t0) = (PlatformHealth::with_changes(tx), policy(), Instant::now());
    record_n(&h, &p, 7, &Verdict::Success, t0);
    record_n(&h, &p, 3, &fail("upstream_error"), t0);
    record_n(&h, &p, 30, &fail("upstream_error"), t0);
    let mut seen = Vec::new();
    while let Ok(c) = rx.try_recv() {
        assert_eq!(c.platform, P);
        seen.push((c.from, c.to));
    }
    let (unknown, ok, degraded, broken) = (
        HealthState::Unknown,
        HealthState::Ok,
        HealthState::Degraded,
        HealthState::Broken,
    );
    assert_eq!(seen, [(unknown, ok), (ok, degraded), (degraded, broken)]);
}

/// Under the test-mode upstream override a breaker the configuration does
/// not mention never refuses (the platform is still judged); one switched
/// on refuses there too, and a service without the override refuses by
/// default.
#[test]
fn an_unconfigured_breaker_is_off_under_the_upstream_override() {
    let t0 = Instant::now();
    let unset = HealthPolicy {
        breaker: None,
        ..policy()
    };
    let broken = |h: &PlatformHealth, p: &HealthPolicy| {
        for i in 0..12 {
            h.record(
                P,
                p,
                fail("upstream_error"),
                t0 + Duration::from_millis(i),
                1_000,
            );
        }
    };
    let test_mode = PlatformHealth::default().breaker_off_unless_configured();
    broken(&test_mode, &unset);
    assert_eq!(test_mode.state(P, &unset, t0), HealthState::Broken);
    assert!(
        test_mode.admit(P, &unset, t0).is_ok(),
        "judged, never refused"
    );
    let on = HealthPolicy {
        breaker: Some(true),
        ..policy()
    };
    let test_mode = PlatformHealth::default().breaker_off_unless_configured();
    broken(&test_mode, &on);
    assert!(test_mode.admit(P, &on, t0).is_err(), "switched on: refused");
    let service = PlatformHealth::default();
    broken(&service, &unset);
    assert!(service.admit(P, &unset, t0).is_err(), "on by default");
}

fn note(outcome: &str) -> CanaryNote {
    CanaryNote {
        url: "https://www.tiktok.com/@a/video/1".into(),
        outcome: outcome.into(),
        detail: String::new(),
        at_unix_s: 1_000,
    }
}

#[test]
fn one_failed_canary_breaks_a_platform_and_a_canary_probe_closes_it() {
    let (h, p, t0) = (PlatformHealth::default(), policy(), Instant::now());
    record_n(&h, &p, 12, &Verdict::Success, t0);
    assert_eq!(h.state(P, &p, t0), HealthState::Ok);
    let state = h.record_canary(P, &p, fail("upstream_changed"), note("unmet"), t0);
    assert_eq!(
        state,
        HealthState::Broken,
        "1 of 13 failed, but it was the canary"
    );
    let view = h.view(P, &p, t0);
    assert_eq!(view.breaker.phase, "open");
    assert_eq!(view.last_canary.map(|c| c.outcome), Some("unmet".into()));
    assert!(h.admit(P, &p, t0).is_err(), "refused while open");
    // After the cool-down the canary is the half-open probe: it succeeds.
    let later = t0 + p.cooldown;
    let probe = h.admit(P, &p, later).expect("admitted").expect("a probe");
    let state = h.record_canary(P, &p, Verdict::Success, note("ok"), later);
    drop(probe);
    assert_eq!(state, HealthState::Ok);
    assert_eq!(h.view(P, &p, later).breaker.phase, "closed");
}

#[test]
fn a_live_success_after_a_failed_canary_leaves_the_platform_degraded() {
    let p = HealthPolicy {
        breaker: Some(false),
        ..policy()
    };
    let (h, t0) = (PlatformHealth::default(), Instant::now());
    record_n(&h, &p, 12, &Verdict::Success, t0);
    h.record_canary(P, &p, fail("upstream_changed"), note("unmet"), t0);
    assert_eq!(h.state(P, &p, t0), HealthState::Broken);
    h.record(P, &p, Verdict::Success, t0, 1_000);
    assert_eq!(
        h.state(P, &p, t0),
        HealthState::Degraded,
        "the canary's post may be what changed"
    );
    h.record_canary(P, &p, Verdict::Success, note("ok"), t0);
    assert_eq!(h.state(P, &p, t0), HealthState::Ok);
}
