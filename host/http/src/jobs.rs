//! `/api/v1/jobs`: a batch run in the background (`mediaparse_jobs`).
//!
//! - `POST /api/v1/jobs` — the batch body plus an optional `callback_url`;
//!   checked as a batch is (key, body, `1–50` items, query, the key's rate
//!   limit counting every item) and the callback URL against the webhook
//!   destination rules (`400 invalid_callback_url`); `202` with `data.id`,
//!   `data.state` and `Location: /api/v1/jobs/{id}`.
//! - `GET /api/v1/jobs/{id}[?wait=N]` — the job's state and, once done, its
//!   items as a batch answers them; `wait` (1–30 s) holds the answer until
//!   the job is done or the time passed. Another account's job is `404`.
//! - `GET /api/v1/jobs/{id}/events` — server-sent events: `item`
//!   (`{"index":i,"item":<the item's body>}`) per finished item, the
//!   finished ones first, then `done` (`{"id","state":"done"}`).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::convert::Infallible;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use super::batch::fingerprint_parts;
use super::body::JobInput;
use super::envelope::{ApiError, credits_zero_unless_set, store_failure};
use super::extract::{ApiKey, JsonBody};
use super::idempotency;
use super::parse::Doorstep;
use super::rate_headers::{self, RateSlot};
use super::state::AppState;
use mediaparse_call::Idempotency;
use mediaparse_core::ErrorCode;
use mediaparse_jobs::{
    JobRequest, JobSignal, JobView, Jobs, MAX_WAIT_S, OTHER_HOST_POLL, Submission, Submit,
};

pub fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/api/v1/jobs", post(submit))
        .route("/api/v1/jobs/{id}", get(read))
        .route("/api/v1/jobs/{id}/events", get(events))
        .layer(axum::middleware::map_response(credits_zero_unless_set))
        .layer(axum::middleware::from_fn(rate_headers::layer))
}

async fn submit(
    State(state): State<Arc<AppState>>,
    ApiKey(key): ApiKey,
    slot: Option<axum::Extension<RateSlot>>,
    step: Doorstep,
    JsonBody(input): JsonBody<JobInput>,
) -> Response {
    let (raw_delivery, delivery) = match step.delivery {
        Ok(d) => d,
        Err(e) => return e.into_response(),
    };
    if let Some(url) = &input.callback_url
        && let Err(e) = state.webhooks.check_url(url)
    {
        return ApiError::new(ErrorCode::InvalidCallbackUrl, e.to_string()).into_response();
    }
    let idempotency = match step.idempotency_key {
        Ok(k) => k.map(|key| Idempotency {
            // The batch's parts, then the callback URL.
            fingerprint: idempotency::fingerprint(
                &[
                    fingerprint_parts("job", &raw_delivery, &input.items),
                    vec![input.callback_url.as_deref().unwrap_or("")],
                ]
                .concat(),
            ),
            key,
        }),
        Err(e) => return e.into_response(),
    };
    let default = state.services.config.load().limits.rate_limit_per_minute;
    let n = NonZeroU32::new(input.items.len() as u32).unwrap_or(NonZeroU32::MIN);
    let slot = slot.map(|axum::Extension(s)| s);
    if let Err(e) = rate_headers::check_n(&state.rate_limits, &key, default, slot.as_ref(), n).await
    {
        return e.into_response();
    }
    let request = JobRequest::new(&input.items, delivery, step.cache);
    let submission = state
        .jobs
        .submit(Submit {
            key: &key,
            request: &request,
            callback_url: input.callback_url,
            idempotency,
            ids: &step.ids,
        })
        .await;
    render_submission(&submission)
}

/// A submission over HTTP: `202` with `data.id`, `data.state` and
/// `Location`, or the refusal; `Idempotent-Replayed` on a replay.
fn render_submission(submission: &Submission) -> Response {
    let job = match submission.outcome() {
        Ok(job) => job,
        Err(e) => return e.into_response(),
    };
    let body = serde_json::json!({
        "status": 202,
        "data": {"id": job.id, "state": job.state},
        "msg": "accepted",
    });
    let mut response = (
        StatusCode::ACCEPTED,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body.to_string(),
    )
        .into_response();
    let headers = response.headers_mut();
    if let Ok(location) = HeaderValue::from_str(&format!("/api/v1/jobs/{}", job.id)) {
        headers.insert(header::LOCATION, location);
    }
    if submission.replayed {
        headers.insert(
            idempotency::REPLAYED_HEADER,
            HeaderValue::from_static("true"),
        );
    }
    response
}

