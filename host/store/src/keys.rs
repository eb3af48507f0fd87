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
