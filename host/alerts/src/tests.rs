//! The signature (the Standard Webhooks example) and the throttle (time by
//! hand); delivery is tested end to end (`platform_health` in the e2e suite).

use std::time::{Duration, Instant};

use super::throttle::{Throttle, worth_alerting};
use mediaparse_config::health::alert_key;
use mediaparse_core::health::HealthState::{self, *};
use mediaparse_parse::health::StateChange;
use mediaparse_signing::{sign, verify};

/// The example of the Standard Webhooks specification.
#[test]
fn signs_the_standard_webhooks_example() {
    let key = alert_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").expect("key");
    let (id, ts, body) = (
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1_614_265_330,
        br#"{"test": 2432232314}"#.as_slice(),
    );
    let signature = sign(&key, id, ts, body);
    assert_eq!(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    assert!(verify(
        &key,
        id,
        ts,
        body,
        &format!("v1,bm90IGl0 {signature}")
    ));
    assert!(!verify(&key, id, ts + 1, body, &signature));
    assert!(!verify(&key, id, ts, b"{}", &signature));
    for bad in ["MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_!!", "whsec_YWJj"] {
        let e = alert_key(bad).unwrap_err();
        assert!(!e.contains("MfKQ"), "{e}");
    }
}

fn change(from: HealthState, to: HealthState) -> StateChange {
    StateChange {
        platform: "tiktok".into(),
        from,
        to,
        reason: format!("{} to {}", from.as_str(), to.as_str()),
        at_unix_s: 1_000,
    }
}

#[test]
fn only_changes_into_or_out_of_trouble_are_worth_an_alert() {
    assert!(!worth_alerting(&change(Unknown, Ok)));
    assert!(!worth_alerting(&change(Ok, Unknown)));
    assert!(worth_alerting(&change(Ok, Degraded)));
    assert!(worth_alerting(&change(Degraded, Broken)));
    assert!(worth_alerting(&change(Broken, Ok)));
    assert!(worth_alerting(&change(Unknown, Broken)));
}

/// One alert per platform per interval; the changes in between are merged
/// into one sent when it ends, or dropped when they end where they began.
#[test]
fn the_throttle_merges_changes_inside_the_interval() {
    let (mut t, t0, every) = (Throttle::default(), Instant::now(), Duration::from_secs(60));
    assert_eq!(
        t.offer(change(Ok, Degraded), t0, every),
        Some(change(Ok, Degraded))
    );
    let soon = t0 + Duration::from_secs(1);
    assert_eq!(t.offer(change(Degraded, Broken), soon, every), None);
    assert_eq!(t.next_due(every), Some(t0 + every));
    assert!(t.due(soon, every).is_empty(), "not yet");
    let sent = t.due(t0 + every, every);
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].from, sent[0].to), (Degraded, Broken));
    assert_eq!(t.next_due(every), None);
    // Broken → ok → broken inside one interval: nothing to announce.
    let t1 = t0 + every;
    assert_eq!(
        t.offer(change(Broken, Ok), t1 + Duration::from_secs(1), every),
        None
    );
    assert_eq!(
        t.offer(change(Ok, Broken), t1 + Duration::from_secs(2), every),
        None
    );
    assert!(t.due(t1 + every, every).is_empty());
    // Another platform has its own interval.
    let other = StateChange {
        platform: "twitter".into(),
        ..change(Ok, Broken)
    };
    assert!(t.offer(other, t1, every).is_some());
    // A zero interval sends every change.
    let mut t = Throttle::default();
    for c in [
        change(Ok, Degraded),
        change(Degraded, Ok),
        change(Ok, Degraded),
    ] {
        assert!(t.offer(c, t0, Duration::ZERO).is_some());
    }
}
