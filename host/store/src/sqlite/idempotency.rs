//! Idempotency keys and the charge at most once per request id on SQLite
//! (`idempotency`). Each write is a [`Work`] the writer thread runs in its
//! group (inside the group's transaction, each in a savepoint), its
//! arguments owned; the blocking methods and their async twins
//! (`async_writes`) queue the same work.

use rusqlite::{Connection, OptionalExtension, params};

use super::writer::Work;
use crate::idempotency::{Claim, IDEMPOTENCY_TTL_S, StoredResponse, claim_of, same_charge};
use crate::{Bill, Charge, StoreError, StoreResult};

/// The balance read under the write lock for a moment (the pre-check: a
/// database another process keeps locked fails here). Writes nothing.
pub(crate) fn balance_locked(c: &mut Connection, account: &str) -> StoreResult<i64> {
    let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let balance = balance(&tx, account)?;
    tx.commit()?;
    Ok(balance)
}

/// [`balance_locked`] if the write lock is free now: `None` if another
/// process holds it (the caller then waits for it the blocking way).
pub(crate) fn balance_locked_now(c: &mut Connection, account: &str) -> Option<StoreResult<i64>> {
    let unset = c.busy_timeout(std::time::Duration::ZERO);
    let out = match unset {
        Err(e) => Some(Err(e.into())),
        Ok(()) => match balance_locked(c, account) {
            Err(e) if e.is_busy() => None,
            out => Some(out),
        },
    };
    match c.busy_timeout(super::BUSY_TIMEOUT) {
        Ok(()) => out,
        Err(e) => Some(Err(e.into())),
    }
}

pub(crate) fn charge_work(bill: Bill, now: i64) -> Work<Charge> {
    Box::new(move |c| charge(c, &bill, now))
}

pub(crate) fn claim_work(
    key_id: &str,
    idempotency_key: &str,
    fingerprint: &str,
    fresh_request_id: &str,
    now: i64,
) -> Work<Claim> {
    let (key_id, idempotency_key) = (key_id.to_string(), idempotency_key.to_string());
    let (fingerprint, fresh) = (fingerprint.to_string(), fresh_request_id.to_string());
    Box::new(move |c| claim(c, &key_id, &idempotency_key, &fingerprint, &fresh, now))
}

pub(crate) fn complete_work(
    key_id: &str,
    idempotency_key: &str,
    response: &StoredResponse,
) -> Work<()> {
    let (key_id, idempotency_key) = (key_id.to_string(), idempotency_key.to_string());
    let response = response.clone();
    Box::new(move |c| {
        c.prepare_cached(
            "UPDATE idempotency_keys SET status = ?3, credits = ?4, response = ?5
             WHERE key_id = ?1 AND idempotency_key = ?2",
        )?
        .execute(params![
            key_id,
            idempotency_key,
            response.status,
            response.credits,
            response.body
        ])?;
        Ok(())
    })
}

pub(crate) fn complete_by_reference_work(
    key_id: &str,
    idempotency_key: &str,
    status: u16,
    credits: i64,
) -> Work<()> {
    let (key_id, idempotency_key) = (key_id.to_string(), idempotency_key.to_string());
    Box::new(move |c| {
        c.prepare_cached(
            "UPDATE idempotency_keys SET status = ?3, credits = ?4, response = NULL
             WHERE key_id = ?1 AND idempotency_key = ?2",
        )?
        .execute(params![key_id, idempotency_key, status, credits])?;
        Ok(())
    })
}

pub(crate) fn release_work(key_id: &str, idempotency_key: &str) -> Work<()> {
    let (key_id, idempotency_key) = (key_id.to_string(), idempotency_key.to_string());
    Box::new(move |c| {
        c.prepare_cached(
            "DELETE FROM idempotency_keys
             WHERE key_id = ?1 AND idempotency_key = ?2 AND status IS NULL
               AND NOT EXISTS (SELECT 1 FROM ledger WHERE ledger.request_id = idempotency_keys.request_id)",
        )?
        .execute(params![key_id, idempotency_key])?;
        Ok(())
    })
}

