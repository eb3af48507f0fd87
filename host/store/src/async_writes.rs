//! The parse path's writes for async callers: on SQLite each queues for the
//! writer thread (`sqlite::writer`) and is awaited without holding a thread,
//! sharing its group's commit; on PostgreSQL each runs on the async pool
//! (`pg/async_pool.rs`), also without holding a thread. Same semantics as
//! the blocking methods of `idempotency` (the SQLite work is theirs, the
//! PostgreSQL statements are the same).

use super::{Backend, Bill, Charge, Claim, Store, StoreResult, StoredResponse};
use crate::sqlite::idempotency::{
    charge_work, claim_work, client_request_id_work, complete_by_reference_work, complete_work,
    release_work,
};

impl Store {
    /// [`Store::charge_attempt`], awaited.
    pub async fn charge_attempt_async(&self, bill: &Bill, now: i64) -> StoreResult<Charge> {
        match &self.backend {
            Backend::Sqlite(_) => self.write_async(charge_work(bill.clone(), now)).await,
            Backend::Postgres(p) => p.charge_attempt_async(bill, now).await,
        }
    }

    /// [`Store::claim_idempotency_key`], awaited.
    pub async fn claim_idempotency_key_async(
        &self,
        key_id: &str,
        idempotency_key: &str,
        fingerprint: &str,
        fresh_request_id: &str,
        now: i64,
    ) -> StoreResult<Claim> {
        match &self.backend {
            Backend::Sqlite(_) => {
                let work = claim_work(key_id, idempotency_key, fingerprint, fresh_request_id, now);
                self.write_async(work).await
            }
            Backend::Postgres(p) => {
                p.claim_idempotency_key_async(
                    key_id,
                    idempotency_key,
                    fingerprint,
                    fresh_request_id,
                    now,
                )
                .await
            }
        }
    }

    /// [`Store::complete_idempotency_key`], awaited.
    pub async fn complete_idempotency_key_async(
        &self,
        key_id: &str,
        idempotency_key: &str,
        response: &StoredResponse,
    ) -> StoreResult<()> {
        match &self.backend {
            Backend::Sqlite(_) => {
                let work = complete_work(key_id, idempotency_key, response);
                self.write_async(work).await
            }
            Backend::Postgres(p) => {
                p.complete_idempotency_key_async(key_id, idempotency_key, response)
                    .await
            }
        }
    }

    /// [`Store::complete_idempotency_key_by_reference`], awaited.
    pub async fn complete_idempotency_key_by_reference_async(
        &self,
        key_id: &str,
        idempotency_key: &str,
        status: u16,
        credits: i64,
    ) -> StoreResult<()> {
        match &self.backend {
            Backend::Sqlite(_) => {
                let work = complete_by_reference_work(key_id, idempotency_key, status, credits);
                self.write_async(work).await
            }
            Backend::Postgres(p) => {
                p.complete_idempotency_key_by_reference_async(
                    key_id,
                    idempotency_key,
                    status,
                    credits,
                )
                .await
            }
        }
    }

    /// [`Store::release_idempotency_key`], awaited.
    pub async fn release_idempotency_key_async(
        &self,
        key_id: &str,
        idempotency_key: &str,
    ) -> StoreResult<()> {
        match &self.backend {
            Backend::Sqlite(_) => {
                self.write_async(release_work(key_id, idempotency_key))
                    .await
            }
            Backend::Postgres(p) => {
                p.release_idempotency_key_async(key_id, idempotency_key)
                    .await
            }
        }
    }

    /// [`Store::set_client_request_id`], awaited.
    pub async fn set_client_request_id_async(
        &self,
        request_id: &str,
        client_request_id: &str,
    ) -> StoreResult<()> {
        match &self.backend {
            Backend::Sqlite(_) => {
                let work = client_request_id_work(request_id, client_request_id);
                self.write_async(work).await
            }
            Backend::Postgres(p) => {
                p.set_client_request_id_async(request_id, client_request_id)
                    .await
            }
        }
    }
}
