//! Credit holds on PostgreSQL (see `store::holds`): each hold is a
//! conditional decrement of the account row (row-locked, so concurrent hosts
//! serialize on it) and the hold's row, in one transaction per reservation.

use postgres::GenericClient;
use postgres::error::SqlState;
use postgres::types::Type;

use super::Pg;
use crate::holds::{HoldRequest, Reserved};
use crate::{Bill, Charge, StoreResult};

/// Delete hold `hold` and give its credits back (in the caller's
/// transaction, if any); whether it was there.
fn release_with(c: &mut impl GenericClient, hold: &str) -> StoreResult<bool> {
    let gone = c.query_typed_opt(
        "DELETE FROM credit_holds WHERE id = $1 RETURNING account_id, credits",
        &[(&hold, Type::TEXT)],
    )?;
    let Some(row) = gone else {
        return Ok(false);
    };
    let (account, credits): (String, i64) = (row.get(0), row.get(1));
    c.execute_typed(
        "UPDATE accounts SET balance = balance + $2 WHERE id = $1",
        &[(&account, Type::TEXT), (&credits, Type::INT8)],
    )?;
    Ok(true)
}

impl Pg {
    pub fn reserve_credits(
        &self,
        account: &str,
        holds: &[HoldRequest],
        expires_at: i64,
        now: i64,
    ) -> StoreResult<Vec<Reserved>> {
        let mut c = self.client()?;
        let mut tx = c.transaction()?;
        let mut out = Vec::with_capacity(holds.len());
        for h in holds {
            let row = tx.query_typed_one(
                "WITH debit AS (
                     UPDATE accounts SET balance = balance - $2 WHERE id = $1 AND balance >= $2
                     RETURNING balance
                 ), hold AS (
                     INSERT INTO credit_holds (id, account_id, credits, expires_at, created_at)
                     SELECT $3, $1, $2, $4, $5 FROM debit
                     RETURNING 1
                 )
                 SELECT (SELECT COUNT(*) FROM hold),
                        (SELECT balance FROM accounts WHERE id = $1)",
                &[
                    (&account, Type::TEXT),
                    (&h.credits, Type::INT8),
                    (&h.id, Type::TEXT),
                    (&expires_at, Type::INT8),
                    (&now, Type::INT8),
                ],
            )?;
            let held: i64 = row.get(0);
            out.push(if held > 0 {
                Reserved::Held
            } else {
                Reserved::Short {
                    balance: row.get::<_, Option<i64>>(1).unwrap_or(0),
                }
            });
        }
        tx.commit()?;
        Ok(out)
    }

    /// The hold released and the charge taken in one transaction. A charge
    /// that already landed (the retry of one whose answer was lost) breaks
    /// the ledger's unique index and rolls the release back with it; then
    /// the hold, if still there, is released alone and the charge answered
    /// as the ordinary charge answers its retry.
    pub fn charge_held(&self, hold: &str, bill: &Bill, now: i64) -> StoreResult<Charge> {
        let mut c = self.client()?;
        let mut tx = c.transaction()?;
        release_with(&mut tx, hold)?;
        // Already charged (the retry of a charge whose answer was lost): the
        // hold is only given back.
        let already = tx.query_typed_opt(
            "SELECT account_id, key_id, platform FROM ledger WHERE request_id = $1",
            &[(&bill.request_id, Type::TEXT)],
        )?;
        if let Some(row) = already {
            crate::idempotency::same_charge(
                &(row.get(0), row.get(1), row.get(2)),
                &bill.account,
                &bill.key_id,
                &bill.platform,
                &bill.request_id,
            )?;
            let balance_after: i64 = tx
                .query_typed_one(
                    "SELECT balance FROM accounts WHERE id = $1",
                    &[(&bill.account, Type::TEXT)],
                )?
                .get(0);
            tx.commit()?;
            return Ok(Charge::Charged { balance_after });
        }
        match super::idempotency::charge_statement(&mut tx, bill, now) {
            Ok(row) => {
                tx.commit()?;
                Ok(super::idempotency::charge_of(&row))
            }
            Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                drop(tx);
                drop(c);
                self.release_hold(hold)?;
                self.charge_attempt(bill, now)
            }
            Err(e) => Err(e.into()),
        }
    }

    pub fn release_hold(&self, hold: &str) -> StoreResult<bool> {
        let mut c = self.client()?;
        let mut tx = c.transaction()?;
        let released = release_with(&mut tx, hold)?;
        tx.commit()?;
        Ok(released)
    }

    pub fn release_expired_holds(&self, now: i64) -> StoreResult<u64> {
        let mut c = self.client()?;
        let ids: Vec<String> = c
            .query_typed(
                "SELECT id FROM credit_holds WHERE expires_at < $1",
                &[(&now, Type::INT8)],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let mut released = 0;
        for id in ids {
            let mut tx = c.transaction()?;
            released += u64::from(release_with(&mut tx, &id)?);
            tx.commit()?;
        }
        Ok(released)
    }

    pub fn held_credits(&self, account: Option<&str>) -> StoreResult<i64> {
        Ok(self
            .client()?
            .query_typed_one(
                "SELECT CAST(COALESCE(SUM(credits), 0) AS BIGINT) FROM credit_holds
                 WHERE $1::TEXT IS NULL OR account_id = $1",
                &[(&account, Type::TEXT)],
            )?
            .get(0))
    }
}
