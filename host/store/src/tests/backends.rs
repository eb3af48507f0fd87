//! The books under concurrent hosts, and PostgreSQL's migrations.

use std::collections::HashSet;

use crate::pg::PG_MIGRATIONS;
use crate::schema::SCHEMA_VERSION;
use crate::tests::both::each_backend;
use crate::{Charge, DbLocation, KeyRecord, Store, StoreError, UsageFilter, test_pg};

#[test]
fn concurrent_hosts_never_overdraw_and_every_charge_has_one_ledger_row() {
    each_backend(|t| {
        t.store.add_credits("acme", 500, 0).unwrap();
        // Eight "hosts": each its own Store (its own connection or pool).
        let charged: Vec<Vec<i64>> = std::thread::scope(|s| {
            let hosts: Vec<_> = (0..8)
                .map(|h| {
                    let store = Store::connect(&t.location).unwrap();
                    s.spawn(move || {
                        let mut balances = Vec::new();
                        for i in 0..40 {
                            let id = format!("h{h}-r{i}");
                            if let Charge::Charged { balance_after } =
                                store.charge("acme", "k", "youtube", 3, &id, 1).unwrap()
                            {
                                balances.push(balance_after);
                            }
                        }
                        balances
                    })
                })
                .collect();
            hosts.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let taken: usize = charged.iter().map(Vec::len).sum();
        // 320 attempts of 3 against 500: exactly 166 succeed, 2 credits stay.
        assert_eq!(taken, 166);
        assert_eq!(t.store.balance("acme").unwrap(), 2);
        assert_eq!(t.store.ledger_sum(Some("acme")).unwrap(), 498);
        assert_eq!(t.store.ledger_count(None).unwrap(), 166);
        // Every balance after a charge was seen by exactly one charge.
        let distinct: HashSet<i64> = charged.iter().flatten().copied().collect();
        assert_eq!(distinct.len(), 166);
        let usage = t
            .store
            .usage(&UsageFilter {
                entries: 1000,
                ..Default::default()
            })
            .unwrap();
        let ids: HashSet<i64> = usage.entries.iter().map(|e| e.id).collect();
        assert_eq!(ids.len(), 166, "ledger ids are unique in the database");
        assert!(t.store.account("acme").unwrap().consistent());
    });
}

#[test]
fn both_backends_have_every_migration_step() {
    assert_eq!(PG_MIGRATIONS.len() as u32, SCHEMA_VERSION);
}

#[test]
fn postgres_upgrades_from_every_earlier_version_and_keeps_its_books() {
    for version in 0..SCHEMA_VERSION {
        let url = test_pg::fresh_database();
        let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        crate::pg::migrate_to(&mut client, version).unwrap();
        if version >= 1 {
            client
                .batch_execute(
                    "INSERT INTO accounts (id, balance, created_at) VALUES ('acme', 47, 1);
                     INSERT INTO credit_grants (account_id, credits, created_at) VALUES ('acme', 50, 1);
                     INSERT INTO api_keys (id, account_id, name, token_hash, token_prefix, created_at)
                         VALUES ('key_1', 'acme', 'old', '\\x01', 'mp_live_ab', 1);
                     INSERT INTO ledger (account_id, key_id, platform, credits, request_id, created_at)
                         VALUES ('acme', 'key_1', 'tiktok', 3, 'req_1', 2);",
                )
                .unwrap();
        }
        let store = Store::connect(&DbLocation::Postgres(url)).unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        if version == 0 {
            assert_eq!(store.summary().unwrap().accounts, 0);
            continue;
        }
        let account = store.account("acme").unwrap();
        assert_eq!(
            (account.balance, account.granted, account.spent),
            (47, 50, 3),
            "from v{version}"
        );
        assert_eq!(store.key("key_1").unwrap().rate_limit_per_minute, None);
        store.add_credits("acme", 10, 3).unwrap();
        assert_eq!(store.balance("acme").unwrap(), 57);
    }
}

#[test]
fn a_postgres_database_newer_than_the_binary_is_refused_untouched() {
    let url = test_pg::fresh_database();
    let location = DbLocation::Postgres(url.clone());
    Store::connect(&location).unwrap();
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let newer = SCHEMA_VERSION as i32 + 1;
    client
        .execute("UPDATE mediaparse_schema SET version = $1", &[&newer])
        .unwrap();
    let refused = Store::connect(&location).err().unwrap();
    assert!(
        matches!(refused, StoreError::SchemaTooNew { found, .. } if found == newer as u32),
        "{refused}"
    );
    let v: i32 = client
        .query_one("SELECT version FROM mediaparse_schema", &[])
        .unwrap()
        .get(0);
    assert_eq!(v, newer);
}

/// Four hosts connect to an empty database at the same moment (a barrier
/// releases them together, so their migrations race rather than run one
/// after another): each starts, and the schema is migrated once, to the end.
#[test]
fn hosts_starting_together_migrate_once() {
    let location = DbLocation::Postgres(test_pg::fresh_database());
    let together = std::sync::Barrier::new(4);
    std::thread::scope(|s| {
        let started: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    together.wait();
                    Store::connect(&location).map(|_| ())
                })
            })
            .collect();
        for h in started {
            h.join().unwrap().unwrap();
        }
    });
    let store = Store::connect(&location).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
}

