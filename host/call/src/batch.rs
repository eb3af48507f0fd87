//! One batch call, from any door (REST `POST /api/v1/batch`, MCP
//! `parse_batch`): up to [`MAX_ITEMS`] parses, each its own [`ParseCall`]
//! through the one parse path, with its own ledger row and its platform's
//! price, answered in request order.
//!
//! Before any item runs, each item's price is set aside in item order
//! (`store::holds`, one transaction): an item whose credits are not there
//! answers `402` without running, so the answer does not depend on which
//! item finishes first. The items then run concurrently (each waits for its
//! account's admission like any parse); an item that took nothing (a
//! failure, no media) gives its hold back, a charged one turned it into its
//! charge. An `Idempotency-Key` covers the whole batch: its items' ledger
//! ids derive from the batch's, so a batch run again after a lost answer
//! charges no item twice.

use serde::{Deserialize, Serialize};

use super::answer::{ParseAnswer, Shape};
use super::idempotency::{self, Completed, Idempotency, RequestIds};
use super::{Callee, Door, ParseCall};
use mediaparse_core::{ApiError, Delivery, ErrorCode};
use mediaparse_parse::{self as parse, CacheUse, ParseError};
use mediaparse_store::{
    CHARGE_SETTLE_BUDGET, HoldRequest, KeyRecord, Reserved, StoreError, StoredResponse,
};

/// The most items one batch may hold.
pub const MAX_ITEMS: usize = 50;

/// How long past its parse deadline a hold outlives a process that died
/// running its item, before the sweeper gives its credits back.
const HOLD_MARGIN_S: u64 = 60;

/// One item as a door read it.
#[derive(Clone, Debug)]
pub struct BatchItem {
    /// The URL or share text (trimmed).
    pub input: String,
    /// The platform asked for (its shape answered), if any.
    pub platform: Option<String>,
}

/// One batch, as a door asks for it.
pub struct BatchCall<'a> {
    pub key: &'a KeyRecord,
    pub door: Door,
    pub items: &'a [BatchItem],
    pub delivery: Option<Delivery>,
    pub idempotency: Option<Idempotency>,
    pub cache: CacheUse,
    pub ids: RequestIds,
}

/// A batch's answer: every item's answer, in request order.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchAnswer {
    /// The batch's ledger id (its items are charged under `<id>_<index>`).
    pub request_id: String,
    pub items: Vec<ParseAnswer>,
    /// A refusal of the whole batch (its idempotency key), instead of items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<ApiError>,
    #[serde(skip)]
    pub replayed: bool,
}

impl BatchAnswer {
    /// Credits the batch took: the sum of its items'.
    pub fn charged(&self) -> i64 {
        self.items.iter().map(|a| a.charged).sum()
    }

    /// The status of the whole answer: `200` (each item says its own),
    /// or the refusal's.
    pub fn status(&self) -> u16 {
        self.refused.as_ref().map_or(200, |e| e.code.status())
    }

    /// The REST body: `{"status":200,"data":{"items":[…]},"msg":"success"}`,
    /// each item the body its single parse would have answered.
    pub fn body(&self) -> String {
        if let Some(e) = &self.refused {
            return e.envelope().to_string();
        }
        let items: Vec<String> = self.items.iter().map(ParseAnswer::body).collect();
        format!(
            r#"{{"status":200,"data":{{"items":[{}]}},"msg":"success"}}"#,
            items.join(",")
        )
    }
}

impl Completed for BatchAnswer {
    /// Stored and answered again unless an item met a passing trouble
    /// (an overload, a timeout, the database) and nothing was charged: then
    /// the key is released and a retry runs anew. A batch that charged any
    /// item is always kept, so its retry never runs under a new ledger id.
    fn status(&self) -> u16 {
        if self.refused.is_some() || self.charged() > 0 {
            return BatchAnswer::status(self);
        }
        self.items
            .iter()
            .map(ParseAnswer::status)
            .find(|s| *s >= 500 || matches!(s, 408 | 409 | 429))
            .unwrap_or(200)
    }

