//! Tests of `keys`.

use crate::keys::*;
use crate::tests::both::each_backend;
use crate::*;

/// The store keeps whatever hash of a token it is given (the host's
/// `auth` gives the SHA-256); the token's own bytes serve the tests.
fn hash(token: &str) -> Vec<u8> {
    token.as_bytes().to_vec()
}

fn key(id: &str, token: &str) -> KeyRecord {
    KeyRecord {
        id: id.into(),
        account_id: "acme".into(),
        name: "app".into(),
        token_prefix: token.chars().take(10).collect(),
        expires_on: Some("2030-01-01".into()),
        platforms: Some(vec!["tiktok".into(), "youtube".into()]),
        created_at: 1,
        rotated_at: None,
        rate_limit_per_minute: None,
        delivery: None,
    }
}

#[test]
fn edit_keeps_the_token_and_changes_only_what_it_names() {
    each_backend(|t| {
        let store = &t.store;
        store
            .insert_key(&key("k1", "mp_live_aaaaaaaaaaaa"), &hash("t1"))
            .unwrap();
        let edited = store
            .edit_key(
                "k1",
                &KeyEdit {
                    expires_on: Some(None),
                    rate_limit_per_minute: Some(Some(5)),
                    ..Default::default()
                },
                10,
            )
            .unwrap();
        assert_eq!(edited.expires_on, None);
        assert_eq!(edited.name, "app");
        assert_eq!(
            edited.platforms,
            Some(vec!["tiktok".into(), "youtube".into()])
        );
        assert_eq!(edited.rate_limit_per_minute, Some(5));
        let by_token = store.key_by_token_hash(&hash("t1")).unwrap().unwrap();
        assert_eq!(by_token, edited);
        assert!(matches!(
            store.edit_key("nope", &KeyEdit::default(), 0),
            Err(StoreError::NotFound(..))
        ));
    });
}

#[test]
fn rotate_replaces_the_hash_and_delete_removes_the_key() {
    each_backend(|t| {
        let store = &t.store;
        store
            .insert_key(&key("k1", "mp_live_aaaaaaaaaaaa"), &hash("old"))
            .unwrap();
        let rotated = store
            .rotate_key("k1", &hash("new"), "mp_live_bbbbbb", 7)
            .unwrap();
        assert_eq!(rotated.rotated_at, Some(7));
        assert_eq!(rotated.token_prefix, "mp_live_bbbbbb");
        assert_eq!(rotated.platforms, key("k1", "x").platforms);
        assert!(store.key_by_token_hash(&hash("old")).unwrap().is_none());
        assert!(store.key_by_token_hash(&hash("new")).unwrap().is_some());
        store.delete_key("k1").unwrap();
        assert!(store.key_by_token_hash(&hash("new")).unwrap().is_none());
        assert!(matches!(
            store.delete_key("k1"),
            Err(StoreError::NotFound(..))
        ));
        assert!(store.keys_of_account("acme").unwrap().is_empty());
    });
}

#[test]
fn keys_per_account_are_bounded_in_the_transaction() {
    each_backend(|t| {
        let store = &t.store;
        for i in 0..3 {
            store
                .insert_key_within(
                    &key(&format!("k{i}"), "mp_live_aaaaaaaaaaaa"),
                    &hash(&format!("t{i}")),
                    Some(3),
                )
                .unwrap();
        }
        assert!(matches!(
            store.insert_key_within(&key("k3", "mp_live_aaaaaaaaaaaa"), &hash("t3"), Some(3)),
            Err(StoreError::KeyLimit(3))
        ));
        let mut other = key("k4", "mp_live_aaaaaaaaaaaa");
        other.account_id = "beta".into();
        store
            .insert_key_within(&other, &hash("t4"), Some(3))
            .unwrap();
        assert_eq!(store.keys_of_account("acme").unwrap().len(), 3);
    });
}

/// A token no key has is looked up on a read-only connection: it
/// answers while a charge holds the writer.
#[test]
fn an_unknown_token_does_not_wait_for_the_writer() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::Store::open(&dir.path().join("t.db")).unwrap();
    store
        .insert_key(&key("k1", "mp_live_aaaaaaaaaaaa"), &hash("t1"))
        .unwrap();
    // The service has looked a key up before (the cache's baseline).
    assert!(store.key_by_token_hash(&hash("t1")).unwrap().is_some());
    let crate::Backend::Sqlite(db) = &store.backend else {
        unreachable!("a SQLite file");
    };
    let writer = crate::sqlite::lock(&db.writer);
    let (tx, rx) = std::sync::mpsc::channel();
    let lookup = store.clone();
    std::thread::spawn(move || {
        let _ = tx.send(lookup.key_by_token_hash(&hash("bogus")));
    });
    let answer = rx.recv_timeout(std::time::Duration::from_secs(10));
    drop(writer);
    assert!(
        matches!(answer, Ok(Ok(None))),
        "the unknown token waited for the writer: {answer:?}"
    );
}
