//! Submitting a job, at most once per idempotency key.
//!
//! A job's id is made from the submitting request's ledger id
//! (`req_X` → `job_X`), so the same submission always names the same job:
//! - under an `Idempotency-Key`, a repeat answers the job the first
//!   submission queued (`202`, marked replayed) and queues nothing;
//! - a repeat of a submission whose answer was lost (the process died
//!   between queueing the job and storing the answer) claims the key's
//!   first ledger id again and finds its job already queued.
//!
//! The same key with a different body is `422 idempotency_conflict`, as on
//! every other door.

use serde::{Deserialize, Serialize};

use super::{JobRequest, Jobs};
use mediaparse_call::answer::Shape;
use mediaparse_call::idempotency::{self, Completed};
use mediaparse_call::{Idempotency, RequestIds};
use mediaparse_core::ApiError;
use mediaparse_core::api_error::internal;
use mediaparse_store::{JobRecord, KeyRecord, StoreError, StoredResponse};

/// One submission, as a door asks for it.
pub struct Submit<'a> {
    pub key: &'a KeyRecord,
    pub request: &'a JobRequest,
    pub callback_url: Option<String>,
    pub idempotency: Option<Idempotency>,
    pub ids: &'a RequestIds,
}

/// A queued job (`id`, `state` as it was queued).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Queued {
    pub id: String,
    pub state: String,
}

/// A submission's answer: the job queued, or why none was.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Submission {
    /// The ledger id of the request that queued the job.
    pub request_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<Queued>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<ApiError>,
    #[serde(skip)]
    pub replayed: bool,
}

impl Submission {
    /// The job queued, or the refusal.
    pub fn outcome(&self) -> Result<&Queued, ApiError> {
        match (&self.job, &self.refused) {
            (Some(job), None) => Ok(job),
            (_, Some(e)) => Err(e.clone()),
            (None, None) => Err(internal("a submission with neither job nor refusal")),
        }
    }
}

impl Completed for Submission {
    fn status(&self) -> u16 {
        self.refused.as_ref().map_or(202, |e| e.code.status())
    }

    fn charged(&self) -> i64 {
        0
    }

    fn refused(request_id: &str, _shape: Shape, error: ApiError) -> Self {
        Submission {
            request_id: request_id.to_string(),
            job: None,
            refused: Some(error),
            replayed: false,
        }
    }

    fn replayed(mut self) -> Self {
        self.replayed = true;
        self
    }

    fn rerun_of(self, _status: u16, _credits: i64) -> Self {
        self.replayed()
    }

    fn from_earlier_bytes(_stored: StoredResponse, shape: Shape) -> Self {
        Self::refused("", shape, internal("stored answer is not a job submission"))
    }
}

/// The job id a submission under ledger id `ledger` queues: `job_` and 32
/// hex digits, those of a server-minted `req_…` id, else of its SHA-256.
pub fn job_id_of(ledger: &str) -> String {
    let minted = ledger
        .strip_prefix("req_")
        .filter(|h| h.len() == 32 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
    match minted {
        Some(hex) => format!("job_{hex}"),
        None => {
            use sha2::{Digest, Sha256};
            let digest = hex::encode(Sha256::digest(ledger.as_bytes()));
            format!("job_{}", &digest[..32])
        }
    }
}

impl Jobs {
    /// Queue `submit`'s job, or, under an idempotency key already used for
    /// the same request, answer the job that request queued.
    pub async fn submit(&self, submit: Submit<'_>) -> Submission {
        let Some(guard) = &submit.idempotency else {
            return self.queue(&submit, submit.ids.ledger()).await;
        };
        idempotency::once(
            self.store(),
            submit.key,
            guard,
            submit.ids,
            Shape::Common,
            |ledger| {
                let submit = &submit;
                async move { self.queue(submit, &ledger).await }
            },
        )
        .await
    }

    /// Queue the job of the submission under ledger id `ledger` (or find it,
    /// if that submission already queued it).
    async fn queue(&self, submit: &Submit<'_>, ledger: &str) -> Submission {
        let refused = |e: ApiError| Submission::refused(ledger, Shape::Common, e);
        let request = match serde_json::to_string(submit.request) {
            Ok(r) => r,
            Err(e) => return refused(internal(format!("job request: {e}"))),
        };
        let record = JobRecord {
            id: job_id_of(ledger),
            account_id: submit.key.account_id.clone(),
            key_id: submit.key.id.clone(),
            request,
            callback_url: submit.callback_url.clone(),
            state: "queued".into(),
            item_count: submit.request.items.len() as u32,
            created_ms: mediaparse_webhooks::now_ms(),
            finished_ms: None,
        };
        let queued = self.insert_once(record).await;
        match queued {
            Ok(job) => {
                self.wake.notify_one();
                tracing::info!(job = %job.id, items = job.item_count, "job queued");
                Submission {
                    request_id: ledger.to_string(),
                    job: Some(Queued {
                        id: job.id,
                        state: job.state,
                    }),
                    refused: None,
                    replayed: false,
                }
            }
            Err(e) => refused(ApiError::from(mediaparse_parse::ParseError::from(e))),
        }
    }

    /// Keep `record` as a new job, or answer the job already kept under
    /// its id (the same account's; another account's is refused).
    async fn insert_once(&self, record: JobRecord) -> Result<JobRecord, StoreError> {
        match self.store().job_async(&record.id).await? {
            Some(found) if found.account_id == record.account_id => Ok(found),
            Some(_) => Err(StoreError::Invalid(format!(
                "job id {} already belongs to another account",
                record.id
            ))),
            None => {
                self.store().insert_job_async(&record).await?;
                Ok(record)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_id_is_its_submissions_ledger_id() {
        let minted = mediaparse_core::ids::new_request_id();
        assert_eq!(job_id_of(&minted), minted.replacen("req_", "job_", 1));
        // Any other ledger id still gives the documented shape, the same each time.
        for other in ["mcp_7", "req_01ABC", "req_0123456789ABCDEF0123456789abcdef"] {
            let id = job_id_of(other);
            assert_eq!(id, job_id_of(other));
            assert!(id.len() == 36 && id.starts_with("job_"), "{id}");
            assert!(
                id[4..]
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
                "{id}"
            );
        }
    }

    #[test]
    fn a_submission_is_stored_as_final_and_free() {
        let queued = Submission {
            request_id: "req_1".into(),
            job: Some(Queued {
                id: "job_1".into(),
                state: "queued".into(),
            }),
            refused: None,
            replayed: false,
        };
        assert_eq!((Completed::status(&queued), queued.charged()), (202, 0));
        let text = serde_json::to_string(&queued).unwrap();
        assert!(text.contains("\"requestId\""), "{text}");
        let back: Submission = serde_json::from_str(&text).unwrap();
        assert_eq!(back.outcome().unwrap().id, "job_1");
        assert!(back.replayed().replayed);
    }
}
