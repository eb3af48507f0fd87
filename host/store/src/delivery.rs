//! A key's default media delivery: `direct`, `tunnel`, or unset
//! (the service default, direct). One column of `api_keys`, read with the
//! key record ([`super::KeyRecord::delivery`]); setting it drops cached keys.

use rusqlite::{OptionalExtension, params};

use super::{Backend, Store, StoreError, StoreResult, dispatch};

impl Store {
    /// Set (`Some("direct" | "tunnel")`) or clear (`None`) key `id`'s default
    /// delivery, and read it back (`set = false` only reads).
    pub fn key_delivery(
        &self,
        id: &str,
        set: Option<Option<&str>>,
        now: i64,
    ) -> StoreResult<Option<String>> {
        if set.is_some_and(|d| d.is_some_and(|d| !matches!(d, "direct" | "tunnel"))) {
            return Err(StoreError::Invalid(
                "delivery must be direct or tunnel".into(),
            ));
        }
        let read = dispatch!(
            self,
            |c| {
                if let Some(delivery) = set {
                    c.prepare_cached(
                        "UPDATE api_keys SET delivery = ?2, updated_at = ?3 WHERE id = ?1",
                    )?
                    .execute(params![id, delivery, now])?;
                }
                c.prepare_cached("SELECT delivery FROM api_keys WHERE id = ?1")?
                    .query_row([id], |r| r.get::<_, Option<String>>(0))
                    .optional()?
                    .ok_or_else(|| StoreError::NotFound("key", id.into()))
            },
            |p| p.key_delivery(id, set, now)
        );
        if set.is_some() {
            self.key_changed();
        }
        read
    }
}
