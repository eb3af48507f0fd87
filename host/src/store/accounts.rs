//! Accounts and their balances: creation, setting a balance, summaries.
//!
//! Every change to a balance other than a charge writes a `credit_grants` row
//! with the signed amount it made (`add`: the amount; `set`: new − old), and
//! every charge writes a ledger row, both in the transaction that moves the
//! balance. So for every account, at every commit:
//! `Σ credit_grants − Σ ledger = balance` ([`AccountSummary::consistent`]).

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
}

impl AccountSummary {
    /// The books balance: what was granted minus what was spent is what is left.
    pub fn consistent(&self) -> bool {
        self.granted - self.spent == self.balance
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
        a.created_at
     FROM accounts a";

fn summary_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<AccountSummary> {
    Ok(AccountSummary {
        id: r.get(0)?,
        balance: r.get(1)?,
        granted: r.get(2)?,
        spent: r.get(3)?,
        keys: r.get(4)?,
        created_at: r.get(5)?,
    })
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
                    "INSERT INTO credit_grants (account_id, credits, created_at, kind) VALUES (?1, ?2, ?3, 'set')",
                    params![account, change, now],
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
            |p| p.set_credits(account, amount, now)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Charge;
    use crate::store::both::each_backend;

    #[test]
    fn grants_minus_ledger_is_the_balance_through_adds_sets_and_charges() {
        each_backend(|t| {
            let store = &t.store;
            assert!(store.create_account("acme", 1).unwrap());
            assert!(!store.create_account("acme", 1).unwrap());
            assert!(store.create_account("bad id", 1).is_err());
            assert_eq!(store.add_credits("acme", 10, 2).unwrap(), 10);
            assert!(matches!(
                store.charge("acme", "k", "youtube", 3, "r1", 3).unwrap(),
                Charge::Charged { balance_after: 7 }
            ));
            let set = store.set_credits("acme", 2, 4).unwrap();
            assert_eq!((set.previous, set.balance, set.change), (7, 2, -5));
            assert!(matches!(
                store.charge("acme", "k", "youtube", 3, "r2", 5).unwrap(),
                Charge::InsufficientCredits { balance: 2 }
            ));
            let a = store.account("acme").unwrap();
            assert_eq!((a.balance, a.granted, a.spent), (2, 5, 3));
            assert!(a.consistent());
            assert!(store.set_credits("acme", -1, 6).is_err());
            assert!(store.add_credits("acme", MAX_CREDITS, 6).is_err());
            assert_eq!(store.balance("acme").unwrap(), 2);
            assert_eq!(store.set_credits("new", 0, 7).unwrap().change, 0);
            assert_eq!(store.accounts().unwrap().len(), 2);
            assert!(matches!(
                store.account("nobody"),
                Err(StoreError::NotFound(..))
            ));
        });
    }
}
