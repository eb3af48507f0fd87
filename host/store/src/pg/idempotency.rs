//! The books on PostgreSQL: Idempotency-Key records, the balance read
//! before a charge, and the charge at most once per server-minted request id
//! with its `ledger_daily` count in the same statement.

use postgres::error::SqlState;
use postgres::types::Type;

use super::Pg;
use crate::idempotency::{Claim, IDEMPOTENCY_TTL_S, StoredResponse};
use crate::{Bill, Charge, StoreError, StoreResult};

const DAY_S: i64 = 86_400;

/// How long a charge whose outcome is unknown is retried before the parse
/// answers `503 database_unavailable`: longer than a database restart or
/// fail-over usually takes, shorter than a client's patience.
pub const CHARGE_SETTLE_BUDGET: std::time::Duration = std::time::Duration::from_secs(20);

impl Pg {
    /// A plain read: the charge itself is the conditional decrement, so the
    /// pre-check needs no lock (SQLite's BEGIN IMMEDIATE only waits out a writer).
    pub fn balance_for_charge(&self, account: &str) -> StoreResult<i64> {
        self.client()?
            .query_typed_opt(
                "SELECT balance FROM accounts WHERE id = $1",
                &[(&account, Type::TEXT)],
            )?
            .map(|r| r.get(0))
            .ok_or_else(|| StoreError::NotFound("account", account.into()))
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
        tx.execute(
            "DELETE FROM idempotency_keys WHERE created_at <= $1",
            &[&(now - IDEMPOTENCY_TTL_S)],
        )?;
        tx.execute(
            "INSERT INTO idempotency_keys (key_id, idempotency_key, fingerprint, request_id, created_at)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (key_id, idempotency_key) DO NOTHING",
            &[&key_id, &idempotency_key, &fingerprint, &fresh_request_id, &now],
        )?;
        let row = tx.query_one(
            "SELECT fingerprint, request_id, status, credits, response FROM idempotency_keys
             WHERE key_id = $1 AND idempotency_key = $2",
            &[&key_id, &idempotency_key],
        )?;
        tx.commit()?;
        let stored_fingerprint: String = row.get(0);
        let request_id: String = row.get(1);
        let status: Option<i32> = row.get(2);
        let credits: Option<i64> = row.get(3);
        let body: Option<String> = row.get(4);
        Ok(crate::idempotency::claim_of(
            fingerprint,
            stored_fingerprint,
            request_id,
            status.map(|s| u16::try_from(s).unwrap_or(500)),
            credits,
            body,
        ))
    }

    pub fn complete_idempotency_key_by_reference(
        &self,
        key_id: &str,
        idempotency_key: &str,
        status: u16,
        credits: i64,
    ) -> StoreResult<()> {
        self.client()?.execute(
            "UPDATE idempotency_keys SET status = $3, credits = $4, response = NULL
             WHERE key_id = $1 AND idempotency_key = $2",
            &[&key_id, &idempotency_key, &i32::from(status), &credits],
        )?;
        Ok(())
    }

    pub fn complete_idempotency_key(
        &self,
        key_id: &str,
        idempotency_key: &str,
        response: &StoredResponse,
    ) -> StoreResult<()> {
        self.client()?.execute(
            "UPDATE idempotency_keys SET status = $3, credits = $4, response = $5
             WHERE key_id = $1 AND idempotency_key = $2",
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

    pub fn release_idempotency_key(&self, key_id: &str, idempotency_key: &str) -> StoreResult<()> {
        self.client()?.execute(
            "DELETE FROM idempotency_keys
             WHERE key_id = $1 AND idempotency_key = $2 AND status IS NULL
               AND NOT EXISTS (SELECT 1 FROM ledger WHERE ledger.request_id = idempotency_keys.request_id)",
            &[&key_id, &idempotency_key],
        )?;
        Ok(())
    }

    pub fn set_client_request_id(
        &self,
        request_id: &str,
        client_request_id: &str,
    ) -> StoreResult<()> {
        self.client()?.execute(
            "UPDATE ledger SET client_request_id = $2 WHERE request_id = $1",
            &[&request_id, &client_request_id],
        )?;
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
        let Bill {
            account,
            key_id,
            platform,
            request_id,
            ..
        } = bill;
        let mut c = self.client()?;
        let result = charge_statement(&mut **c, bill, now);
        let row = match result {
            Ok(row) => row,
            Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                let row = c.query_typed_one(
                    "SELECT account_id, key_id, platform FROM ledger WHERE request_id = $1",
                    &[(&request_id, Type::TEXT)],
                )?;
                crate::idempotency::same_charge(
                    &(row.get(0), row.get(1), row.get(2)),
                    account,
                    key_id,
                    platform,
                    request_id,
                )?;
                let balance_after = self.balance_for_charge(account)?;
                return Ok(Charge::Charged { balance_after });
            }
            Err(e) => return Err(e.into()),
        };
        Ok(charge_of(&row))
    }
}

/// The charge as one statement in `c` (see [`Pg::charge_attempt`]).
pub(super) fn charge_statement(
    c: &mut impl postgres::GenericClient,
    bill: &Bill,
    now: i64,
) -> Result<postgres::Row, postgres::Error> {
    let Bill {
        account,
        key_id,
        platform,
        price: credits,
        request_id,
    } = bill;
    let day = now.div_euclid(DAY_S);
    c.query_typed_one(
        "WITH debit AS (
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
                (SELECT balance FROM accounts WHERE id = $1), (SELECT COUNT(*) FROM daily)",
        &[
            (account, Type::TEXT),
            (credits, Type::INT8),
            (key_id, Type::TEXT),
            (platform, Type::TEXT),
            (request_id, Type::TEXT),
            (&now, Type::INT8),
            (&day, Type::INT8),
        ],
    )
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
