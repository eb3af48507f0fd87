//! Accounts on SQLite: the SQLite body of each `Store` account method
//! (`accounts`).

use rusqlite::{Connection, OptionalExtension, params};

use crate::accounts::{AccountSummary, CreditChange, GrantRecord, MAX_CREDITS};
use crate::{StoreError, StoreResult};

pub(crate) fn create_account(c: &Connection, id: &str, now: i64) -> StoreResult<bool> {
    Ok(c.execute(
        "INSERT OR IGNORE INTO accounts (id, balance, created_at) VALUES (?1, 0, ?2)",
        params![id, now],
    )? == 1)
}

pub(crate) fn set_credits_noted(
    c: &Connection,
    account: &str,
    amount: i64,
    reason: Option<&str>,
    now: i64,
) -> StoreResult<CreditChange> {
    c.execute(
        "INSERT OR IGNORE INTO accounts (id, balance, created_at) VALUES (?1, 0, ?2)",
        params![account, now],
    )?;
    let previous: i64 = c.query_row(
        "SELECT balance FROM accounts WHERE id = ?1",
        [account],
        |r| r.get(0),
    )?;
    let change = amount - previous;
    if change != 0 {
        c.execute(
            "UPDATE accounts SET balance = ?2 WHERE id = ?1",
            params![account, amount],
        )?;
        c.execute(
        "INSERT INTO credit_grants (account_id, credits, created_at, kind, reason) VALUES (?1, ?2, ?3, 'set', ?4)",
        params![account, change, now, reason],
    )?;
    }
    Ok(CreditChange {
        account: account.to_string(),
        previous,
        balance: amount,
        change,
    })
}

pub(crate) fn grants(
    c: &mut Connection,
    account: &str,
    limit: usize,
) -> StoreResult<Vec<GrantRecord>> {
    let mut stmt = c.prepare(
        "SELECT id, kind, credits, reason, created_at FROM credit_grants
         WHERE account_id = ?1 ORDER BY id DESC LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![account, limit as i64], |r| {
        Ok(GrantRecord {
            id: r.get(0)?,
            kind: r.get(1)?,
            credits: r.get(2)?,
            reason: r.get(3)?,
            created_at: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub(crate) fn account(c: &mut Connection, id: &str) -> StoreResult<AccountSummary> {
    c.query_row(
        &format!("{SUMMARY} WHERE a.id = ?1"),
        [id],
        summary_from_row,
    )
    .optional()?
    .ok_or_else(|| StoreError::NotFound("account", id.into()))
}

pub(crate) fn accounts(c: &mut Connection) -> StoreResult<Vec<AccountSummary>> {
    let mut stmt = c.prepare(&format!("{SUMMARY} ORDER BY a.created_at, a.id"))?;
    let rows = stmt.query_map([], summary_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub(crate) fn ensure_account(c: &Connection, account: &str, now: i64) -> StoreResult<()> {
    c.execute(
        "INSERT OR IGNORE INTO accounts (id, balance, created_at) VALUES (?1, 0, ?2)",
        params![account, now],
    )?;
    Ok(())
}

pub(crate) fn balance(c: &mut Connection, account: &str) -> StoreResult<i64> {
    c.query_row(
        "SELECT balance FROM accounts WHERE id = ?1",
        [account],
        |r| r.get(0),
    )
    .optional()?
    .ok_or_else(|| StoreError::NotFound("account", account.into()))
}

pub(crate) fn add_credits_noted(
    c: &Connection,
    account: &str,
    amount: i64,
    reason: Option<&str>,
    now: i64,
) -> StoreResult<i64> {
    c.execute(
        "INSERT OR IGNORE INTO accounts (id, balance, created_at) VALUES (?1, 0, ?2)",
        params![account, now],
    )?;
    let updated = c.execute(
        "UPDATE accounts SET balance = balance + ?2 WHERE id = ?1 AND balance + ?2 <= ?3",
        params![account, amount, MAX_CREDITS],
    )?;
    if updated != 1 {
        return Err(StoreError::Invalid(format!(
            "a balance cannot exceed {MAX_CREDITS} credits"
        )));
    }
    c.execute(
    "INSERT INTO credit_grants (account_id, credits, created_at, reason) VALUES (?1, ?2, ?3, ?4)",
    params![account, amount, now, reason],
)?;
    let balance = c.query_row(
        "SELECT balance FROM accounts WHERE id = ?1",
        [account],
        |r| r.get(0),
    )?;
    Ok(balance)
}

pub(crate) fn ledger_sum(c: &mut Connection, account: Option<&str>) -> StoreResult<i64> {
    Ok(match account {
        Some(a) => c.query_row(
            "SELECT COALESCE(SUM(credits), 0) FROM ledger WHERE account_id = ?1",
            [a],
            |r| r.get(0),
        )?,
        None => c.query_row("SELECT COALESCE(SUM(credits), 0) FROM ledger", [], |r| {
            r.get(0)
        })?,
    })
}

pub(crate) fn ledger_count(c: &mut Connection, account: Option<&str>) -> StoreResult<i64> {
    Ok(match account {
        Some(a) => c.query_row(
            "SELECT COUNT(*) FROM ledger WHERE account_id = ?1",
            [a],
            |r| r.get(0),
        )?,
        None => c.query_row("SELECT COUNT(*) FROM ledger", [], |r| r.get(0))?,
    })
}

const SUMMARY: &str = "SELECT a.id, a.balance,
        (SELECT COALESCE(SUM(credits), 0) FROM credit_grants g WHERE g.account_id = a.id),
        (SELECT COALESCE(SUM(credits), 0) FROM ledger l WHERE l.account_id = a.id),
        (SELECT COUNT(*) FROM api_keys k WHERE k.account_id = a.id),
        a.created_at,
        (SELECT COALESCE(SUM(credits), 0) FROM credit_holds h WHERE h.account_id = a.id)
     FROM accounts a";

fn summary_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<AccountSummary> {
    Ok(AccountSummary {
        id: r.get(0)?,
        balance: r.get(1)?,
        granted: r.get(2)?,
        spent: r.get(3)?,
        keys: r.get(4)?,
        created_at: r.get(5)?,
        held: r.get(6)?,
    })
}
