//! A key's default delivery on SQLite (`delivery`).

use rusqlite::{Connection, OptionalExtension, params};

use crate::{StoreError, StoreResult};

pub(crate) fn key_delivery(
    c: &Connection,
    id: &str,
    set: Option<Option<&str>>,
    now: i64,
) -> StoreResult<Option<String>> {
    if let Some(delivery) = set {
        c.prepare_cached("UPDATE api_keys SET delivery = ?2, updated_at = ?3 WHERE id = ?1")?
            .execute(params![id, delivery, now])?;
    }
    c.prepare_cached("SELECT delivery FROM api_keys WHERE id = ?1")?
        .query_row([id], |r| r.get::<_, Option<String>>(0))
        .optional()?
        .ok_or_else(|| StoreError::NotFound("key", id.into()))
}
