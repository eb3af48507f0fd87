//! Tests of `idempotency`.

use crate::idempotency::*;
use crate::tests::both::each_backend;
use crate::*;

const DAY: i64 = 86_400;

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
    store.add_credits("acme", 10, 1).unwrap();
    (dir, store)
}

fn done(body: &str) -> StoredResponse {
    StoredResponse {
        status: 200,
        credits: 3,
        body: body.into(),
    }
}

#[test]
fn a_key_runs_once_then_replays_and_refuses_another_body() {
    each_backend(|t| {
        let s = &t.store;
        s.add_credits("acme", 10, 1).unwrap();
        let claim = s
            .claim_idempotency_key("k1", "abc", "fp1", "req_a", 100)
            .unwrap();
        assert_eq!(
            claim,
            Claim::Run {
                request_id: "req_a".into()
            }
        );
        // Not completed yet: a retry (after a crash) runs under the same ledger id.
        let again = s
            .claim_idempotency_key("k1", "abc", "fp1", "req_b", 101)
            .unwrap();
        assert_eq!(
            again,
            Claim::Run {
                request_id: "req_a".into()
            }
        );
        s.complete_idempotency_key("k1", "abc", &done("{}"))
            .unwrap();
        assert_eq!(
            s.claim_idempotency_key("k1", "abc", "fp1", "req_c", 102)
                .unwrap(),
            Claim::Replay(done("{}"))
        );
        assert_eq!(
            s.claim_idempotency_key("k1", "abc", "fp2", "req_d", 103)
                .unwrap(),
            Claim::Conflict
        );
        // Another API key's same key is its own.
        assert_eq!(
            s.claim_idempotency_key("k2", "abc", "fp2", "req_e", 104)
                .unwrap(),
            Claim::Run {
                request_id: "req_e".into()
            }
        );
        // After 24 hours the key is new again.
        assert_eq!(
            s.claim_idempotency_key("k1", "abc", "fp2", "req_f", 100 + IDEMPOTENCY_TTL_S)
                .unwrap(),
            Claim::Run {
                request_id: "req_f".into()
            }
        );
    });
}

#[test]
fn a_request_id_is_charged_once_and_a_charged_claim_is_kept() {
    each_backend(|t| {
        let s = &t.store;
        s.add_credits("acme", 10, 1).unwrap();
        s.claim_idempotency_key("k1", "abc", "fp", "req_a", 100)
            .unwrap();
        let first = s
            .charge_once("acme", "k1", "tiktok", 3, "req_a", 100)
            .unwrap();
        assert_eq!(first, Charge::Charged { balance_after: 7 });
        let retry = s
            .charge_once("acme", "k1", "tiktok", 3, "req_a", 101)
            .unwrap();
        assert_eq!(retry, Charge::Charged { balance_after: 7 });
        assert_eq!(
            (s.ledger_count(None).unwrap(), s.ledger_sum(None).unwrap()),
            (1, 3)
        );
        // A charged claim is not released (its retry must not charge anew).
        s.release_idempotency_key("k1", "abc").unwrap();
        assert_eq!(
            s.claim_idempotency_key("k1", "abc", "fp", "req_b", 102)
                .unwrap(),
            Claim::Run {
                request_id: "req_a".into()
            }
        );
        // An uncharged one is.
        s.claim_idempotency_key("k1", "xyz", "fp", "req_c", 103)
            .unwrap();
        s.release_idempotency_key("k1", "xyz").unwrap();
        assert_eq!(
            s.claim_idempotency_key("k1", "xyz", "fp", "req_d", 104)
                .unwrap(),
            Claim::Run {
                request_id: "req_d".into()
            }
        );
    });
}

#[test]
fn the_connection_that_charges_syncs_every_commit_to_disk() {
    let (_d, s) = store();
    s.charge_once("acme", "k1", "tiktok", 1, "req_a", 1)
        .unwrap();
    // `charge_once` writes through `with`: read the settings of that
    // connection. synchronous 2 = FULL (a committed charge survives
    // power loss), in WAL mode.
    let (synchronous, journal): (i64, String) = s
        .with(|c| {
            Ok((
                c.pragma_query_value(None, "synchronous", |r| r.get(0))?,
                c.pragma_query_value(None, "journal_mode", |r| r.get(0))?,
            ))
        })
        .unwrap();
    assert_eq!((synchronous, journal.as_str()), (2, "wal"));
}

