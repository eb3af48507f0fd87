//! One parse, end to end (DESIGN.md §2): route the input to an extractor
//! (`route.rs`), check the platform switch and the key's permission, detect,
//! pre-check the balance, run the plan/fetch rounds and map (`rounds.rs`),
//! validate, sanitize and redact (`redact.rs`), and charge only a result
//! that holds media. Errors and their codes: `error.rs`.

pub mod admission;
pub mod cache;
mod error;
mod guest;
mod redact;
mod rounds;
mod route;

use std::sync::Arc;
use std::time::Instant;

use admission::{Admission, Slot};
use cache::{CacheOutcome, CachedParse, Joined, ParseCache};

use arc_swap::ArcSwap;
use mediaparse_sdk as sdk;

use crate::auth;
use crate::billing::{self, Bill, Funds};
use crate::config::OperatorConfig;
use crate::config::PlatformLimits;
pub use crate::core::ParseLimits;
use crate::core::{Clock, PlatformData, Secrets};
use crate::fetch::{ExitPools, Outcome, Pacer, Sessions, Upstream};
use crate::registry::{LoadedExtractor, Registry};
use crate::store::{Charge, KeyRecord, Store, StoreError};
pub use error::ParseError;
use redact::redact_media;
pub use rounds::{Outbound, extract};
pub use route::route;

/// What a parse needs, named: the layers below it, never the HTTP state.
pub struct Services {
    pub store: Store,
    pub registry: Arc<Registry>,
    /// The upstream requests ([`crate::fetch::Fetcher`] in the service).
    pub fetcher: Arc<dyn Upstream>,
    pub limits: ParseLimits,
    /// The operator configuration in force (hot-reloaded).
    pub config: Arc<ArcSwap<OperatorConfig>>,
    pub clock: Clock,
    /// The health of every platform's exits (fetch/exits.rs).
    pub exits: Arc<ExitPools>,
    /// Every platform's operator sessions and their rotated cookies (fetch/sessions.rs).
    pub sessions: Arc<Sessions>,
    /// Requests per second and in flight per platform and exit.
    pub pacer: Arc<Pacer>,
    /// Bounds on the parses in flight, for REST and MCP alike.
    pub admission: Admission,
    /// Recent results and the extractions in flight, by post (`cache.rs`).
    pub cache: Arc<ParseCache>,
}

/// A successful parse (possibly without media: SPEC code 304).
pub struct Parsed {
    pub platform: String,
    pub media: sdk::Media,
    pub platform_data: PlatformData,
    /// Credits taken (0 when there was no media).
    pub charged: i64,
    /// How the parse cache served it (the `Cache-Status` header).
    pub cache: CacheOutcome,
    /// The label of the exit this parse left through (tunnel tokens name it,
    /// so media bound to the requesting IP is fetched from the same one).
    pub egress: String,
}

/// The parse cache serves the request unless it said `Cache-Control: no-cache`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CacheUse {
    #[default]
    Allowed,
    Bypass,
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
    parse_with(
        services,
        key,
        input,
        path_platform,
        request_id,
        CacheUse::Allowed,
    )
    .await
}

