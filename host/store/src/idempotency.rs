//! Idempotency keys (Stripe's semantics): the first request under a
//! key claims it with a server-minted ledger request id; a completed response
//! is stored with it and answered again for 24 hours; a different request
//! under the same key is a conflict. And the charge that makes retries safe:
//! at most one ledger row (and one debit) per request id.
//!
//! Table `idempotency_keys` (migration 4): `(key_id, idempotency_key)` primary
//! key; `fingerprint` of the request; `request_id` the ledger id the first
//! request charges under; `status`, `credits`, `response` NULL until the
//! response is complete (`response` stays NULL for a charged response too
//! large to store: a reference, replayed by running again under the same
//! ledger id); `created_at` (unix seconds) for the 24-hour window.

use crate::{Backend, Bill, Charge, Store, StoreResult, sqlite};

/// How long a key is remembered (Stripe: 24 hours).
pub const IDEMPOTENCY_TTL_S: i64 = 24 * 60 * 60;

/// A completed response, as stored and answered again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredResponse {
    pub status: u16,
    /// The original `X-Credits-Charged`.
    pub credits: i64,
    /// The response body (JSON text).
    pub body: String,
}

/// What claiming a key found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// Run the request, charging under `request_id` (a fresh one, or the id
    /// of a first attempt that never completed: its charge, if it committed,
    /// is not taken again).
    Run { request_id: String },
    /// The key's first request completed with this response.
    Replay(StoredResponse),
    /// The key's first request completed, charged, with a response too large
    /// to store: it is replayed by running the request again under its
    /// ledger `request_id` (already charged, so not charged again), answered
    /// as a replay of `status` that cost `credits`.
    Rerun {
        request_id: String,
        status: u16,
        credits: i64,
    },
    /// The key was used for a different request.
    Conflict,
}

impl super::StoreError {
    /// The database stayed locked by another writer past the busy timeout.
    pub fn is_busy(&self) -> bool {
        matches!(
            self,
            super::StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _))
                if matches!(e.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    }
}

impl Store {
    /// The balance, read while holding the write lock for a moment: the
    /// pre-check takes it so that a database another process keeps locked
    /// past the busy timeout fails the parse (`503 store_busy`) before any
    /// upstream request, not at the charge after them. Writes nothing.
    ///
    /// On SQLite it never waits for the writer thread's group: while that
    /// thread holds the write lock no other process can, so the balance is
    /// read on a read-only connection (the last committed balance; the
    /// charge itself still checks it).
    pub fn balance_for_charge(&self, account: &str) -> StoreResult<i64> {
        match &self.backend {
            // What cannot wait is answered at once; the rest waits for the
            // connection and, up to the busy timeout, for the write lock.
            Backend::Sqlite(db) => self
                .balance_for_charge_now(db, account)
                .unwrap_or_else(|| self.with(|c| sqlite::idempotency::balance_locked(c, account))),
            Backend::Postgres(p) => p.balance_for_charge(account),
        }
    }

    /// [`Store::balance_for_charge`] for async callers (the pre-check). On
    /// PostgreSQL a plain read on the async pool, holding no thread. On
    /// SQLite it is answered on the calling thread whenever that cannot
    /// wait: the writer connection is free and no other process holds the
    /// write lock (a moment's lock with no busy wait), or this store's writer
    /// thread holds the lock (a reader answers); otherwise (another caller
    /// holds the connection, another process the lock) the blocking read
    /// runs on a blocking thread, waiting as the blocking method does.
    pub async fn balance_for_charge_async(&self, account: &str) -> StoreResult<i64> {
        let db = match &self.backend {
            Backend::Postgres(p) => return p.balance_for_charge_async(account).await,
            Backend::Sqlite(db) => db,
        };
        if let Some(now) = self.balance_for_charge_now(db, account) {
            return now;
        }
        let account = account.to_string();
        mediaparse_core::handoffs::trip();
        self.off_thread(move |s| s.balance_for_charge(&account))
            .await
    }

