//! Tests of `accounts`.

use crate::Charge;
use crate::accounts::*;
use crate::tests::both::each_backend;
use crate::*;

#[test]
fn grants_minus_ledger_is_the_balance_through_adds_sets_and_charges() {
    each_backend(|t| {
        let store = &t.store;
        assert!(store.create_account("acme", 1).unwrap());
        assert!(!store.create_account("acme", 1).unwrap());
        assert!(store.create_account("bad id", 1).is_err());
        assert_eq!(store.add_credits("acme", 10, 2).unwrap(), 10);
        assert!(matches!(
            store.charge("acme", "k", "youtube", 3, "r1", 3).unwrap(),
            Charge::Charged { balance_after: 7 }
        ));
        let set = store.set_credits("acme", 2, 4).unwrap();
        assert_eq!((set.previous, set.balance, set.change), (7, 2, -5));
        assert!(matches!(
            store.charge("acme", "k", "youtube", 3, "r2", 5).unwrap(),
            Charge::InsufficientCredits { balance: 2 }
        ));
        let a = store.account("acme").unwrap();
        assert_eq!((a.balance, a.granted, a.spent), (2, 5, 3));
        assert!(a.consistent());
        assert!(store.set_credits("acme", -1, 6).is_err());
        assert!(store.add_credits("acme", MAX_CREDITS, 6).is_err());
        assert_eq!(store.balance("acme").unwrap(), 2);
        assert_eq!(store.set_credits("new", 0, 7).unwrap().change, 0);
        assert_eq!(store.accounts().unwrap().len(), 2);
        assert!(matches!(
            store.account("nobody"),
            Err(StoreError::NotFound(..))
        ));
    });
}

#[test]
fn grant_reasons_are_kept_in_the_grants_log_newest_first() {
    each_backend(|t| {
        let store = &t.store;
        store
            .add_credits_noted("acme", 10, Some("  trial month "), 2)
            .unwrap();
        store
            .set_credits_noted("acme", 4, Some("refund reversed"), 3)
            .unwrap();
        store.add_credits_noted("acme", 1, Some("   "), 4).unwrap();
        store.add_credits("other", 7, 5).unwrap();
        let too_long = "x".repeat(MAX_REASON_CHARS + 1);
        assert!(matches!(
            store.add_credits_noted("acme", 1, Some(&too_long), 6),
            Err(StoreError::Invalid(_))
        ));
        assert!(
            store
                .set_credits_noted("acme", 9, Some("two\nlines"), 6)
                .is_err()
        );
        let log: Vec<_> = store
            .grants("acme", 10)
            .unwrap()
            .into_iter()
            .map(|g| (g.kind, g.credits, g.reason, g.created_at))
            .collect();
        assert_eq!(
            log,
            vec![
                ("add".into(), 1, None, 4),
                ("set".into(), -6, Some("refund reversed".into()), 3),
                ("add".into(), 10, Some("trial month".into()), 2),
            ]
        );
        assert_eq!(store.grants("acme", 1).unwrap().len(), 1);
        assert_eq!(store.balance("acme").unwrap(), 5, "refusals change nothing");
        assert!(store.grants("nobody", 10).unwrap().is_empty());
    });
}
