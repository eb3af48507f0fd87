//! Idempotency keys on every door that parses (Stripe's semantics). Under
//! one API key, a key names one request for 24 hours:
//! - the first request runs and its completed answer is stored (typed: a
//!   [`ParseAnswer`], which each door renders again);
//! - a repeat answers that answer again (the original cost, marked
//!   replayed), charging nothing;
//! - a repeat arriving while the first runs waits for it;
//! - the same key with a different request answers `422 idempotency_conflict`.
//!
//! Only completed answers are stored: an overload, a rate limit, a timeout
//! or a server error releases the key (nothing was charged; retry as new).
//! Every charge is taken under the request id the key was first claimed
//! with, at most once (`Store::charge_once`), so a retry after a crash that
//! lost the first answer runs again without a second charge.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, LazyLock, Mutex, Weak};

use sha2::{Digest, Sha256};

use super::answer::{Outcome, ParseAnswer, Shape};
use mediaparse_core::ApiError;
use mediaparse_core::ErrorCode;
use mediaparse_core::api_error::internal;
use mediaparse_store::{Claim, KeyRecord, Store, StoreError, StoredResponse};

/// The longest key accepted (Stripe's limit).
pub const MAX_KEY_BYTES: usize = 255;
/// The largest answer stored; a larger charged one is stored as a
/// reference (a replay runs again under the same ledger id, so without a
/// second charge), a larger free one not at all.
pub const MAX_STORED_BYTES: usize = 1 << 20;

/// A valid idempotency key: 1–255 visible ASCII characters.
pub fn validate(key: &str) -> Result<String, ApiError> {
    if key.is_empty() || key.len() > MAX_KEY_BYTES || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ApiError::invalid_request(format!(
            "Idempotency-Key must be 1 to {MAX_KEY_BYTES} visible ASCII characters"
        )));
    }
    Ok(key.to_string())
}

/// What makes two requests "the same": the door and its inputs, each
/// length-prefixed so no two lists hash alike.
pub fn fingerprint(parts: &[&str]) -> String {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part.as_bytes());
    }
    hex::encode(hash.finalize())
}

/// A call's idempotency key and what the door says makes its request.
#[derive(Clone, Debug)]
pub struct Idempotency {
    /// The caller's key (checked by [`validate`]).
    pub key: String,
    /// The request's [`fingerprint`].
    pub fingerprint: String,
}

/// The ids a call is charged and logged under. The one rule of every door
/// that charges: the ledger id is minted by the server, never taken from a
/// client header; only [`RequestIds::of`] builds one (the fields are private).
#[derive(Clone, Debug)]
pub struct RequestIds {
    /// The server's ledger request id (unique in the database).
    ledger: String,
    /// The client's `X-Request-Id`, kept beside it (logs and echo only).
    client: Option<String>,
}

impl RequestIds {
    /// `request_id` is the request's id (the server's own unless the client
    /// sent one as `client`); a client's id gets a fresh server ledger id.
    pub fn of(request_id: &str, client: Option<&str>) -> RequestIds {
        match client {
            Some(c) => RequestIds {
                ledger: mediaparse_core::ids::new_request_id(),
                client: Some(c.to_string()),
            },
            None => RequestIds {
                ledger: request_id.to_string(),
                client: None,
            },
        }
    }

    /// The id the call is charged under.
    pub fn ledger(&self) -> &str {
        &self.ledger
    }
}

/// Whether an answer is final (stored and answered again): a success or a
/// client error the same request would meet again; never one worth retrying.
fn is_final(status: u16) -> bool {
    status < 500 && !matches!(status, 408 | 409 | 429)
}

/// The per-process lock of each key in flight: a duplicate waits here for
/// the first request to finish.
static IN_FLIGHT: LazyLock<Mutex<HashMap<String, Weak<tokio::sync::Mutex<()>>>>> =
    LazyLock::new(Default::default);

fn key_lock(name: &str) -> Arc<tokio::sync::Mutex<()>> {
    let mut map = IN_FLIGHT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(lock) = map.get(name).and_then(Weak::upgrade) {
        return lock;
    }
    map.retain(|_, w| w.strong_count() > 0);
    let lock = Arc::new(tokio::sync::Mutex::new(()));
    map.insert(name.to_string(), Arc::downgrade(&lock));
    lock
}

/// A store failure as the parse path reports one (`database_unavailable`,
/// `store_busy`, else internal).
fn store_refusal(e: StoreError) -> ApiError {
    ApiError::from(mediaparse_parse::ParseError::from(e))
}

/// Run `run` (given the ledger request id to charge under) once for
/// `guard`'s key of `key`'s holder, or give its stored answer again.
pub async fn once<A, F, Fut>(
    store: &Store,
    key: &KeyRecord,
    guard: &Idempotency,
    ids: &RequestIds,
    shape: Shape,
    run: F,
) -> A
where
    A: Completed,
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = A>,
{
    let lock = key_lock(&format!("{}\u{0}{}", key.id, guard.key));
    let _held = lock.lock().await;
    mediaparse_core::handoffs::trip();
    let claim = store
        .claim_idempotency_key_async(
            &key.id,
            &guard.key,
            &guard.fingerprint,
            &ids.ledger,
            mediaparse_core::clock::unix_now_s(),
        )
        .await
        .map_err(store_refusal);
    let refused = |e: ApiError| A::refused(&ids.ledger, shape, e);
    let request_id = match claim {
        Err(e) => return refused(e),
        Ok(Claim::Conflict) => {
            return refused(ApiError::new(
                ErrorCode::IdempotencyConflict,
                "this Idempotency-Key was used for a different request in the last 24 hours",
            ));
        }
        Ok(Claim::Replay(stored)) => return replay(stored, shape),
        Ok(Claim::Rerun {
            request_id,
            status,
            credits,
        }) => {
            // Its charge is in the ledger under `request_id`: running again
            // takes nothing. The same answer says what the first one cost.
            return run(request_id).await.rerun_of(status, credits);
        }
        Ok(Claim::Run { request_id }) => request_id,
    };
    let answer = run(request_id.clone()).await;
    let body = match serde_json::to_string(&answer) {
        Ok(b) => b,
        Err(e) => return refused(internal(e)),
    };
    let stored = StoredResponse {
        status: answer.status(),
        credits: answer.charged(),
        body,
    };
    match keep(store, key, guard, ids, &request_id, &stored).await {
        Ok(()) => answer,
        // Not stored: the claim stays (a charged one keeps its ledger id),
        // so a retry runs again without a second charge.
        Err(e) => refused(e),
    }
}

