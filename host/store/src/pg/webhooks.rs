//! Webhook secrets and deliveries on PostgreSQL (`webhooks`).

use super::Pg;
use crate::webhooks::{
    AttemptColumns, AttemptRecord, ClaimedDelivery, DELIVERY_COLUMNS, DeliveryRecord,
};
use crate::{StoreError, StoreResult};

impl Pg {
    pub(crate) fn set_webhook_secret(
        &self,
        id: &str,
        secret: &str,
        now: i64,
    ) -> StoreResult<usize> {
        Ok(self.client()?.execute(
            "UPDATE api_keys SET webhook_secret = $2, updated_at = $3 WHERE id = $1",
            &[&id, &secret, &now],
        )? as usize)
    }

    pub(crate) fn webhook_secret(&self, id: &str) -> StoreResult<Option<Option<String>>> {
        Ok(self
            .client()?
            .query_opt("SELECT webhook_secret FROM api_keys WHERE id = $1", &[&id])?
            .map(|r| r.get(0)))
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn enqueue_webhook(
        &self,
        id: &str,
        key_id: &str,
        url: &str,
        event_type: &str,
        data: &str,
        now_ms: i64,
        max_pending: u32,
        full: impl Fn() -> StoreError,
    ) -> StoreResult<()> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        // The key's row lock orders concurrent enqueues of one key,
        // so the count and the insert hold together.
        let account: String = tx
            .query_opt(
                "SELECT account_id FROM api_keys WHERE id = $1 FOR UPDATE",
                &[&key_id],
            )?
            .map(|r| r.get(0))
            .ok_or_else(|| StoreError::NotFound("key", key_id.into()))?;
        let pending: i64 = tx
            .query_one(
                "SELECT COUNT(*) FROM webhook_deliveries WHERE key_id = $1 AND state = 'pending'",
                &[&key_id],
            )?
            .get(0);
        if pending >= i64::from(max_pending) {
            return Err(full());
        }
        tx.execute(
            "INSERT INTO webhook_deliveries (id, key_id, account_id, url, event_type, data, state, created_ms, next_attempt_ms)
             VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $7)
             ON CONFLICT (id) DO NOTHING",
            &[&id, &key_id, &account, &url, &event_type, &data, &now_ms],
        )?;
        tx.commit()?;
        Ok(())
    }

    pub(crate) fn claim_webhooks(
        &self,
        now_ms: i64,
        limit: i64,
        lease: &str,
        until: i64,
    ) -> StoreResult<Vec<ClaimedDelivery>> {
        let rows = self.client()?.query(
            "UPDATE webhook_deliveries SET lease = $3, lease_until_ms = $2
             WHERE id IN (SELECT id FROM webhook_deliveries
                WHERE state = 'pending' AND next_attempt_ms <= $1
                  AND (lease_until_ms IS NULL OR lease_until_ms <= $1)
                ORDER BY next_attempt_ms LIMIT $4
                FOR UPDATE SKIP LOCKED)
             RETURNING id, key_id, url, event_type, data, attempts, created_ms",
            &[&now_ms, &until, &lease, &limit],
        )?;
        Ok(rows
            .iter()
            .map(|r| ClaimedDelivery {
                id: r.get(0),
                key_id: r.get(1),
                url: r.get(2),
                event_type: r.get(3),
                data: r.get(4),
                attempts: u32::try_from(r.get::<_, i32>(5)).unwrap_or(0),
                created_ms: r.get(6),
                lease: lease.to_string(),
            })
            .collect())
    }

    pub(crate) fn finish_webhook_attempt(
        &self,
        attempt: &AttemptRecord,
        columns: AttemptColumns<'_>,
    ) -> StoreResult<bool> {
        let AttemptColumns {
            id,
            lease,
            state,
            next,
            finished,
            error,
            status,
            number,
        } = columns;
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        let updated = tx.execute(
            "UPDATE webhook_deliveries SET state = $3, attempts = $4, next_attempt_ms = $5,
                finished_ms = $6, last_error = $7, lease = NULL, lease_until_ms = NULL
             WHERE id = $1 AND lease = $2",
            &[&id, &lease, &state, &number, &next, &finished, &error],
        )?;
        if updated == 0 {
            return Ok(false);
        }
        tx.execute(
            "INSERT INTO webhook_attempts (delivery_id, attempt, at_ms, status, error, duration_ms)
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &id,
                &number,
                &attempt.at_ms,
                &status,
                &error,
                &attempt.duration_ms,
            ],
        )?;
        tx.commit()?;
        Ok(true)
    }

    pub(crate) fn prune_webhooks(&self, finished_before_ms: i64) -> StoreResult<usize> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        tx.execute(
            "DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries
                WHERE state <> 'pending' AND finished_ms < $1)",
            &[&finished_before_ms],
        )?;
        let removed = tx.execute(
            "DELETE FROM webhook_deliveries WHERE state <> 'pending' AND finished_ms < $1",
            &[&finished_before_ms],
        )?;
        tx.commit()?;
        Ok(removed as usize)
    }

    pub(crate) fn webhook_deliveries(
        &self,
        limit: i64,
        (key, account): (Option<&str>, Option<&str>),
        sql_where: &str,
    ) -> StoreResult<Vec<DeliveryRecord>> {
        let mut client = self.client()?;
        let sql_where = sql_where
            .replace("?1", "$1::text")
            .replace("?2", "$2::text");
        let rows = client.query(
            &format!(
                "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE {sql_where}
                 ORDER BY created_ms DESC, id LIMIT $3"
            ),
            &[&key, &account, &limit],
        )?;
        let mut deliveries = Vec::with_capacity(rows.len());
        for r in rows {
            let id: String = r.get(0);
            let attempts = client
                .query(
                    "SELECT attempt, at_ms, status, error, duration_ms FROM webhook_attempts
                     WHERE delivery_id = $1 ORDER BY attempt",
                    &[&id],
                )?
                .iter()
                .map(|a| AttemptRecord {
                    attempt: u32::try_from(a.get::<_, i32>(0)).unwrap_or(0),
                    at_ms: a.get(1),
                    status: a
                        .get::<_, Option<i32>>(2)
                        .and_then(|s| u16::try_from(s).ok()),
                    error: a.get(3),
                    duration_ms: a.get(4),
                })
                .collect();
            deliveries.push(DeliveryRecord {
                id,
                key_id: r.get(1),
                account_id: r.get(2),
                url: r.get(3),
                event_type: r.get(4),
                state: r.get(5),
                created_ms: r.get(6),
                next_attempt_ms: r.get(7),
                finished_ms: r.get(8),
                last_error: r.get(9),
                attempts,
            });
        }
        Ok(deliveries)
    }
}
