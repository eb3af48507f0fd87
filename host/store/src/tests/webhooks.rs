//! Tests of `webhooks`.

use crate::KeyRecord;
use crate::tests::both::{each_backend, postgres};
use crate::webhooks::*;
use crate::*;

fn key(store: &Store, id: &str) {
    store
        .insert_key(&KeyRecord::for_tests(id, "acme"), id.as_bytes())
        .unwrap();
}

fn attempt(n: u32, status: Option<u16>) -> AttemptRecord {
    AttemptRecord {
        attempt: n,
        at_ms: 1000 * i64::from(n),
        status,
        error: status
            .filter(|s| *s >= 300)
            .map(|s| format!("answered {s}")),
        duration_ms: 5,
    }
}

#[test]
fn a_delivery_is_claimed_retried_then_delivered_with_every_attempt_kept() {
    each_backend(|t| {
        let s = &t.store;
        key(s, "key_1");
        assert_eq!(s.webhook_secret("key_1").unwrap(), None);
        s.set_webhook_secret("key_1", "whsec_x", 1).unwrap();
        assert_eq!(
            s.webhook_secret("key_1").unwrap().as_deref(),
            Some("whsec_x")
        );
        assert!(matches!(
            s.set_webhook_secret("key_nope", "whsec_x", 1),
            Err(StoreError::NotFound(..))
        ));
        s.enqueue_webhook(
            "msg_1",
            "key_1",
            "https://h.example/in",
            "job.done",
            "{}",
            100,
            10,
        )
        .unwrap();
        // Not due before its time.
        assert!(s.claim_webhooks(99, 1000, 10, "a").unwrap().is_empty());
        let claimed = s.claim_webhooks(100, 1000, 10, "a").unwrap();
        assert_eq!(claimed.len(), 1);
        assert_eq!(claimed[0].attempts, 0);
        // Leased: nobody else gets it until the lease ends.
        assert!(s.claim_webhooks(500, 1000, 10, "b").unwrap().is_empty());
        assert!(
            s.finish_webhook_attempt(
                &claimed[0],
                &attempt(1, Some(500)),
                AttemptOutcome::RetryAt(2000),
                1000
            )
            .unwrap()
        );
        assert!(s.claim_webhooks(1999, 1000, 10, "b").unwrap().is_empty());
        let again = s.claim_webhooks(2000, 1000, 10, "b").unwrap();
        assert_eq!(again[0].attempts, 1);
        // A lease that expired and was taken over records nothing.
        let stale = ClaimedDelivery {
            lease: "a".into(),
            ..again[0].clone()
        };
        assert!(
            !s.finish_webhook_attempt(
                &stale,
                &attempt(2, Some(200)),
                AttemptOutcome::Delivered,
                2100
            )
            .unwrap()
        );
        assert!(
            s.finish_webhook_attempt(
                &again[0],
                &attempt(2, Some(200)),
                AttemptOutcome::Delivered,
                2100
            )
            .unwrap()
        );
        assert!(
            s.claim_webhooks(i64::MAX / 2, 1000, 10, "c")
                .unwrap()
                .is_empty()
        );
        let listed = s
            .webhook_deliveries(&DeliveryFilter {
                key: Some("key_1".into()),
                limit: 10,
                ..Default::default()
            })
            .unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].state, "delivered");
        assert_eq!(listed[0].account_id, "acme");
        assert_eq!(
            listed[0]
                .attempts
                .iter()
                .map(|a| a.status)
                .collect::<Vec<_>>(),
            vec![Some(500), Some(200)]
        );
        let other = s
            .webhook_deliveries(&DeliveryFilter {
                key: Some("key_2".into()),
                limit: 10,
                ..Default::default()
            })
            .unwrap();
        assert!(other.is_empty());
    });
}

