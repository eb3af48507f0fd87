//! Webhook secrets and deliveries on SQLite (`webhooks`).

use rusqlite::{Connection, OptionalExtension, params};

use crate::webhooks::{
    AttemptColumns, AttemptRecord, ClaimedDelivery, DELIVERY_COLUMNS, DeliveryRecord,
};
use crate::{StoreError, StoreResult};

pub(crate) fn set_webhook_secret(
    c: &Connection,
    id: &str,
    secret: &str,
    now: i64,
) -> StoreResult<usize> {
    Ok(c.execute(
        "UPDATE api_keys SET webhook_secret = ?2, updated_at = ?3 WHERE id = ?1",
        params![id, secret, now],
    )?)
}

pub(crate) fn webhook_secret(c: &mut Connection, id: &str) -> StoreResult<Option<Option<String>>> {
    Ok(
        c.prepare_cached("SELECT webhook_secret FROM api_keys WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?,
    )
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn enqueue_webhook(
    c: &Connection,
    id: &str,
    key_id: &str,
    url: &str,
    event_type: &str,
    data: &str,
    now_ms: i64,
    max_pending: u32,
    full: impl Fn() -> StoreError,
) -> StoreResult<()> {
    let account: String = c
        .query_row(
            "SELECT account_id FROM api_keys WHERE id = ?1",
            [key_id],
            |r| r.get(0),
        )
        .optional()?
        .ok_or_else(|| StoreError::NotFound("key", key_id.into()))?;
    let pending: i64 = c.query_row(
        "SELECT COUNT(*) FROM webhook_deliveries WHERE key_id = ?1 AND state = 'pending'",
        [key_id],
        |r| r.get(0),
    )?;
    if pending >= i64::from(max_pending) {
        return Err(full());
    }
    c.execute(
        "INSERT INTO webhook_deliveries (id, key_id, account_id, url, event_type, data, state, created_ms, next_attempt_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?7)
         ON CONFLICT (id) DO NOTHING",
        params![id, key_id, account, url, event_type, data, now_ms],
    )?;
    Ok(())
}

pub(crate) fn claim_webhooks(
    c: &Connection,
    now_ms: i64,
    limit: i64,
    lease: &str,
    until: i64,
) -> StoreResult<Vec<ClaimedDelivery>> {
    let claimed = {
        let mut stmt = c.prepare_cached(
            "UPDATE webhook_deliveries SET lease = ?3, lease_until_ms = ?2
             WHERE id IN (SELECT id FROM webhook_deliveries
                WHERE state = 'pending' AND next_attempt_ms <= ?1
                  AND (lease_until_ms IS NULL OR lease_until_ms <= ?1)
                ORDER BY next_attempt_ms LIMIT ?4)
             RETURNING id, key_id, url, event_type, data, attempts, created_ms",
        )?;
        let rows = stmt.query_map(params![now_ms, until, lease, limit], |r| {
            Ok(ClaimedDelivery {
                id: r.get(0)?,
                key_id: r.get(1)?,
                url: r.get(2)?,
                event_type: r.get(3)?,
                data: r.get(4)?,
                attempts: r.get(5)?,
                created_ms: r.get(6)?,
                lease: lease.to_string(),
            })
        })?;
        rows.collect::<Result<Vec<_>, _>>()?
    };
    Ok(claimed)
}

pub(crate) fn finish_webhook_attempt(
    c: &Connection,
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
    let updated = c.execute(
        "UPDATE webhook_deliveries SET state = ?3, attempts = ?4, next_attempt_ms = ?5,
            finished_ms = ?6, last_error = ?7, lease = NULL, lease_until_ms = NULL
         WHERE id = ?1 AND lease = ?2",
        params![id, lease, state, number, next, finished, error],
    )?;
    if updated == 0 {
        return Ok(false);
    }
    c.execute(
        "INSERT INTO webhook_attempts (delivery_id, attempt, at_ms, status, error, duration_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            id,
            number,
            attempt.at_ms,
            status,
            error,
            attempt.duration_ms
        ],
    )?;
    Ok(true)
}

pub(crate) fn prune_webhooks(c: &Connection, finished_before_ms: i64) -> StoreResult<usize> {
    c.execute(
        "DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries
            WHERE state <> 'pending' AND finished_ms < ?1)",
        [finished_before_ms],
    )?;
    let removed = c.execute(
        "DELETE FROM webhook_deliveries WHERE state <> 'pending' AND finished_ms < ?1",
        [finished_before_ms],
    )?;
    Ok(removed)
}

pub(crate) fn webhook_deliveries(
    c: &mut Connection,
    limit: i64,
    (key, account): (Option<&str>, Option<&str>),
    sql_where: &str,
) -> StoreResult<Vec<DeliveryRecord>> {
    let mut deliveries = {
        let mut stmt = c.prepare_cached(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE {sql_where}
             ORDER BY created_ms DESC, id LIMIT ?3"
        ))?;
        let rows = stmt.query_map(params![key, account, limit], |r| {
            Ok(DeliveryRecord {
                id: r.get(0)?,
                key_id: r.get(1)?,
                account_id: r.get(2)?,
                url: r.get(3)?,
                event_type: r.get(4)?,
                state: r.get(5)?,
                created_ms: r.get(6)?,
                next_attempt_ms: r.get(7)?,
                finished_ms: r.get(8)?,
                last_error: r.get(9)?,
                attempts: Vec::new(),
            })
        })?;
        rows.collect::<Result<Vec<_>, _>>()?
    };
    let mut stmt = c.prepare_cached(
        "SELECT attempt, at_ms, status, error, duration_ms FROM webhook_attempts
         WHERE delivery_id = ?1 ORDER BY attempt",
    )?;
    for d in &mut deliveries {
        d.attempts = stmt
            .query_map([&d.id], |r| {
                Ok(AttemptRecord {
                    attempt: r.get(0)?,
                    at_ms: r.get(1)?,
                    status: r.get(2)?,
                    error: r.get(3)?,
                    duration_ms: r.get(4)?,
                })
            })?
            .collect::<Result<_, _>>()?;
    }
    Ok(deliveries)
}
