//! A key's default media delivery: `direct`, `tunnel`, or unset
//! (the service default, direct). One column of `api_keys`, read with the
//! key record ([`super::KeyRecord::delivery`]); setting it drops cached keys.

use crate::{Backend, Store, StoreError, StoreResult, dispatch, sqlite};

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
            |c| sqlite::delivery::key_delivery(c, id, set, now),
            |p| p.key_delivery(id, set, now)
        );
        if set.is_some() {
            self.key_changed();
        }
        read
    }
}