#[test]
fn a_sqlite_deployment_moves_to_postgres_exactly() {
    let sqlite = crate::tests::both::sqlite();
    let s = &sqlite.store;
    s.add_credits("acme", 100, 1).unwrap();
    s.set_credits("zeta", 7, 2).unwrap();
    let key = test_key("key_1", "acme", Some(5));
    s.insert_key(&key, b"hash-1").unwrap();
    s.key_delivery("key_1", Some(Some("tunnel")), 3).unwrap();
    for i in 0..7 {
        s.charge("acme", "key_1", "tiktok", 3, &format!("r{i}"), 10 + i)
            .unwrap();
    }
    // A webhook secret, a queued job with one answer kept, a pending delivery.
    s.set_webhook_secret("key_1", "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=", 20)
        .unwrap();
    let job = crate::JobRecord {
        id: "job_1".into(),
        account_id: "acme".into(),
        key_id: "key_1".into(),
        request: r#"{"items":[{"url":"https://example.com/a"},{"url":"https://example.com/b"}]}"#
            .into(),
        callback_url: Some("https://hooks.example/done".into()),
        state: "queued".into(),
        item_count: 2,
        created_ms: 30,
        finished_ms: None,
    };
    s.insert_job(&job).unwrap();
    s.record_job_item("job_1", 0, r#"{"status":200}"#).unwrap();
    s.enqueue_webhook(
        "msg_1",
        "key_1",
        "https://hooks.example/x",
        "job.done",
        "{}",
        40,
        10,
    )
    .unwrap();
    let DbLocation::Sqlite(path) = &sqlite.location else {
        unreachable!()
    };
    let url = test_pg::fresh_database();
    let copied = crate::copy_sqlite_to_postgres(path, &url).unwrap();
    assert_eq!(copied.source, copied.copied);
    assert_eq!(copied.copied.ledger_total, 21);
    let pg = Store::connect(&DbLocation::Postgres(url.clone())).unwrap();
    assert_eq!(pg.accounts().unwrap(), s.accounts().unwrap());
    let key = KeyRecord {
        delivery: Some(mediaparse_core::Delivery::Tunnel),
        ..key
    };
    assert_eq!(pg.key_by_token_hash(b"hash-1").unwrap(), Some(key));
    assert_eq!(
        pg.key_delivery("key_1", None, 0).unwrap().as_deref(),
        Some("tunnel")
    );
    assert_eq!(
        pg.webhook_secret("key_1").unwrap(),
        s.webhook_secret("key_1").unwrap()
    );
    assert_eq!(pg.job("job_1").unwrap(), Some(job));
    assert_eq!(
        pg.job_answers("job_1").unwrap(),
        s.job_answers("job_1").unwrap()
    );
    let deliveries = crate::DeliveryFilter {
        key: None,
        account: None,
        limit: 10,
    };
    assert_eq!(
        pg.webhook_deliveries(&deliveries).unwrap(),
        s.webhook_deliveries(&deliveries).unwrap()
    );
    let all = UsageFilter {
        entries: 100,
        ..Default::default()
    };
    assert_eq!(pg.usage(&all).unwrap(), s.usage(&all).unwrap());
    // New ledger ids continue after the copied ones.
    pg.charge("acme", "key_1", "tiktok", 3, "after", 99)
        .unwrap();
    let newest = pg.usage(&all).unwrap().entries[0].id;
    assert_eq!(newest, 8);
    // A second copy into a database with books is refused.
    assert!(crate::copy_sqlite_to_postgres(path, &url).is_err());
}

fn test_key(id: &str, account: &str, limit: Option<u32>) -> crate::KeyRecord {
    crate::KeyRecord {
        id: id.into(),
        account_id: account.into(),
        name: "app".into(),
        token_prefix: "mp_live_abcdef".into(),
        expires_on: None,
        platforms: Some(vec!["tiktok".into()]),
        created_at: 1,
        rotated_at: None,
        rate_limit_per_minute: limit,
        delivery: None,
    }
}

/// Host A caches a key; host B (or the CLI) changes it; A must see the
/// change. Before every change A's cache holds the key (so the read that
/// could be stale is a cached one), and after it A is polled with a
/// deadline no load reaches: without the invalidation the old key stays
/// cached forever, so the deadline is a failure, never a race.
#[test]
fn a_key_change_on_one_host_reaches_the_others_cache() {
    const DEADLINE: std::time::Duration = std::time::Duration::from_secs(20);
    each_backend(|t| {
        let host_a = Store::connect(&t.location).unwrap();
        let host_b = Store::connect(&t.location).unwrap();
        let sqlite = matches!(host_a.backend, crate::Backend::Sqlite(_));
        let poll = |what: &str, done: &dyn Fn() -> bool| {
            let started = std::time::Instant::now();
            while !done() {
                assert!(
                    started.elapsed() < DEADLINE,
                    "host A: {what}, not after {DEADLINE:?}"
                );
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        };
        // A reads through its cache until the cache holds the key and may
        // answer from it (on PostgreSQL: once its listener is connected).
        let cached = |what: &str| {
            poll(&format!("key cached before the {what}"), &|| {
                host_a.key_by_token_hash(b"token-1").unwrap();
                host_a.keys.get(b"token-1").0.is_some() && (sqlite || host_a.keys.usable())
            })
        };
        let seen = |what: &str, ok: &dyn Fn(Option<crate::KeyRecord>) -> bool| {
            poll(&format!("the {what} seen"), &|| {
                ok(host_a.key_by_token_hash(b"token-1").unwrap())
            })
        };
        host_b
            .insert_key(&test_key("k1", "acme", None), b"token-1")
            .unwrap();
        cached("edit");
        host_b
            .edit_key(
                "k1",
                &crate::KeyEdit {
                    rate_limit_per_minute: Some(Some(9)),
                    ..Default::default()
                },
                5,
            )
            .unwrap();
        seen("edit", &|k| {
            k.is_some_and(|k| k.rate_limit_per_minute == Some(9))
        });
        cached("rotation");
        host_b.rotate_key("k1", b"token-2", "mp_live_x", 6).unwrap();
        seen("rotation", &|k| k.is_none());
        host_b.rotate_key("k1", b"token-1", "mp_live_y", 7).unwrap();
        seen("rotation back", &|k| k.is_some());
        cached("deletion");
        host_b.delete_key("k1").unwrap();
        seen("deletion", &|k| k.is_none());
    });
}

#[test]
fn request_counts_are_shared_by_every_host() {
    each_backend(|t| {
        let hosts: Vec<Store> = (0..3)
            .map(|_| Store::connect(&t.location).unwrap())
            .collect();
        let counts: Vec<i64> = (0..9)
            .map(|i| hosts[i % 3].count_request("parse:k1", 100).unwrap())
            .collect();
        assert_eq!(counts, (1..=9).collect::<Vec<i64>>());
        assert_eq!(hosts[0].count_request("parse:k1", 101).unwrap(), 1);
        assert_eq!(hosts[1].count_request("account:k1", 100).unwrap(), 1);
    });
}

#[test]
fn a_ledger_id_of_another_charge_is_refused_never_taken_as_paid() {
    each_backend(|t| {
        t.store.add_credits("acme", 10, 0).unwrap();
        t.store.add_credits("other", 10, 0).unwrap();
        let first = t
            .store
            .charge_once("acme", "k1", "tiktok", 1, "req_shared", 1)
            .unwrap();
        assert_eq!(first, Charge::Charged { balance_after: 9 });
        // The same charge again (a retry under its own id): no new debit.
        assert_eq!(
            t.store
                .charge_once("acme", "k1", "tiktok", 1, "req_shared", 2)
                .unwrap(),
            Charge::Charged { balance_after: 9 }
        );
        // Another account, key or platform under that id is refused.
        for (account, key, platform) in [
            ("other", "k2", "tiktok"),
            ("acme", "k2", "tiktok"),
            ("acme", "k1", "youtube"),
        ] {
            let refused = t
                .store
                .charge_once(account, key, platform, 1, "req_shared", 3);
            assert!(
                matches!(refused, Err(StoreError::LedgerIdTaken(ref id)) if id == "req_shared"),
                "{account}/{key}/{platform}: {refused:?}"
            );
        }
        assert_eq!(t.store.balance("acme").unwrap(), 9);
        assert_eq!(t.store.balance("other").unwrap(), 10);
        assert_eq!(t.store.ledger_count(None).unwrap(), 1);
    });
}

/// PostgreSQL: a change that sends no notification (a lost NOTIFY, a
/// silent network path) still reaches the cache once its TTL runs out.
#[test]
fn a_cached_postgres_key_expires_even_when_listen_is_silent() {
    let t = crate::tests::both::postgres();
    let DbLocation::Postgres(url) = &t.location else {
        unreachable!("a PostgreSQL test store")
    };
    let ttl = std::time::Duration::from_secs(5);
    t.store.set_key_cache_ttl(ttl);
    t.store
        .insert_key(&test_key("k1", "acme", None), b"token-1")
        .unwrap();
    // Warm the cache once the listener is up (a fresh read is then cached).
    let started = std::time::Instant::now();
    loop {
        // A lookup starts the listener.
        assert!(t.store.key_by_token_hash(b"token-1").unwrap().is_some());
        if t.store.keys.usable() {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "listener never up"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(t.store.key_by_token_hash(b"token-1").unwrap().is_some());
    // Change the row behind the service's back: no NOTIFY is sent.
    let mut raw = postgres::Client::connect(url, postgres::NoTls).unwrap();
    raw.execute(
        "UPDATE api_keys SET rate_limit_per_minute = 9 WHERE id = 'k1'",
        &[],
    )
    .unwrap();
    let changed_at = std::time::Instant::now();
    let limit = |s: &Store| {
        s.key_by_token_hash(b"token-1")
            .unwrap()
            .unwrap()
            .rate_limit_per_minute
    };
    assert_eq!(
        limit(&t.store),
        None,
        "the cached key answers until its TTL"
    );
    while limit(&t.store) != Some(9) {
        assert!(
            changed_at.elapsed() < ttl + std::time::Duration::from_secs(10),
            "the cached key outlived its TTL"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// PostgreSQL: a store sized for N parses in flight lends N connections at
/// once (each admitted parse reaches the books without waiting past the
/// checkout timeout), and holds the reserve beside them.
#[test]
fn a_postgres_pool_sized_from_admission_lends_a_connection_to_every_parse() {
    let max_parses = 40;
    let url = test_pg::fresh_database();
    let store =
        Store::connect_for_parses(&DbLocation::Postgres(url.clone()), max_parses, None).unwrap();
    assert_eq!(
        store.pg_pool_size(),
        Some(max_parses as u32 + crate::POOL_RESERVE)
    );
    test_pg::fill_pool(&store, max_parses);
    // `--pg-pool-size` bounds it.
    let capped =
        Store::connect_for_parses(&DbLocation::Postgres(url), max_parses, Some(12)).unwrap();
    assert_eq!(capped.pg_pool_size(), Some(12));
}
