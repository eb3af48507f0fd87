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

#[test]
fn console_users_and_sessions() {
    each_backend(|t| {
        let s = &t.store;
        let user = s
            .invite_user("usr_1", "acme", " Ann@Example.com ", "h1", 100, 1)
            .unwrap();
        assert!(!user.active);
        assert!(s.user_by_invite("h1", 99).unwrap().is_some());
        assert!(s.user_by_invite("h1", 100).unwrap().is_none());
        let session = SessionRecord {
            token_hash: "t1".into(),
            user_id: Some("usr_1".into()),
            operator: false,
            csrf: "c".into(),
            created_at: 10,
            last_seen_at: 10,
        };
        s.create_session(&session).unwrap();
        let live = s.live_session("t1", 0, 0, 20).unwrap().unwrap();
        assert_eq!(live.last_seen_at, 20);
        // Accepting the invitation ends the user's sessions.
        assert!(s.accept_invite("h1", "pw", 50).unwrap().active);
        assert!(s.live_session("t1", 0, 0, 21).unwrap().is_none());
        assert!(s.accept_invite("h1", "pw2", 50).is_err());
        let found = s.user_for_sign_in("ANN@example.com").unwrap().unwrap();
        assert_eq!(found.password_hash.as_deref(), Some("pw"));
        assert!(
            s.invite_user("usr_3", "other", "ann@example.com", "h3", 200, 60)
                .is_err()
        );
        // Open sign-up: no credits and no password until the link is used.
        let SignUpOutcome::Created(bob) = s
            .sign_up("usr_2", "Bob@example.com", "s1", 100, 25, 5)
            .unwrap()
        else {
            panic!("a new address is created")
        };
        assert!(!bob.active);
        assert_eq!(s.balance(&bob.account_id).unwrap(), 0);
        assert!(
            s.user_for_sign_in("bob@example.com")
                .unwrap()
                .unwrap()
                .password_hash
                .is_none()
        );
        // Again before verifying: the same user, a new link, no new account.
        assert!(matches!(
            s.sign_up("usr_4", "bob@example.com", "s2", 100, 99, 6).unwrap(),
            SignUpOutcome::Pending(u) if u.id == "usr_2"
        ));
        assert!(s.accept_invite("s1", "pw", 7).is_err());
        assert!(s.accept_invite("s2", "pw", 7).unwrap().active);
        assert_eq!(s.balance("bob@example.com").unwrap(), 25);
        assert!(s.account("bob@example.com").unwrap().consistent());
        // Verified: taken, and a reset link later grants nothing more.
        assert_eq!(
            s.sign_up("usr_5", "bob@example.com", "s3", 100, 25, 8)
                .unwrap(),
            SignUpOutcome::Taken
        );
        s.invite_user("usr_6", "bob@example.com", "bob@example.com", "s4", 100, 9)
            .unwrap();
        s.accept_invite("s4", "pw2", 10).unwrap();
        assert_eq!(s.balance("bob@example.com").unwrap(), 25);
        // An account of that name without a user is taken too.
        s.create_account("carl@example.com", 11).unwrap();
        assert_eq!(
            s.sign_up("usr_7", "carl@example.com", "s5", 100, 25, 12)
                .unwrap(),
            SignUpOutcome::Taken
        );
        assert_eq!(s.user("usr_2").unwrap().email, "bob@example.com");
        assert_eq!(s.users(None).unwrap().len(), 2);
        assert_eq!(s.users(Some("acme")).unwrap().len(), 1);
        // The operator's sessions, and pruning by age.
        let operator = SessionRecord {
            token_hash: "t2".into(),
            user_id: None,
            operator: true,
            ..session.clone()
        };
        s.create_session(&operator).unwrap();
        assert!(s.live_session("t2", 0, 0, 30).unwrap().unwrap().operator);
        assert_eq!(s.delete_sessions_of(None).unwrap(), 1);
        s.create_session(&SessionRecord {
            token_hash: "t3".into(),
            ..session.clone()
        })
        .unwrap();
        s.create_session(&SessionRecord {
            token_hash: "t4".into(),
            ..session
        })
        .unwrap();
        s.delete_session("t3").unwrap();
        assert_eq!(s.prune_sessions(10, 0).unwrap(), 1);
        assert_eq!(s.delete_sessions_of(Some("usr_1")).unwrap(), 0);
    });
}
