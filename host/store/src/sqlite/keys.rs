//! Keys on SQLite: the SQLite body of each `Store` key method (`keys`).

use rusqlite::{Connection, OptionalExtension, params};

use super::Sqlite;
use crate::key_cache::KeyCache;
use crate::keys::{KEY_COLUMNS, KeyEdit, delivery_of};
use crate::{KeyRecord, StoreError, StoreResult};

pub(crate) fn edit_key(
    c: &Connection,
    id: &str,
    edit: &KeyEdit,
    now: i64,
) -> StoreResult<KeyRecord> {
    let mut key = c
        .query_row(
            &format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = ?1"),
            [id],
            key_from_row,
        )
        .optional()?
        .ok_or_else(|| StoreError::NotFound("key", id.into()))?;
    edit.apply(&mut key);
    c.execute(
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
    Ok(key)
}

pub(crate) fn rotate_key(
    c: &Connection,
    id: &str,
    token_hash: &[u8],
    token_prefix: &str,
    now: i64,
) -> StoreResult<KeyRecord> {
    let updated = c.execute(
        "UPDATE api_keys SET token_hash = ?2, token_prefix = ?3, rotated_at = ?4 WHERE id = ?1",
        params![id, token_hash, token_prefix, now],
    )?;
    if updated != 1 {
        return Err(StoreError::NotFound("key", id.into()));
    }
    let key = c.query_row(
        &format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = ?1"),
        [id],
        key_from_row,
    )?;
    Ok(key)
}

pub(crate) fn delete_key(c: &Connection, id: &str) -> StoreResult<KeyRecord> {
    let key = c
        .query_row(
            &format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = ?1"),
            [id],
            key_from_row,
        )
        .optional()?
        .ok_or_else(|| StoreError::NotFound("key", id.into()))?;
    c.execute("DELETE FROM api_keys WHERE id = ?1", [id])?;
    Ok(key)
}

pub(crate) fn keys_of_account(c: &mut Connection, account: &str) -> StoreResult<Vec<KeyRecord>> {
    let mut stmt = c.prepare(&format!(
        "SELECT {KEY_COLUMNS} FROM api_keys WHERE account_id = ?1 ORDER BY created_at, id"
    ))?;
    let rows = stmt.query_map([account], key_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub(crate) fn insert_key_within(
    c: &Connection,
    key: &KeyRecord,
    token_hash: &[u8],
    max_keys: Option<u32>,
) -> StoreResult<()> {
    c.execute(
        "INSERT OR IGNORE INTO accounts (id, balance, created_at) VALUES (?1, 0, ?2)",
        params![key.account_id, key.created_at],
    )?;
    if let Some(max) = max_keys {
        let count: i64 = c.query_row(
            "SELECT COUNT(*) FROM api_keys WHERE account_id = ?1",
            [&key.account_id],
            |r| r.get(0),
        )?;
        if count >= i64::from(max) {
            return Err(StoreError::KeyLimit(max));
        }
    }
    c.execute(
    "INSERT INTO api_keys (id, account_id, name, token_hash, token_prefix, expires_on, platforms, created_at, rotated_at, rate_limit_per_minute)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    params![
        key.id,
        key.account_id,
        key.name,
        token_hash,
        key.token_prefix,
        key.expires_on,
        key.platforms.as_ref().map(|p| p.join(",")),
        key.created_at,
        key.rotated_at,
        key.rate_limit_per_minute
    ],
)?;
    Ok(())
}

pub(crate) fn key_by_token_hash(
    c: &mut Connection,
    token_hash: &[u8],
) -> StoreResult<Option<KeyRecord>> {
    Ok(c.prepare_cached(&format!(
        "SELECT {KEY_COLUMNS} FROM api_keys WHERE token_hash = ?1"
    ))?
    .query_row([token_hash], key_from_row)
    .optional()?)
}

pub(crate) fn key(c: &mut Connection, id: &str) -> StoreResult<KeyRecord> {
    c.query_row(
        &format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = ?1"),
        [id],
        key_from_row,
    )
    .optional()?
    .ok_or_else(|| StoreError::NotFound("key", id.into()))
}

pub(crate) fn keys(c: &mut Connection) -> StoreResult<Vec<KeyRecord>> {
    let mut stmt = c.prepare(&format!(
        "SELECT {KEY_COLUMNS} FROM api_keys ORDER BY created_at, id"
    ))?;
    let rows = stmt.query_map([], key_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub(crate) fn key_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<KeyRecord> {
    let platforms: Option<String> = r.get(5)?;
    Ok(KeyRecord {
        id: r.get(0)?,
        account_id: r.get(1)?,
        name: r.get(2)?,
        token_prefix: r.get(3)?,
        expires_on: r.get(4)?,
        platforms: platforms.map(|p| {
            p.split(',')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        }),
        created_at: r.get(6)?,
        rotated_at: r.get(7)?,
        rate_limit_per_minute: r.get(8)?,
        delivery: delivery_of(r.get(9)?),
    })
}

/// Check the key cache against other processes' commits
/// without waiting for the writer: read `data_version` on the write
/// connection when it is free; while the writer thread holds the write
/// lock, nobody else can commit and it checked the cache under that
/// lock. Otherwise (another write of this process is under way) the
/// cache is not used for this lookup (`false`).
pub(crate) fn cache_checked(db: &Sqlite, cache: &KeyCache) -> StoreResult<bool> {
    let conn = match db.writer.try_lock() {
        Ok(conn) => conn,
        Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return Ok(db.queue.holds_write_lock()),
    };
    let version = conn
        .prepare_cached("PRAGMA data_version")?
        .query_row([], |r| r.get::<_, i64>(0))?;
    cache.observe_data_version(version);
    Ok(true)
}
