//! Tests of the PostgreSQL async pool (`pg::async_pool`): the parse path's
//! calls hold no blocking thread, and a server that ended every connection
//! costs at most one failed call.

use std::time::{Duration, Instant};

use crate::tests::both;
use crate::{Backend, Bill, Charge, HoldRequest, KeyRecord, Reserved, Store, StoreError, test_pg};

fn pg(store: &Store) -> &crate::pg::Pg {
    match &store.backend {
        Backend::Postgres(p) => p,
        Backend::Sqlite(_) => unreachable!("a PostgreSQL store"),
    }
}

/// The parse path's PostgreSQL calls complete while the runtime's only
/// blocking thread is taken: they wait for the server on the async pool,
/// never on a blocking thread (a call through `spawn_blocking` would wait
/// for that thread, here until the timeout).
#[test]
fn the_parse_paths_postgres_calls_hold_no_blocking_thread() {
    let t = both::postgres();
    let s = &t.store;
    s.add_credits("acme", 20, 0).unwrap();
    s.insert_key(&KeyRecord::for_tests("k1", "acme"), b"hash-1")
        .unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (release, held) = std::sync::mpsc::channel::<()>();
    let (busy_tx, busy) = std::sync::mpsc::channel();
    runtime.spawn_blocking(move || {
        busy_tx.send(()).unwrap();
        let _ = held.recv();
    });
    busy.recv_timeout(Duration::from_secs(10))
        .expect("the blocking thread is taken");
    let calls = async {
        let key = s.key_by_token_hash_async(b"hash-1").await?;
        assert_eq!(key.map(|k| k.id), Some("k1".to_string()));
        assert_eq!(s.balance_for_charge_async("acme").await?, 20);
        let claim = s
            .claim_idempotency_key_async("k1", "idem", "fp", "req_1", 10)
            .await?;
        assert_eq!(
            claim,
            crate::Claim::Run {
                request_id: "req_1".into()
            }
        );
        let bill = Bill::new("acme", "k1", "tiktok", 3, "req_1");
        assert_eq!(
            s.charge_attempt_async(&bill, 10).await?,
            Charge::Charged { balance_after: 17 }
        );
        s.set_client_request_id_async("req_1", "client-1").await?;
        s.complete_idempotency_key_by_reference_async("k1", "idem", 200, 3)
            .await?;
        s.release_idempotency_key_async("k1", "idem").await?;
        let holds = [
            HoldRequest {
                id: "h0".into(),
                credits: 4,
            },
            HoldRequest {
                id: "h1".into(),
                credits: 5,
            },
        ];
        assert_eq!(
            s.reserve_credits_async("acme", &holds, 100, 10).await?,
            [Reserved::Held, Reserved::Held]
        );
        let held = Bill::new("acme", "k1", "tiktok", 4, "req_2");
        assert_eq!(
            s.charge_held_async("h0", &held, 10).await?,
            Charge::Charged { balance_after: 8 }
        );
        assert!(s.release_hold_async("h1").await?);
        Ok::<_, StoreError>(())
    };
    let outcome =
        runtime.block_on(async { tokio::time::timeout(Duration::from_secs(10), calls).await });
    release.send(()).unwrap();
    runtime.shutdown_background();
    assert!(
        matches!(outcome, Ok(Ok(()))),
        "the calls waited for the blocking thread: {outcome:?}"
    );
    assert_eq!(s.balance("acme").unwrap(), 13);
    assert_eq!(s.ledger_sum(Some("acme")).unwrap(), 7);
    assert!(s.account("acme").unwrap().consistent());
}

/// The server ends every connection (what a restart or a fail-over does to
/// each session) while the async pool holds many idle ones: at most one
/// call fails (the loss noticed by a call, not yet by the pool), every call
/// after it gets a fresh connection, and the books hold exactly the charges
/// that answered `Charged`.
#[test]
fn the_async_pool_recovers_from_a_server_that_ended_every_connection() {
    let idle = 24;
    let url = test_pg::fresh_database();
    let store =
        Store::connect_for_parses(&crate::DbLocation::Postgres(url.clone()), idle, None).unwrap();
    store.add_credits("acme", 100, 0).unwrap();
    let pool = pg(&store).async_pool().clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(test_pg::fill_async_pool(&store, idle));
    assert_eq!(pool.open(), idle);
    // What a fast shutdown does to every session: FATAL 57P01.
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let ended: i64 = admin
        .query_one(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()) t",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(ended >= idle as i64, "{ended} sessions ended");
    // Wait until the server has let them all go.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left: i64 = admin
            .query_one(
                "SELECT count(*) FROM pg_stat_activity
                 WHERE datname = current_database() AND pid <> pg_backend_pid()",
                &[],
            )
            .unwrap()
            .get(0);
        if left == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "{left} sessions still open");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(admin);
    let outcomes: Vec<Result<Charge, StoreError>> = runtime.block_on(async {
        let mut outcomes = Vec::new();
        for i in 0..idle + 2 {
            let bill = Bill::new("acme", "k1", "tiktok", 1, &format!("req_{i}"));
            outcomes.push(store.charge_attempt_async(&bill, 10).await);
        }
        outcomes
    });
    let failed: Vec<usize> = outcomes
        .iter()
        .enumerate()
        .filter(|(_, o)| o.is_err())
        .map(|(i, _)| i)
        .collect();
    assert!(
        failed.len() <= 1 && failed.iter().all(|i| *i == 0),
        "calls {failed:?} of {} failed after the connections ended: {outcomes:?}",
        outcomes.len()
    );
    for o in &outcomes {
        assert!(
            matches!(
                o,
                Ok(Charge::Charged { .. }) | Err(StoreError::Unavailable(_))
            ),
            "{o:?}"
        );
    }
    // The books, read on a fresh blocking pool (this store's blocking pool
    // lost its connections too; its recovery is `pool`'s to test).
    let charged = outcomes.iter().filter(|o| o.is_ok()).count() as i64;
    let books = Store::connect(&crate::DbLocation::Postgres(url)).unwrap();
    assert_eq!(books.ledger_count(None).unwrap(), charged);
    assert_eq!(books.balance("acme").unwrap(), 100 - charged);
    runtime.shutdown_background();
}

/// The async pool is sized as the blocking one, from admission.
#[test]
fn the_async_pool_is_sized_as_the_blocking_one() {
    let url = test_pg::fresh_database();
    let store = Store::connect_for_parses(&crate::DbLocation::Postgres(url), 40, Some(30)).unwrap();
    assert_eq!(store.pg_pool_size(), Some(30));
    assert_eq!(pg(&store).async_pool().max_size(), 30);
}
