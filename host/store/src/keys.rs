//! Key lifecycle queries: edit, reset (rotate the token hash), delete, and
//! listing by account. Every change is one statement or one transaction.

use rusqlite::{OptionalExtension, params};

use super::{
    Backend, KEY_COLUMNS, KeyRecord, Store, StoreError, StoreResult, dispatch, key_from_row,
};

/// What an edit changes; `None` leaves a field as it is. The token never changes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyEdit {
    pub name: Option<String>,
    /// `Some(None)` makes the key permanent.
    pub expires_on: Option<Option<String>>,
    /// `Some(None)` allows every platform.
    pub platforms: Option<Option<Vec<String>>>,
    /// `Some(None)` goes back to the service default; `Some(Some(0))` is unlimited.
    pub rate_limit_per_minute: Option<Option<u32>>,
}

impl KeyEdit {
    pub fn is_empty(&self) -> bool {
        *self == KeyEdit::default()
    }

    /// The key as this edit leaves it.
    pub(super) fn apply(&self, key: &mut KeyRecord) {
        if let Some(name) = &self.name {
            key.name = name.clone();
        }
        if let Some(expires_on) = &self.expires_on {
            key.expires_on = expires_on.clone();
        }
        if let Some(platforms) = &self.platforms {
            key.platforms = platforms.clone();
        }
        if let Some(limit) = self.rate_limit_per_minute {
            key.rate_limit_per_minute = limit;
        }
    }
}

impl Store {
    /// Apply `edit` to key `id`; returns the key as it now is.
    pub fn edit_key(&self, id: &str, edit: &KeyEdit, now: i64) -> StoreResult<KeyRecord> {
        let changed = dispatch!(
            self,
            |c| {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let mut key = tx
                    .query_row(
                        &format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = ?1"),
                        [id],
                        key_from_row,
                    )
                    .optional()?
                    .ok_or_else(|| StoreError::NotFound("key", id.into()))?;
                edit.apply(&mut key);
                tx.execute(
                    "UPDATE api_keys SET name = ?2, expires_on = ?3, platforms = ?4,
                        rate_limit_per_minute = ?5, updated_at = ?6
                 WHERE id = ?1",
                    params![
                        id,
                        key.name,
                        key.expires_on,
                        key.platforms.as_ref().map(|p| p.join(",")),
                        key.rate_limit_per_minute,
                        now
                    ],
                )?;
                tx.commit()?;
                Ok(key)
            },
            |p| p.edit_key(id, edit, now)
        );
        self.key_changed();
        changed
    }

    /// Replace the token of key `id` (its hash and display prefix); the old
    /// token stops matching at once. Name, expiry and permissions are kept.
    pub fn rotate_key(
        &self,
        id: &str,
        token_hash: &[u8],
        token_prefix: &str,
        now: i64,
    ) -> StoreResult<KeyRecord> {
        let changed = dispatch!(
            self,
            |c| {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let updated = tx.execute(
                "UPDATE api_keys SET token_hash = ?2, token_prefix = ?3, rotated_at = ?4 WHERE id = ?1",
                params![id, token_hash, token_prefix, now],
            )?;
                if updated != 1 {
                    return Err(StoreError::NotFound("key", id.into()));
                }
                let key = tx.query_row(
                    &format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = ?1"),
                    [id],
                    key_from_row,
                )?;
                tx.commit()?;
                Ok(key)
            },
            |p| p.rotate_key(id, token_hash, token_prefix, now)
        );
        self.key_changed();
        changed
    }

    /// Delete key `id`. Its ledger rows stay (they name the key id), so usage
    /// by key still answers for a deleted key.
    pub fn delete_key(&self, id: &str) -> StoreResult<KeyRecord> {
        let changed = dispatch!(
            self,
            |c| {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let key = tx
                    .query_row(
                        &format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = ?1"),
                        [id],
                        key_from_row,
                    )
                    .optional()?
                    .ok_or_else(|| StoreError::NotFound("key", id.into()))?;
                tx.execute("DELETE FROM api_keys WHERE id = ?1", [id])?;
                tx.commit()?;
                Ok(key)
            },
            |p| p.delete_key(id)
        );
        self.key_changed();
        changed
    }

    /// Keys of one account, oldest first.
    pub fn keys_of_account(&self, account: &str) -> StoreResult<Vec<KeyRecord>> {
        dispatch!(
            self,
            |c| {
                let mut stmt = c.prepare(&format!(
                "SELECT {KEY_COLUMNS} FROM api_keys WHERE account_id = ?1 ORDER BY created_at, id"
            ))?;
                let rows = stmt.query_map([account], key_from_row)?;
                Ok(rows.collect::<Result<_, _>>()?)
            },
            |p| p.keys_of_account(account)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::both::each_backend;

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
        let writer = crate::lock(&db.writer);
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
}