/// Store a completed answer under its key (with the client's request id
/// beside a charged one), by reference, or release the key.
async fn keep(
    store: &Store,
    key: &KeyRecord,
    guard: &Idempotency,
    ids: &RequestIds,
    request_id: &str,
    stored: &StoredResponse,
) -> Result<(), ApiError> {
    mediaparse_core::handoffs::trip();
    if stored.credits > 0
        && let Some(client) = &ids.client
    {
        store
            .set_client_request_id_async(request_id, client)
            .await
            .map_err(store_refusal)?;
    }
    let (key_id, idem) = (key.id.as_str(), guard.key.as_str());
    match Storing::of(stored) {
        Storing::Whole => {
            store
                .complete_idempotency_key_async(key_id, idem, stored)
                .await
        }
        Storing::Reference => {
            store
                .complete_idempotency_key_by_reference_async(
                    key_id,
                    idem,
                    stored.status,
                    stored.credits,
                )
                .await
        }
        Storing::Nothing => store.release_idempotency_key_async(key_id, idem).await,
    }
    .map_err(store_refusal)
}

/// A stored answer given again: typed, or an earlier version's own bytes
/// (a REST envelope or an MCP tool result, never a typed answer's text).
fn replay<A: Completed>(stored: StoredResponse, shape: Shape) -> A {
    match serde_json::from_str::<A>(&stored.body) {
        Ok(answer) => answer.replayed(),
        Err(e) if is_typed(&stored.body) => A::refused(
            "",
            shape,
            internal(format!("stored answer unreadable: {e}")),
        ),
        Err(_) => A::from_earlier_bytes(stored, shape),
    }
}

/// An answer an idempotency key stores and gives again: a parse's, or a
/// batch's.
pub trait Completed: Sized + serde::Serialize + serde::de::DeserializeOwned {
    /// The status it stands for (only a final one is stored).
    fn status(&self) -> u16;
    /// Credits it took.
    fn charged(&self) -> i64;
    /// A refusal under `request_id`, nothing charged.
    fn refused(request_id: &str, shape: Shape, error: ApiError) -> Self;
    /// This answer, given again.
    fn replayed(self) -> Self;
    /// This answer of a run again under a charged ledger id: it says what the
    /// first answer (`status`, `credits`) cost when it is that answer again.
    fn rerun_of(self, status: u16, credits: i64) -> Self;
    /// An answer an earlier version stored as a door's own bytes.
    fn from_earlier_bytes(stored: StoredResponse, shape: Shape) -> Self;
}

impl Completed for ParseAnswer {
    fn status(&self) -> u16 {
        ParseAnswer::status(self)
    }

    fn charged(&self) -> i64 {
        self.charged
    }

    fn refused(request_id: &str, shape: Shape, error: ApiError) -> Self {
        ParseAnswer::refused(request_id, shape, error)
    }

    fn replayed(mut self) -> Self {
        self.replayed = true;
        self
    }

    fn rerun_of(mut self, status: u16, credits: i64) -> Self {
        self.charged = if ParseAnswer::status(&self) == status {
            credits
        } else {
            0
        };
        self.replayed = true;
        self.cache = None;
        self
    }

    fn from_earlier_bytes(stored: StoredResponse, shape: Shape) -> Self {
        ParseAnswer {
            request_id: String::new(),
            charged: stored.credits,
            shape,
            outcome: Outcome::Stored(stored),
            cache: None,
            replayed: true,
        }
    }
}

/// Whether a stored body is a typed answer (not an earlier version's bytes).
fn is_typed(body: &str) -> bool {
    serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(body)
        .is_ok_and(|m| m.contains_key("requestId"))
}

/// How a completed answer is kept under its key.
enum Storing {
    /// A final answer: stored and answered again.
    Whole,
    /// A final, charged answer too large to store: its status and cost,
    /// replayed by running again under the same (charged) ledger id.
    Reference,
    /// Not final, or too large and free: the key is released (a charged
    /// claim is kept by the store, so its retry is not charged again).
    Nothing,
}

impl Storing {
    fn of(stored: &StoredResponse) -> Storing {
        if !is_final(stored.status) {
            Storing::Nothing
        } else if stored.body.len() <= MAX_STORED_BYTES {
            Storing::Whole
        } else if stored.credits > 0 {
            Storing::Reference
        } else {
            Storing::Nothing
        }
    }
}

/// Keep the client's `X-Request-Id` beside a charged call's ledger id
/// (the path without an idempotency key).
pub async fn record_client_id(store: &Store, ids: &RequestIds, charged: i64) {
    let Some(client) = ids.client.clone().filter(|_| charged > 0) else {
        return;
    };
    if let Err(e) = store
        .set_client_request_id_async(&ids.ledger, &client)
        .await
    {
        tracing::warn!(error = %e, "could not keep the client's request id");
    }
}

#[cfg(test)]
mod tests;