#[test]
fn ledger_request_ids_are_unique_and_keep_the_clients_beside() {
    let (_d, s) = store();
    s.charge("acme", "k1", "tiktok", 1, "req_same", 1).unwrap();
    // The database itself refuses a second row with the id…
    let duplicate = s.with(|c| {
        Ok(c.execute(
            "INSERT INTO ledger (account_id, key_id, platform, credits, request_id, created_at)
             VALUES ('acme', 'k1', 'tiktok', 1, 'req_same', 2)",
            [],
        )?)
    });
    assert!(duplicate.is_err(), "ledger request ids are unique");
    // …and a charge repeated with it takes nothing.
    assert!(matches!(
        s.charge("acme", "k1", "tiktok", 1, "req_same", 2).unwrap(),
        Charge::Charged { balance_after: 9 }
    ));
    assert_eq!(s.balance("acme").unwrap(), 9, "charged once");
    s.set_client_request_id("req_same", "client-7").unwrap();
    let client: String = s
        .with(|c| {
            Ok(c.query_row(
                "SELECT client_request_id FROM ledger WHERE request_id = 'req_same'",
                [],
                |r| r.get(0),
            )?)
        })
        .unwrap();
    assert_eq!(client, "client-7");
}

#[test]
fn charge_once_debits_once_per_request_id_and_keeps_the_daily_aggregate() {
    each_backend(|t| {
        let s = &t.store;
        s.add_credits("acme", 10, 0).unwrap();
        assert_eq!(s.balance_for_charge("acme").unwrap(), 10);
        assert!(matches!(
            s.balance_for_charge("nobody"),
            Err(StoreError::NotFound(..))
        ));
        let first = s
            .charge_once("acme", "k1", "tiktok", 3, "req_a", DAY + 5)
            .unwrap();
        assert_eq!(first, Charge::Charged { balance_after: 7 });
        // The retry of a request whose answer was lost: no second debit.
        let again = s
            .charge_once("acme", "k1", "tiktok", 3, "req_a", DAY + 6)
            .unwrap();
        assert_eq!(again, Charge::Charged { balance_after: 7 });
        s.charge_once("acme", "k2", "x", 4, "req_b", 2 * DAY)
            .unwrap();
        assert_eq!(
            s.charge_once("acme", "k2", "x", 4, "req_c", 2 * DAY)
                .unwrap(),
            Charge::InsufficientCredits { balance: 3 }
        );
        s.set_client_request_id("req_a", "client-1").unwrap();
        assert_eq!(s.ledger_count(Some("acme")).unwrap(), 2);
        // Whole days read the aggregate; it must agree with the ledger.
        let filter = UsageFilter {
            account: Some("acme".into()),
            from: Some(0),
            until: Some(3 * DAY),
            entries: 5,
            ..Default::default()
        };
        let bounded = s.usage_bounded(&filter).unwrap();
        let exact = s.usage(&filter).unwrap();
        assert_eq!((bounded.requests, bounded.credits), (2, 7));
        assert_eq!(bounded.by_platform, exact.by_platform);
        assert_eq!(bounded.by_key, exact.by_key);
        assert_eq!(bounded.entries, exact.entries);
        let days = s.daily_credits("acme", 0, 3 * DAY).unwrap();
        let flat: Vec<(i64, &str, i64)> = days
            .iter()
            .map(|d| (d.day, d.platform.as_str(), d.credits))
            .collect();
        assert_eq!(flat, [(1, "tiktok", 3), (2, "x", 4)]);
        let recent = s.recent_charges("acme", 1).unwrap();
        assert_eq!(recent[0].request_id, "req_b");
    });
}

#[test]
fn idempotency_keys_run_once_replay_and_refuse_another_request() {
    each_backend(|t| {
        let s = &t.store;
        let run = |fp: &str, fresh: &str, now| {
            s.claim_idempotency_key("k1", "abc", fp, fresh, now)
                .unwrap()
        };
        assert_eq!(
            run("fp1", "req_a", 100),
            Claim::Run {
                request_id: "req_a".into()
            }
        );
        assert_eq!(
            run("fp1", "req_b", 101),
            Claim::Run {
                request_id: "req_a".into()
            }
        );
        let done = StoredResponse {
            status: 200,
            credits: 3,
            body: "{}".into(),
        };
        s.complete_idempotency_key("k1", "abc", &done).unwrap();
        assert_eq!(run("fp1", "req_c", 102), Claim::Replay(done.clone()));
        assert_eq!(run("fp2", "req_d", 103), Claim::Conflict);
        // An unfinished claim with no charge is released; a finished one stays.
        s.claim_idempotency_key("k1", "xyz", "fp", "req_e", 104)
            .unwrap();
        s.release_idempotency_key("k1", "xyz").unwrap();
        s.release_idempotency_key("k1", "abc").unwrap();
        assert_eq!(
            s.claim_idempotency_key("k1", "xyz", "fp", "req_f", 105)
                .unwrap(),
            Claim::Run {
                request_id: "req_f".into()
            }
        );
        assert_eq!(run("fp1", "req_g", 106), Claim::Replay(done));
    });
}
