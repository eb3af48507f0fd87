//! One parse call, from any door — REST (common and platform), MCP, the
//! console's playground, and every door added later: the ledger id is
//! minted, the idempotency key honoured, the parse run, the delivery
//! applied, and one typed [`ParseAnswer`] comes back for the door to render.
//! A door never reads an answer back: what it charged, what it says and
//! what a replay says are all the answer's.

pub mod answer;
pub mod batch;
pub mod idempotency;

use std::time::Instant;

pub use answer::{Outcome, ParseAnswer, Shape};
pub use idempotency::{Idempotency, RequestIds};

use mediaparse_core::{ApiError, Delivery};
use mediaparse_parse::{self as parse, CacheUse, ParseRequest, Parsed, Services};
use mediaparse_store::KeyRecord;
use mediaparse_tunnel::{Grant, TunnelSettings};

/// The door a call came through (logs; each door fingerprints its own
/// requests for idempotency).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Door {
    Rest,
    Mcp,
    Playground,
    /// One item of a batch (REST `POST /api/v1/batch`, MCP `parse_batch`).
    Batch,
    /// One item of a job (REST `POST /api/v1/jobs`, MCP `start_job`).
    Job,
}

impl Door {
    pub fn as_str(self) -> &'static str {
        match self {
            Door::Rest => "rest",
            Door::Mcp => "mcp",
            Door::Playground => "playground",
            Door::Batch => "batch",
            Door::Job => "job",
        }
    }
}

/// One parse, as a door asks for it.
pub struct ParseCall<'a> {
    /// The caller's key, read once for this call (its delivery setting too).
    pub key: &'a KeyRecord,
    pub door: Door,
    /// The URL or share text.
    pub input: &'a str,
    /// Parse as this platform and answer in the platform shape (a known id).
    pub platform: Option<&'a str>,
    /// The delivery asked for; `None`: the key's, else direct.
    pub delivery: Option<Delivery>,
    pub idempotency: Option<Idempotency>,
    pub cache: CacheUse,
    pub ids: RequestIds,
    /// The credit hold set aside for this call (a batch item's).
    pub hold: Option<&'a str>,
}

impl ParseCall<'_> {
    fn shape(&self) -> Shape {
        if self.platform.is_some() {
            Shape::Platform
        } else {
            Shape::Common
        }
    }
}

/// What a call needs below the doors.
#[derive(Clone, Copy)]
pub struct Callee<'a> {
    pub services: &'a Services,
    pub tunnel: &'a TunnelSettings,
}

/// Run `call` and give its answer.
pub async fn answer(callee: Callee<'_>, call: &ParseCall<'_>) -> ParseAnswer {
    let Some(guard) = &call.idempotency else {
        let answer = run(callee, call, call.ids.ledger()).await;
        idempotency::record_client_id(&callee.services.store, &call.ids, answer.charged).await;
        return answer;
    };
    idempotency::once(
        &callee.services.store,
        call.key,
        guard,
        &call.ids,
        call.shape(),
        |request_id| async move { run(callee, call, &request_id).await },
    )
    .await
}

/// The parse under the ledger id `request_id`, delivered as asked.
pub(crate) async fn run(callee: Callee<'_>, call: &ParseCall<'_>, request_id: &str) -> ParseAnswer {
    let started = Instant::now();
    let request = ParseRequest {
        key: call.key,
        input: call.input,
        platform: call.platform,
        request_id,
        cache: call.cache,
        purpose: parse::Purpose::Customer,
        hold: call.hold,
    };
    let delivery = call.delivery.or(call.key.delivery).unwrap_or_default();
    let (result, handoffs) =
        mediaparse_core::handoffs::counted(parse::parse(callee.services, &request)).await;
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    let door = call.door.as_str();
    let platform = match &result {
        Ok(parsed) => parsed.platform.as_str(),
        Err(_) => call.platform.unwrap_or("unknown"),
    };
    mediaparse_metrics::global().handoffs(platform, handoffs);
    match result {
        Ok(mut parsed) => {
            tracing::info!(door, platform = %parsed.platform, charged = parsed.charged, delivery = delivery.as_str(), handoffs, elapsed_ms, "parsed");
            if delivery == Delivery::Tunnel {
                deliver(callee.tunnel, call.key, &mut parsed);
            }
            success(request_id, call.shape(), parsed)
        }
        Err(e) => {
            let e = ApiError::from(e);
            tracing::info!(
                door,
                code = e.wire(),
                status = e.code.status(),
                elapsed_ms,
                "parse failed"
            );
            ParseAnswer::refused(request_id, call.shape(), e)
        }
    }
}

/// Point every media URL of `parsed` at the tunnel.
fn deliver(tunnel: &TunnelSettings, key: &KeyRecord, parsed: &mut Parsed) {
    let grant = Grant {
        platform: parsed.platform.clone(),
        account: key.account_id.clone(),
        key_id: key.id.clone(),
        key_rotated_at: key.rotated_at,
        key_token_prefix: key.token_prefix.clone(),
        egress: Some(parsed.egress.clone()),
        now: mediaparse_core::clock::unix_now_s(),
    };
    tunnel.deliver(&grant, &mut parsed.media);
}

fn success(request_id: &str, shape: Shape, parsed: Parsed) -> ParseAnswer {
    let outcome = if parsed.media.is_empty() {
        Outcome::NoMedia {
            platform: parsed.platform,
        }
    } else {
        Outcome::Media {
            platform: parsed.platform,
            media: parsed.media,
            // Present exactly when the call named a platform (Shape::Platform).
            platform_data: parsed.platform_data,
        }
    };
    ParseAnswer {
        request_id: request_id.to_string(),
        charged: parsed.charged,
        shape,
        outcome,
        cache: Some(parsed.cache),
        replayed: false,
    }
}
