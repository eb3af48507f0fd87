//! The async twins of the parse path's writes answer as the blocking
//! methods do, on both backends.

use crate::tests::both::each_backend;
use crate::{Charge, Claim, StoreError, StoredResponse};

#[test]
fn the_async_writes_answer_as_the_blocking_ones() {
    each_backend(|t| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
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
        assert_eq!(s.balance("acme").unwrap(), 7);
        assert_eq!(s.ledger_count(None).unwrap(), 1);
        assert_eq!(s.recent_charges("acme", 1).unwrap()[0].request_id, "req_a");
        if s.backend_name() == "sqlite" {
            let client: String = s
                .with(|c| {
                    Ok(c.query_row(
                        "SELECT client_request_id FROM ledger WHERE request_id = 'req_a'",
                        [],
                        |r| r.get(0),
                    )?)
                })
                .unwrap();
            assert_eq!(client, "client-1");
        }
    });
}
