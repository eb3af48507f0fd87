//! Accounts and their balances: creation, setting a balance, summaries.
//!
//! Every change to a balance other than a charge writes a `credit_grants` row
//! with the signed amount it made (`add`: the amount; `set`: new − old), and
//! every charge writes a ledger row, both in the transaction that moves the
//! balance. So for every account, at every commit:
//! `Σ credit_grants − Σ ledger − Σ credit_holds = balance` (holds: `holds.rs`) ([`AccountSummary::consistent`]).

use rusqlite::{OptionalExtension, params};

use super::{Backend, Store, StoreError, StoreResult, dispatch};

/// The largest balance an account may hold (keeps SQLite integer arithmetic exact).
pub const MAX_CREDITS: i64 = 1_000_000_000_000;

/// An account with its balance and the totals that explain it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountSummary {
    pub id: String,
    pub balance: i64,
    /// Σ of credit grants (adds, and the signed differences of sets).
    pub granted: i64,
    /// Σ of the ledger: credits taken by successful parses.
    pub spent: i64,
    pub keys: i64,
    pub created_at: i64,
    /// Σ of credit holds: credits set aside for parses running now.
    pub held: i64,
}

impl AccountSummary {
    /// The books balance: what was granted minus what was spent and what
    /// is held for parses running now is what is left.
    pub fn consistent(&self) -> bool {
        self.granted - self.spent - self.held == self.balance
    }
}

/// The result of adding to or setting a balance.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreditChange {
    pub account: String,
    pub previous: i64,
    pub balance: i64,
    /// Signed difference recorded in `credit_grants`.
    pub change: i64,
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

/// One row of an account's grants log: an `add`, or a `set` recorded as the
/// signed difference it made, with the operator's reason when one was given.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantRecord {
    pub id: i64,
    pub kind: String,
    pub credits: i64,
    pub reason: Option<String>,
    pub created_at: i64,
}

/// The longest reason kept with a grant, in characters.
pub const MAX_REASON_CHARS: usize = 200;

/// A reason trimmed, `None` when blank, refused when longer than [`MAX_REASON_CHARS`].
pub fn checked_reason(reason: Option<&str>) -> StoreResult<Option<&str>> {
    let Some(r) = reason.map(str::trim).filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    if r.chars().count() > MAX_REASON_CHARS || r.chars().any(char::is_control) {
        return Err(StoreError::Invalid(format!(
            "a reason is at most {MAX_REASON_CHARS} characters on one line"
        )));
    }
    Ok(Some(r))
}

/// Account ids are short printable names: letters, digits, `-`, `_`, `.`, `@`.
pub fn validate_account_id(id: &str) -> StoreResult<()> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'@'));
    if ok {
        Ok(())
    } else {
        Err(StoreError::Invalid(format!(
            "account id {id:?} must be 1-64 characters of letters, digits, '-', '_', '.', '@'"
        )))
    }
}

impl Store {
    /// Create an account with a zero balance; `false` when it already exists.
    pub fn create_account(&self, id: &str, now: i64) -> StoreResult<bool> {
        validate_account_id(id)?;
        dispatch!(
            self,
            |c| {
                Ok(c.execute(
                    "INSERT OR IGNORE INTO accounts (id, balance, created_at) VALUES (?1, 0, ?2)",
                    params![id, now],
                )? == 1)
            },
            |p| p.create_account(id, now)
        )
    }

    /// Set the balance to `amount` (creating the account), recording the
    /// difference as a grant, in one transaction.
    pub fn set_credits(&self, account: &str, amount: i64, now: i64) -> StoreResult<CreditChange> {
        self.set_credits_noted(account, amount, None, now)
    }

    /// Set the balance with the operator's reason, kept in the grants log.
    pub fn set_credits_noted(
        &self,
        account: &str,
        amount: i64,
        reason: Option<&str>,
        now: i64,
    ) -> StoreResult<CreditChange> {
        let reason = checked_reason(reason)?;
        if !(0..=MAX_CREDITS).contains(&amount) {
            return Err(StoreError::Invalid(format!(
                "a balance must be a number from 0 to {MAX_CREDITS}"
            )));
        }
        validate_account_id(account)?;
        dispatch!(
            self,
            |c| {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                tx.execute(
                    "INSERT OR IGNORE INTO accounts (id, balance, created_at) VALUES (?1, 0, ?2)",
                    params![account, now],
                )?;
                let previous: i64 = tx.query_row(
                    "SELECT balance FROM accounts WHERE id = ?1",
                    [account],
                    |r| r.get(0),
                )?;
                let change = amount - previous;
                if change != 0 {
                    tx.execute(
                        "UPDATE accounts SET balance = ?2 WHERE id = ?1",
                        params![account, amount],
                    )?;
                    tx.execute(
                    "INSERT INTO credit_grants (account_id, credits, created_at, kind, reason) VALUES (?1, ?2, ?3, 'set', ?4)",
                    params![account, change, now, reason],
                )?;
                }
                tx.commit()?;
                Ok(CreditChange {
                    account: account.to_string(),
                    previous,
                    balance: amount,
                    change,
                })
            },
            |p| p.set_credits(account, amount, reason, now)
        )
    }

    /// An account's grants log, newest first (at most `limit` rows).
    pub fn grants(&self, account: &str, limit: usize) -> StoreResult<Vec<GrantRecord>> {
        dispatch!(
            self,
            |c| {
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
            },
            |p| p.grants(account, limit)
        )
    }

    pub fn account(&self, id: &str) -> StoreResult<AccountSummary> {
        dispatch!(
            self,
            |c| {
                c.query_row(
                    &format!("{SUMMARY} WHERE a.id = ?1"),
                    [id],
                    summary_from_row,
                )
                .optional()?
                .ok_or_else(|| StoreError::NotFound("account", id.into()))
            },
            |p| p.account(id)
        )
    }

    pub fn accounts(&self) -> StoreResult<Vec<AccountSummary>> {
        dispatch!(
            self,
            |c| {
                let mut stmt = c.prepare(&format!("{SUMMARY} ORDER BY a.created_at, a.id"))?;
                let rows = stmt.query_map([], summary_from_row)?;
                Ok(rows.collect::<Result<_, _>>()?)
            },
            |p| p.accounts()
        )
    }
}
