//! Webhooks in the database: each key's signing secret and the delivery
//! queue (`webhook_deliveries`, one row per event) with every attempt
//! (`webhook_attempts`). A host claims due deliveries for a lease
//! ([`Store::claim_webhooks`]; on PostgreSQL with `FOR UPDATE SKIP LOCKED`,
//! so two hosts never claim the same one), sends them and records the
//! attempt under that lease ([`Store::finish_webhook_attempt`]); a host
//! that dies mid-send leaves a lease that expires, and another host (or
//! this one, restarted) claims the delivery again. Times are Unix ms.

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use super::{Backend, Store, StoreError, StoreResult, dispatch};

/// One delivery claimed for sending.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimedDelivery {
    pub id: String,
    pub key_id: String,
    pub url: String,
    pub event_type: String,
    pub data: String,
    /// Attempts made before this one.
    pub attempts: u32,
    pub created_ms: i64,
    /// The claim's token: the attempt is recorded only under it.
    pub lease: String,
}

/// One attempt as recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttemptRecord {
    /// 1 for the first attempt.
    pub attempt: u32,
    pub at_ms: i64,
    /// The receiver's HTTP status, when it answered.
    pub status: Option<u16>,
    /// Why the attempt failed without a 2xx (refused destination, timeout,
    /// connection error, non-2xx status).
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// What an attempt leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptOutcome {
    Delivered,
    /// Try again at this time (Unix ms).
    RetryAt(i64),
    GiveUp,
}

/// A delivery with its attempts, as the admin API and the console list it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryRecord {
    pub id: String,
    pub key_id: String,
    pub account_id: String,
    pub url: String,
    pub event_type: String,
    /// `pending`, `delivered` or `failed`.
    pub state: String,
    pub created_ms: i64,
    pub next_attempt_ms: Option<i64>,
    pub finished_ms: Option<i64>,
    pub last_error: Option<String>,
    pub attempts: Vec<AttemptRecord>,
}

/// Which deliveries to list.
#[derive(Clone, Debug, Default)]
pub struct DeliveryFilter {
    pub key: Option<String>,
    pub account: Option<String>,
    pub limit: usize,
}

/// The longest error text kept per attempt.
const MAX_ERROR_CHARS: usize = 300;

/// The most deliveries one listing returns.
pub const MAX_LISTED: usize = 200;

fn clip(error: Option<&str>) -> Option<String> {
    error.map(|e| e.chars().take(MAX_ERROR_CHARS).collect())
}

fn outcome_columns(
    outcome: AttemptOutcome,
    now_ms: i64,
) -> (&'static str, Option<i64>, Option<i64>) {
    match outcome {
        AttemptOutcome::Delivered => ("delivered", None, Some(now_ms)),
        AttemptOutcome::RetryAt(at) => ("pending", Some(at), None),
        AttemptOutcome::GiveUp => ("failed", None, Some(now_ms)),
    }
}

const DELIVERY_COLUMNS: &str = "id, key_id, account_id, url, event_type, state, created_ms, next_attempt_ms, finished_ms, last_error";

impl Store {
    /// Set key `id`'s webhook secret (`whsec_…`), replacing any before.
    pub fn set_webhook_secret(&self, id: &str, secret: &str, now: i64) -> StoreResult<()> {
        let updated = dispatch!(
            self,
            |c| Ok(c.execute(
                "UPDATE api_keys SET webhook_secret = ?2, updated_at = ?3 WHERE id = ?1",
                params![id, secret, now],
            )?),
            |p| Ok(p.client()?.execute(
                "UPDATE api_keys SET webhook_secret = $2, updated_at = $3 WHERE id = $1",
                &[&id, &secret, &now],
            )? as usize)
        )?;
        if updated == 0 {
            return Err(StoreError::NotFound("key", id.into()));
        }
        Ok(())
    }

    /// Key `id`'s webhook secret (`None`: it has none).
    pub fn webhook_secret(&self, id: &str) -> StoreResult<Option<String>> {
        let found: Option<Option<String>> = dispatch!(
            self,
            |c| Ok(c
                .prepare_cached("SELECT webhook_secret FROM api_keys WHERE id = ?1")?
                .query_row([id], |r| r.get(0))
                .optional()?),
            |p| Ok(p
                .client()?
                .query_opt("SELECT webhook_secret FROM api_keys WHERE id = $1", &[&id])?
                .map(|r| r.get(0)))
        )?;
        found.ok_or_else(|| StoreError::NotFound("key", id.into()))
    }

