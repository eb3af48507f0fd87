//! Tests of `users`.

use crate::tests::both::each_backend;
use crate::users::*;
use crate::*;

#[test]
fn invite_accept_and_reinvite() {
    each_backend(|t| {
        let store = &t.store;
        let user = store
            .invite_user("usr_1", "acme", " Ann@Example.com ", "h1", 100, 1)
            .unwrap();
        assert_eq!(user.email, "ann@example.com");
        assert!(!user.active);
        assert_eq!(store.balance("acme").unwrap(), 0);
        assert!(store.user_by_invite("h1", 99).unwrap().is_some());
        assert!(
            store.user_by_invite("h1", 100).unwrap().is_none(),
            "expired"
        );
        assert!(matches!(
            store.accept_invite("h1", "pw", 100),
            Err(StoreError::NotFound(..))
        ));
        let accepted = store.accept_invite("h1", "pw", 50).unwrap();
        assert!(accepted.active);
        // A link works once.
        assert!(store.accept_invite("h1", "pw2", 50).is_err());
        let found = store.user_for_sign_in("ANN@example.com").unwrap().unwrap();
        assert_eq!(found.password_hash.as_deref(), Some("pw"));
        // Inviting again keeps the user and gives a new link.
        let again = store
            .invite_user("usr_2", "acme", "ann@example.com", "h2", 200, 60)
            .unwrap();
        assert_eq!(again.id, "usr_1");
        assert!(store.user_by_invite("h2", 61).unwrap().is_some());
        assert!(
            store
                .invite_user("usr_3", "other", "ann@example.com", "h3", 200, 60)
                .is_err()
        );
        assert_eq!(store.users(Some("acme")).unwrap().len(), 1);
        assert!(store.users(Some("other")).unwrap().is_empty());
    });
}

#[test]
fn open_sign_up_grants_starting_credits_once_when_verified() {
    each_backend(|t| {
        let store = &t.store;
        let SignUpOutcome::Created(user) = store
            .sign_up("usr_1", "bob@example.com", "h1", 100, 25, 5)
            .unwrap()
        else {
            panic!("a new address is created");
        };
        assert_eq!(user.account_id, "bob@example.com");
        assert_eq!(
            store.balance("bob@example.com").unwrap(),
            0,
            "not verified yet"
        );
        assert!(store.user_by_invite("h1", 99).unwrap().is_some());
        assert!(
            store.user_by_invite("h1", 100).unwrap().is_none(),
            "expired"
        );
        assert!(matches!(
            store.sign_up("usr_2", "bob@example.com", "h2", 200, 25, 6).unwrap(),
            SignUpOutcome::Pending(u) if u.id == "usr_1"
        ));
        assert!(store.user_by_invite("h1", 7).unwrap().is_none(), "replaced");
        store.accept_invite("h2", "pw", 8).unwrap();
        assert!(store.accept_invite("h2", "pw", 9).is_err(), "used up");
        assert_eq!(store.balance("bob@example.com").unwrap(), 25);
        assert!(store.account("bob@example.com").unwrap().consistent());
        assert_eq!(
            store
                .sign_up("usr_3", "bob@example.com", "h3", 300, 25, 10)
                .unwrap(),
            SignUpOutcome::Taken
        );
        assert!(store.user_by_invite("h3", 11).unwrap().is_none());
        assert_eq!(store.users(None).unwrap().len(), 1);
        assert!(
            store
                .sign_up("usr_4", "not-an-address", "h4", 300, 0, 6)
                .is_err()
        );
    });
}

#[test]
fn racing_sign_ups_of_one_address_make_one_account() {
    each_backend(|t| {
        let store = &t.store;
        let outcomes: Vec<SignUpOutcome> = std::thread::scope(|scope| {
            let runs: Vec<_> = (0..8)
                .map(|i| {
                    let store = store.clone();
                    scope.spawn(move || {
                        store
                            .sign_up(
                                &format!("usr_{i}"),
                                "ann@example.com",
                                &format!("h{i}"),
                                100,
                                5,
                                1,
                            )
                            .unwrap()
                    })
                })
                .collect();
            runs.into_iter().map(|r| r.join().unwrap()).collect()
        });
        let created = outcomes
            .iter()
            .filter(|o| matches!(o, SignUpOutcome::Created(_)))
            .count();
        assert_eq!(created, 1, "{outcomes:?}");
        assert_eq!(store.users(None).unwrap().len(), 1);
    });
}