    fn charged(&self) -> i64 {
        BatchAnswer::charged(self)
    }

    fn refused(request_id: &str, _shape: Shape, error: ApiError) -> Self {
        BatchAnswer {
            request_id: request_id.to_string(),
            items: Vec::new(),
            refused: Some(error),
            replayed: false,
        }
    }

    fn replayed(mut self) -> Self {
        self.replayed = true;
        for item in &mut self.items {
            item.replayed = true;
            item.cache = None;
        }
        self
    }

    fn rerun_of(self, _status: u16, _credits: i64) -> Self {
        // Every item ran again under its first ledger id: what it says it
        // cost is what its (single) charge took.
        self.replayed()
    }

    fn from_earlier_bytes(_stored: StoredResponse, shape: Shape) -> Self {
        Self::refused(
            "",
            shape,
            mediaparse_core::api_error::internal("stored answer is not a batch"),
        )
    }
}

/// Run `call` and give its answer.
pub async fn answer(callee: Callee<'_>, call: &BatchCall<'_>) -> BatchAnswer {
    let Some(guard) = &call.idempotency else {
        return run(callee, call, call.ids.ledger()).await;
    };
    idempotency::once(
        &callee.services.store,
        call.key,
        guard,
        &call.ids,
        Shape::Common,
        |request_id| async move { run(callee, call, &request_id).await },
    )
    .await
}

/// What an item got before it runs (a batch here, a background job's items
/// in the host's `jobs`).
pub enum Funding {
    /// Nothing to set aside (it will be refused before any charge, or is free).
    Free,
    Held(String),
    Short(ParseError),
    /// Refused before it runs (its platform is not one).
    Refused(ApiError),
}

/// Set aside, in item order and in one transaction, the price of each of
/// `items` (charged under `ledger_ids`, held as `hold_<ledger id>`), until
/// `expires_at`; what each item got, or the store's refusal of them all.
pub async fn fund(
    services: &parse::Services,
    key: &KeyRecord,
    items: &[&BatchItem],
    ledger_ids: &[String],
    expires_at: i64,
) -> Result<Vec<Funding>, ApiError> {
    let mut funding: Vec<Funding> = Vec::with_capacity(items.len());
    let mut holds = Vec::new();
    let mut quotes = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if let Some(p) = item
            .platform
            .as_deref()
            .filter(|p| !services.registry.knows(p))
        {
            funding.push(Funding::Refused(ApiError::new(
                ErrorCode::UnknownPlatform,
                format!("{p:?} is not a platform id"),
            )));
            continue;
        }
        match parse::quote(services, key, &item.input, item.platform.as_deref()) {
            Some(q) if q.price > 0 => {
                let id = format!("hold_{}", ledger_ids[i]);
                holds.push(HoldRequest {
                    id: id.clone(),
                    credits: q.price,
                });
                quotes.push((i, q));
                funding.push(Funding::Held(id));
            }
            _ => funding.push(Funding::Free),
        }
    }
    if holds.is_empty() {
        return Ok(funding);
    }
    let now = mediaparse_core::clock::unix_now_s();
    let reserved = services
        .store
        .reserve_credits_async(&key.account_id, &holds, expires_at, now)
        .await
        .map_err(store_refusal)?;
    for ((i, quote), r) in quotes.into_iter().zip(reserved) {
        if let Reserved::Short { balance } = r {
            funding[i] = Funding::Short(ParseError::InsufficientCredits {
                platform: quote.platform,
                price: quote.price,
                balance,
            });
        }
    }
    Ok(funding)
}

/// When the holds of items starting now expire: past the parse deadline,
/// the charge's settling and a margin.
pub fn hold_expiry(services: &parse::Services) -> i64 {
    let lifetime = services.limits.deadline + CHARGE_SETTLE_BUDGET;
    mediaparse_core::clock::unix_now_s() + lifetime.as_secs() as i64 + HOLD_MARGIN_S as i64
}

