//! The async twins of the parse path's writes and reads answer as the
//! blocking methods do, on both backends, with the books exact.

use crate::tests::both::{TestStore, each_backend};
use crate::{Backend, Bill, Charge, Claim, KeyRecord, Store, StoreError, StoredResponse};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The client request id kept beside ledger id `request_id`.
fn client_request_id(s: &Store, request_id: &str) -> Option<String> {
    let sql = "SELECT client_request_id FROM ledger WHERE request_id = ";
    match &s.backend {
        Backend::Sqlite(_) => s
            .with(|c| Ok(c.query_row(&format!("{sql}?1"), [request_id], |r| r.get(0))?))
            .unwrap(),
        Backend::Postgres(p) => p
            .client()
            .unwrap()
            .query_one(&format!("{sql}$1"), &[&request_id])
            .unwrap()
            .get(0),
    }
}

/// The day's aggregate of `account`: (requests, credits) over every key
/// and platform.
fn daily_aggregate(s: &Store, account: &str, day: i64) -> (i64, i64) {
    let sql = "SELECT CAST(COALESCE(SUM(requests), 0) AS BIGINT), CAST(COALESCE(SUM(credits), 0) AS BIGINT)
               FROM ledger_daily WHERE account_id = ";
    match &s.backend {
        Backend::Sqlite(_) => s
            .with(|c| {
                Ok(c.query_row(
                    &format!("{sql}?1 AND day = ?2"),
                    rusqlite::params![account, day],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )?)
            })
            .unwrap(),
        Backend::Postgres(p) => {
            let row = p
                .client()
                .unwrap()
                .query_one(&format!("{sql}$1 AND day = $2"), &[&account, &day])
                .unwrap();
            (row.get(0), row.get(1))
        }
    }
}

/// The books of `account` agree with each other: balance, ledger and the
/// daily aggregate.
fn books_exact(t: &TestStore, account: &str, balance: i64, charges: i64, credits: i64) {
    let s = &t.store;
    assert_eq!(s.balance(account).unwrap(), balance, "balance");
    assert_eq!(
        s.ledger_count(Some(account)).unwrap(),
        charges,
        "ledger rows"
    );
    assert_eq!(
        s.ledger_sum(Some(account)).unwrap(),
        credits,
        "ledger credits"
    );
    assert_eq!(
        daily_aggregate(s, account, 0),
        (charges, credits),
        "daily aggregate"
    );
    assert!(s.account(account).unwrap().consistent());
}

#[test]
fn the_async_writes_answer_as_the_blocking_ones() {
    each_backend(|t| {
        let runtime = runtime();
        let s = &t.store;
        s.add_credits("acme", 10, 0).unwrap();
        s.add_credits("other", 10, 0).unwrap();
        runtime.block_on(async {
            let run = Claim::Run {
                request_id: "req_a".into(),
            };
            let claim = s
                .claim_idempotency_key_async("k1", "abc", "fp", "req_a", 100)
                .await
                .unwrap();
            assert_eq!(claim, run);
            let charge = |account: &'static str, request_id: &'static str| async move {
                let bill = crate::Bill::new(account, "k1", "tiktok", 3, request_id);
                s.charge_attempt_async(&bill, 100).await
            };
            assert_eq!(
                charge("acme", "req_a").await.unwrap(),
                Charge::Charged { balance_after: 7 }
            );
            assert_eq!(
                charge("acme", "req_a").await.unwrap(),
                Charge::Charged { balance_after: 7 },
                "once per request id"
            );
            assert!(matches!(
                charge("other", "req_a").await,
                Err(StoreError::LedgerIdTaken(_))
            ));
            s.set_client_request_id_async("req_a", "client-1")
                .await
                .unwrap();
            // A charged claim is kept by release; its completion is replayed.
            s.release_idempotency_key_async("k1", "abc").await.unwrap();
            let again = s
                .claim_idempotency_key_async("k1", "abc", "fp", "req_b", 101)
                .await
                .unwrap();
            assert_eq!(again, run);
            let done = StoredResponse {
                status: 200,
                credits: 3,
                body: "{}".into(),
            };
            s.complete_idempotency_key_async("k1", "abc", &done)
                .await
                .unwrap();
            assert_eq!(
                s.claim_idempotency_key_async("k1", "abc", "fp", "req_c", 102)
                    .await
                    .unwrap(),
                Claim::Replay(done)
            );
            s.claim_idempotency_key_async("k1", "big", "fp", "req_a", 103)
                .await
                .unwrap();
            s.complete_idempotency_key_by_reference_async("k1", "big", 200, 3)
                .await
                .unwrap();
            assert_eq!(
                s.claim_idempotency_key_async("k1", "big", "fp", "req_d", 104)
                    .await
                    .unwrap(),
                Claim::Rerun {
                    request_id: "req_a".into(),
                    status: 200,
                    credits: 3
                }
            );
            // An uncharged claim is released.
            s.claim_idempotency_key_async("k1", "free", "fp", "req_e", 105)
                .await
                .unwrap();
            s.release_idempotency_key_async("k1", "free").await.unwrap();
            assert_eq!(
                s.claim_idempotency_key_async("k1", "free", "fp", "req_f", 106)
                    .await
                    .unwrap(),
                Claim::Run {
                    request_id: "req_f".into()
                }
            );
        });
        books_exact(t, "acme", 7, 1, 3);
        books_exact(t, "other", 10, 0, 0);
        assert_eq!(s.ledger_count(None).unwrap(), 1);
        assert_eq!(s.recent_charges("acme", 1).unwrap()[0].request_id, "req_a");
        assert_eq!(client_request_id(s, "req_a").as_deref(), Some("client-1"));
        // A charge the balance does not cover takes nothing.
        let dear = Bill::new("acme", "k1", "tiktok", 8, "req_dear");
        assert_eq!(
            runtime
                .block_on(s.charge_attempt_async(&dear, 100))
                .unwrap(),
            Charge::InsufficientCredits { balance: 7 }
        );
        books_exact(t, "acme", 7, 1, 3);
    });
}

