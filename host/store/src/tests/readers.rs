//! SQLite reports read beside the writer, not behind it.

use std::sync::mpsc;
use std::time::Duration;

use crate::{Backend, Store, UsageFilter};

#[test]
fn a_report_does_not_wait_for_a_busy_writer_and_sees_only_committed_books() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
    store.add_credits("acme", 100, 0).unwrap();
    store
        .charge("acme", "k1", "tiktok", 3, "req_1", 10)
        .unwrap();
    let Backend::Sqlite(db) = &store.backend else {
        unreachable!("a SQLite store")
    };
    // The writer is held, mid-transaction, by a long write.
    let writer = crate::sqlite::lock(&db.writer);
    writer
        .execute_batch(
            "BEGIN IMMEDIATE;
             INSERT INTO ledger (account_id, key_id, platform, credits, request_id, created_at)
             VALUES ('acme', 'k1', 'tiktok', 50, 'req_uncommitted', 11);",
        )
        .unwrap();
    let (sent, answer) = mpsc::channel();
    let reader = store.clone();
    std::thread::spawn(move || {
        let _ = sent.send((
            reader.usage(&UsageFilter::default()),
            reader.usage_bounded(&UsageFilter::default()),
            reader.recent_charges("acme", 5),
        ));
    });
    let (usage, bounded, recent) = answer
        .recv_timeout(Duration::from_secs(3))
        .expect("reports answer while the writer is busy");
    assert_eq!(
        usage.unwrap().credits,
        3,
        "the open transaction is not seen"
    );
    assert_eq!(bounded.unwrap().credits, 3);
    assert_eq!(recent.unwrap().len(), 1);
    writer.execute_batch("ROLLBACK").unwrap();
}

#[test]
fn a_report_sees_a_write_as_soon_as_it_returns() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
    store.add_credits("acme", 100, 0).unwrap();
    for i in 0..5 {
        store
            .charge("acme", "k1", "tiktok", 2, &format!("req_{i}"), 10 + i)
            .unwrap();
        let usage = store.usage(&UsageFilter::default()).unwrap();
        assert_eq!(usage.requests, i + 1);
    }
}