pub(crate) fn client_request_id_work(request_id: &str, client_request_id: &str) -> Work<()> {
    let (request_id, client) = (request_id.to_string(), client_request_id.to_string());
    Box::new(move |c| {
        c.prepare_cached("UPDATE ledger SET client_request_id = ?2 WHERE request_id = ?1")?
            .execute(params![request_id, client])?;
        Ok(())
    })
}

/// The balance of `account` (`NotFound` when it has none).
pub(crate) fn balance(c: &rusqlite::Connection, account: &str) -> StoreResult<i64> {
    c.prepare_cached("SELECT balance FROM accounts WHERE id = ?1")?
        .query_row([account], |r| r.get(0))
        .optional()?
        .ok_or_else(|| StoreError::NotFound("account", account.into()))
}

/// Claim a key (see [`Store::claim_idempotency_key`]) inside the caller's
/// transaction.
fn claim(
    c: &rusqlite::Connection,
    key_id: &str,
    idempotency_key: &str,
    fingerprint: &str,
    fresh_request_id: &str,
    now: i64,
) -> StoreResult<Claim> {
    c.prepare_cached("DELETE FROM idempotency_keys WHERE created_at <= ?1")?
        .execute([now - IDEMPOTENCY_TTL_S])?;
    c.prepare_cached(
        "INSERT INTO idempotency_keys (key_id, idempotency_key, fingerprint, request_id, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (key_id, idempotency_key) DO NOTHING",
    )?
    .execute(params![key_id, idempotency_key, fingerprint, fresh_request_id, now])?;
    let (stored_fingerprint, request_id, status, credits, body) = c
        .prepare_cached(
            "SELECT fingerprint, request_id, status, credits, response FROM idempotency_keys
             WHERE key_id = ?1 AND idempotency_key = ?2",
        )?
        .query_row(params![key_id, idempotency_key], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<u16>>(2)?,
                r.get::<_, Option<i64>>(3)?,
                r.get::<_, Option<String>>(4)?,
            ))
        })?;
    Ok(claim_of(
        fingerprint,
        stored_fingerprint,
        request_id,
        status,
        credits,
        body,
    ))
}

/// One charge (see [`Store::charge_once`]) inside the caller's transaction
/// (the writer thread's savepoint): nothing it wrote stays when it fails.
pub(crate) fn charge(c: &rusqlite::Connection, bill: &Bill, now: i64) -> StoreResult<Charge> {
    let Bill {
        account,
        key_id,
        platform,
        price: credits,
        request_id,
    } = bill;
    let credits = *credits;
    let already: Option<(String, String, String)> = c
        .prepare_cached("SELECT account_id, key_id, platform FROM ledger WHERE request_id = ?1")?
        .query_row([request_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    if let Some(row) = already {
        same_charge(&row, account, key_id, platform, request_id)?;
        let balance_after = c
            .prepare_cached("SELECT balance FROM accounts WHERE id = ?1")?
            .query_row([account], |r| r.get(0))?;
        return Ok(Charge::Charged { balance_after });
    }
    let updated = c
        .prepare_cached(
            "UPDATE accounts SET balance = balance - ?2 WHERE id = ?1 AND balance >= ?2",
        )?
        .execute(params![account, credits])?;
    if updated != 1 {
        let balance = c
            .prepare_cached("SELECT balance FROM accounts WHERE id = ?1")?
            .query_row([account], |r| r.get(0))
            .optional()?
            .unwrap_or(0);
        return Ok(Charge::InsufficientCredits { balance });
    }
    c.prepare_cached(
        "INSERT INTO ledger (account_id, key_id, platform, credits, request_id, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![account, key_id, platform, credits, request_id, now])?;
    crate::sqlite::usage_daily::count_charge(c, account, key_id, platform, credits, now)?;
    let balance_after = c
        .prepare_cached("SELECT balance FROM accounts WHERE id = ?1")?
        .query_row([account], |r| r.get(0))?;
    Ok(Charge::Charged { balance_after })
}
