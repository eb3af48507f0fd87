//! One parse, end to end (DESIGN.md §2): route the input to an extractor,
//! detect, check permission and balance, run the plan/fetch rounds, map,
//! validate and sanitize, and charge only a result that holds media.

use std::sync::Arc;
use std::time::Duration;

use mediaparse_sdk as sdk;
use mediaparse_sdk::urls::InputUrl;
use serde_json::Value;

use crate::auth::{self, AuthError};
use crate::billing;
use crate::fetch::{FetchError, Fetcher};
use crate::registry::{LoadedExtractor, Registry, RuntimeError, Session};
use crate::sanitize;
use crate::state::AppState;
use crate::store::{Charge, KeyRecord, StoreError};

/// Bounds on one parse.
#[derive(Clone, Debug)]
pub struct ParseLimits {
    pub max_rounds: usize,
    pub max_requests_per_round: usize,
    /// Wall time for the whole parse, all rounds included.
    pub deadline: Duration,
    /// Longest accepted input (URL or share text), in bytes.
    pub max_input_bytes: usize,
}

impl Default for ParseLimits {
    fn default() -> Self {
        ParseLimits {
            max_rounds: 8,
            max_requests_per_round: 16,
            deadline: Duration::from_secs(30),
            max_input_bytes: 4096,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    #[error("{0}")]
    Unsupported(String),
    #[error(transparent)]
    Auth(#[from] AuthError),
    #[error("account balance {balance} does not cover the price {price} of a {platform} parse")]
    InsufficientCredits {
        platform: String,
        price: i64,
        balance: i64,
    },
    #[error("{0}")]
    Failure(sdk::Failure),
    #[error("no extractor is available for {0}")]
    ExtractorUnavailable(String),
    #[error("{0}")]
    ExtractorFailed(String),
    #[error("the upstream platform did not answer in time")]
    UpstreamTimeout,
    #[error("{0}")]
    Upstream(String),
    #[error("{0}")]
    Internal(String),
}

impl From<StoreError> for ParseError {
    fn from(e: StoreError) -> Self {
        ParseError::Internal(e.to_string())
    }
}

impl From<RuntimeError> for ParseError {
    fn from(e: RuntimeError) -> Self {
        ParseError::ExtractorFailed(e.to_string())
    }
}

/// A successful parse (possibly without media: SPEC code 304).
pub struct Parsed {
    pub platform: String,
    pub media: sdk::Media,
    pub platform_data: Value,
    /// Credits taken (0 when there was no media).
    pub charged: i64,
}

/// Parse `input` for the caller holding `key`. `path_platform` is the
/// platform endpoint's path segment (already checked to be a platform id).
pub async fn parse(
    state: &AppState,
    key: &KeyRecord,
    input: &str,
    path_platform: Option<&str>,
    request_id: &str,
) -> Result<Parsed, ParseError> {
    if input.len() > state.limits.max_input_bytes {
        return Err(ParseError::Unsupported(format!(
            "input longer than {} bytes",
            state.limits.max_input_bytes
        )));
    }
    let ext = route(&state.registry, input, path_platform)?;
    let platform = ext.platform().to_string();
    if !state.platform_enabled(&platform) {
        return Err(ParseError::ExtractorUnavailable(platform));
    }
    let mut session = blocking({
        let registry = state.registry.clone();
        let ext = ext.clone();
        move || registry.session(&ext)
    })
    .await??;

    let owned_input = input.to_string();
    let (s, detected) = call(session, move |s| s.detect(&owned_input)).await?;
    session = s;
    let mut target = detected?.map_err(ParseError::Failure)?;
    if target.platform != platform {
        return Err(ParseError::ExtractorFailed(format!(
            "{platform} extractor detected platform {:?}",
            target.platform
        )));
    }
    target.input = input.to_string();

    auth::check_platform(key, &platform)?;
    let price = billing::price(&platform);
    let balance = store_call(state, {
        let account = key.account_id.clone();
        move |store| store.balance(&account)
    })
    .await?;
    if balance < price {
        return Err(ParseError::InsufficientCredits {
            platform,
            price,
            balance,
        });
    }

    let ctx = sdk::Context {
        now_unix_ms: state.now_unix_ms(),
        config: state.platform_config(&platform),
    };
    let deadline = state.limits.deadline;
    let (media, platform_data) = tokio::time::timeout(
        deadline,
        extract(&state.fetcher, &state.limits, &ext, session, target, ctx),
    )
    .await
    .map_err(|_| ParseError::UpstreamTimeout)??;

    if media.is_empty() {
        return Ok(Parsed {
            platform,
            media,
            platform_data,
            charged: 0,
        });
    }
    let charge = store_call(state, {
        let (account, key_id, platform, request_id) = (
            key.account_id.clone(),
            key.id.clone(),
            platform.clone(),
            request_id.to_string(),
        );
        move |store| {
            store.charge(
                &account,
                &key_id,
                &platform,
                price,
                &request_id,
                chrono::Utc::now().timestamp(),
            )
        }
    })
    .await?;
    match charge {
        Charge::Charged { .. } => Ok(Parsed {
            platform,
            media,
            platform_data,
            charged: price,
        }),
        Charge::InsufficientCredits { balance } => Err(ParseError::InsufficientCredits {
            platform,
            price,
            balance,
        }),
    }
}

/// Pick the extractor: by the first URL's host, checked against the path platform.
pub fn route(
    registry: &Registry,
    input: &str,
    path_platform: Option<&str>,
) -> Result<Arc<LoadedExtractor>, ParseError> {
    let url_text = sdk::share::first_url(input).unwrap_or_else(|| input.trim().to_string());
    let url = InputUrl::parse(&url_text)
        .map_err(|_| ParseError::Unsupported("the input holds no http(s) URL".into()))?;
    match path_platform {
        Some(platform) => {
            let ext = registry
                .get(platform)
                .ok_or_else(|| ParseError::ExtractorUnavailable(platform.into()))?;
            if !ext.accepts_host(&url.host) {
                return Err(ParseError::Unsupported(format!(
                    "{} is not a {platform} URL",
                    url.host
                )));
            }
            Ok(ext)
        }
        None => registry.route(&url.host).ok_or_else(|| {
            ParseError::Unsupported(format!("{} is not a supported platform host", url.host))
        }),
    }
}

/// The plan/fetch rounds and the map call (also `mediaparse record`).
pub async fn extract(
    fetcher: &Fetcher,
    limits: &ParseLimits,
    ext: &LoadedExtractor,
    mut session: Session,
    target: sdk::Target,
    ctx: sdk::Context,
) -> Result<(sdk::Media, Value), ParseError> {
    let target = Arc::new(target);
    let ctx = Arc::new(ctx);
    let mut done: Arc<Vec<sdk::Exchange>> = Arc::new(Vec::new());
    for _round in 0..limits.max_rounds {
        let (t, c, d) = (target.clone(), ctx.clone(), done.clone());
        let (s, planned) = call(session, move |s| s.plan(&t, &c, &d)).await?;
        session = s;
        match planned?.map_err(ParseError::Failure)? {
            sdk::Plan::Ready => {
                let (t, c, d) = (target.clone(), ctx.clone(), done.clone());
                let (_, mapped) = call(session, move |s| s.map(&t, &c, &d)).await?;
                let (media, data) = mapped?.map_err(ParseError::Failure)?;
                return finish(ext.platform(), media, &data);
            }
            sdk::Plan::Fetch(requests) => {
                if requests.is_empty() || requests.len() > limits.max_requests_per_round {
                    return Err(ParseError::ExtractorFailed(format!(
                        "planned {} requests in one round",
                        requests.len()
                    )));
                }
                let platform = ext.platform();
                let answers = futures::future::join_all(
                    requests
                        .iter()
                        .map(|r| fetcher.fetch(platform, &ext.info.api_hosts, r)),
                )
                .await;
                let mut next = Vec::clone(&done);
                for (request, answer) in requests.into_iter().zip(answers) {
                    let response = answer.map_err(fetch_error)?;
                    next.push(sdk::Exchange { request, response });
                }
                done = Arc::new(next);
            }
        }
    }
    Err(ParseError::ExtractorFailed(format!(
        "more than {} plan rounds",
        limits.max_rounds
    )))
}

/// Check the media, clean the platform data.
fn finish(
    platform: &str,
    media: sdk::Media,
    data: &str,
) -> Result<(sdk::Media, Value), ParseError> {
    sdk::spec::validate_media(&media).map_err(|e| {
        ParseError::ExtractorFailed(format!("{platform} extractor returned invalid media: {e}"))
    })?;
    let mut value: Value = serde_json::from_str(data).map_err(|e| {
        ParseError::ExtractorFailed(format!("{platform} platform data is not JSON: {e}"))
    })?;
    if !value.is_object() {
        return Err(ParseError::ExtractorFailed(format!(
            "{platform} platform data is not an object"
        )));
    }
    sanitize::sanitize(&mut value);
    Ok((media, value))
}

fn fetch_error(e: FetchError) -> ParseError {
    match e {
        FetchError::Timeout => ParseError::UpstreamTimeout,
        FetchError::HostNotAllowed(_) | FetchError::InvalidUrl(_) => {
            ParseError::ExtractorFailed(e.to_string())
        }
        FetchError::PrivateDestination(_)
        | FetchError::TooManyRedirects(_)
        | FetchError::TooLarge(_)
        | FetchError::Connect(_) => ParseError::Upstream(e.to_string()),
    }
}

/// Run a guest call on a blocking thread, handing the session back.
async fn call<T: Send + 'static>(
    mut session: Session,
    f: impl FnOnce(&mut Session) -> T + Send + 'static,
) -> Result<(Session, T), ParseError> {
    blocking(move || {
        let out = f(&mut session);
        (session, out)
    })
    .await
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ParseError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ParseError::Internal(format!("worker failed: {e}")))
}

pub async fn store_call<T: Send + 'static>(
    state: &AppState,
    f: impl FnOnce(&crate::store::Store) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, ParseError> {
    let store = state.store.clone();
    Ok(blocking(move || f(&store)).await??)
}
