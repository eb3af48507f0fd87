//! `POST /api/v1/batch`: up to 50 parses in one request (`call::batch`).
//! The checks run in order — key (401), body (415/413/400, a size outside
//! 1–50 items is `400 invalid_batch_size`), query and idempotency key
//! (400), then the key's rate limit, which counts every item (`429` with
//! `Retry-After` before any item runs when they do not all fit). The answer
//! is `200` with each item's own answer in request order;
//! `X-Credits-Charged` is their sum.

use std::num::NonZeroU32;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use super::body::BatchInput;
use super::envelope::{CREDITS_HEADER, credits_zero_unless_set};
use super::extract::{ApiKey, JsonBody};
use super::idempotency;
use super::parse::Doorstep;
use super::rate_headers::{self, RateSlot};
use super::state::AppState;
use mediaparse_call::Door;
use mediaparse_call::Idempotency;
use mediaparse_call::batch::{self, BatchAnswer, BatchCall, BatchItem};

pub fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/api/v1/batch", post(handle))
        .layer(axum::middleware::map_response(credits_zero_unless_set))
        .layer(axum::middleware::from_fn(rate_headers::layer))
}

async fn handle(
    State(state): State<Arc<AppState>>,
    ApiKey(key): ApiKey,
    slot: Option<axum::Extension<RateSlot>>,
    step: Doorstep,
    JsonBody(BatchInput(items)): JsonBody<BatchInput>,
) -> Response {
    let (raw_delivery, delivery) = match step.delivery {
        Ok(d) => d,
        Err(e) => return e.into_response(),
    };
    let idempotency = match step.idempotency_key {
        Ok(k) => k.map(|key| Idempotency {
            fingerprint: idempotency::fingerprint(&fingerprint_parts(
                "batch",
                &raw_delivery,
                &items,
            )),
            key,
        }),
        Err(e) => return e.into_response(),
    };
    let default = state.services.config.load().limits.rate_limit_per_minute;
    let n = NonZeroU32::new(items.len() as u32).unwrap_or(NonZeroU32::MIN);
    let slot = slot.map(|axum::Extension(s)| s);
    if let Err(e) = rate_headers::check_n(&state.rate_limits, &key, default, slot.as_ref(), n).await
    {
        return e.into_response();
    }
    let call = BatchCall {
        key: &key,
        door: Door::Batch,
        items: &items,
        delivery,
        idempotency,
        cache: step.cache,
        ids: step.ids,
    };
    render(&batch::answer(state.callee(), &call).await)
}

/// What makes two batches (or job submissions: `door`) "the same": the
/// door, the delivery asked for and every item's platform and input, in order.
pub fn fingerprint_parts<'a>(
    door: &'a str,
    raw_delivery: &'a str,
    items: &'a [BatchItem],
) -> Vec<&'a str> {
    let mut parts = vec![door, raw_delivery];
    for item in items {
        parts.push(item.platform.as_deref().unwrap_or(""));
        parts.push(&item.input);
    }
    parts
}

/// A batch answer over HTTP: `200` with every item's answer (or the whole
/// batch's refusal), what it cost (`X-Credits-Charged`, the items' sum) and
/// whether it is a replay (`Idempotent-Replayed`).
fn render(answer: &BatchAnswer) -> Response {
    let status = StatusCode::from_u16(answer.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        answer.body(),
    )
        .into_response();
    let headers = response.headers_mut();
    headers.insert(CREDITS_HEADER, HeaderValue::from(answer.charged()));
    if let Some(secs) = answer.refused.as_ref().and_then(|e| e.retry_after) {
        headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    if answer.replayed {
        headers.insert(
            idempotency::REPLAYED_HEADER,
            HeaderValue::from_static("true"),
        );
    }
    response
}