/// Many charges at once through the async path: each request id charged
/// once however often it is tried, never below zero, and every charge in
/// the ledger and the day's aggregate.
#[test]
fn concurrent_async_charges_take_each_request_once_and_never_overdraw() {
    each_backend(|t| {
        let runtime = runtime();
        let s = &t.store;
        s.add_credits("acme", 50, 0).unwrap();
        let outcomes = runtime.block_on(async {
            let tries: Vec<_> = (0..40)
                .flat_map(|i| [i, i])
                .map(|i| {
                    let s = s.clone();
                    tokio::spawn(async move {
                        let bill = Bill::new("acme", "k1", "tiktok", 3, &format!("req_{i}"));
                        (i, s.charge_attempt_async(&bill, 100).await.unwrap())
                    })
                })
                .collect();
            let mut outcomes = Vec::new();
            for t in tries {
                outcomes.push(t.await.unwrap());
            }
            outcomes
        });
        let charged: std::collections::BTreeSet<i32> = outcomes
            .iter()
            .filter(|(_, c)| matches!(c, Charge::Charged { .. }))
            .map(|(i, _)| *i)
            .collect();
        // 16 × 3 of 50: 16 request ids charged, 2 credits left.
        assert_eq!(charged.len(), 16, "{outcomes:?}");
        books_exact(t, "acme", 2, 16, 48);
    });
}

/// The parse path's async reads answer as the blocking ones: the key by its
/// token hash (and none for an unknown one), the balance of the pre-check.
#[test]
fn the_async_reads_answer_as_the_blocking_ones() {
    each_backend(|t| {
        let runtime = runtime();
        let s = &t.store;
        s.add_credits("acme", 9, 0).unwrap();
        let key = KeyRecord::for_tests("k1", "acme");
        s.insert_key(&key, b"hash-1").unwrap();
        let blocking = s.key_by_token_hash(b"hash-1").unwrap();
        assert_eq!(blocking.as_ref().map(|k| k.id.as_str()), Some("k1"));
        runtime.block_on(async {
            for _ in 0..2 {
                // A miss, then (on PostgreSQL, once the listener is up) maybe a hit.
                let found = s.key_by_token_hash_async(b"hash-1").await.unwrap();
                assert_eq!(found, blocking);
            }
            assert_eq!(s.key_by_token_hash_async(b"unknown").await.unwrap(), None);
            assert_eq!(s.balance_for_charge_async("acme").await.unwrap(), 9);
            assert!(matches!(
                s.balance_for_charge_async("nobody").await,
                Err(StoreError::NotFound("account", _))
            ));
        });
        // A key change is seen by the next async lookup.
        s.delete_key("k1").unwrap();
        assert_eq!(
            runtime
                .block_on(s.key_by_token_hash_async(b"hash-1"))
                .unwrap(),
            None
        );
    });
}
