//! The SQLite writer thread's group commit, on real database files:
//! concurrent charges share commits and keep the books exact, a failing
//! write is rolled back alone, a caller hears of its write only once its
//! group is committed, and lookups do not wait for a group.

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::{Backend, Bill, Charge, CommitStats, Store, StoreError, StoreResult};

fn store_with(credits: &[(&str, i64)]) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
    for (account, amount) in credits {
        store.add_credits(account, *amount, 0).unwrap();
    }
    (dir, store)
}

fn stats(store: &Store) -> CommitStats {
    store.commit_stats().expect("a SQLite store")
}

fn ledger_rows(store: &Store, account: &str) -> (i64, i64) {
    store
        .with(|c| {
            Ok(c.query_row(
                "SELECT COUNT(*), COUNT(DISTINCT request_id) FROM ledger WHERE account_id = ?1",
                [account],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?)
        })
        .unwrap()
}

type Pending = Pin<Box<dyn Future<Output = StoreResult<Charge>> + Send>>;

/// A charge through the async path, polled once so it is queued for the
/// writer thread before this returns.
fn queued_charge(store: &Store, account: &str, credits: i64, request_id: &str) -> Pending {
    let (store, account, request_id) = (store.clone(), account.to_string(), request_id.to_string());
    let mut charge: Pending = Box::pin(async move {
        store
            .charge_attempt_async(
                &Bill::new(&account, "k1", "tiktok", credits, &request_id),
                10,
            )
            .await
    });
    let polled = charge
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()));
    assert!(
        matches!(polled, Poll::Pending),
        "answered before its group could commit"
    );
    charge
}

/// A group the writer thread holds open until the returned sender is used
/// (or dropped); the handle answers its write.
fn open_group(store: &Store) -> (mpsc::Sender<()>, std::thread::JoinHandle<StoreResult<()>>) {
    let (entered_tx, entered) = mpsc::channel();
    let (release, release_rx) = mpsc::channel::<()>();
    let writer = store.clone();
    let group = std::thread::spawn(move || {
        writer.write(move |_| {
            entered_tx.send(()).unwrap();
            let _ = release_rx.recv();
            Ok(())
        })
    });
    entered
        .recv_timeout(Duration::from_secs(10))
        .expect("the group is open");
    (release, group)
}

