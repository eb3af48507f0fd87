//! Tests of `canaries`.

use crate::canaries::*;
use crate::tests::both::each_backend;
use crate::*;

fn row(platform: &str, host: &str, failure: Option<&str>) -> CanaryRow {
    CanaryRow {
        id: 0,
        platform: platform.into(),
        url: "https://example.com/p/1".into(),
        outcome: failure.unwrap_or("ok").into(),
        detail: String::new(),
        failure_code: failure.map(String::from),
        at_unix_s: 1_000,
        host: host.into(),
    }
}

#[test]
fn one_host_holds_the_lease_until_it_lapses() {
    each_backend(|t| {
        let other = Store::connect(&t.location).unwrap();
        assert!(t.store.take_canary_lease("a", 1_000, 11_000).unwrap());
        assert!(
            !other.take_canary_lease("b", 2_000, 12_000).unwrap(),
            "held by a"
        );
        assert!(
            t.store.take_canary_lease("a", 5_000, 15_000).unwrap(),
            "a renews"
        );
        assert!(
            !other.take_canary_lease("b", 15_000, 25_000).unwrap(),
            "not lapsed yet"
        );
        assert!(
            other.take_canary_lease("b", 15_001, 25_001).unwrap(),
            "lapsed: b takes it"
        );
        assert!(!t.store.take_canary_lease("a", 16_000, 26_000).unwrap());
    });
}

#[test]
fn every_host_reads_the_results_in_order() {
    each_backend(|t| {
        let other = Store::connect(&t.location).unwrap();
        t.store
            .add_canary_result(&row("tiktok", "a", None))
            .unwrap();
        t.store
            .add_canary_result(&row("tiktok", "a", Some("upstream_changed")))
            .unwrap();
        let read = other.canary_results_after(0, 100).unwrap();
        assert_eq!(read.len(), 2);
        assert!(read[0].id < read[1].id);
        assert_eq!(read[1].failure_code.as_deref(), Some("upstream_changed"));
        assert!(
            other
                .canary_results_after(read[1].id, 100)
                .unwrap()
                .is_empty()
        );
    });
}