    /// Queue one event for key `key_id` to `url`, due at once; refused
    /// while the key has `max_pending` deliveries waiting. An event already
    /// queued under `id` is left as it is.
    #[allow(clippy::too_many_arguments)]
    pub fn enqueue_webhook(
        &self,
        id: &str,
        key_id: &str,
        url: &str,
        event_type: &str,
        data: &str,
        now_ms: i64,
        max_pending: u32,
    ) -> StoreResult<()> {
        let full = || {
            StoreError::Invalid(format!(
                "key {key_id} already has {max_pending} webhook deliveries waiting"
            ))
        };
        dispatch!(
            self,
            |c| {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let account: String = tx
                    .query_row(
                        "SELECT account_id FROM api_keys WHERE id = ?1",
                        [key_id],
                        |r| r.get(0),
                    )
                    .optional()?
                    .ok_or_else(|| StoreError::NotFound("key", key_id.into()))?;
                let pending: i64 = tx.query_row(
                    "SELECT COUNT(*) FROM webhook_deliveries WHERE key_id = ?1 AND state = 'pending'",
                    [key_id],
                    |r| r.get(0),
                )?;
                if pending >= i64::from(max_pending) {
                    return Err(full());
                }
                tx.execute(
                    "INSERT INTO webhook_deliveries (id, key_id, account_id, url, event_type, data, state, created_ms, next_attempt_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?7)
                     ON CONFLICT (id) DO NOTHING",
                    params![id, key_id, account, url, event_type, data, now_ms],
                )?;
                tx.commit()?;
                Ok(())
            },
            |p| {
                let mut client = p.client()?;
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
        )
    }

    /// Claim up to `limit` deliveries due at `now_ms` and not claimed by a
    /// live lease, for `lease_ms`, under the token `lease`.
    pub fn claim_webhooks(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: u32,
        lease: &str,
    ) -> StoreResult<Vec<ClaimedDelivery>> {
        let until = now_ms.saturating_add(lease_ms);
        let limit = i64::from(limit);
        dispatch!(
            self,
            |c| {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let claimed = {
                    let mut stmt = tx.prepare_cached(
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
                tx.commit()?;
                Ok(claimed)
            },
            |p| {
                let rows = p.client()?.query(
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
        )
    }

    /// Record an attempt of a claimed delivery and what it leads to; only
    /// while the claim is still `lease`'s (`false`: the lease was lost and
    /// nothing was recorded).
    pub fn finish_webhook_attempt(
        &self,
        delivery: &ClaimedDelivery,
        attempt: &AttemptRecord,
        outcome: AttemptOutcome,
        now_ms: i64,
    ) -> StoreResult<bool> {
        let (state, next, finished) = outcome_columns(outcome, now_ms);
        let error = clip(attempt.error.as_deref());
        let status = attempt.status.map(i32::from);
        let number = attempt.attempt as i32;
        let (id, lease) = (delivery.id.as_str(), delivery.lease.as_str());
        dispatch!(
            self,
            |c| {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let updated = tx.execute(
                    "UPDATE webhook_deliveries SET state = ?3, attempts = ?4, next_attempt_ms = ?5,
                        finished_ms = ?6, last_error = ?7, lease = NULL, lease_until_ms = NULL
                     WHERE id = ?1 AND lease = ?2",
                    params![id, lease, state, number, next, finished, error],
                )?;
                if updated == 0 {
                    return Ok(false);
                }
                tx.execute(
                    "INSERT INTO webhook_attempts (delivery_id, attempt, at_ms, status, error, duration_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![id, number, attempt.at_ms, status, error, attempt.duration_ms],
                )?;
                tx.commit()?;
                Ok(true)
            },
            |p| {
                let mut client = p.client()?;
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
                    &[&id, &number, &attempt.at_ms, &status, &error, &attempt.duration_ms],
                )?;
                tx.commit()?;
                Ok(true)
            }
        )
    }

    /// Remove deliveries that ended (delivered or given up) before
    /// `finished_before_ms`, with their attempts; returns how many.
    pub fn prune_webhooks(&self, finished_before_ms: i64) -> StoreResult<usize> {
        dispatch!(
            self,
            |c| {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                tx.execute(
                    "DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries
                        WHERE state <> 'pending' AND finished_ms < ?1)",
                    [finished_before_ms],
                )?;
                let removed = tx.execute(
                    "DELETE FROM webhook_deliveries WHERE state <> 'pending' AND finished_ms < ?1",
                    [finished_before_ms],
                )?;
                tx.commit()?;
                Ok(removed)
            },
            |p| {
                let mut client = p.client()?;
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
        )
    }

    /// Deliveries, newest first, with their attempts.
    pub fn webhook_deliveries(&self, filter: &DeliveryFilter) -> StoreResult<Vec<DeliveryRecord>> {
        let limit = filter.limit.clamp(1, MAX_LISTED) as i64;
        let (key, account) = (filter.key.as_deref(), filter.account.as_deref());
        let sql_where = "(?1 IS NULL OR key_id = ?1) AND (?2 IS NULL OR account_id = ?2)";
        dispatch!(
            self,
            |c| {
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
            },
            |p| {
                let mut client = p.client()?;
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
        )
    }
}
