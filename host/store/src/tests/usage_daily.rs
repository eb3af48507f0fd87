//! Tests of `usage_daily`.

use crate::tests::both::each_backend;
use crate::usage_daily::*;
use crate::*;
use rusqlite::params;
use rusqlite::params_from_iter;

const ROWS: i64 = 1_000_000;
const START: i64 = 1_700_006_400; // a UTC midnight

/// 1,000,000 ledger rows for one account (3 keys, 2 platforms, one row
/// every 30 s: ~347 days), seeded in one transaction, with their aggregates.
fn seeded() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("big.db")).unwrap();
    store
        .with(|c| {
            let tx = c.transaction()?;
            tx.execute(
                "INSERT INTO accounts (id, balance, created_at) VALUES ('acme', 0, 1)",
                [],
            )?;
            tx.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
                 INSERT INTO ledger (account_id, key_id, platform, credits, request_id, created_at)
                 SELECT 'acme', 'key_' || (i % 3), CASE i % 2 WHEN 0 THEN 'tiktok' ELSE 'youtube' END,
                        1 + i % 3, 'req_' || i, ?2 + i * 30 FROM n",
                params![ROWS, START],
            )?;
            tx.execute(
                "INSERT INTO ledger_daily (account_id, day, key_id, platform, requests, credits)
                 SELECT account_id, created_at / 86400, key_id, platform, COUNT(*), SUM(credits)
                 FROM ledger GROUP BY account_id, created_at / 86400, key_id, platform",
                [],
            )?;
            tx.commit()?;
            Ok(())
        })
        .unwrap();
    (dir, store)
}

/// The query plans of the bounded usage: no statement scans the ledger.
fn plans(store: &Store, filter: &UsageFilter) -> Vec<String> {
    let (daily, dp) = where_clause(filter, "day", DAY_S);
    let (ledger, lp) = where_clause(filter, "created_at", 1);
    let statements = [
        (
            format!("SELECT SUM(requests), SUM(credits) FROM ledger_daily{daily}"),
            dp.clone(),
        ),
        (
            format!(
                "SELECT key_id, SUM(requests), SUM(credits) FROM ledger_daily{daily} GROUP BY key_id ORDER BY SUM(credits) DESC, key_id"
            ),
            dp,
        ),
        (
            format!("SELECT id FROM ledger{ledger} ORDER BY created_at DESC, id DESC LIMIT 20"),
            lp,
        ),
    ];
    store
        .with(|c| {
            let mut out = Vec::new();
            for (sql, params) in &statements {
                let mut stmt = c.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
                let rows =
                    stmt.query_map(params_from_iter(params.iter()), |r| r.get::<_, String>(3))?;
                out.extend(rows.collect::<Result<Vec<_>, _>>()?);
            }
            Ok(out)
        })
        .unwrap()
}

#[test]
fn a_million_ledger_rows_answer_from_the_aggregates() {
    let (_dir, store) = seeded();
    for filter in [
        UsageFilter {
            account: Some("acme".into()),
            entries: 20,
            ..Default::default()
        },
        UsageFilter {
            account: Some("acme".into()),
            platform: Some("tiktok".into()),
            from: Some(START + 10 * DAY_S),
            until: Some(START + 40 * DAY_S),
            entries: 20,
            ..Default::default()
        },
    ] {
        let started = std::time::Instant::now();
        let bounded = store.usage_bounded(&filter).unwrap();
        let bounded_ms = started.elapsed().as_secs_f64() * 1000.0;
        let started = std::time::Instant::now();
        let full = store.usage(&filter).unwrap();
        let full_ms = started.elapsed().as_secs_f64() * 1000.0;
        // Figures for the record, not asserted (speed is `cargo xtask bench`'s).
        eprintln!(
            "usage over {ROWS} rows ({filter:?}): aggregates {bounded_ms:.1} ms, ledger scan {full_ms:.1} ms"
        );
        assert_eq!(bounded, full, "the aggregates agree with the ledger");
        assert_eq!(bounded.entries.len(), 20);
        let steps = plans(&store, &filter);
        for step in &steps {
            // No full pass over the ledger: only the aggregates and an
            // index walk (the ledger's own order, no sort of its rows).
            assert!(
                !step.starts_with("SCAN ledger") || step.contains("INDEX"),
                "{steps:?}"
            );
        }
        assert!(
            steps
                .last()
                .is_some_and(|s| s.contains("ledger") && !s.contains("TEMP B-TREE")),
            "{steps:?}"
        );
    }
    assert_eq!(
        store
            .usage_bounded(&UsageFilter::default())
            .unwrap()
            .requests,
        ROWS
    );
}

#[test]
fn every_charge_counts_in_its_day() {
    each_backend(|t| {
        let store = &t.store;
        store.add_credits("acme", 100, 1).unwrap();
        for (i, t) in [START, START + 10, START + DAY_S + 5].iter().enumerate() {
            store
                .charge_once("acme", "k1", "tiktok", 2, &format!("r{i}"), *t)
                .unwrap();
        }
        let filter = |from, until| UsageFilter {
            account: Some("acme".into()),
            from,
            until,
            entries: 10,
            ..Default::default()
        };
        for (from, until) in [
            (None, None),
            (Some(START), Some(START + DAY_S)),
            (Some(START + DAY_S), None),
            (Some(START + 7), None), // cuts a day: answered from the ledger
        ] {
            let f = filter(from, until);
            assert_eq!(
                store.usage_bounded(&f).unwrap(),
                store.usage(&f).unwrap(),
                "{f:?}"
            );
        }
        assert_eq!(store.usage_bounded(&filter(None, None)).unwrap().credits, 6);
    });
}
