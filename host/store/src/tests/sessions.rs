//! Tests of `sessions`.

use crate::sessions::*;
use crate::tests::both::each_backend;

#[test]
fn sessions_expire_idle_and_absolute_and_end_everywhere() {
    each_backend(|t| {
        let store = &t.store;
        store
            .invite_user("usr_1", "acme", "a@example.com", "h", 10, 0)
            .unwrap();
        let session = |hash: &str, t: i64| SessionRecord {
            token_hash: hash.into(),
            user_id: Some("usr_1".into()),
            operator: false,
            csrf: "c".into(),
            created_at: t,
            last_seen_at: t,
        };
        store.create_session(&session("s1", 100)).unwrap();
        store.create_session(&session("s2", 100)).unwrap();
        // Seen at 150: the idle cut-off moves with it.
        assert!(store.live_session("s1", 0, 90, 150).unwrap().is_some());
        assert!(store.live_session("s1", 0, 140, 160).unwrap().is_some());
        // Absolute expiry wins over activity, and the row goes.
        assert!(store.live_session("s1", 100, 0, 170).unwrap().is_none());
        assert!(store.live_session("s1", 0, 0, 170).unwrap().is_none());
        assert_eq!(store.delete_sessions_of(Some("usr_1")).unwrap(), 1);
        assert!(store.live_session("s2", 0, 0, 170).unwrap().is_none());
    });
}
