//! A key's default delivery on PostgreSQL (`delivery`).

use postgres::types::Type;

use super::Pg;
use super::keys::notify_key_change;
use crate::{StoreError, StoreResult};

impl Pg {
    pub fn key_delivery(
        &self,
        id: &str,
        set: Option<Option<&str>>,
        now: i64,
    ) -> StoreResult<Option<String>> {
        let mut client = self.client()?;
        if let Some(delivery) = set {
            // Keys are cached with their delivery: every host forgets them.
            let mut tx = client.transaction()?;
            tx.execute(
                "UPDATE api_keys SET delivery = $2, updated_at = $3 WHERE id = $1",
                &[&id, &delivery, &now],
            )?;
            notify_key_change(&mut tx)?;
            tx.commit()?;
        }
        client
            .query_typed_opt(
                "SELECT delivery FROM api_keys WHERE id = $1",
                &[(&id, Type::TEXT)],
            )?
            .map(|r| r.get::<_, Option<String>>(0))
            .ok_or_else(|| StoreError::NotFound("key", id.into()))
    }
}
