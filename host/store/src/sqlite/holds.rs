//! Credit holds on SQLite (`holds`): every change runs in the writer
//! thread's group, under its savepoint.

use rusqlite::{Connection, OptionalExtension, params};

use crate::holds::{HoldRequest, Reserved};
use crate::{Bill, Charge, StoreResult};

/// The holds, in order, inside the writer thread's savepoint.
pub(crate) fn reserve(
    c: &rusqlite::Connection,
    account: &str,
    holds: &[HoldRequest],
    expires_at: i64,
    now: i64,
) -> StoreResult<Vec<Reserved>> {
    let mut out = Vec::with_capacity(holds.len());
    for h in holds {
        let updated = c
            .prepare_cached(
                "UPDATE accounts SET balance = balance - ?2 WHERE id = ?1 AND balance >= ?2",
            )?
            .execute(params![account, h.credits])?;
        if updated == 1 {
            c.prepare_cached(
                "INSERT INTO credit_holds (id, account_id, credits, expires_at, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![h.id, account, h.credits, expires_at, now])?;
            out.push(Reserved::Held);
        } else {
            let balance = c
                .prepare_cached("SELECT balance FROM accounts WHERE id = ?1")?
                .query_row([account], |r| r.get(0))
                .optional()?
                .unwrap_or(0);
            out.push(Reserved::Short { balance });
        }
    }
    Ok(out)
}

/// Delete hold `id` and give its credits back; whether it was there.
pub(crate) fn release(c: &rusqlite::Connection, id: &str) -> StoreResult<bool> {
    let held: Option<(String, i64)> = c
        .prepare_cached("DELETE FROM credit_holds WHERE id = ?1 RETURNING account_id, credits")?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((account, credits)) = held else {
        return Ok(false);
    };
    c.prepare_cached("UPDATE accounts SET balance = balance + ?2 WHERE id = ?1")?
        .execute(params![account, credits])?;
    Ok(true)
}

/// Hold `hold` becomes the charge of `bill`: its credits go back, then the
/// ordinary charge (at most once per request id) takes the price.
pub(crate) fn charge_held(
    c: &Connection,
    hold: &str,
    bill: &Bill,
    now: i64,
) -> StoreResult<Charge> {
    release(c, hold)?;
    super::idempotency::charge(c, bill, now)
}

/// Every hold that expired before `now` given back; how many.
pub(crate) fn release_expired(c: &Connection, now: i64) -> StoreResult<u64> {
    let ids: Vec<String> = c
        .prepare_cached("SELECT id FROM credit_holds WHERE expires_at < ?1")?
        .query_map([now], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut released = 0;
    for id in ids {
        released += u64::from(release(c, &id)?);
    }
    Ok(released)
}

/// Credits held for `account` now (or for every account).
pub(crate) fn held_credits(c: &Connection, account: Option<&str>) -> StoreResult<i64> {
    Ok(c.query_row(
        "SELECT COALESCE(SUM(credits), 0) FROM credit_holds
         WHERE ?1 IS NULL OR account_id = ?1",
        [account],
        |r| r.get(0),
    )?)
}
