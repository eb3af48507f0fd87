//! Accounts on PostgreSQL: the PostgreSQL body of each `Store` account
//! method (`accounts`).

use postgres::Row;
use postgres::types::Type;

use super::Pg;
use crate::accounts::{AccountSummary, CreditChange, GrantRecord, MAX_CREDITS};
use crate::{StoreError, StoreResult};

const SUMMARY: &str = "SELECT a.id, a.balance,
        (SELECT CAST(COALESCE(SUM(credits), 0) AS BIGINT) FROM credit_grants g WHERE g.account_id = a.id),
        (SELECT CAST(COALESCE(SUM(credits), 0) AS BIGINT) FROM ledger l WHERE l.account_id = a.id),
        (SELECT COUNT(*) FROM api_keys k WHERE k.account_id = a.id),
        a.created_at,
        (SELECT CAST(COALESCE(SUM(credits), 0) AS BIGINT) FROM credit_holds h WHERE h.account_id = a.id)
     FROM accounts a";

fn summary_from_row(r: &Row) -> AccountSummary {
    AccountSummary {
        id: r.get(0),
        balance: r.get(1),
        granted: r.get(2),
        spent: r.get(3),
        keys: r.get(4),
        created_at: r.get(5),
        held: r.get(6),
    }
}

fn balance_of(c: &mut postgres::Client, account: &str) -> StoreResult<Option<i64>> {
    Ok(c.query_typed_opt(
        "SELECT balance FROM accounts WHERE id = $1",
        &[(&account, Type::TEXT)],
    )?
    .map(|r| r.get(0)))
}

pub(super) const ENSURE_ACCOUNT: &str =
    "INSERT INTO accounts (id, balance, created_at) VALUES ($1, 0, $2) ON CONFLICT (id) DO NOTHING";

impl Pg {
    pub fn ensure_account(&self, account: &str, now: i64) -> StoreResult<()> {
        self.client()?.execute(ENSURE_ACCOUNT, &[&account, &now])?;
        Ok(())
    }

    pub fn create_account(&self, id: &str, now: i64) -> StoreResult<bool> {
        Ok(self.client()?.execute(ENSURE_ACCOUNT, &[&id, &now])? == 1)
    }

    pub fn balance(&self, account: &str) -> StoreResult<i64> {
        balance_of(&mut *self.client()?, account)?
            .ok_or_else(|| StoreError::NotFound("account", account.into()))
    }

    pub fn add_credits(
        &self,
        account: &str,
        amount: i64,
        reason: Option<&str>,
        now: i64,
    ) -> StoreResult<i64> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        tx.execute(ENSURE_ACCOUNT, &[&account, &now])?;
        let row = tx.query_opt(
            "UPDATE accounts SET balance = balance + $2 WHERE id = $1 AND balance + $2 <= $3
             RETURNING balance",
            &[&account, &amount, &MAX_CREDITS],
        )?;
        let Some(row) = row else {
            return Err(StoreError::Invalid(format!(
                "a balance cannot exceed {MAX_CREDITS} credits"
            )));
        };
        tx.execute(
            "INSERT INTO credit_grants (account_id, credits, created_at, reason) VALUES ($1, $2, $3, $4)",
            &[&account, &amount, &now, &reason],
        )?;
        tx.commit()?;
        Ok(row.get(0))
    }

    pub fn set_credits(
        &self,
        account: &str,
        amount: i64,
        reason: Option<&str>,
        now: i64,
    ) -> StoreResult<CreditChange> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        tx.execute(ENSURE_ACCOUNT, &[&account, &now])?;
        // FOR UPDATE: a concurrent charge waits, so the recorded difference is exact.
        let previous: i64 = tx
            .query_one(
                "SELECT balance FROM accounts WHERE id = $1 FOR UPDATE",
                &[&account],
            )?
            .get(0);
        let change = amount - previous;
        if change != 0 {
            tx.execute(
                "UPDATE accounts SET balance = $2 WHERE id = $1",
                &[&account, &amount],
            )?;
            tx.execute(
                "INSERT INTO credit_grants (account_id, credits, created_at, kind, reason) VALUES ($1, $2, $3, 'set', $4)",
                &[&account, &change, &now, &reason],
            )?;
        }
        tx.commit()?;
        Ok(CreditChange {
            account: account.to_string(),
            previous,
            balance: amount,
            change,
        })
    }

    pub fn grants(&self, account: &str, limit: usize) -> StoreResult<Vec<GrantRecord>> {
        let rows = self.client()?.query(
            "SELECT id, kind, credits, reason, created_at FROM credit_grants
             WHERE account_id = $1 ORDER BY id DESC LIMIT $2",
            &[&account, &(limit as i64)],
        )?;
        Ok(rows
            .iter()
            .map(|r| GrantRecord {
                id: r.get(0),
                kind: r.get(1),
                credits: r.get(2),
                reason: r.get(3),
                created_at: r.get(4),
            })
            .collect())
    }

    pub fn account(&self, id: &str) -> StoreResult<AccountSummary> {
        self.client()?
            .query_opt(&format!("{SUMMARY} WHERE a.id = $1"), &[&id])?
            .map(|r| summary_from_row(&r))
            .ok_or_else(|| StoreError::NotFound("account", id.into()))
    }

    pub fn accounts(&self) -> StoreResult<Vec<AccountSummary>> {
        Ok(self
            .client()?
            .query(&format!("{SUMMARY} ORDER BY a.created_at, a.id"), &[])?
            .iter()
            .map(summary_from_row)
            .collect())
    }

    pub fn ledger_sum(&self, account: Option<&str>) -> StoreResult<i64> {
        Ok(self
            .client()?
            .query_one(
                "SELECT CAST(COALESCE(SUM(credits), 0) AS BIGINT) FROM ledger
                 WHERE $1::TEXT IS NULL OR account_id = $1",
                &[&account],
            )?
            .get(0))
    }

    pub fn ledger_count(&self, account: Option<&str>) -> StoreResult<i64> {
        Ok(self
            .client()?
            .query_one(
                "SELECT COUNT(*) FROM ledger WHERE $1::TEXT IS NULL OR account_id = $1",
                &[&account],
            )?
            .get(0))
    }
}
