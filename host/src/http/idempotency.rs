//! `Idempotency-Key` on the parse endpoints and the MCP `parse_media` tool
//! (Stripe's semantics). Under one API key, a key names one
//! request for 24 hours:
//! - the first request runs and its completed response is stored;
//! - a repeat answers that response again (status, body, the original
//!   `X-Credits-Charged`) with `Idempotent-Replayed: true`, charging nothing;
//! - a repeat arriving while the first runs waits for it;
//! - the same key with a different request answers `422 idempotency_conflict`.
//!
//! Only completed responses are stored: an overload, a rate limit, a timeout
//! or a server error releases the key (nothing was charged; retry as new).
//! Every charge is taken under the request id the key was first claimed
//! with, at most once (`Store::charge_once`), so a retry after a crash that
//! lost the first answer runs again without a second charge.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, LazyLock, Mutex, Weak};

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use super::envelope::{ApiError, CREDITS_HEADER, internal};
use super::request_id::{ClientRequestId, RequestId};
use crate::core::ErrorCode;
use crate::store::{Claim, KeyRecord, Store, StoredResponse};

pub const HEADER: &str = "idempotency-key";
/// Set on an answer given again for a repeated key.
pub const REPLAYED_HEADER: &str = "idempotent-replayed";
/// The longest key accepted (Stripe's limit).
pub const MAX_KEY_BYTES: usize = 255;
/// The largest response stored; a larger charged one is stored as a
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

/// The request's `Idempotency-Key` header, if any (checked).
pub fn from_headers(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    match headers.get(HEADER) {
        None => Ok(None),
        Some(v) => match v.to_str() {
            Ok(s) => validate(s).map(Some),
            Err(_) => Err(ApiError::invalid_request(
                "Idempotency-Key must be visible ASCII",
            )),
        },
    }
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

/// The ids a request is charged and logged under. The one rule of every
/// door that charges: the ledger id is minted by the server, never taken
/// from a client header; only [`RequestIds::of`] builds one (the fields
/// are private).
#[derive(Clone, Debug)]
pub struct RequestIds {
    /// The server's ledger request id (unique in the database).
    ledger: String,
    /// The client's `X-Request-Id`, kept beside it (logs and echo only).
    client: Option<String>,
}

impl RequestIds {
    /// The request id middleware's id is the server's own unless the client
    /// sent one; then the ledger gets a fresh server id.
    pub fn of(id: &RequestId, client: Option<&ClientRequestId>) -> RequestIds {
        match client {
            Some(c) => RequestIds {
                ledger: crate::core::ids::new_request_id(),
                client: Some(c.0.clone()),
            },
            None => RequestIds {
                ledger: id.0.clone(),
                client: None,
            },
        }
    }

    /// The id the request is charged under.
    pub fn ledger(&self) -> &str {
        &self.ledger
    }
}

/// A guarded request's answer.
pub enum Answer {
    /// It ran now.
    Fresh(StoredResponse),
    /// The key's first response, again.
    Replayed(StoredResponse),
}

/// Whether a response is final (stored and answered again): a success or a
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

async fn blocking<T: Send + 'static>(
    store: &Store,
    f: impl FnOnce(&Store) -> crate::store::StoreResult<T> + Send + 'static,
) -> Result<T, ApiError> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || f(&store))
        .await
        .map_err(internal)?
        .map_err(|e| {
            if e.is_busy() {
                ApiError::of(ErrorCode::StoreBusy)
            } else {
                internal(e)
            }
        })
}

