//! The parse path's writes for async callers: on SQLite each queues for the
//! writer thread (`sqlite::writer`) and is awaited without holding a thread,
//! sharing its group's commit; on PostgreSQL the blocking call runs on a
//! blocking thread. Same semantics as the blocking methods of
//! `idempotency` (the SQLite work is theirs).

use super::{Backend, Bill, Charge, Claim, Store, StoreError, StoreResult, StoredResponse};
use crate::sqlite::idempotency::{
    charge_work, claim_work, client_request_id_work, complete_by_reference_work, complete_work,
    release_work,
};

impl Store {
    /// [`Store::charge_attempt`], awaited.
    pub async fn charge_attempt_async(&self, bill: &Bill, now: i64) -> StoreResult<Charge> {
        if let Backend::Sqlite(_) = self.backend {
            return self.write_async(charge_work(bill.clone(), now)).await;
        }
        let bill = bill.clone();
        self.blocking(move |s| s.charge_attempt(&bill, now)).await
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
        if let Backend::Sqlite(_) = self.backend {
            let work = claim_work(key_id, idempotency_key, fingerprint, fresh_request_id, now);
            return self.write_async(work).await;
        }
        let (key_id, idempotency_key) = (key_id.to_string(), idempotency_key.to_string());
        let (fingerprint, fresh) = (fingerprint.to_string(), fresh_request_id.to_string());
        self.blocking(move |s| {
            s.claim_idempotency_key(&key_id, &idempotency_key, &fingerprint, &fresh, now)
        })
        .await
    }

    /// [`Store::complete_idempotency_key`], awaited.
    pub async fn complete_idempotency_key_async(
        &self,
        key_id: &str,
        idempotency_key: &str,
        response: &StoredResponse,
    ) -> StoreResult<()> {
        if let Backend::Sqlite(_) = self.backend {
            let work = complete_work(key_id, idempotency_key, response);
            return self.write_async(work).await;
        }
        let (key_id, idempotency_key) = (key_id.to_string(), idempotency_key.to_string());
        let response = response.clone();
        self.blocking(move |s| s.complete_idempotency_key(&key_id, &idempotency_key, &response))
            .await
    }

    /// [`Store::complete_idempotency_key_by_reference`], awaited.
    pub async fn complete_idempotency_key_by_reference_async(
        &self,
        key_id: &str,
        idempotency_key: &str,
        status: u16,
        credits: i64,
    ) -> StoreResult<()> {
        if let Backend::Sqlite(_) = self.backend {
            let work = complete_by_reference_work(key_id, idempotency_key, status, credits);
            return self.write_async(work).await;
        }
        let (key_id, idempotency_key) = (key_id.to_string(), idempotency_key.to_string());
        self.blocking(move |s| {
            s.complete_idempotency_key_by_reference(&key_id, &idempotency_key, status, credits)
        })
        .await
    }

    /// [`Store::release_idempotency_key`], awaited.
    pub async fn release_idempotency_key_async(
        &self,
        key_id: &str,
        idempotency_key: &str,
    ) -> StoreResult<()> {
        if let Backend::Sqlite(_) = self.backend {
            return self
                .write_async(release_work(key_id, idempotency_key))
                .await;
        }
        let (key_id, idempotency_key) = (key_id.to_string(), idempotency_key.to_string());
        self.blocking(move |s| s.release_idempotency_key(&key_id, &idempotency_key))
            .await
    }

    /// [`Store::set_client_request_id`], awaited.
    pub async fn set_client_request_id_async(
        &self,
        request_id: &str,
        client_request_id: &str,
    ) -> StoreResult<()> {
        if let Backend::Sqlite(_) = self.backend {
            let work = client_request_id_work(request_id, client_request_id);
            return self.write_async(work).await;
        }
        let (request_id, client) = (request_id.to_string(), client_request_id.to_string());
        self.blocking(move |s| s.set_client_request_id(&request_id, &client))
            .await
    }

    /// PostgreSQL: one blocking store call on a blocking thread.
    pub(crate) async fn blocking<T: Send + 'static>(
        &self,
        call: impl FnOnce(&Store) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || call(&store))
            .await
            .map_err(|e| StoreError::Invalid(format!("store task: {e}")))?
    }
}
