//! Tests of `daily`.

use crate::daily::*;
use crate::*;

#[test]
fn groups_by_day_and_platform() {
    crate::tests::both::each_backend(|t| groups_by_day_and_platform_on(&t.store));
}

fn groups_by_day_and_platform_on(store: &Store) {
    store.add_credits("acme", 100, 0).unwrap();
    for (i, (t, p)) in [
        (86_400, "tiktok"),
        (86_401, "tiktok"),
        (86_402, "x"),
        (2 * 86_400, "x"),
    ]
    .into_iter()
    .enumerate()
    {
        // Ledger request ids are unique.
        store
            .charge_once("acme", "k", p, 2, &format!("r{i}"), t)
            .unwrap();
    }
    let days = store.daily_credits("acme", 0, 3 * 86_400).unwrap();
    let flat: Vec<(i64, &str, i64)> = days
        .iter()
        .map(|d| (d.day, d.platform.as_str(), d.credits))
        .collect();
    assert_eq!(flat, [(1, "tiktok", 4), (1, "x", 2), (2, "x", 2)]);
    assert!(store.daily_credits("acme", 0, 86_400).unwrap().is_empty());
    // Bounds inside days read the ledger: the same days, cut exactly.
    assert_eq!(
        store.daily_credits("acme", 1, 3 * 86_400 - 1).unwrap(),
        days,
        "ledger and aggregates agree"
    );
    let cut = store.daily_credits("acme", 86_401, 2 * 86_400 + 1).unwrap();
    let cut: Vec<(i64, &str, i64)> = cut
        .iter()
        .map(|d| (d.day, d.platform.as_str(), d.credits))
        .collect();
    assert_eq!(cut, [(1, "tiktok", 2), (1, "x", 2), (2, "x", 2)]);
    let recent = store.recent_charges("acme", 2).unwrap();
    let times: Vec<i64> = recent.iter().map(|e| e.time).collect();
    assert_eq!(times, [2 * 86_400, 86_402]);
}

#[test]
fn last_charged_use_per_key_from_the_ledger() {
    crate::tests::both::each_backend(|t| {
        let store = &t.store;
        for (id, account) in [
            ("k1", "acme"),
            ("k2", "acme"),
            ("k3", "acme"),
            ("o1", "other"),
        ] {
            store.insert_key(&key(id, account), id.as_bytes()).unwrap();
        }
        store.add_credits("acme", 100, 0).unwrap();
        store.add_credits("other", 100, 0).unwrap();
        for (i, (k, a, t)) in [
            ("k1", "acme", 50),
            ("k1", "acme", 70),
            ("k1", "acme", 60),
            ("k2", "acme", 40),
            ("o1", "other", 90),
        ]
        .into_iter()
        .enumerate()
        {
            store
                .charge(a, k, "tiktok", 1, &format!("r{i}"), t)
                .unwrap();
        }
        let last = store.last_charged_use("acme").unwrap();
        assert_eq!(
            last.into_iter().collect::<Vec<_>>(),
            [("k1".to_string(), 70), ("k2".to_string(), 40)],
            "k3 never charged; o1 is another account's"
        );
        assert!(store.last_charged_use("nobody").unwrap().is_empty());
    });
}

#[test]
fn last_charged_use_reads_the_key_index_not_the_ledger() {
    let dir = tempfile::tempdir().unwrap();
    Store::open(&dir.path().join("t.db")).unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
    let mut stmt = conn
        .prepare(&format!("EXPLAIN QUERY PLAN {LAST_CHARGED_USE}"))
        .unwrap();
    let plan: Vec<String> = stmt
        .query_map(["acme"], |r| r.get(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(
        plan.iter()
            .any(|d| d.contains("USING COVERING INDEX ledger_by_key (key_id=?)")),
        "{plan:?}"
    );
    assert!(!plan.iter().any(|d| d.starts_with("SCAN l")), "{plan:?}");
}

fn key(id: &str, account: &str) -> crate::KeyRecord {
    crate::KeyRecord {
        id: id.into(),
        account_id: account.into(),
        name: id.into(),
        token_prefix: "mp_live_x".into(),
        expires_on: None,
        platforms: None,
        created_at: 0,
        rotated_at: None,
        rate_limit_per_minute: None,
        delivery: None,
    }
}