#[test]
fn ended_deliveries_are_pruned_after_the_retention_and_pending_ones_never() {
    each_backend(|t| {
        let s = &t.store;
        key(s, "key_1");
        for id in ["msg_done", "msg_waiting"] {
            s.enqueue_webhook(id, "key_1", "https://h.example/", "t", "{}", 0, 10)
                .unwrap();
        }
        let claimed = s.claim_webhooks(0, 1000, 10, "a").unwrap();
        let done = claimed.iter().find(|d| d.id == "msg_done").unwrap();
        let waiting = claimed.iter().find(|d| d.id == "msg_waiting").unwrap();
        s.finish_webhook_attempt(
            done,
            &attempt(1, Some(200)),
            AttemptOutcome::Delivered,
            1000,
        )
        .unwrap();
        s.finish_webhook_attempt(
            waiting,
            &attempt(1, Some(500)),
            AttemptOutcome::RetryAt(5000),
            1000,
        )
        .unwrap();
        assert_eq!(s.prune_webhooks(1000).unwrap(), 0, "not yet");
        assert_eq!(s.prune_webhooks(i64::MAX).unwrap(), 1);
        let left = s
            .webhook_deliveries(&DeliveryFilter {
                limit: 10,
                ..Default::default()
            })
            .unwrap();
        assert_eq!(
            left.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(),
            ["msg_waiting"]
        );
    });
}

#[test]
fn a_dead_hosts_lease_expires_and_the_queue_per_key_is_bounded() {
    each_backend(|t| {
        let s = &t.store;
        key(s, "key_1");
        for i in 0..3 {
            s.enqueue_webhook(
                &format!("msg_{i}"),
                "key_1",
                "https://h.example/",
                "t",
                "{}",
                0,
                3,
            )
            .unwrap();
        }
        assert!(matches!(
            s.enqueue_webhook("msg_9", "key_1", "https://h.example/", "t", "{}", 0, 3),
            Err(StoreError::Invalid(_))
        ));
        assert!(matches!(
            s.enqueue_webhook("msg_8", "key_nope", "https://h.example/", "t", "{}", 0, 3),
            Err(StoreError::NotFound(..))
        ));
        assert_eq!(s.claim_webhooks(0, 1000, 10, "dead").unwrap().len(), 3);
        // The claiming host never finishes; after the lease, another host claims them.
        assert!(s.claim_webhooks(999, 1000, 10, "live").unwrap().is_empty());
        assert_eq!(s.claim_webhooks(1000, 1000, 10, "live").unwrap().len(), 3);
    });
}

#[test]
fn concurrent_claims_on_postgres_never_share_a_delivery() {
    let t = postgres();
    key(&t.store, "key_1");
    const N: usize = 200;
    for i in 0..N {
        t.store
            .enqueue_webhook(
                &format!("msg_{i:03}"),
                "key_1",
                "https://h.example/",
                "t",
                "{}",
                0,
                1000,
            )
            .unwrap();
    }
    // Two handles (two pools: as two hosts) claim small batches at once.
    let handles: Vec<Store> = (0..2)
        .map(|_| Store::connect(&t.location).unwrap())
        .collect();
    let barrier = std::sync::Barrier::new(2);
    let claimed: Vec<Vec<String>> = std::thread::scope(|scope| {
        let workers: Vec<_> = handles
            .iter()
            .enumerate()
            .map(|(h, store)| {
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    let mut mine = Vec::new();
                    loop {
                        let got = store
                            .claim_webhooks(10, 60_000, 3, &format!("host{h}"))
                            .unwrap();
                        if got.is_empty() {
                            return mine;
                        }
                        mine.extend(got.into_iter().map(|d| d.id));
                    }
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let mut all: Vec<&String> = claimed.iter().flatten().collect();
    let total = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), total, "a delivery was claimed by both hosts");
    assert_eq!(total, N);
    eprintln!(
        "claims per host: {:?}",
        claimed.iter().map(Vec::len).collect::<Vec<_>>()
    );
}
