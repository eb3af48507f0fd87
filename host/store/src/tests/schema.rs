//! Upgrades from every earlier schema version, refusal of a newer one, and
//! the online backup.

use std::time::Duration;

use rusqlite::Connection;

use crate::schema::{SCHEMA_VERSION, sqlite as schema};
use crate::{Store, StoreError, backup_sqlite};

/// A database file left at schema `version`, holding one account with 50
/// credits, one key and one charge of 3 (when the version has those tables).
fn database_at(dir: &std::path::Path, version: u32) -> std::path::PathBuf {
    let path = dir.join(format!("v{version}.db"));
    let conn = Connection::open(&path).unwrap();
    schema::migrate_to(&conn, version).unwrap();
    if version >= 1 {
        conn.execute_batch(
            "INSERT INTO accounts (id, balance, created_at) VALUES ('acme', 47, 1);
             INSERT INTO credit_grants (account_id, credits, created_at) VALUES ('acme', 50, 1);
             INSERT INTO api_keys (id, account_id, name, token_hash, token_prefix, created_at)
                 VALUES ('key_1', 'acme', 'old', x'01', 'mp_live_ab', 1);
             INSERT INTO ledger (account_id, key_id, platform, credits, request_id, created_at)
                 VALUES ('acme', 'key_1', 'tiktok', 3, 'req_1', 2);",
        )
        .unwrap();
    }
    path
}

#[test]
fn every_earlier_version_upgrades_and_keeps_its_books() {
    let dir = tempfile::tempdir().unwrap();
    for version in 0..SCHEMA_VERSION {
        let path = database_at(dir.path(), version);
        let store = Store::open(&path).unwrap();
        assert_eq!(
            store.schema_version().unwrap(),
            SCHEMA_VERSION,
            "from v{version}"
        );
        if version == 0 {
            assert_eq!(store.summary().unwrap().accounts, 0);
            continue;
        }
        let account = store.account("acme").unwrap();
        assert_eq!(
            (account.balance, account.granted, account.spent),
            (47, 50, 3)
        );
        assert!(account.consistent(), "from v{version}: {account:?}");
        let key = store.key("key_1").unwrap();
        assert_eq!(key.rate_limit_per_minute, None, "from v{version}");
        // The upgraded database takes today's writes.
        store.add_credits("acme", 10, 3).unwrap();
        assert_eq!(store.balance("acme").unwrap(), 57);
    }
}

#[test]
fn a_database_newer_than_the_binary_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = database_at(dir.path(), SCHEMA_VERSION);
    let newer = SCHEMA_VERSION + 1;
    Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", newer)
        .unwrap();
    let err = Store::open(&path).err().expect("refused");
    assert!(
        matches!(err, StoreError::SchemaTooNew { found, supported } if found == newer && supported == SCHEMA_VERSION),
        "{err}"
    );
    assert!(err.to_string().contains("newer than this binary"), "{err}");
    let conn = Connection::open(&path).unwrap();
    assert_eq!(schema::version(&conn).unwrap(), newer, "left as it was");
}

#[test]
fn an_online_backup_holds_the_books_while_the_service_writes() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.db");
    let store = Store::open(&live).unwrap();
    store.add_credits("acme", 1_000, 1).unwrap();
    for i in 0..200 {
        store
            .charge("acme", "key_1", "tiktok", 2, &format!("req_{i}"), 2)
            .unwrap();
    }
    // A writer keeps charging while the backup runs; the copy is one
    // consistent moment: its books balance whatever moment it caught.
    let writer = {
        let store = store.clone();
        std::thread::spawn(move || {
            for i in 0..200 {
                store
                    .charge("acme", "key_1", "tiktok", 1, &format!("w_{i}"), 3)
                    .unwrap();
            }
        })
    };
    let dest = dir.path().join("backup.db");
    let summary = backup_sqlite(&live, &dest).unwrap();
    writer.join().unwrap();
    assert_eq!(summary.schema_version, SCHEMA_VERSION);
    assert_eq!(
        summary.granted_total - summary.ledger_total,
        summary.balance_total
    );
    assert!(summary.ledger_rows >= 200, "{summary:?}");

    let restored = Store::open(&dest).unwrap();
    assert_eq!(restored.summary().unwrap(), summary);
    assert!(restored.account("acme").unwrap().consistent());
    assert!(!dir.path().join("backup.db.partial").exists());

    // Never over an existing file, never from a missing one.
    assert!(backup_sqlite(&live, &dest).is_err());
    let missing = dir.path().join("missing.db");
    assert!(backup_sqlite(&missing, &dir.path().join("b2.db")).is_err());
    assert!(
        !missing.exists(),
        "a typo must not create an empty database"
    );
}

/// A database written without pause restarts every online backup step;
/// the backup still ends (its locked final pass) with consistent books,
/// and the live database and the backup are the owner's only.
#[test]
fn a_backup_finishes_on_a_database_that_is_never_quiet() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.db");
    let store = Store::open(&live).unwrap();
    store.add_credits("acme", 1_000_000, 1).unwrap();
    // Enough pages that the copy takes many steps.
    let filler = Connection::open(&live).unwrap();
    filler
        .execute_batch(
            "CREATE TABLE filler (b BLOB);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4000)
             INSERT INTO filler SELECT randomblob(4000) FROM n;",
        )
        .unwrap();
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let commits = std::sync::Arc::new(AtomicU64::new(0));
    let writer = {
        let (store, stop, commits) = (store.clone(), stop.clone(), commits.clone());
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::SeqCst) {
                store
                    .charge("acme", "key_1", "tiktok", 1, &format!("w_{i}"), 3)
                    .unwrap();
                i += 1;
                commits.store(i, Ordering::SeqCst);
            }
        })
    };
    while commits.load(Ordering::SeqCst) < 10 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let dest = dir.path().join("backup.db");
    let (tx, rx) = std::sync::mpsc::channel();
    {
        let (live, dest) = (live.clone(), dest.clone());
        std::thread::spawn(move || {
            let _ = tx.send(crate::sqlite::backup::backup_sqlite_within(
                &live,
                &dest,
                Duration::from_millis(500),
            ));
        });
    }
    let finished = rx.recv_timeout(Duration::from_secs(90));
    let during = commits.load(Ordering::SeqCst);
    stop.store(true, Ordering::SeqCst);
    writer.join().unwrap();
    let summary = finished
        .expect("the backup finished while the database kept being written")
        .unwrap();
    assert!(during > 10, "the writer kept writing: {during} commits");
    assert_eq!(
        summary.granted_total - summary.ledger_total,
        summary.balance_total
    );
    let restored = Store::open(&dest).unwrap();
    assert_eq!(restored.summary().unwrap(), summary);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for file in [&live, &dest, &dir.path().join("live.db-wal")] {
            let mode = std::fs::metadata(file).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", file.display());
        }
    }
}
