//! The store methods of issues 15, 17 and 19 on both backends: the same
//! calls must give the same answers on SQLite and PostgreSQL.

use crate::tests::both::each_backend;
use crate::{
    Charge, Claim, SessionRecord, SignUpOutcome, StoreError, StoredResponse, TunnelTraffic,
    UsageFilter,
};

const DAY: i64 = 86_400;

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

#[test]
fn tunnel_traffic_adds_up_per_day_key_and_platform() {
    each_backend(|t| {
        let s = &t.store;
        for (key, platform, at, bytes) in [
            ("k1", "youtube", DAY + 1, 100),
            ("k1", "youtube", DAY + 2, 50),
            ("k2", "tiktok", DAY + 3, 30),
            ("k1", "youtube", 2 * DAY, 7),
        ] {
            s.record_tunnel_traffic(&TunnelTraffic {
                account: "acme",
                key,
                platform,
                at,
                bytes,
                streams: 1,
            })
            .unwrap();
        }
        assert_eq!(s.tunnel_bytes_on_day("k1", DAY + 9).unwrap(), 150);
        assert_eq!(s.tunnel_bytes_on_day("k1", 5 * DAY).unwrap(), 0);
        let usage = s
            .tunnel_usage(&UsageFilter {
                account: Some("acme".into()),
                from: Some(DAY),
                until: Some(2 * DAY),
                ..Default::default()
            })
            .unwrap();
        assert_eq!((usage.bytes, usage.streams), (180, 3));
        let keys: Vec<(&str, i64)> = usage
            .by_key
            .iter()
            .map(|g| (g.name.as_str(), g.bytes))
            .collect();
        assert_eq!(keys, [("k1", 150), ("k2", 30)]);
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
