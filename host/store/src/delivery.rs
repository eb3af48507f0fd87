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
        checked_delivery(set)?;
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

/// A delivery to set must be `direct` or `tunnel`.
fn checked_delivery(set: Option<Option<&str>>) -> StoreResult<()> {
    if set.is_some_and(|d| d.is_some_and(|d| !matches!(d, "direct" | "tunnel"))) {
        return Err(StoreError::Invalid(
            "delivery must be direct or tunnel".into(),
        ));
    }
    Ok(())
}

impl Store {
    /// [`Store::key_delivery`], awaited (see `awaited`).
    pub async fn key_delivery_async(
        &self,
        id: &str,
        set: Option<Option<&str>>,
        now: i64,
    ) -> StoreResult<Option<String>> {
        checked_delivery(set)?;
        let owned = set.map(|d| d.map(str::to_string));
        let (i1, s1) = (id.to_string(), owned.clone());
        let (i2, s2) = (id.to_string(), owned);
        let read = self
            .write_or_off_thread(
                move |c| {
                    let set = s1.as_ref().map(|d| d.as_deref());
                    sqlite::delivery::key_delivery(c, &i1, set, now)
                },
                move |s| s.key_delivery(&i2, s2.as_ref().map(|d| d.as_deref()), now),
            )
            .await;
        if set.is_some() {
            self.key_changed();
        }
        read
    }
}