    /// SQLite's [`Store::balance_for_charge`] if it can be answered without
    /// waiting (see [`Store::balance_for_charge_async`]); `None` if it would wait.
    fn balance_for_charge_now(
        &self,
        db: &sqlite::Sqlite,
        account: &str,
    ) -> Option<StoreResult<i64>> {
        match db.writer.try_lock() {
            Ok(mut c) => sqlite::idempotency::balance_locked_now(&mut c, account),
            Err(std::sync::TryLockError::Poisoned(p)) => {
                sqlite::idempotency::balance_locked_now(&mut p.into_inner(), account)
            }
            Err(std::sync::TryLockError::WouldBlock) if db.queue.holds_write_lock() => {
                Some(self.read(|c| sqlite::idempotency::balance(c, account)))
            }
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// Claim `idempotency_key` of `key_id` for the request `fingerprint`;
    /// `fresh_request_id` becomes its ledger id if the key is new. Keys
    /// older than [`IDEMPOTENCY_TTL_S`] are forgotten here.
    pub fn claim_idempotency_key(
        &self,
        key_id: &str,
        idempotency_key: &str,
        fingerprint: &str,
        fresh_request_id: &str,
        now: i64,
    ) -> StoreResult<Claim> {
        match &self.backend {
            Backend::Sqlite(_) => self.write(sqlite::idempotency::claim_work(
                key_id,
                idempotency_key,
                fingerprint,
                fresh_request_id,
                now,
            )),
            Backend::Postgres(p) => {
                p.claim_idempotency_key(key_id, idempotency_key, fingerprint, fresh_request_id, now)
            }
        }
    }

    /// Store the completed response of a claimed key.
    pub fn complete_idempotency_key(
        &self,
        key_id: &str,
        idempotency_key: &str,
        response: &StoredResponse,
    ) -> StoreResult<()> {
        match &self.backend {
            Backend::Sqlite(_) => self.write(sqlite::idempotency::complete_work(
                key_id,
                idempotency_key,
                response,
            )),
            Backend::Postgres(p) => p.complete_idempotency_key(key_id, idempotency_key, response),
        }
    }

    /// Complete a claimed key whose charged response is too large to store
    /// with a reference instead: its status and cost, replayed by running
    /// the request again under its ledger id ([`Claim::Rerun`]).
    pub fn complete_idempotency_key_by_reference(
        &self,
        key_id: &str,
        idempotency_key: &str,
        status: u16,
        credits: i64,
    ) -> StoreResult<()> {
        match &self.backend {
            Backend::Sqlite(_) => self.write(sqlite::idempotency::complete_by_reference_work(
                key_id,
                idempotency_key,
                status,
                credits,
            )),
            Backend::Postgres(p) => {
                p.complete_idempotency_key_by_reference(key_id, idempotency_key, status, credits)
            }
        }
    }

    /// Forget a claimed key whose request did not complete (an overload, a
    /// timeout, an internal error: the client may retry it as new), unless
    /// its request id was charged.
    pub fn release_idempotency_key(&self, key_id: &str, idempotency_key: &str) -> StoreResult<()> {
        match &self.backend {
            Backend::Sqlite(_) => {
                self.write(sqlite::idempotency::release_work(key_id, idempotency_key))
            }
            Backend::Postgres(p) => p.release_idempotency_key(key_id, idempotency_key),
        }
    }

    /// Keep the client's `X-Request-Id` beside the server's ledger id.
    pub fn set_client_request_id(
        &self,
        request_id: &str,
        client_request_id: &str,
    ) -> StoreResult<()> {
        match &self.backend {
            Backend::Sqlite(_) => self.write(sqlite::idempotency::client_request_id_work(
                request_id,
                client_request_id,
            )),
            Backend::Postgres(p) => p.set_client_request_id(request_id, client_request_id),
        }
    }

    /// One try of [`Store::charge_once`]: on PostgreSQL a lost connection
    /// answers `Unavailable` at once instead of being retried here, so an
    /// async caller can wait between tries without holding a thread
    /// (`billing::charge_settled`). Retrying with the same `request_id` is
    /// safe: a charge that landed is answered `Charged`.
    pub fn charge_attempt(&self, bill: &Bill, now: i64) -> StoreResult<Charge> {
        match &self.backend {
            Backend::Postgres(p) => p.charge_attempt(bill, now),
            Backend::Sqlite(_) => self.charge_bill(bill, now),
        }
    }

    /// [`Store::charge`], at most once per `request_id`: a request id that
    /// already has its ledger row for the same account, key and platform is
    /// answered `Charged` without a new debit (the retry of a first attempt
    /// whose answer was lost); a row of another charge under that id is
    /// [`super::StoreError::LedgerIdTaken`], never a free pass. Like every
    /// statement on the parse path, its statements are prepared once per
    /// connection (`prepare_cached`), not parsed per call.
    pub fn charge_once(
        &self,
        account: &str,
        key_id: &str,
        platform: &str,
        credits: i64,
        request_id: &str,
        now: i64,
    ) -> StoreResult<Charge> {
        self.charge_bill(
            &Bill::new(account, key_id, platform, credits, request_id),
            now,
        )
    }

    /// [`Store::charge_once`] of a [`Bill`].
    pub fn charge_bill(&self, bill: &Bill, now: i64) -> StoreResult<Charge> {
        match &self.backend {
            Backend::Sqlite(_) => self.write(sqlite::idempotency::charge_work(bill.clone(), now)),
            Backend::Postgres(p) => p.charge_once(bill, now),
        }
    }
}

/// What a claimed row says: another request, a stored response, a
/// reference to re-run, or a request to run.
pub(crate) fn claim_of(
    fingerprint: &str,
    stored_fingerprint: String,
    request_id: String,
    status: Option<u16>,
    credits: Option<i64>,
    body: Option<String>,
) -> Claim {
    match (status, credits, body) {
        _ if stored_fingerprint != fingerprint => Claim::Conflict,
        (Some(status), Some(credits), Some(body)) => Claim::Replay(StoredResponse {
            status,
            credits,
            body,
        }),
        (Some(status), Some(credits), None) => Claim::Rerun {
            request_id,
            status,
            credits,
        },
        _ => Claim::Run { request_id },
    }
}

/// Whether an existing ledger row `(account, key, platform)` is the row of
/// this charge: only then does a repeated request id mean "already charged".
pub(crate) fn same_charge(
    row: &(String, String, String),
    account: &str,
    key_id: &str,
    platform: &str,
    request_id: &str,
) -> StoreResult<()> {
    if row.0 == account && row.1 == key_id && row.2 == platform {
        Ok(())
    } else {
        Err(super::StoreError::LedgerIdTaken(request_id.to_string()))
    }
}