/// `?wait=N`: whole seconds, 1 to [`MAX_WAIT_S`].
fn wait_of(query: &HashMap<String, String>) -> Result<Option<Duration>, ApiError> {
    if let Some(other) = query.keys().find(|k| *k != "wait") {
        return Err(ApiError::invalid_request(format!(
            "unknown query parameter `{other}`; only `wait` is accepted"
        )));
    }
    let Some(raw) = query.get("wait") else {
        return Ok(None);
    };
    match raw.parse::<u64>() {
        Ok(n) if (1..=MAX_WAIT_S).contains(&n) => Ok(Some(Duration::from_secs(n))),
        _ => Err(ApiError::invalid_request(format!(
            "`wait` is a whole number of seconds from 1 to {MAX_WAIT_S}"
        ))),
    }
}

fn not_found(id: &str) -> ApiError {
    ApiError::new(ErrorCode::JobNotFound, format!("no job {id:?}"))
}

async fn read(
    State(state): State<Arc<AppState>>,
    ApiKey(key): ApiKey,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Response {
    let query: HashMap<String, String> =
        url::form_urlencoded::parse(query.unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    let wait = match wait_of(&query) {
        Ok(w) => w,
        Err(e) => return e.into_response(),
    };
    let found = match wait {
        Some(wait) => state.jobs.wait(&id, &key.account_id, wait).await,
        None => state.jobs.find(&id, &key.account_id).await,
    };
    match found {
        Ok(Some(view)) => (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            view.body(),
        )
            .into_response(),
        Ok(None) => not_found(&id).into_response(),
        Err(e) => store_failure(e).into_response(),
    }
}

/// What the event stream still has to say.
struct Stream {
    jobs: Jobs,
    id: String,
    account: String,
    signals: tokio::sync::broadcast::Receiver<JobSignal>,
    sent: BTreeSet<u32>,
    queue: VecDeque<Event>,
    over: bool,
}

impl Stream {
    /// Queue the items finished since the last look, and `done` once done.
    fn catch_up(&mut self, view: &JobView) {
        for (i, body) in &view.items {
            if self.sent.insert(*i) {
                self.queue.push_back(
                    Event::default()
                        .event("item")
                        .data(format!(r#"{{"index":{i},"item":{body}}}"#)),
                );
            }
        }
        if view.done() {
            self.queue.push_back(
                Event::default()
                    .event("done")
                    .data(serde_json::json!({"id": self.id, "state": "done"}).to_string()),
            );
            self.over = true;
        }
    }

    async fn next(mut self) -> Option<(Result<Event, Infallible>, Stream)> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                return Some((Ok(event), self));
            }
            if self.over {
                return None;
            }
            match self.jobs.find(&self.id, &self.account).await {
                Ok(Some(view)) => self.catch_up(&view),
                Ok(None) => return None,
                Err(e) => {
                    tracing::warn!(job = %self.id, error = %e, "job events: store read failed");
                }
            }
            if !self.queue.is_empty() || self.over {
                continue;
            }
            let id = self.id.clone();
            tokio::select! {
                _ = next_signal(&mut self.signals, &id) => {}
                _ = tokio::time::sleep(OTHER_HOST_POLL) => {}
            }
        }
    }
}

/// Until something happens to job `id` on this host (or signals were missed).
async fn next_signal(signals: &mut tokio::sync::broadcast::Receiver<JobSignal>, id: &str) {
    loop {
        match signals.recv().await {
            Ok(s) if &*s.job == id => return,
            Ok(_) => {}
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => return,
            Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                std::future::pending::<()>().await
            }
        }
    }
}

async fn events(
    State(state): State<Arc<AppState>>,
    ApiKey(key): ApiKey,
    Path(id): Path<String>,
) -> Response {
    // Subscribed before the first read: nothing finishing in between is missed.
    let signals = state.jobs.subscribe();
    let view = match state.jobs.find(&id, &key.account_id).await {
        Ok(Some(view)) => view,
        Ok(None) => return not_found(&id).into_response(),
        Err(e) => return store_failure(e).into_response(),
    };
    let mut stream = Stream {
        jobs: state.jobs.clone(),
        id,
        account: key.account_id.clone(),
        signals,
        sent: BTreeSet::new(),
        queue: VecDeque::new(),
        over: false,
    };
    stream.catch_up(&view);
    let events = futures::stream::unfold(stream, Stream::next);
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}
