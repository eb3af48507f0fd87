//! API keys: the stored key ([`KeyRecord`]), creation within the account's
//! bound, lookup by token hash through the key cache, edit, reset (rotate the
//! token hash), delete, and listing by account. Each backend's body is in
//! `sqlite/keys.rs` and `pg/keys.rs`; every change is one statement or one
//! transaction and drops the cached keys.

use crate::{Backend, Store, StoreResult, accounts, dispatch, dispatch_read, dispatch_tx, sqlite};

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
        let changed = dispatch_tx!(self, |c| sqlite::keys::edit_key(c, id, edit, now), |p| p
            .edit_key(id, edit, now));
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
        let changed = dispatch_tx!(
            self,
            |c| sqlite::keys::rotate_key(c, id, token_hash, token_prefix, now),
            |p| p.rotate_key(id, token_hash, token_prefix, now)
        );
        self.key_changed();
        changed
    }

    /// Delete key `id`. Its ledger rows stay (they name the key id), so usage
    /// by key still answers for a deleted key.
    pub fn delete_key(&self, id: &str) -> StoreResult<KeyRecord> {
        let changed = dispatch_tx!(self, |c| sqlite::keys::delete_key(c, id), |p| p
            .delete_key(id));
        self.key_changed();
        changed
    }

    /// Keys of one account, oldest first.
    pub fn keys_of_account(&self, account: &str) -> StoreResult<Vec<KeyRecord>> {
        dispatch!(self, |c| sqlite::keys::keys_of_account(c, account), |p| p
            .keys_of_account(account))
    }
}

/// A stored API key (the token itself is never stored, only its SHA-256).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyRecord {
    pub id: String,
    pub account_id: String,
    pub name: String,
    /// Short display prefix of the token.
    pub token_prefix: String,
    /// Last valid day (UTC), `YYYY-MM-DD`; `None` = permanent.
    pub expires_on: Option<String>,
    /// Allowed platforms; `None` = all.
    pub platforms: Option<Vec<String>>,
    pub created_at: i64,
    pub rotated_at: Option<i64>,
    /// Requests per minute for this key; `None` = the service default, `Some(0)` = unlimited.
    pub rate_limit_per_minute: Option<u32>,
    /// How this key's media is delivered when a request does not say
    /// (`None`: the service default, direct). Read with the key, so a parse
    /// reads the key once; set with [`Store::key_delivery`].
    #[serde(skip)]
    pub delivery: Option<mediaparse_core::Delivery>,
}

impl KeyRecord {
    /// A plain key of `account` for unit tests: no expiry, every platform,
    /// no own rate limit, never rotated.
    #[doc(hidden)]
    pub fn for_tests(id: &str, account: &str) -> KeyRecord {
        KeyRecord {
            id: id.into(),
            account_id: account.into(),
            name: String::new(),
            token_prefix: "mp_live_ab".into(),
            expires_on: None,
            platforms: None,
            created_at: 0,
            rotated_at: None,
            rate_limit_per_minute: None,
            delivery: None,
        }
    }
}

pub(crate) const KEY_COLUMNS: &str = "id, account_id, name, token_prefix, expires_on, platforms, created_at, rotated_at, rate_limit_per_minute, delivery";

/// A stored delivery setting (the column accepts only the two names).
pub(crate) fn delivery_of(column: Option<String>) -> Option<mediaparse_core::Delivery> {
    column.and_then(|d| d.parse().ok())
}

impl Store {
    pub fn insert_key(&self, key: &KeyRecord, token_hash: &[u8]) -> StoreResult<()> {
        self.insert_key_within(key, token_hash, None)
    }

    /// Insert a key unless its account already has `max_keys` keys
    /// (`KeyLimit`); counted and inserted in one transaction, so concurrent
    /// creations cannot pass the bound together.
    pub fn insert_key_within(
        &self,
        key: &KeyRecord,
        token_hash: &[u8],
        max_keys: Option<u32>,
    ) -> StoreResult<()> {
        accounts::validate_account_id(&key.account_id)?;
        dispatch_tx!(
            self,
            |c| sqlite::keys::insert_key_within(c, key, token_hash, max_keys),
            |p| p.insert_key(key, token_hash, max_keys)
        )
    }

    /// Use a cached key for at most `ttl` before reading it again (zero:
    /// keys are not cached), whatever change notifications say.
    pub fn set_key_cache_ttl(&self, ttl: std::time::Duration) {
        self.keys.set_ttl(ttl);
    }

    /// The key whose token hashes to `token_hash`, from the key cache when
    /// it holds it (see `key_cache` for how changes anywhere reach it).
    pub fn key_by_token_hash(&self, token_hash: &[u8]) -> StoreResult<Option<KeyRecord>> {
        let usable = match &self.backend {
            Backend::Sqlite(db) => {
                // Another connection's commit (the CLI) changes data_version;
                // only a cached answer needs that check (a miss is read
                // fresh below), so an unknown token never waits for the writer.
                let needs_check =
                    self.keys.get(token_hash).0.is_some() || !self.keys.data_version_known();
                !needs_check || sqlite::keys::cache_checked(db, &self.keys)?
            }
            Backend::Postgres(p) => {
                self.keys.start_listener(p.connector());
                self.keys.usable()
            }
        };
        let (cached, generation) = self.keys.get(token_hash);
        if usable && let Some(key) = cached {
            return Ok(Some(key));
        }
        // On SQLite a read-only connection: the last committed keys, without
        // waiting for a charge in progress.
        let key = dispatch_read!(
            self,
            |c| sqlite::keys::key_by_token_hash(c, token_hash),
            |p| p.key_by_token_hash(token_hash)
        )?;
        if usable && let Some(key) = &key {
            self.keys.put(token_hash, key, generation);
        }
        Ok(key)
    }

