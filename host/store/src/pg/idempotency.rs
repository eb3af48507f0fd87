//! The books on PostgreSQL: Idempotency-Key records, the balance read
//! before a charge, and the charge at most once per server-minted request id
//! with its `ledger_daily` count in the same statement. Each has a blocking
//! body (the blocking pool) and the parse path's async one (the async pool,
//! `*_async`), with the same statements.

use postgres::error::SqlState;
use postgres::types::{ToSql, Type};

use super::Pg;
use super::async_pool::{Answer, pipeline};
use crate::idempotency::{Claim, IDEMPOTENCY_TTL_S, StoredResponse};
use crate::{Bill, Charge, StoreError, StoreResult};

const DAY_S: i64 = 86_400;

const BALANCE: &str = "SELECT balance FROM accounts WHERE id = $1";
const LEDGER_ROW: &str = "SELECT account_id, key_id, platform FROM ledger WHERE request_id = $1";
const FORGET_EXPIRED_KEYS: &str = "DELETE FROM idempotency_keys WHERE created_at <= $1";
const CLAIM: &str =
    "INSERT INTO idempotency_keys (key_id, idempotency_key, fingerprint, request_id, created_at)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (key_id, idempotency_key) DO NOTHING";
const CLAIMED: &str =
    "SELECT fingerprint, request_id, status, credits, response FROM idempotency_keys
     WHERE key_id = $1 AND idempotency_key = $2";
const COMPLETE_BY_REFERENCE: &str =
    "UPDATE idempotency_keys SET status = $3, credits = $4, response = NULL
     WHERE key_id = $1 AND idempotency_key = $2";
const COMPLETE: &str = "UPDATE idempotency_keys SET status = $3, credits = $4, response = $5
     WHERE key_id = $1 AND idempotency_key = $2";
const RELEASE: &str = "DELETE FROM idempotency_keys
     WHERE key_id = $1 AND idempotency_key = $2 AND status IS NULL
       AND NOT EXISTS (SELECT 1 FROM ledger WHERE ledger.request_id = idempotency_keys.request_id)";
const CLIENT_REQUEST_ID: &str = "UPDATE ledger SET client_request_id = $2 WHERE request_id = $1";
const CHARGE: &str = "WITH debit AS (
         UPDATE accounts SET balance = balance - $2 WHERE id = $1 AND balance >= $2
         RETURNING balance
     ), entry AS (
         INSERT INTO ledger (account_id, key_id, platform, credits, request_id, created_at)
         SELECT $1, $3, $4, $2, $5, $6 FROM debit
         RETURNING id
     ), daily AS (
         INSERT INTO ledger_daily (account_id, day, key_id, platform, requests, credits)
         SELECT $1, $7, $3, $4, 1, $2 FROM entry
         ON CONFLICT (account_id, day, key_id, platform)
         DO UPDATE SET requests = ledger_daily.requests + 1,
                       credits = ledger_daily.credits + excluded.credits
         RETURNING 1
     )
     SELECT (SELECT balance FROM debit), (SELECT id FROM entry),
            (SELECT balance FROM accounts WHERE id = $1), (SELECT COUNT(*) FROM daily)";

/// How long a charge whose outcome is unknown is retried before the parse
/// answers `503 database_unavailable`: longer than a database restart or
/// fail-over usually takes, shorter than a client's patience.
pub const CHARGE_SETTLE_BUDGET: std::time::Duration = std::time::Duration::from_secs(20);

impl Pg {
    /// A plain read: the charge itself is the conditional decrement, so the
    /// pre-check needs no lock (SQLite's BEGIN IMMEDIATE only waits out a writer).
    pub fn balance_for_charge(&self, account: &str) -> StoreResult<i64> {
        balance_of(
            self.client()?
                .query_typed_opt(BALANCE, &[(&account, Type::TEXT)])?
                .as_ref(),
            account,
        )
    }

    /// [`Pg::balance_for_charge`] on the async pool.
    pub async fn balance_for_charge_async(&self, account: &str) -> StoreResult<i64> {
        let c = self.async_client().await?;
        let row = c
            .query_typed_opt(BALANCE, &[(&account, Type::TEXT)])
            .await?;
        balance_of(row.as_ref(), account)
    }