/// The batch under the ledger id `request_id`.
async fn run(callee: Callee<'_>, call: &BatchCall<'_>, request_id: &str) -> BatchAnswer {
    let item_ids: Vec<String> = (0..call.items.len())
        .map(|i| format!("{request_id}_{i}"))
        .collect();
    let items: Vec<&BatchItem> = call.items.iter().collect();
    let expires_at = hold_expiry(callee.services);
    let funding = match fund(callee.services, call.key, &items, &item_ids, expires_at).await {
        Ok(f) => f,
        // Nothing was set aside (one transaction): every item says why.
        Err(e) => {
            return BatchAnswer {
                request_id: request_id.to_string(),
                items: call
                    .items
                    .iter()
                    .zip(&item_ids)
                    .map(|(item, id)| ParseAnswer::refused(id, shape(item), e.clone()))
                    .collect(),
                refused: None,
                replayed: false,
            };
        }
    };
    let runs = call
        .items
        .iter()
        .zip(&item_ids)
        .zip(funding)
        .map(|((item, id), funding)| run_item(callee, call, item, id, funding));
    let items = futures::future::join_all(runs).await;
    BatchAnswer {
        request_id: request_id.to_string(),
        items,
        refused: None,
        replayed: false,
    }
}

/// The answer an item is rendered as: a platform's own shape when the item
/// names its platform, the common one otherwise.
pub fn shape(item: &BatchItem) -> Shape {
    if item.platform.is_some() {
        Shape::Platform
    } else {
        Shape::Common
    }
}

/// One item under its ledger id, with what was set aside for it.
pub async fn run_item(
    callee: Callee<'_>,
    call: &BatchCall<'_>,
    item: &BatchItem,
    ledger_id: &str,
    funding: Funding,
) -> ParseAnswer {
    let hold = match funding {
        Funding::Refused(e) => return ParseAnswer::refused(ledger_id, shape(item), e),
        Funding::Short(e) => {
            return ParseAnswer::refused(ledger_id, shape(item), ApiError::from(e));
        }
        Funding::Free => None,
        Funding::Held(h) => Some(h),
    };
    let parse = ParseCall {
        key: call.key,
        door: call.door,
        input: &item.input,
        platform: item.platform.as_deref(),
        delivery: call.delivery,
        idempotency: None,
        cache: call.cache,
        ids: call.ids.clone(),
        hold: hold.as_deref(),
    };
    let answer = super::run(callee, &parse, ledger_id).await;
    if let Some(hold) = &hold {
        // Charged: the hold already became the charge (this finds it gone).
        // Otherwise its credits go back now; if that fails, at its expiry.
        if let Err(e) = callee.services.store.release_hold_async(hold).await {
            tracing::warn!(hold = %hold, error = %e, "hold not released; it is given back when it expires");
        }
    }
    answer
}

fn store_refusal(e: StoreError) -> ApiError {
    ApiError::from(ParseError::from(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_lists_each_item_as_its_single_parse_answers() {
        let answer = BatchAnswer {
            request_id: "req_b".into(),
            items: vec![
                ParseAnswer::refused(
                    "req_b_0",
                    Shape::Common,
                    ApiError::of(ErrorCode::InsufficientCredits),
                ),
                ParseAnswer::refused(
                    "req_b_1",
                    Shape::Platform,
                    ApiError::of(ErrorCode::PlatformNotAllowed),
                ),
            ],
            refused: None,
            replayed: false,
        };
        let body: serde_json::Value = serde_json::from_str(&answer.body()).unwrap();
        assert_eq!(body["status"], 200);
        assert_eq!(body["msg"], "success");
        let items = body["data"]["items"].as_array().unwrap();
        for (item, single) in items.iter().zip(&answer.items) {
            let single: serde_json::Value = serde_json::from_str(&single.body()).unwrap();
            assert_eq!(item, &single);
        }
        assert_eq!(items[0]["code"], "insufficient_credits");
        // Stored and read back, it renders the same.
        let back: BatchAnswer =
            serde_json::from_str(&serde_json::to_string(&answer).unwrap()).unwrap();
        assert_eq!(back.body(), answer.body());
        assert_eq!(Completed::status(&back), 200);
    }
}