/// Run `run` (given the ledger request id to charge under) once for
/// `idempotency_key` of `key`'s holder, or answer its stored response.
pub async fn once<F, Fut>(
    store: &Store,
    key: &KeyRecord,
    idempotency_key: &str,
    fingerprint: &str,
    ids: &RequestIds,
    run: F,
) -> Result<Answer, ApiError>
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = StoredResponse>,
{
    let lock = key_lock(&format!("{}\u{0}{idempotency_key}", key.id));
    let _held = lock.lock().await;
    let claim = blocking(store, {
        let (key_id, idem, fp, fresh) = (
            key.id.clone(),
            idempotency_key.to_string(),
            fingerprint.to_string(),
            ids.ledger.clone(),
        );
        move |s| {
            s.claim_idempotency_key(
                &key_id,
                &idem,
                &fp,
                &fresh,
                crate::core::clock::unix_now_s(),
            )
        }
    })
    .await?;
    let request_id = match claim {
        Claim::Conflict => {
            return Err(ApiError::new(
                ErrorCode::IdempotencyConflict,
                "this Idempotency-Key was used for a different request in the last 24 hours",
            ));
        }
        Claim::Replay(stored) => return Ok(Answer::Replayed(stored)),
        Claim::Rerun {
            request_id,
            status,
            credits,
        } => {
            // Its charge is in the ledger under `request_id`: running again
            // takes nothing. The same answer says what the first one cost.
            let mut again = run(request_id).await;
            again.credits = if again.status == status { credits } else { 0 };
            return Ok(Answer::Replayed(again));
        }
        Claim::Run { request_id } => request_id,
    };
    let response = run(request_id.clone()).await;
    let (key_id, idem, saved) = (
        key.id.clone(),
        idempotency_key.to_string(),
        response.clone(),
    );
    let client = ids.client.clone();
    let charged = response.credits > 0;
    let storing = Storing::of(&response);
    blocking(store, move |s| {
        if charged && let Some(client) = client {
            s.set_client_request_id(&request_id, &client)?;
        }
        match storing {
            Storing::Whole => s.complete_idempotency_key(&key_id, &idem, &saved),
            Storing::Reference => {
                s.complete_idempotency_key_by_reference(&key_id, &idem, saved.status, saved.credits)
            }
            Storing::Nothing => s.release_idempotency_key(&key_id, &idem),
        }
    })
    .await?;
    Ok(Answer::Fresh(response))
}

/// How a completed response is kept under its key.
enum Storing {
    /// A final response: stored and answered again.
    Whole,
    /// A final, charged response too large to store: its status and cost,
    /// replayed by running again under the same (charged) ledger id.
    Reference,
    /// Not final, or too large and free: the key is released (a charged
    /// claim is kept by the store, so its retry is not charged again).
    Nothing,
}

impl Storing {
    fn of(response: &StoredResponse) -> Storing {
        if !is_final(response.status) {
            Storing::Nothing
        } else if response.body.len() <= MAX_STORED_BYTES {
            Storing::Whole
        } else if response.credits > 0 {
            Storing::Reference
        } else {
            Storing::Nothing
        }
    }
}

/// Keep the client's `X-Request-Id` beside a charged request's ledger id
/// (the path without an idempotency key).
pub async fn record_client_id(store: &Store, ids: &RequestIds, charged: i64) {
    let Some(client) = ids.client.clone().filter(|_| charged > 0) else {
        return;
    };
    let ledger = ids.ledger.clone();
    if let Err(e) = blocking(store, move |s| s.set_client_request_id(&ledger, &client)).await {
        tracing::warn!(error = e.msg, "could not keep the client's request id");
    }
}

/// A stored JSON response as an HTTP answer.
pub fn http_response(stored: StoredResponse, replayed: bool) -> Response {
    let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        stored.body,
    )
        .into_response();
    let headers = response.headers_mut();
    headers.insert(CREDITS_HEADER, HeaderValue::from(stored.credits));
    if replayed {
        headers.insert(REPLAYED_HEADER, HeaderValue::from_static("true"));
    }
    response
}