    pub fn claim_idempotency_key(
        &self,
        key_id: &str,
        idempotency_key: &str,
        fingerprint: &str,
        fresh_request_id: &str,
        now: i64,
    ) -> StoreResult<Claim> {
        let mut c = self.client()?;
        let mut tx = c.transaction()?;
        tx.execute(FORGET_EXPIRED_KEYS, &[&(now - IDEMPOTENCY_TTL_S)])?;
        tx.execute(
            CLAIM,
            &[
                &key_id,
                &idempotency_key,
                &fingerprint,
                &fresh_request_id,
                &now,
            ],
        )?;
        let row = tx.query_one(CLAIMED, &[&key_id, &idempotency_key])?;
        tx.commit()?;
        Ok(claim_from_row(fingerprint, &row))
    }

    /// [`Pg::claim_idempotency_key`] on the async pool: its three statements
    /// pipelined in the transaction.
    pub async fn claim_idempotency_key_async(
        &self,
        key_id: &str,
        idempotency_key: &str,
        fingerprint: &str,
        fresh_request_id: &str,
        now: i64,
    ) -> StoreResult<Claim> {
        let mut c = self.async_client().await?;
        let tx = c.transaction().await?;
        let expired = [(
            &(now - IDEMPOTENCY_TTL_S) as &(dyn ToSql + Sync),
            Type::INT8,
        )];
        let claim: [(&(dyn ToSql + Sync), Type); 5] = [
            (&key_id, Type::TEXT),
            (&idempotency_key, Type::TEXT),
            (&fingerprint, Type::TEXT),
            (&fresh_request_id, Type::TEXT),
            (&now, Type::INT8),
        ];
        let claimed: [(&(dyn ToSql + Sync), Type); 2] =
            [(&key_id, Type::TEXT), (&idempotency_key, Type::TEXT)];
        let statements: Vec<Answer<'_, Vec<tokio_postgres::Row>>> = vec![
            Box::pin(tx.query_typed(FORGET_EXPIRED_KEYS, &expired)),
            Box::pin(tx.query_typed(CLAIM, &claim)),
            Box::pin(tx.query_typed(CLAIMED, &claimed)),
        ];
        let answers = pipeline(statements).await?;
        tx.commit().await?;
        let row = answers
            .last()
            .and_then(|rows| rows.first())
            .ok_or_else(|| StoreError::NotFound("idempotency key", idempotency_key.into()))?;
        Ok(claim_from_row(fingerprint, row))
    }

    pub fn complete_idempotency_key_by_reference(
        &self,
        key_id: &str,
        idempotency_key: &str,
        status: u16,
        credits: i64,
    ) -> StoreResult<()> {
        self.client()?.execute(
            COMPLETE_BY_REFERENCE,
            &[&key_id, &idempotency_key, &i32::from(status), &credits],
        )?;
        Ok(())
    }

    /// [`Pg::complete_idempotency_key_by_reference`] on the async pool.
    pub async fn complete_idempotency_key_by_reference_async(
        &self,
        key_id: &str,
        idempotency_key: &str,
        status: u16,
        credits: i64,
    ) -> StoreResult<()> {
        let c = self.async_client().await?;
        c.execute_typed(
            COMPLETE_BY_REFERENCE,
            &[
                (&key_id, Type::TEXT),
                (&idempotency_key, Type::TEXT),
                (&i32::from(status), Type::INT4),
                (&credits, Type::INT8),
            ],
        )
        .await?;
        Ok(())
    }

    pub fn complete_idempotency_key(
        &self,
        key_id: &str,
        idempotency_key: &str,
        response: &StoredResponse,
    ) -> StoreResult<()> {
        self.client()?.execute(
            COMPLETE,
            &[
                &key_id,
                &idempotency_key,
                &i32::from(response.status),
                &response.credits,
                &response.body,
            ],
        )?;
        Ok(())
    }

    /// [`Pg::complete_idempotency_key`] on the async pool.
    pub async fn complete_idempotency_key_async(
        &self,
        key_id: &str,
        idempotency_key: &str,
        response: &StoredResponse,
    ) -> StoreResult<()> {
        let c = self.async_client().await?;
        c.execute_typed(
            COMPLETE,
            &[
                (&key_id, Type::TEXT),
                (&idempotency_key, Type::TEXT),
                (&i32::from(response.status), Type::INT4),
                (&response.credits, Type::INT8),
                (&response.body, Type::TEXT),
            ],
        )
        .await?;
        Ok(())
    }

    pub fn release_idempotency_key(&self, key_id: &str, idempotency_key: &str) -> StoreResult<()> {
        self.client()?
            .execute(RELEASE, &[&key_id, &idempotency_key])?;
        Ok(())
    }

    /// [`Pg::release_idempotency_key`] on the async pool.
    pub async fn release_idempotency_key_async(
        &self,
        key_id: &str,
        idempotency_key: &str,
    ) -> StoreResult<()> {
        let c = self.async_client().await?;
        c.execute_typed(
            RELEASE,
            &[(&key_id, Type::TEXT), (&idempotency_key, Type::TEXT)],
        )
        .await?;
        Ok(())
    }

    pub fn set_client_request_id(
        &self,
        request_id: &str,
        client_request_id: &str,
    ) -> StoreResult<()> {
        self.client()?
            .execute(CLIENT_REQUEST_ID, &[&request_id, &client_request_id])?;
        Ok(())
    }

    /// [`Pg::set_client_request_id`] on the async pool.
    pub async fn set_client_request_id_async(
        &self,
        request_id: &str,
        client_request_id: &str,
    ) -> StoreResult<()> {
        let c = self.async_client().await?;
        c.execute_typed(
            CLIENT_REQUEST_ID,
            &[(&request_id, Type::TEXT), (&client_request_id, Type::TEXT)],
        )
        .await?;
        Ok(())
    }

    /// The charge, settled even when the database goes away mid-statement.
    ///
    /// A connection lost during the statement (PostgreSQL stopping, a
    /// network cut) leaves its outcome unknown: the commit may have landed
    /// with only the acknowledgement lost. Answering that request 503 would
    /// be a charge without its response, so the same statement is retried
    /// with the same request id until the database answers: the unique
    /// ledger index turns a charge that did land into `Charged`, and one
    /// that did not is made now. Only after [`CHARGE_SETTLE_BUDGET`] does the
    /// error reach the caller.
    pub fn charge_once(&self, bill: &Bill, now: i64) -> StoreResult<Charge> {
        let started = std::time::Instant::now();
        let mut pause = std::time::Duration::from_millis(50);
        loop {
            match self.charge_attempt(bill, now) {
                Err(StoreError::Unavailable(why)) if started.elapsed() < CHARGE_SETTLE_BUDGET => {
                    tracing::warn!(request_id = %bill.request_id, error = %why, "charge outcome unknown; retrying to settle it");
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(std::time::Duration::from_secs(1));
                }
                settled => return settled,
            }
        }
    }

    /// One statement, so one implicit transaction and one round trip: the
    /// conditional decrement row-locks the account (concurrent hosts
    /// serialize on it and never overdraw); the ledger row and the day's
    /// aggregate are written only from the decrement's output, so there is a
    /// row exactly when credits were taken. A request id that already has
    /// its ledger row breaks the unique index, which rolls the whole
    /// statement (the debit too) back; that retry is answered `Charged` with
    /// the current balance if the row is this charge's (same account, key
    /// and platform), else it is refused.
    pub(crate) fn charge_attempt(&self, bill: &Bill, now: i64) -> StoreResult<Charge> {
        let mut c = self.client()?;
        let result = charge_statement(&mut **c, bill, now);
        let row = match result {
            Ok(row) => row,
            Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                let row = c.query_typed_one(LEDGER_ROW, &[(&bill.request_id, Type::TEXT)])?;
                same_charge_of(&row, bill)?;
                let balance_after = self.balance_for_charge(&bill.account)?;
                return Ok(Charge::Charged { balance_after });
            }
            Err(e) => return Err(e.into()),
        };
        Ok(charge_of(&row))
    }

    /// [`Pg::charge_attempt`] on the async pool: the same statement; the
    /// retry's two reads (the row under the id, the balance) pipelined.
    pub(crate) async fn charge_attempt_async(&self, bill: &Bill, now: i64) -> StoreResult<Charge> {
        let c = self.async_client().await?;
        match charge_statement_async(&*c, bill, now).await {
            Ok(row) => Ok(charge_of(&row)),
            Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                match already_charged_async(&*c, bill).await? {
                    Some(balance_after) => Ok(Charge::Charged { balance_after }),
                    None => Err(StoreError::NotFound(
                        "ledger entry",
                        bill.request_id.clone(),
                    )),
                }
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// The balance a balance read found.
fn balance_of(row: Option<&postgres::Row>, account: &str) -> StoreResult<i64> {
    row.map(|r| r.get(0))
        .ok_or_else(|| StoreError::NotFound("account", account.into()))
}

/// What a claimed row says.
fn claim_from_row(fingerprint: &str, row: &postgres::Row) -> Claim {
    let stored_fingerprint: String = row.get(0);
    let request_id: String = row.get(1);
    let status: Option<i32> = row.get(2);
    let credits: Option<i64> = row.get(3);
    let body: Option<String> = row.get(4);
    crate::idempotency::claim_of(
        fingerprint,
        stored_fingerprint,
        request_id,
        status.map(|s| u16::try_from(s).unwrap_or(500)),
        credits,
        body,
    )
}

/// Whether the ledger row under `bill`'s request id is `bill`'s charge.
fn same_charge_of(row: &postgres::Row, bill: &Bill) -> StoreResult<()> {
    crate::idempotency::same_charge(
        &(row.get(0), row.get(1), row.get(2)),
        &bill.account,
        &bill.key_id,
        &bill.platform,
        &bill.request_id,
    )
}

/// The balance now if `bill`'s request id already has its ledger row and
/// the row is this charge's (`LedgerIdTaken` if it is another's; `None`
/// without a row). The two reads pipelined.
pub(super) async fn already_charged_async(
    c: &(impl tokio_postgres::GenericClient + Sync),
    bill: &Bill,
) -> StoreResult<Option<i64>> {
    let id: [(&(dyn ToSql + Sync), Type); 1] = [(&bill.request_id, Type::TEXT)];
    let account: [(&(dyn ToSql + Sync), Type); 1] = [(&bill.account, Type::TEXT)];
    let statements: Vec<Answer<'_, Vec<tokio_postgres::Row>>> = vec![
        c.query_typed(LEDGER_ROW, &id),
        c.query_typed(BALANCE, &account),
    ];
    let answers = pipeline(statements).await?;
    let Some(entry) = answers.first().and_then(|rows| rows.first()) else {
        return Ok(None);
    };
    same_charge_of(entry, bill)?;
    balance_of(answers.get(1).and_then(|rows| rows.first()), &bill.account).map(Some)
}

/// The charge statement's parameters: account, price, key, platform,
/// request id, time, day.
macro_rules! charge_params {
    ($bill:expr, $now:expr, $day:expr) => {
        [
            (&$bill.account as &(dyn ToSql + Sync), Type::TEXT),
            (&$bill.price, Type::INT8),
            (&$bill.key_id, Type::TEXT),
            (&$bill.platform, Type::TEXT),
            (&$bill.request_id, Type::TEXT),
            ($now, Type::INT8),
            ($day, Type::INT8),
        ]
    };
}

/// The charge as one statement in `c` (see [`Pg::charge_attempt`]).
pub(super) fn charge_statement(
    c: &mut impl postgres::GenericClient,
    bill: &Bill,
    now: i64,
) -> Result<postgres::Row, postgres::Error> {
    let day = now.div_euclid(DAY_S);
    c.query_typed_one(CHARGE, &charge_params!(bill, &now, &day))
}

/// [`charge_statement`] on an async client or transaction.
pub(super) async fn charge_statement_async(
    c: &(impl tokio_postgres::GenericClient + Sync),
    bill: &Bill,
    now: i64,
) -> Result<postgres::Row, postgres::Error> {
    let day = now.div_euclid(DAY_S);
    c.query_typed_one(CHARGE, &charge_params!(bill, &now, &day))
        .await
}

/// What the charge statement's row says.
pub(super) fn charge_of(row: &postgres::Row) -> Charge {
    let after: Option<i64> = row.get(0);
    let entry: Option<i64> = row.get(1);
    match (after, entry) {
        (Some(balance_after), Some(_)) => Charge::Charged { balance_after },
        _ => Charge::InsufficientCredits {
            balance: row.get::<_, Option<i64>>(2).unwrap_or(0),
        },
    }
}
