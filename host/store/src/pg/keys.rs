//! Keys on PostgreSQL: the PostgreSQL body of each `Store` key method
//! (`keys`). A change notifies every host's key cache (`key_cache`).

use postgres::types::Type;
use postgres::{GenericClient, Row};

use super::Pg;
use super::accounts::ENSURE_ACCOUNT;
use crate::keys::{KEY_COLUMNS, KeyEdit};
use crate::{KeyRecord, StoreError, StoreResult};

pub(super) fn key_from_row(r: &Row) -> KeyRecord {
    let platforms: Option<String> = r.get(5);
    let limit: Option<i64> = r.get(8);
    KeyRecord {
        id: r.get(0),
        account_id: r.get(1),
        name: r.get(2),
        token_prefix: r.get(3),
        expires_on: r.get(4),
        platforms: platforms.map(|p| {
            p.split(',')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        }),
        created_at: r.get(6),
        rotated_at: r.get(7),
        rate_limit_per_minute: limit.map(|l| u32::try_from(l).unwrap_or(u32::MAX)),
        delivery: crate::keys::delivery_of(r.get(9)),
    }
}

pub(super) fn key_by_id(c: &mut impl GenericClient, id: &str) -> StoreResult<KeyRecord> {
    c.query_opt(
        &format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = $1"),
        &[&id],
    )?
    .map(|r| key_from_row(&r))
    .ok_or_else(|| StoreError::NotFound("key", id.into()))
}

/// Tell every host's key cache (delivered when the transaction commits).
pub(super) fn notify_key_change(c: &mut impl GenericClient) -> StoreResult<()> {
    c.execute("SELECT pg_notify($1, '')", &[&crate::key_cache::CHANNEL])?;
    Ok(())
}

impl Pg {
    pub fn insert_key(
        &self,
        key: &KeyRecord,
        token_hash: &[u8],
        max_keys: Option<u32>,
    ) -> StoreResult<()> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        tx.execute(ENSURE_ACCOUNT, &[&key.account_id, &key.created_at])?;
        if let Some(max) = max_keys {
            // The account row's lock serialises concurrent creations.
            tx.execute(
                "SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE",
                &[&key.account_id],
            )?;
            let count: i64 = tx
                .query_one(
                    "SELECT COUNT(*) FROM api_keys WHERE account_id = $1",
                    &[&key.account_id],
                )?
                .get(0);
            if count >= i64::from(max) {
                return Err(StoreError::KeyLimit(max));
            }
        }
        tx.execute(
            "INSERT INTO api_keys (id, account_id, name, token_hash, token_prefix, expires_on, platforms, created_at, rotated_at, rate_limit_per_minute)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            &[
                &key.id,
                &key.account_id,
                &key.name,
                &token_hash,
                &key.token_prefix,
                &key.expires_on,
                &key.platforms.as_ref().map(|p| p.join(",")),
                &key.created_at,
                &key.rotated_at,
                &key.rate_limit_per_minute.map(i64::from),
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    pub fn key_by_token_hash(&self, token_hash: &[u8]) -> StoreResult<Option<KeyRecord>> {
        Ok(self
            .client()?
            .query_typed_opt(
                &format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE token_hash = $1"),
                &[(&token_hash, Type::BYTEA)],
            )?
            .map(|r| key_from_row(&r)))
    }

    /// [`Pg::key_by_token_hash`] on the async pool (a parse's key lookup
    /// when the key cache cannot answer).
    pub async fn key_by_token_hash_async(
        &self,
        token_hash: &[u8],
    ) -> StoreResult<Option<KeyRecord>> {
        let c = self.async_client().await?;
        Ok(c.query_typed_opt(
            &format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE token_hash = $1"),
            &[(&token_hash, Type::BYTEA)],
        )
        .await?
        .map(|r| key_from_row(&r)))
    }

    pub fn key(&self, id: &str) -> StoreResult<KeyRecord> {
        key_by_id(&mut **self.client()?, id)
    }

    pub fn keys(&self) -> StoreResult<Vec<KeyRecord>> {
        Ok(self
            .client()?
            .query(
                &format!("SELECT {KEY_COLUMNS} FROM api_keys ORDER BY created_at, id"),
                &[],
            )?
            .iter()
            .map(key_from_row)
            .collect())
    }

    pub fn keys_of_account(&self, account: &str) -> StoreResult<Vec<KeyRecord>> {
        Ok(self
            .client()?
            .query(
                &format!(
                    "SELECT {KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created_at, id"
                ),
                &[&account],
            )?
            .iter()
            .map(key_from_row)
            .collect())
    }

    pub fn edit_key(&self, id: &str, edit: &KeyEdit, now: i64) -> StoreResult<KeyRecord> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        let mut key = tx
            .query_opt(
                &format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = $1 FOR UPDATE"),
                &[&id],
            )?
            .map(|r| key_from_row(&r))
            .ok_or_else(|| StoreError::NotFound("key", id.into()))?;
        edit.apply(&mut key);
        notify_key_change(&mut tx)?;
        tx.execute(
            "UPDATE api_keys SET name = $2, expires_on = $3, platforms = $4,
                    rate_limit_per_minute = $5, updated_at = $6
             WHERE id = $1",
            &[
                &id,
                &key.name,
                &key.expires_on,
                &key.platforms.as_ref().map(|p| p.join(",")),
                &key.rate_limit_per_minute.map(i64::from),
                &now,
            ],
        )?;
        tx.commit()?;
        Ok(key)
    }

    pub fn rotate_key(
        &self,
        id: &str,
        token_hash: &[u8],
        token_prefix: &str,
        now: i64,
    ) -> StoreResult<KeyRecord> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        let key = tx
            .query_opt(
                &format!(
                    "UPDATE api_keys SET token_hash = $2, token_prefix = $3, rotated_at = $4
                     WHERE id = $1 RETURNING {KEY_COLUMNS}"
                ),
                &[&id, &token_hash, &token_prefix, &now],
            )?
            .map(|r| key_from_row(&r))
            .ok_or_else(|| StoreError::NotFound("key", id.into()))?;
        notify_key_change(&mut tx)?;
        tx.commit()?;
        Ok(key)
    }

    pub fn delete_key(&self, id: &str) -> StoreResult<KeyRecord> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        let key = tx
            .query_opt(
                &format!("DELETE FROM api_keys WHERE id = $1 RETURNING {KEY_COLUMNS}"),
                &[&id],
            )?
            .map(|r| key_from_row(&r))
            .ok_or_else(|| StoreError::NotFound("key", id.into()))?;
        notify_key_change(&mut tx)?;
        tx.commit()?;
        Ok(key)
    }
}