/// An HTTP answer as a storable response (its body read whole, bounded).
pub async fn stored_of(response: Response) -> (StoredResponse, HeaderMap) {
    let (parts, body) = response.into_parts();
    let credits = parts
        .headers
        .get(CREDITS_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // The service's own answer, already in memory: read whole, never cut.
    let body = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            // Not final: the key is not stored whole, and a charged claim
            // is kept, so a retry runs again without a second charge.
            let e = internal(e);
            return (
                StoredResponse {
                    status: e.status().as_u16(),
                    credits,
                    body: e.envelope().to_string(),
                },
                parts.headers,
            );
        }
    };
    (
        StoredResponse {
            status: parts.status.as_u16(),
            credits,
            body,
        },
        parts.headers,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_bounded_visible_ascii() {
        assert!(validate("order-42_a.b").is_ok());
        assert!(validate(&"k".repeat(MAX_KEY_BYTES)).is_ok());
        assert!(validate(&"k".repeat(MAX_KEY_BYTES + 1)).is_err());
        assert!(validate("").is_err());
        assert!(validate("has space").is_err());
        assert!(validate("é").is_err());
    }

    #[test]
    fn fingerprints_tell_requests_apart() {
        assert_eq!(
            fingerprint(&["rest", "a", "b"]),
            fingerprint(&["rest", "a", "b"])
        );
        assert_ne!(
            fingerprint(&["rest", "ab", ""]),
            fingerprint(&["rest", "a", "b"])
        );
        assert_ne!(fingerprint(&["rest", "a"]), fingerprint(&["mcp", "a"]));
    }

    fn key() -> KeyRecord {
        KeyRecord {
            id: "k1".into(),
            account_id: "acme".into(),
            name: "test".into(),
            token_prefix: "mp_live_x".into(),
            expires_on: None,
            platforms: None,
            created_at: 0,
            rotated_at: None,
            rate_limit_per_minute: None,
        }
    }

    /// A parse run that charges 1 credit under its ledger id and answers
    /// `body_bytes` of JSON; counts its runs.
    async fn charged_run(
        store: &Store,
        request_id: String,
        body_bytes: usize,
        runs: &std::sync::atomic::AtomicUsize,
    ) -> StoredResponse {
        runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        store
            .charge_once("acme", "k1", "tiktok", 1, &request_id, 1)
            .unwrap();
        let filler = "m".repeat(body_bytes);
        let response = (
            StatusCode::OK,
            [(CREDITS_HEADER, HeaderValue::from(1))],
            axum::Json(serde_json::json!({"status": 200, "data": filler})),
        )
            .into_response();
        stored_of(response).await.0
    }

    #[tokio::test]
    async fn a_charged_answer_too_large_to_store_is_replayed_by_reference_uncharged() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
        store.add_credits("acme", 5, 0).unwrap();
        let ids = RequestIds::of(&RequestId(crate::core::ids::new_request_id()), None);
        let runs = std::sync::atomic::AtomicUsize::new(0);
        // Larger than what is stored, and than the old read cap of 4 MiB.
        let size = MAX_STORED_BYTES * 5;
        let mut answers = Vec::new();
        for _ in 0..3 {
            let answer = once(&store, &key(), "big", "fp", &ids, |id| {
                charged_run(&store, id, size, &runs)
            })
            .await
            .unwrap_or_else(|e| panic!("{}", e.msg));
            answers.push(answer);
        }
        let Answer::Fresh(first) = &answers[0] else {
            panic!("the first request runs");
        };
        assert_eq!((first.status, first.credits), (200, 1));
        assert!(first.body.len() > size, "the whole answer, never cut");
        for again in &answers[1..] {
            let Answer::Replayed(again) = again else {
                panic!("a repeat is a replay");
            };
            assert_eq!((again.status, again.credits), (200, 1), "the first cost");
            assert_eq!(again.body, first.body);
        }
        assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 3);
        assert_eq!(store.balance("acme").unwrap(), 4, "charged once");
        assert_eq!(store.ledger_count(None).unwrap(), 1);
    }

    #[test]
    fn only_final_answers_are_stored() {
        for s in [200, 400, 402, 404, 422] {
            assert!(is_final(s), "{s}");
        }
        for s in [408, 429, 500, 502, 503, 504] {
            assert!(!is_final(s), "{s}");
        }
    }
}
