//! One parse, end to end (DESIGN.md §2): route the input to an extractor,
//! detect, check permission and balance, run the plan/fetch rounds, map,
//! validate and sanitize, and charge only a result that holds media.

use std::sync::Arc;
use std::time::Instant;

use mediaparse_sdk as sdk;
use mediaparse_sdk::urls::InputUrl;
use serde_json::Value;

use arc_swap::ArcSwap;

use crate::auth::{self, AuthError};
use crate::billing::{self, Bill, Funds};
use crate::config::{OperatorConfig, PlatformLimits};
pub use crate::core::ParseLimits;
use crate::core::{Clock, ErrorCode, Secrets, sanitize};
use crate::fetch::{FetchError, Fetcher};
use crate::registry::{LoadedExtractor, Registry, RuntimeError, Session};
use crate::store::{Charge, KeyRecord, Store, StoreError};

/// What a parse needs, named: the layers below it, never the HTTP state.
pub struct Services {
    pub store: Store,
    pub registry: Arc<Registry>,
    pub fetcher: Arc<Fetcher>,
    pub limits: ParseLimits,
    /// The operator configuration in force (hot-reloaded).
    pub config: Arc<ArcSwap<OperatorConfig>>,
    pub clock: Clock,
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

impl ParseError {
    /// This error's row in the error table.
    pub fn code(&self) -> ErrorCode {
        match self {
            ParseError::Unsupported(_) => ErrorCode::UnsupportedUrl,
            ParseError::Auth(a) => a.code(),
            ParseError::InsufficientCredits { .. } => ErrorCode::InsufficientCredits,
            ParseError::Failure(f) => ErrorCode::of_failure(f),
            ParseError::ExtractorUnavailable(_) => ErrorCode::ExtractorUnavailable,
            ParseError::ExtractorFailed(_) => ErrorCode::ExtractorFailed,
            ParseError::UpstreamTimeout => ErrorCode::UpstreamTimeout,
            ParseError::Upstream(_) => ErrorCode::UpstreamError,
            ParseError::Internal(_) => ErrorCode::Internal,
        }
    }

    /// The outcome label of `mediaparse_parses_total` (the envelope's code).
    pub fn outcome(&self) -> &'static str {
        match self {
            ParseError::Auth(AuthError::PlatformNotAllowed(_)) => "platform_not_allowed",
            ParseError::Auth(_) => "auth",
            other => other.code().as_str(),
        }
    }