/// A trigger that makes the ledger row of `req_poison` fail with `raise`
/// (`RAISE(ABORT, …)`: that write alone; `RAISE(ROLLBACK, …)`: the whole
/// transaction).
fn poison_ledger_row(store: &Store, raise: &str) {
    store
        .with(|c| {
            Ok(c.execute_batch(&format!(
                "CREATE TRIGGER poison BEFORE INSERT ON ledger
                 WHEN NEW.request_id = 'req_poison'
                 BEGIN SELECT {raise}; END;"
            ))?)
        })
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_charges_share_commits_and_keep_the_ledger_exact() {
    const N: i64 = 200;
    let (_dir, store) = store_with(&[("acme", 10_000)]);
    let before = stats(&store);
    let tasks: Vec<_> = (0..N)
        .map(|i| {
            let store = store.clone();
            let bill = Bill {
                account: "acme".into(),
                key_id: "k1".into(),
                platform: "tiktok".into(),
                price: 1 + i % 3,
                request_id: format!("req_{i}"),
            };
            tokio::spawn(async move { store.charge_attempt_async(&bill, 10).await })
        })
        .collect();
    for task in tasks {
        assert!(matches!(
            task.await.unwrap().unwrap(),
            Charge::Charged { .. }
        ));
    }
    let after = stats(&store);
    let (groups, writes) = (after.groups - before.groups, after.writes - before.writes);
    eprintln!("{N} concurrent charges: {writes} writes in {groups} commits");
    assert_eq!(writes, N as u64, "every charge was committed by the writer");
    assert!(
        groups < writes,
        "charges share commits: {groups} groups for {writes} charges"
    );
    let spent: i64 = (0..N).map(|i| 1 + i % 3).sum();
    assert_eq!(store.balance("acme").unwrap(), 10_000 - spent);
    assert_eq!(store.ledger_sum(Some("acme")).unwrap(), spent);
    assert_eq!(
        ledger_rows(&store, "acme"),
        (N, N),
        "one row per request id"
    );
}

#[tokio::test]
async fn a_failing_write_is_rolled_back_alone_in_its_group() {
    let (_dir, store) = store_with(&[("acme", 10), ("poor", 1), ("other", 10)]);
    // A ledger id already taken by acme's charge.
    store
        .charge("acme", "k1", "tiktok", 1, "req_taken", 10)
        .unwrap();
    // A charge that fails after its debit: the ledger refuses its row.
    poison_ledger_row(&store, "RAISE(ABORT, 'poisoned ledger row')");
    let Backend::Sqlite(db) = &store.backend else {
        unreachable!("a SQLite store")
    };
    let before = stats(&store);
    // Hold the connection so that every write queues for one group.
    let held = crate::sqlite::lock(&db.writer);
    let charges = vec![
        queued_charge(&store, "acme", 3, "req_a"),
        queued_charge(&store, "poor", 5, "req_short"),
        queued_charge(&store, "other", 1, "req_taken"),
        queued_charge(&store, "other", 4, "req_poison"),
        queued_charge(&store, "other", 2, "req_b"),
    ];
    drop(held);
    let mut answers = Vec::new();
    for charge in charges {
        answers.push(charge.await);
    }
    let after = stats(&store);
    assert_eq!(
        (after.groups - before.groups, after.writes - before.writes),
        (1, 5),
        "one group"
    );
    assert!(matches!(
        answers[0],
        Ok(Charge::Charged { balance_after: 6 })
    ));
    assert!(matches!(
        answers[1],
        Ok(Charge::InsufficientCredits { balance: 1 })
    ));
    assert!(matches!(answers[2], Err(StoreError::LedgerIdTaken(_))));
    assert!(
        matches!(&answers[3], Err(StoreError::Sqlite(e)) if e.to_string().contains("poisoned")),
        "{:?}",
        answers[3]
    );
    assert!(matches!(
        answers[4],
        Ok(Charge::Charged { balance_after: 8 })
    ));
    // The poisoned charge's debit went with its savepoint; the others stayed.
    assert_eq!(
        (
            store.balance("acme").unwrap(),
            store.balance("poor").unwrap(),
            store.balance("other").unwrap()
        ),
        (6, 1, 8)
    );
    assert_eq!(store.ledger_sum(Some("other")).unwrap(), 2);
    assert_eq!(ledger_rows(&store, "other"), (1, 1));
    assert_eq!(ledger_rows(&store, "acme"), (2, 2));
    assert_eq!(ledger_rows(&store, "poor"), (0, 0));
}

#[tokio::test]
async fn a_group_whose_commit_fails_answers_every_member_with_the_error() {
    let (_dir, store) = store_with(&[("acme", 100)]);
    // The charge of 'req_poison' leaves a deferred foreign-key violation:
    // every statement succeeds, the COMMIT is refused.
    store
        .with(|c| {
            Ok(c.execute_batch(
                "CREATE TABLE poison (account TEXT REFERENCES accounts(id) DEFERRABLE INITIALLY DEFERRED);
                 CREATE TRIGGER poison_commit AFTER INSERT ON ledger
                 WHEN NEW.request_id = 'req_poison'
                 BEGIN INSERT INTO poison VALUES ('no such account'); END;",
            )?)
        })
        .unwrap();
    let Backend::Sqlite(db) = &store.backend else {
        unreachable!("a SQLite store")
    };
    let before = stats(&store);
    let held = crate::sqlite::lock(&db.writer);
    let charges = vec![
        queued_charge(&store, "acme", 3, "req_a"),
        queued_charge(&store, "acme", 4, "req_poison"),
        queued_charge(&store, "acme", 5, "req_b"),
    ];
    drop(held);
    for charge in charges {
        let answer = charge.await;
        assert!(
            matches!(&answer, Err(StoreError::Sqlite(e)) if e.to_string().contains("FOREIGN KEY")),
            "every member hears the failed commit: {answer:?}"
        );
    }
    assert_eq!(stats(&store), before, "nothing was committed");
    assert_eq!(store.balance("acme").unwrap(), 100, "nobody was charged");
    assert_eq!(store.ledger_count(Some("acme")).unwrap(), 0);
    // The writer goes on: the same charges, without the poison, land.
    assert!(matches!(
        store
            .charge("acme", "k1", "tiktok", 3, "req_a", 11)
            .unwrap(),
        Charge::Charged { balance_after: 97 }
    ));
    assert_eq!(store.ledger_count(Some("acme")).unwrap(), 1);
}

#[test]
fn a_cached_key_and_the_precheck_do_not_wait_for_a_group() {
    let (_dir, store) = store_with(&[("acme", 10)]);
    let key = crate::KeyRecord::for_tests("k1", "acme");
    store.insert_key(&key, b"hash-1").unwrap();
    store.key_changed();
    assert_eq!(
        store.key_by_token_hash(b"hash-1").unwrap(),
        Some(key.clone())
    );
    // A group that stays open until the test lets it go.
    let (release, group) = open_group(&store);
    let (answered, answer) = mpsc::channel();
    let reader = store.clone();
    std::thread::spawn(move || {
        let _ = answered.send((
            reader.key_by_token_hash(b"hash-1"),
            reader.balance_for_charge("acme"),
        ));
    });
    let (found, balance) = answer
        .recv_timeout(Duration::from_secs(3))
        .expect("the lookup and the pre-check answer while the group is open");
    assert_eq!(found.unwrap(), Some(key));
    assert_eq!(balance.unwrap(), 10);
    release.send(()).unwrap();
    group.join().unwrap().unwrap();
}

/// What the HTTP layer answers without a blocking thread: a cached key,
/// until a change anywhere (here another process's) drops it.
#[test]
fn a_cached_key_is_answered_at_once_until_another_process_changes_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    let store = Store::open(&path).unwrap();
    let key = crate::KeyRecord::for_tests("k1", "acme");
    store.insert_key(&key, b"hash-1").unwrap();
    store.key_changed();
    assert_eq!(store.cached_key(b"hash-1").unwrap(), None, "not cached yet");
    assert_eq!(
        store.key_by_token_hash(b"hash-1").unwrap(),
        Some(key.clone())
    );
    assert_eq!(store.cached_key(b"hash-1").unwrap(), Some(key));
    assert_eq!(store.cached_key(b"other").unwrap(), None);
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute("DELETE FROM api_keys WHERE id = 'k1'", [])
        .unwrap();
    assert_eq!(
        store.cached_key(b"hash-1").unwrap(),
        None,
        "another process's commit drops the cached key"
    );
    assert_eq!(store.key_by_token_hash(b"hash-1").unwrap(), None);
}