    /// [`Store::key_by_token_hash`] for async callers (the key lookup of a
    /// request): on PostgreSQL the cache is consulted the same way and a
    /// miss is read on the async pool, holding no thread; on SQLite the
    /// blocking lookup runs on a blocking thread.
    pub async fn key_by_token_hash_async(
        &self,
        token_hash: &[u8],
    ) -> StoreResult<Option<KeyRecord>> {
        let Backend::Postgres(p) = &self.backend else {
            let hash = token_hash.to_vec();
            return self.off_thread(move |s| s.key_by_token_hash(&hash)).await;
        };
        self.keys.start_listener(p.connector());
        let usable = self.keys.usable();
        let (cached, generation) = self.keys.get(token_hash);
        if usable && let Some(key) = cached {
            return Ok(Some(key));
        }
        let key = p.key_by_token_hash_async(token_hash).await?;
        if usable && let Some(key) = &key {
            self.keys.put(token_hash, key, generation);
        }
        Ok(key)
    }

    /// The key whose token hashes to `token_hash` when the key cache can
    /// answer at once, without waiting for anything (`None`: ask
    /// [`Store::key_by_token_hash`], which may read the database). On SQLite
    /// the cache is first checked against other processes' commits, as
    /// there, but only when the write connection is free this instant.
    pub fn cached_key(&self, token_hash: &[u8]) -> StoreResult<Option<KeyRecord>> {
        if self.keys.get(token_hash).0.is_none() {
            return Ok(None);
        }
        let usable = match &self.backend {
            Backend::Sqlite(db) => {
                self.keys.data_version_known() && sqlite::keys::cache_checked(db, &self.keys)?
            }
            Backend::Postgres(p) => {
                self.keys.start_listener(p.connector());
                self.keys.usable()
            }
        };
        Ok(if usable {
            self.keys.get(token_hash).0
        } else {
            None
        })
    }

    /// A key changed on this host: forget cached keys here at once (other
    /// hosts hear of it through the database).
    pub(crate) fn key_changed(&self) {
        self.keys.invalidate();
    }

    pub fn key(&self, id: &str) -> StoreResult<KeyRecord> {
        dispatch!(self, |c| sqlite::keys::key(c, id), |p| p.key(id))
    }

    pub fn keys(&self) -> StoreResult<Vec<KeyRecord>> {
        dispatch!(self, |c| sqlite::keys::keys(c), |p| p.keys())
    }
}

/// The awaited twins of the key calls (see `awaited`).
impl Store {
    /// [`Store::insert_key_within`], awaited.
    pub async fn insert_key_within_async(
        &self,
        key: &KeyRecord,
        token_hash: &[u8],
        max_keys: Option<u32>,
    ) -> StoreResult<()> {
        accounts::validate_account_id(&key.account_id)?;
        let (k1, h1) = (key.clone(), token_hash.to_vec());
        let (k2, h2) = (key.clone(), token_hash.to_vec());
        self.write_or_off_thread(
            move |c| sqlite::keys::insert_key_within(c, &k1, &h1, max_keys),
            move |s| s.insert_key_within(&k2, &h2, max_keys),
        )
        .await
    }

    /// [`Store::edit_key`], awaited.
    pub async fn edit_key_async(
        &self,
        id: &str,
        edit: &KeyEdit,
        now: i64,
    ) -> StoreResult<KeyRecord> {
        let (i1, e1) = (id.to_string(), edit.clone());
        let (i2, e2) = (id.to_string(), edit.clone());
        let changed = self
            .write_or_off_thread(
                move |c| sqlite::keys::edit_key(c, &i1, &e1, now),
                move |s| s.edit_key(&i2, &e2, now),
            )
            .await;
        self.key_changed();
        changed
    }

    /// [`Store::rotate_key`], awaited.
    pub async fn rotate_key_async(
        &self,
        id: &str,
        token_hash: &[u8],
        token_prefix: &str,
        now: i64,
    ) -> StoreResult<KeyRecord> {
        let (i1, h1, p1) = (
            id.to_string(),
            token_hash.to_vec(),
            token_prefix.to_string(),
        );
        let (i2, h2, p2) = (i1.clone(), h1.clone(), p1.clone());
        let changed = self
            .write_or_off_thread(
                move |c| sqlite::keys::rotate_key(c, &i1, &h1, &p1, now),
                move |s| s.rotate_key(&i2, &h2, &p2, now),
            )
            .await;
        self.key_changed();
        changed
    }

    /// [`Store::delete_key`], awaited.
    pub async fn delete_key_async(&self, id: &str) -> StoreResult<KeyRecord> {
        let (a, b) = (id.to_string(), id.to_string());
        let changed = self
            .write_or_off_thread(
                move |c| sqlite::keys::delete_key(c, &a),
                move |s| s.delete_key(&b),
            )
            .await;
        self.key_changed();
        changed
    }

    /// [`Store::keys_of_account`], awaited.
    pub async fn keys_of_account_async(&self, account: &str) -> StoreResult<Vec<KeyRecord>> {
        let account = account.to_string();
        self.off_thread(move |s| s.keys_of_account(&account)).await
    }

    /// [`Store::keys`], awaited.
    pub async fn keys_async(&self) -> StoreResult<Vec<KeyRecord>> {
        self.off_thread(|s| s.keys()).await
    }

    /// [`Store::key`], awaited.
    pub async fn key_async(&self, id: &str) -> StoreResult<KeyRecord> {
        let id = id.to_string();
        self.off_thread(move |s| s.key(&id)).await
    }
}
