//! The awaited twins answer as the blocking calls do, on both backends; on
//! SQLite their writes go through the writer thread.

use crate::tests::both::{each_backend, sqlite};
use crate::{
    AttemptOutcome, AttemptRecord, CanaryRow, JobRecord, KeyRecord, SessionRecord, SignUpOutcome,
    StoreError,
};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn job(id: &str) -> JobRecord {
    JobRecord {
        id: id.into(),
        account_id: "acme".into(),
        key_id: "k1".into(),
        request: "{}".into(),
        callback_url: None,
        state: "queued".into(),
        item_count: 2,
        created_ms: 1,
        finished_ms: None,
    }
}

#[test]
fn the_awaited_calls_answer_as_the_blocking_ones() {
    each_backend(|t| {
        let s = &t.store;
        s.insert_key(&KeyRecord::for_tests("k1", "acme"), b"k1")
            .unwrap();
        s.set_webhook_secret("k1", "whsec_x", 1).unwrap();
        runtime().block_on(async {
            // Jobs: queued, claimed under a lease, renewed, kept, done, pruned.
            s.insert_job_async(&job("job_1")).await.unwrap();
            assert_eq!(s.job_async("job_1").await.unwrap(), Some(job("job_1")));
            let claimed = s.claim_jobs_async(10, 1000, 5, "lease_a").await.unwrap();
            assert_eq!(claimed.len(), 1);
            assert_eq!(claimed[0].state, "running");
            assert!(
                s.claim_jobs_async(20, 1000, 5, "lease_b")
                    .await
                    .unwrap()
                    .is_empty()
            );
            assert!(
                s.renew_job_lease_async("job_1", "lease_a", 5000)
                    .await
                    .unwrap()
            );
            assert!(
                !s.renew_job_lease_async("job_1", "lease_b", 5000)
                    .await
                    .unwrap()
            );
            s.record_job_item_async("job_1", 0, "first").await.unwrap();
            s.record_job_item_async("job_1", 0, "second").await.unwrap();
            assert_eq!(
                s.job_answers_async("job_1").await.unwrap(),
                vec![(0, "first".to_string())],
                "the first answer stands"
            );
            s.finish_job_async("job_1", 100).await.unwrap();
            assert_eq!(s.prune_jobs_async(101).await.unwrap(), 1);
            assert_eq!(s.job_async("job_1").await.unwrap(), None);

            // Sessions: created, seen, expired, ended.
            let session = SessionRecord {
                token_hash: "h1".into(),
                user_id: None,
                operator: true,
                csrf: "c".into(),
                created_at: 100,
                last_seen_at: 100,
            };
            s.create_session_async(&session).await.unwrap();
            let live = s.live_session_async("h1", 50, 50, 120).await.unwrap();
            assert_eq!(live.map(|l| l.last_seen_at), Some(120));
            assert_eq!(
                s.live_session_async("h1", 50, 130, 140).await.unwrap(),
                None
            );
            assert_eq!(
                s.live_session_async("h1", 0, 0, 150).await.unwrap(),
                None,
                "deleted"
            );
            s.create_session_async(&session).await.unwrap();
            assert_eq!(s.delete_sessions_of_async(None).await.unwrap(), 1);
            assert_eq!(s.prune_sessions_async(0, 0).await.unwrap(), 0);

            // Console users: signed up, the link used once, then refused.
            let made = s
                .sign_up_async("usr_1", "Ann@Example.com", "inv", 1000, 5, 100)
                .await
                .unwrap();
            assert!(matches!(made, SignUpOutcome::Created(_)));
            let user = s.accept_invite_async("inv", "pw", 200).await.unwrap();
            assert!(user.active);
            assert_eq!(s.balance_async("ann@example.com").await.unwrap(), 5);
            assert!(matches!(
                s.accept_invite_async("inv", "pw", 201).await,
                Err(StoreError::NotFound(..))
            ));
            assert_eq!(
                s.balance_async("ann@example.com").await.unwrap(),
                5,
                "granted once"
            );
            let invited = s
                .invite_user_async("usr_2", "acme", "bob@example.com", "inv2", 1000, 100)
                .await
                .unwrap();
            assert_eq!(s.user_async(&invited.id).await.unwrap(), invited);
            assert!(matches!(
                s.invite_user_async("usr_3", "acme", "ann@example.com", "x", 1000, 100)
                    .await,
                Err(StoreError::Invalid(_))
            ));
            assert_eq!(s.users_async(Some("acme")).await.unwrap(), vec![invited]);

            // Webhooks: queued up to the bound, claimed, recorded, pruned.
            assert_eq!(
                s.webhook_secret_async("k1").await.unwrap().as_deref(),
                Some("whsec_x")
            );
            s.enqueue_webhook_async("msg_1", "k1", "https://a.example/", "job.done", "{}", 10, 1)
                .await
                .unwrap();
            assert!(matches!(
                s.enqueue_webhook_async(
                    "msg_2",
                    "k1",
                    "https://a.example/",
                    "job.done",
                    "{}",
                    10,
                    1
                )
                .await,
                Err(StoreError::Invalid(_))
            ));
            let claimed = s.claim_webhooks_async(10, 1000, 5, "wl").await.unwrap();
            assert_eq!(claimed.len(), 1);
            let attempt = AttemptRecord {
                attempt: 1,
                at_ms: 11,
                status: Some(200),
                error: None,
                duration_ms: 3,
            };
            assert!(
                s.finish_webhook_attempt_async(
                    &claimed[0],
                    &attempt,
                    AttemptOutcome::Delivered,
                    12
                )
                .await
                .unwrap()
            );
            assert!(
                !s.finish_webhook_attempt_async(
                    &claimed[0],
                    &attempt,
                    AttemptOutcome::Delivered,
                    13
                )
                .await
                .unwrap(),
                "the lease is gone"
            );
            assert_eq!(s.prune_webhooks_async(100).await.unwrap(), 1);

            // Request counts, tunnel traffic, canaries, the key reads.
            assert_eq!(s.count_request_async("b", 7).await.unwrap(), 1);
            assert_eq!(s.count_request_async("b", 7).await.unwrap(), 2);
            assert_eq!(
                s.count_requests_within_async("b", 7, 2, 3).await.unwrap(),
                None
            );
            assert_eq!(
                s.count_requests_within_async("b", 7, 1, 3).await.unwrap(),
                Some(3)
            );
            let traffic = crate::TunnelTraffic {
                account: "acme",
                key: "k1",
                platform: "tiktok",
                at: 86_400,
                bytes: 500,
                streams: 1,
            };
            s.record_tunnel_traffic_async(&traffic).await.unwrap();
            assert_eq!(
                s.tunnel_bytes_on_day_async("k1", 86_401).await.unwrap(),
                500
            );
            assert!(s.take_canary_lease_async("host_a", 0, 100).await.unwrap());
            assert!(!s.take_canary_lease_async("host_b", 50, 150).await.unwrap());
            let row = CanaryRow {
                id: 0,
                platform: "tiktok".into(),
                url: "https://t.example/1".into(),
                outcome: "ok".into(),
                detail: String::new(),
                failure_code: None,
                at_unix_s: 1,
                host: "host_a".into(),
            };
            s.add_canary_result_async(&row).await.unwrap();
            assert_eq!(s.canary_results_after_async(0, 10).await.unwrap().len(), 1);
            assert_eq!(s.key_async("k1").await.unwrap().id, "k1");
            assert_eq!(
                s.key_by_token_hash_async(b"k1")
                    .await
                    .unwrap()
                    .map(|k| k.id),
                Some("k1".to_string())
            );
            assert!(matches!(
                s.key_async("nope").await,
                Err(StoreError::NotFound(..))
            ));
            assert_eq!(s.release_expired_holds_async(10).await.unwrap(), 0);
        });
    });
}

#[test]
fn on_sqlite_an_awaited_write_is_committed_by_the_writer_thread() {
    let t = sqlite();
    let s = &t.store;
    let writes = || s.commit_stats().unwrap().writes;
    runtime().block_on(async {
        let before = writes();
        s.insert_job_async(&job("job_1")).await.unwrap();
        s.claim_jobs_async(10, 1000, 5, "lease_a").await.unwrap();
        s.finish_job_async("job_1", 100).await.unwrap();
        assert_eq!(writes(), before + 3);
        // A read does not queue.
        s.job_async("job_1").await.unwrap();
        assert_eq!(writes(), before + 3);
        // A refused write is rolled back alone: nothing of it stays.
        let failed = s.enqueue_webhook_async("msg_1", "no_key", "https://a/", "e", "{}", 1, 5);
        assert!(matches!(failed.await, Err(StoreError::NotFound(..))));
        assert_eq!(writes(), before + 4);
        assert!(
            s.webhook_deliveries(&Default::default())
                .unwrap()
                .is_empty()
        );
    });
}