#[test]
fn a_key_another_process_deleted_is_not_answered_from_the_cache_during_a_group() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    let store = Store::open(&path).unwrap();
    let key = crate::KeyRecord::for_tests("k1", "acme");
    store.insert_key(&key, b"hash-1").unwrap();
    store.key_changed();
    assert_eq!(store.key_by_token_hash(b"hash-1").unwrap(), Some(key));
    // Another process (the CLI) deletes the key.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute("DELETE FROM api_keys WHERE id = 'k1'", [])
        .unwrap();
    // Then a group opens and stays open: the lookup cannot read
    // data_version itself, it relies on the group's check.
    let (release, group) = open_group(&store);
    let (answered, answer) = mpsc::channel();
    let reader = store.clone();
    std::thread::spawn(move || {
        let _ = answered.send(reader.key_by_token_hash(b"hash-1"));
    });
    let found = answer
        .recv_timeout(Duration::from_secs(3))
        .expect("the lookup answers while the group is open");
    assert_eq!(found.unwrap(), None, "the deleted key is refused");
    release.send(()).unwrap();
    group.join().unwrap().unwrap();
}

#[tokio::test]
async fn a_write_that_ends_the_whole_transaction_fails_its_whole_group() {
    let (_dir, store) = store_with(&[("acme", 100)]);
    // RAISE(ROLLBACK) ends the transaction itself, the writes before the
    // poisoned one included: none of them may be told it was charged.
    poison_ledger_row(&store, "RAISE(ROLLBACK, 'the whole transaction')");
    let Backend::Sqlite(db) = &store.backend else {
        unreachable!("a SQLite store")
    };
    let before = stats(&store);
    let held = crate::sqlite::lock(&db.writer);
    let charges = vec![
        queued_charge(&store, "acme", 3, "req_a"),
        queued_charge(&store, "acme", 4, "req_poison"),
        queued_charge(&store, "acme", 5, "req_b"),
    ];
    drop(held);
    for charge in charges {
        let answer = charge.await;
        assert!(
            matches!(answer, Err(StoreError::Sqlite(_))),
            "every member hears the rollback: {answer:?}"
        );
    }
    assert_eq!(stats(&store), before, "nothing was committed");
    assert_eq!(store.balance("acme").unwrap(), 100, "nobody was charged");
    assert_eq!(store.ledger_count(Some("acme")).unwrap(), 0);
    assert!(matches!(
        store
            .charge("acme", "k1", "tiktok", 5, "req_b", 11)
            .unwrap(),
        Charge::Charged { balance_after: 95 }
    ));
}

#[test]
fn a_sqlite_charge_is_awaited_without_a_blocking_thread() {
    let (_dir, store) = store_with(&[("acme", 10)]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(1)
        .build()
        .unwrap();
    // The runtime's only blocking thread is busy until the charge is done.
    let (release, held) = mpsc::channel::<()>();
    let (busy_tx, busy) = mpsc::channel();
    runtime.spawn_blocking(move || {
        busy_tx.send(()).unwrap();
        let _ = held.recv();
    });
    busy.recv_timeout(Duration::from_secs(10))
        .expect("the blocking thread is taken");
    let bill = Bill {
        account: "acme".into(),
        key_id: "k1".into(),
        platform: "tiktok".into(),
        price: 3,
        request_id: "req_1".into(),
    };
    let charged = runtime.block_on(async {
        tokio::time::timeout(
            Duration::from_secs(10),
            store.charge_attempt_async(&bill, 10),
        )
        .await
    });
    release.send(()).unwrap();
    assert!(
        matches!(charged, Ok(Ok(Charge::Charged { balance_after: 7 }))),
        "{charged:?}"
    );
}