    /// The same error with configured secrets scrubbed from its text.
    pub fn redact(self, secrets: &Secrets) -> ParseError {
        if secrets.is_empty() {
            return self;
        }
        let r = |m: String| secrets.redact(&m);
        match self {
            ParseError::Unsupported(m) => ParseError::Unsupported(r(m)),
            ParseError::Failure(f) => ParseError::Failure(match f {
                sdk::Failure::UnsupportedUrl(m) => sdk::Failure::UnsupportedUrl(r(m)),
                sdk::Failure::Unavailable(m) => sdk::Failure::Unavailable(r(m)),
                sdk::Failure::LoginRequired(m) => sdk::Failure::LoginRequired(r(m)),
                sdk::Failure::RateLimited(m) => sdk::Failure::RateLimited(r(m)),
                sdk::Failure::UpstreamChanged(m) => sdk::Failure::UpstreamChanged(r(m)),
                sdk::Failure::UpstreamError(m) => sdk::Failure::UpstreamError(r(m)),
            }),
            ParseError::ExtractorFailed(m) => ParseError::ExtractorFailed(r(m)),
            ParseError::Upstream(m) => ParseError::Upstream(r(m)),
            ParseError::Internal(m) => ParseError::Internal(r(m)),
            other => other,
        }
    }
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
/// Counted in the metrics; configured secrets never leave in an error.
pub async fn parse(
    services: &Services,
    key: &KeyRecord,
    input: &str,
    path_platform: Option<&str>,
    request_id: &str,
) -> Result<Parsed, ParseError> {
    let started = Instant::now();
    let mut routed: Option<String> = None;
    let result = parse_routed(services, key, input, path_platform, request_id, &mut routed).await;
    let unavailable = match &result {
        Err(ParseError::ExtractorUnavailable(p)) => Some(p.as_str()),
        _ => None,
    };
    let platform = routed
        .as_deref()
        .or(unavailable)
        .or(path_platform)
        .unwrap_or("unknown")
        .to_string();
    let secrets = services.config.load().secrets(&platform);
    let result = result.map_err(|e| e.redact(&secrets));
    let (outcome, charged) = match &result {
        Ok(p) if p.media.is_empty() => ("no_media", 0),
        Ok(p) => ("ok", p.charged),
        Err(e) => (e.outcome(), 0),
    };
    crate::metrics::global().parse(&platform, outcome, started.elapsed().as_secs_f64(), charged);
    result
}

/// The checks in order — input size, route, platform switch, permission —
/// all before an instance exists; then detect, the balance pre-check, the
/// rounds, and the charge of a result that holds media.
async fn parse_routed(
    services: &Services,
    key: &KeyRecord,
    input: &str,
    path_platform: Option<&str>,
    request_id: &str,
    routed: &mut Option<String>,
) -> Result<Parsed, ParseError> {
    if input.len() > services.limits.max_input_bytes {
        return Err(ParseError::Unsupported(format!(
            "input longer than {} bytes",
            services.limits.max_input_bytes
        )));
    }
    let ext = route(&services.registry, input, path_platform)?;
    let platform = ext.platform().to_string();
    *routed = Some(platform.clone());
    // One snapshot of the configuration for the whole parse.
    let config = services.config.load_full();
    if !config.enabled(&platform) {
        return Err(ParseError::ExtractorUnavailable(platform));
    }
    auth::check_platform(key, &platform)?;
    let limits = config.limits_for(&platform);
    let secrets = config.secrets(&platform);
    let mut session = blocking({
        let registry = services.registry.clone();
        let (ext, sandbox, secrets) = (ext.clone(), limits.sandbox.clone(), secrets.clone());
        move || registry.session_with(&ext, &sandbox, secrets)
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

    let price = billing::price(&ext.manifest, config.price_override(&platform));
    let funds = store_call(&services.store, {
        let account = key.account_id.clone();
        move |store| billing::precheck(store, &account, price)
    })
    .await?;
    if let Funds::Short { balance } = funds {
        return Err(ParseError::InsufficientCredits {
            platform,
            price,
            balance,
        });
    }

    let ctx = sdk::Context {
        now_unix_ms: services.clock.parse_now_ms(),
        config: config.extractor_config(&platform),
    };
    let outbound = Outbound {
        limits: &limits,
        proxy: config.proxy(&platform),
    };
    let (mut media, mut platform_data) = tokio::time::timeout(
        limits.parse_timeout,
        extract(
            &services.fetcher,
            &services.limits,
            &ext,
            &outbound,
            session,
            target,
            ctx,
        ),
    )
    .await
    .map_err(|_| ParseError::UpstreamTimeout)??;
    redact_media(&secrets, &mut media);
    secrets.redact_json(&mut platform_data);

    if media.is_empty() {
        return Ok(Parsed {
            platform,
            media,
            platform_data,
            charged: 0,
        });
    }
    let bill = Bill {
        account: key.account_id.clone(),
        key_id: key.id.clone(),
        platform: platform.clone(),
        price,
        request_id: request_id.to_string(),
    };
    let charge = store_call(&services.store, move |store| {
        billing::charge(store, &bill, crate::core::clock::unix_now_s())
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
        None => registry
            .route(&url.host)
            .ok_or_else(|| match registry.retired_route(&url.host) {
                Some(platform) => ParseError::ExtractorUnavailable(platform),
                None => ParseError::Unsupported(format!(
                    "{} is not a supported platform host",
                    url.host
                )),
            }),
    }
}

/// Where and how a parse's upstream requests go: the platform's limits and
/// outbound proxy from the operator configuration.
pub struct Outbound<'a> {
    pub limits: &'a PlatformLimits,
    pub proxy: Option<&'a str>,
}

/// The plan/fetch rounds and the map call (also `mediaparse record`).
pub async fn extract(
    fetcher: &Fetcher,
    limits: &ParseLimits,
    ext: &LoadedExtractor,
    outbound: &Outbound<'_>,
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
                let answers = futures::future::join_all(requests.iter().map(|r| {
                    fetcher.fetch_with(
                        platform,
                        &ext.info.api_hosts,
                        r,
                        &outbound.limits.fetch,
                        outbound.proxy,
                    )
                }))
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

/// Scrub configured secrets from every string a caller would receive.
fn redact_media(secrets: &Secrets, media: &mut sdk::Media) {
    if secrets.is_empty() {
        return;
    }
    let headers = |hs: &mut Vec<sdk::Header>| {
        for h in hs {
            secrets.redact_in_place(&mut h.name);
            secrets.redact_in_place(&mut h.value);
        }
    };
    secrets.redact_in_place(&mut media.title);
    secrets.redact_in_place(&mut media.thumbnail);
    for i in &mut media.images {
        secrets.redact_in_place(&mut i.url);
    }
    for v in &mut media.videos {
        for s in [&mut v.url, &mut v.quality, &mut v.mime_type] {
            secrets.redact_in_place(s);
        }
        headers(&mut v.headers);
    }
    for a in &mut media.audios {
        for s in [&mut a.url, &mut a.quality, &mut a.mime_type] {
            secrets.redact_in_place(s);
        }
        headers(&mut a.headers);
    }
}

/// Run blocking work (guest calls, SQLite) off the async workers, inside
/// the request's span so its log lines keep the request id.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ParseError> {
    let span = tracing::Span::current();
    tokio::task::spawn_blocking(move || span.in_scope(f))
        .await
        .map_err(|e| ParseError::Internal(format!("worker failed: {e}")))
}

/// Run a store call on a blocking thread.
pub async fn store_call<T: Send + 'static>(
    store: &Store,
    f: impl FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, ParseError> {
    let store = store.clone();
    Ok(blocking(move || f(&store)).await??)
}
