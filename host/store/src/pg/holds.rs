//! Credit holds on PostgreSQL (see `store::holds`): each hold is a
//! conditional decrement of the account row (row-locked, so concurrent hosts
//! serialize on it) and the hold's row, in one transaction per reservation.
//! The parse path's holds (reserve, charge, release) run on the async pool
//! (`*_async`), their statements pipelined; expiry runs on the blocking one.

use postgres::error::SqlState;
use postgres::types::{ToSql, Type};

use super::Pg;
use super::async_pool::{Answer, both_in_order, pipeline};
use super::idempotency::{already_charged_async, charge_statement_async};
use crate::holds::{HoldRequest, Reserved};
use crate::{Bill, Charge, StoreResult};

/// Take one hold if the balance covers it: the count of holds taken (0 or
/// 1) and the balance after.
const RESERVE: &str = "WITH debit AS (
         UPDATE accounts SET balance = balance - $2 WHERE id = $1 AND balance >= $2
         RETURNING balance
     ), hold AS (
         INSERT INTO credit_holds (id, account_id, credits, expires_at, created_at)
         SELECT $3, $1, $2, $4, $5 FROM debit
         RETURNING 1
     )
     SELECT (SELECT COUNT(*) FROM hold),
            (SELECT balance FROM accounts WHERE id = $1)";

/// Delete a hold and give its credits back, in one statement: how many
/// holds were deleted (0 or 1).
const RELEASE: &str = "WITH gone AS (
         DELETE FROM credit_holds WHERE id = $1 RETURNING account_id, credits
     ), back AS (
         UPDATE accounts SET balance = accounts.balance + gone.credits
         FROM gone WHERE accounts.id = gone.account_id
         RETURNING 1
     )
     SELECT (SELECT COUNT(*) FROM gone), (SELECT COUNT(*) FROM back)";

/// What a reservation's statement row says.
fn reserved_of(row: &postgres::Row) -> Reserved {
    let held: i64 = row.get(0);
    if held > 0 {
        Reserved::Held
    } else {
        Reserved::Short {
            balance: row.get::<_, Option<i64>>(1).unwrap_or(0),
        }
    }
}

/// Whether a release statement's rows say a hold was released.
fn released_of(rows: &[postgres::Row]) -> bool {
    rows.first().is_some_and(|r| r.get::<_, i64>(0) > 0)
}

impl Pg {
    /// The holds in one transaction: one statement per hold, all pipelined
    /// (the server runs them in order, so each sees the balance the earlier
    /// ones left).
    pub async fn reserve_credits_async(
        &self,
        account: &str,
        holds: &[HoldRequest],
        expires_at: i64,
        now: i64,
    ) -> StoreResult<Vec<Reserved>> {
        let mut c = self.async_client().await?;
        let tx = c.transaction().await?;
        let params: Vec<[(&(dyn ToSql + Sync), Type); 5]> = holds
            .iter()
            .map(|h| {
                [
                    (&account as &(dyn ToSql + Sync), Type::TEXT),
                    (&h.credits, Type::INT8),
                    (&h.id, Type::TEXT),
                    (&expires_at, Type::INT8),
                    (&now, Type::INT8),
                ]
            })
            .collect();
        let statements: Vec<Answer<'_, postgres::Row>> = params
            .iter()
            .map(|p| -> Answer<'_, postgres::Row> { Box::pin(tx.query_typed_one(RESERVE, p)) })
            .collect();
        let rows = pipeline(statements).await?;
        tx.commit().await?;
        Ok(rows.iter().map(reserved_of).collect())
    }

    /// The hold released and the charge taken in one transaction: the
    /// release and the two reads that tell whether this charge already
    /// landed are pipelined, then the charge statement. A charge that
    /// already landed (the retry of one whose answer was lost) only gives
    /// the hold back. One that lands meanwhile (another host's retry)
    /// breaks the ledger's unique index and rolls the release back with it;
    /// then the hold, if still there, is released alone and the charge
    /// answered as the ordinary charge answers its retry.
    pub async fn charge_held_async(
        &self,
        hold: &str,
        bill: &Bill,
        now: i64,
    ) -> StoreResult<Charge> {
        let mut c = self.async_client().await?;
        let tx = c.transaction().await?;
        let release: [(&(dyn ToSql + Sync), Type); 1] = [(&hold, Type::TEXT)];
        let released: Answer<'_, Vec<postgres::Row>> = Box::pin(tx.query_typed(RELEASE, &release));
        // Already charged (the retry of a charge whose answer was lost): the
        // hold is only given back.
        let already = already_charged_async(&tx, bill);
        let (released, already) = both_in_order(released, already).await;
        released?;
        if let Some(balance_after) = already? {
            tx.commit().await?;
            return Ok(Charge::Charged { balance_after });
        }
        match charge_statement_async(&tx, bill, now).await {
            Ok(row) => {
                tx.commit().await?;
                Ok(super::idempotency::charge_of(&row))
            }
            Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                drop(tx);
                drop(c);
                self.release_hold_async(hold).await?;
                self.charge_attempt_async(bill, now).await
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Give a hold's credits back: one statement; whether it was there.
    pub async fn release_hold_async(&self, hold: &str) -> StoreResult<bool> {
        let c = self.async_client().await?;
        let rows = c.query_typed(RELEASE, &[(&hold, Type::TEXT)]).await?;
        Ok(released_of(&rows))
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
            let rows = c.query_typed(RELEASE, &[(&id, Type::TEXT)])?;
            released += u64::from(released_of(&rows));
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
