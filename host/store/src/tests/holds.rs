//! Credit holds on both backends: reserved in order, each ended exactly
//! once, concurrent reservations never overdraw, expired ones given back.

use crate::tests::both::each_backend;
use crate::{Bill, Charge, Store};
use crate::{HoldRequest, Reserved};

fn holds(prefix: &str, credits: &[i64]) -> Vec<HoldRequest> {
    credits
        .iter()
        .enumerate()
        .map(|(i, c)| HoldRequest {
            id: format!("{prefix}-{i}"),
            credits: *c,
        })
        .collect()
}

fn books_balance(store: &Store, account: &str) {
    let a = store.account(account).unwrap();
    assert!(a.consistent(), "{a:?}");
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn holds_are_taken_in_order_and_each_ends_once() {
    each_backend(|t| {
        let rt = runtime();
        let s = &t.store;
        s.add_credits("acme", 6, 0).unwrap();
        // 3 + 2 fit; 3 does not (1 left); 1 still does.
        let got = rt
            .block_on(s.reserve_credits_async("acme", &holds("b", &[3, 2, 3, 1]), 100, 1))
            .unwrap();
        assert_eq!(
            got,
            [
                Reserved::Held,
                Reserved::Held,
                Reserved::Short { balance: 1 },
                Reserved::Held
            ]
        );
        assert_eq!(
            (
                s.balance("acme").unwrap(),
                s.held_credits(Some("acme")).unwrap()
            ),
            (0, 6)
        );
        books_balance(s, "acme");
        // Hold 0 becomes its charge; again (a retry) takes nothing more.
        let bill = Bill::new("acme", "k", "youtube", 3, "b-0-req");
        for _ in 0..2 {
            let c = rt.block_on(s.charge_held_async("b-0", &bill, 1)).unwrap();
            assert_eq!(c, Charge::Charged { balance_after: 0 });
            books_balance(s, "acme");
        }
        // Hold 1 is released once; a release after it gives nothing.
        assert!(rt.block_on(s.release_hold_async("b-1")).unwrap());
        assert!(!rt.block_on(s.release_hold_async("b-1")).unwrap());
        assert_eq!(s.balance("acme").unwrap(), 2);
        // A charge whose hold is gone is the ordinary conditional charge.
        let gone = Bill::new("acme", "k", "tiktok", 1, "b-1-req");
        let c = rt.block_on(s.charge_held_async("b-1", &gone, 1)).unwrap();
        assert_eq!(c, Charge::Charged { balance_after: 1 });
        // A charged hold's release is a no-op.
        assert!(!rt.block_on(s.release_hold_async("b-0")).unwrap());
        assert_eq!(s.ledger_sum(Some("acme")).unwrap(), 4);
        assert_eq!(s.held_credits(Some("acme")).unwrap(), 1);
        books_balance(s, "acme");
        // Hold 3 expires at 100: not before, then given back.
        assert_eq!(s.release_expired_holds(100).unwrap(), 0);
        assert_eq!(s.release_expired_holds(101).unwrap(), 1);
        assert_eq!(
            (s.balance("acme").unwrap(), s.held_credits(None).unwrap()),
            (2, 0)
        );
        books_balance(s, "acme");
    });
}

#[test]
fn concurrent_reservations_never_overdraw() {
    each_backend(|t| {
        t.store.add_credits("acme", 100, 0).unwrap();
        let rt = runtime();
        // Six hosts reserve batches of 10 × 3 credits at once: 33 fit.
        let held: usize = std::thread::scope(|scope| {
            let hosts: Vec<_> = (0..6)
                .map(|h| {
                    let store = Store::connect(&t.location).unwrap();
                    let rt = &rt;
                    scope.spawn(move || {
                        let batch = holds(&format!("h{h}"), &[3; 10]);
                        rt.block_on(store.reserve_credits_async("acme", &batch, 100, 1))
                            .unwrap()
                            .iter()
                            .filter(|r| **r == Reserved::Held)
                            .count()
                    })
                })
                .collect();
            hosts.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(held, 33);
        assert_eq!(t.store.balance("acme").unwrap(), 1);
        assert_eq!(t.store.held_credits(Some("acme")).unwrap(), 99);
        books_balance(&t.store, "acme");
    });
}

/// A held charge under a ledger id another charge already took is refused
/// and changes nothing (the hold stays, to be released); a held charge that
/// lands is in the ledger and the day's aggregate exactly once.
#[test]
fn a_held_charge_under_another_charges_id_is_refused_and_keeps_its_hold() {
    each_backend(|t| {
        let rt = runtime();
        let s = &t.store;
        s.add_credits("acme", 10, 0).unwrap();
        let first = Bill::new("acme", "k", "youtube", 2, "req_x");
        assert_eq!(
            rt.block_on(s.charge_attempt_async(&first, 1)).unwrap(),
            Charge::Charged { balance_after: 8 }
        );
        let got = rt
            .block_on(s.reserve_credits_async("acme", &holds("h", &[3, 4]), 100, 1))
            .unwrap();
        assert_eq!(got, [Reserved::Held, Reserved::Held]);
        let other = Bill::new("acme", "k", "tiktok", 3, "req_x");
        assert!(matches!(
            rt.block_on(s.charge_held_async("h-0", &other, 1)),
            Err(crate::StoreError::LedgerIdTaken(_))
        ));
        assert_eq!(
            (
                s.balance("acme").unwrap(),
                s.held_credits(Some("acme")).unwrap()
            ),
            (1, 7)
        );
        books_balance(s, "acme");
        let own = Bill::new("acme", "k", "tiktok", 4, "req_y");
        assert_eq!(
            rt.block_on(s.charge_held_async("h-1", &own, 1)).unwrap(),
            Charge::Charged { balance_after: 1 }
        );
        assert!(rt.block_on(s.release_hold_async("h-0")).unwrap());
        assert_eq!(
            (s.balance("acme").unwrap(), s.held_credits(None).unwrap()),
            (4, 0)
        );
        assert_eq!(
            (s.ledger_count(None).unwrap(), s.ledger_sum(None).unwrap()),
            (2, 6)
        );
        let days = s.daily_credits("acme", 0, 86_400).unwrap();
        assert_eq!(days.iter().map(|d| d.credits).sum::<i64>(), 6, "{days:?}");
        books_balance(s, "acme");
    });
}