/// [`parse`], saying whether the parse cache may answer.
pub async fn parse_with(
    services: &Services,
    key: &KeyRecord,
    input: &str,
    path_platform: Option<&str>,
    request_id: &str,
    cache: CacheUse,
) -> Result<Parsed, ParseError> {
    let started = Instant::now();
    let deadline = tokio::time::Instant::from_std(started) + services.limits.deadline;
    let mut routed: Option<String> = None;
    let result = parse_routed(
        services,
        key,
        input,
        path_platform,
        request_id,
        deadline,
        cache,
        &mut routed,
    )
    .await;
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
    let secrets = services
        .config
        .load()
        .secrets_with(&platform, services.sessions.secrets(&platform));
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
/// all before an instance exists; then admission, detect, the balance
/// pre-check, the rounds, and the charge of a result that holds media.
///
/// `deadline` bounds everything up to the charge (queueing included); the
/// charge itself is never cut short, or a committed charge could answer a
/// timeout: a parse past its deadline is not charged.
#[allow(clippy::too_many_arguments)]
async fn parse_routed(
    services: &Services,
    key: &KeyRecord,
    input: &str,
    path_platform: Option<&str>,
    request_id: &str,
    deadline: tokio::time::Instant,
    cache: CacheUse,
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
    let mut limits = config.limits_for(&platform);
    limits.fetch.profile = config.fetch_profile(&platform, ext.manifest.fetch_profile.as_deref());
    let secrets = config.secrets_with(&platform, services.sessions.secrets(&platform));
    let slot = tokio::time::timeout_at(deadline, services.admission.admit(&key.account_id))
        .await
        .map_err(|_| ParseError::UpstreamTimeout)??;
    let rounds_deadline = deadline.min(tokio::time::Instant::now() + limits.parse_timeout);
    let extracted = Slot::hold(
        slot,
        tokio::time::timeout_at(
            rounds_deadline,
            detect_and_extract(
                services, key, input, &platform, &ext, &config, &limits, &secrets, cache,
            ),
        ),
    )
    .await
    .map_err(|_| ParseError::UpstreamTimeout)??;
    let Extracted {
        price,
        mut media,
        platform_data,
        cache,
        egress,
    } = extracted;
    if tokio::time::Instant::now() >= deadline {
        return Err(ParseError::UpstreamTimeout);
    }
    // Cookies rotated during this parse are secrets too.
    let secrets = config.secrets_with(&platform, services.sessions.secrets(&platform));
    redact_media(&secrets, &mut media);
    let platform_data = platform_data.redacted(&secrets);

    if media.is_empty() {
        return Ok(Parsed {
            platform,
            media,
            platform_data,
            charged: 0,
            cache,
            egress,
        });
    }
    let bill = Bill {
        account: key.account_id.clone(),
        key_id: key.id.clone(),
        platform: platform.clone(),
        price,
        request_id: request_id.to_string(),
    };
    let charge = billing::charge_settled(&services.store, bill, crate::core::clock::unix_now_s())
        .await
        .map_err(ParseError::from)?;
    match charge {
        Charge::Charged { .. } => Ok(Parsed {
            platform,
            media,
            platform_data,
            charged: price,
            cache,
            egress,
        }),
        Charge::InsufficientCredits { balance } => Err(ParseError::InsufficientCredits {
            platform,
            price,
            balance,
        }),
    }
}

/// What the rounds give the charge step.
struct Extracted {
    price: i64,
    media: sdk::Media,
    platform_data: PlatformData,
    cache: CacheOutcome,
    /// The exit's label.
    egress: String,
}

impl Extracted {
    fn cached(price: i64, cached: &CachedParse, cache: CacheOutcome) -> Extracted {
        Extracted {
            price,
            media: cached.media.clone(),
            platform_data: cached.platform_data.clone(),
            cache,
            // The exit the shared extraction left through: its media may be bound to it.
            egress: cached.egress.clone(),
        }
    }
}

/// How long a parse result is kept when the operator declared no TTL.
const DEFAULT_CACHE_TTL: std::time::Duration = std::time::Duration::from_secs(60);

/// Instantiate, detect, pre-check the balance, run the rounds: the part of
/// a parse that holds an admission slot and an instance.
#[allow(clippy::too_many_arguments)]
async fn detect_and_extract(
    services: &Services,
    key: &KeyRecord,
    input: &str,
    platform: &str,
    ext: &Arc<LoadedExtractor>,
    config: &OperatorConfig,
    limits: &PlatformLimits,
    secrets: &Secrets,
    cache: CacheUse,
) -> Result<Extracted, ParseError> {
    let (session, detected) =
        guest::instantiate_and_detect(&services.registry, ext, &limits.sandbox, secrets, input)
            .await?;
    let mut target = detected.map_err(ParseError::Failure)?;
    if target.platform != platform {
        return Err(ParseError::ExtractorFailed(format!(
            "{platform} extractor detected platform {:?}",
            target.platform
        )));
    }
    target.input = input.to_string();

    let price = billing::price(&ext.manifest, config.price_override(platform));
    let funds = store_call(&services.store, {
        let account = key.account_id.clone();
        move |store| billing::precheck(store, &account, price)
    })
    .await?;
    if let Funds::Short { balance } = funds {
        return Err(ParseError::InsufficientCredits {
            platform: platform.to_string(),
            price,
            balance,
        });
    }

    // The same post: a kept result, or the extraction another parse runs.
    let lead = match cache {
        CacheUse::Bypass => None,
        CacheUse::Allowed => {
            // The component's hash too: a swapped extractor never serves
            // what its predecessor extracted.
            let key = format!(
                "{platform}\n{}\n{}\n{}",
                ext.sha256, target.id, target.canonical_url
            );
            match services.cache.join(&key) {
                Joined::Hit(v) => return Ok(Extracted::cached(price, &v, CacheOutcome::Hit)),
                Joined::Wait(flight) => match ParseCache::wait(flight).await {
                    Some(v) => return Ok(Extracted::cached(price, &v, CacheOutcome::Shared)),
                    // The leader failed: this parse tries on its own.
                    None => None,
                },
                Joined::Lead(lead) => Some(lead),
            }
        }
    };

    // One session and one exit for every request of this parse.
    let exits = config.exits(platform);
    // A session pinned to a cooling exit is passed over.
    let operator_session = services
        .sessions
        .lease(platform, &config.sessions(platform), &|s| {
            s.exit
                .as_deref()
                .is_none_or(|e| !services.exits.is_cooling(platform, &exits, e))
        })?;
    let exit = services.exits.lease_among(
        platform,
        &exits,
        operator_session.as_ref().and_then(|s| s.exit()),
    )?;
    let mut extractor_config = config.extractor_config(platform);
    if let Some(s) = &operator_session {
        extractor_config = services.sessions.config_for(s, extractor_config);
    }
    let ctx = sdk::Context {
        now_unix_ms: services.clock.parse_now_ms(),
        config: extractor_config,
        // Filled from the registry's memos by `extract`.
        remembered: Vec::new(),
    };
    let outbound = Outbound {
        limits,
        exit: &exit,
        exits: &services.exits,
        session: operator_session.as_ref(),
        sessions: &services.sessions,
        pacer: &services.pacer,
        deadline: Instant::now() + limits.parse_timeout,
    };
    let extracted = extract(
        services.fetcher.as_ref(),
        &services.limits,
        ext,
        &outbound,
        services.registry.memos(),
        session,
        target,
        ctx,
    )
    .await;
    // A challenge or login wall is only known once the extractor read the answers.
    let verdict = match &extracted {
        Err(ParseError::Failure(sdk::Failure::RateLimited(_))) => Some(Outcome::Challenge),
        Err(ParseError::Failure(sdk::Failure::LoginRequired(_))) => Some(Outcome::LoginWall),
        _ => None,
    };
    if let Some(outcome) = verdict {
        services.exits.record(&exit, outcome, &limits.cooling);
    }
    if let Some(s) = &operator_session {
        let outcome = verdict.unwrap_or(Outcome::Ok);
        services.sessions.record(s, outcome, &limits.cooling);
    }
    let (media, platform_data) = extracted?;
    let outcome = match lead {
        Some(lead) => {
            let keep = (!media.is_empty())
                .then(|| {
                    cache::keep_for(
                        &media,
                        limits.parse_cache_ttl,
                        DEFAULT_CACHE_TTL,
                        services.clock.parse_now_ms() / 1000,
                    )
                })
                .flatten();
            let shared = CachedParse {
                media: media.clone(),
                platform_data: platform_data.clone(),
                egress: exit.label.clone(),
            };
            lead.finish(Arc::new(shared), keep);
            CacheOutcome::Miss
        }
        None if cache == CacheUse::Bypass => CacheOutcome::Bypass,
        None => CacheOutcome::Miss,
    };
    Ok(Extracted {
        price,
        media,
        platform_data,
        cache: outcome,
        egress: exit.label.clone(),
    })
}

/// Run blocking work (SQLite; guest calls go to `guest.rs`'s pool) off the
/// async workers, inside the request's span so its log lines keep the request id.
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

#[cfg(test)]
pub(crate) mod tests;
