//! One parse, end to end (DESIGN.md §2): route the input to an extractor
//! (`route.rs`), read its platform's plan from one configuration snapshot —
//! switch, permission, price, limits, secrets (`plan.rs`) — pre-check the
//! balance, wait for admission (`admission.rs`), detect (`guest.rs`), serve
//! the post from the parse cache or lease a session and exit (`egress.rs`)
//! and run the plan/fetch rounds and map (`rounds.rs`), redact
//! (`redact.rs`), and charge only a result that holds media. Errors and
//! their codes: `error.rs`. Every routed parse's outcome feeds its
//! platform's health, whose circuit breaker the plan consults (`health/`).

pub mod admission;
pub mod cache;
mod egress;
mod error;
pub mod failures;
mod guest;
pub mod health;
mod plan;
mod redact;
mod rounds;
mod route;

use std::sync::Arc;
use std::time::Instant;

use admission::{Admission, Slot};
use cache::{CacheOutcome, CachedParse, ParseCache};

use arc_swap::ArcSwap;
use mediaparse_sdk as sdk;

use egress::Egress;
pub use error::ParseError;
pub use guest::Guest;
use mediaparse_billing::{Bill, Funds};
use mediaparse_config::OperatorConfig;
pub use mediaparse_core::ParseLimits;
use mediaparse_core::sanitize::text::SanitizeError;
use mediaparse_core::{Clock, GuestPlatformData, PlatformData};
use mediaparse_fetch::{ExitPools, Pacer, Sessions, Upstream};
use mediaparse_registry::{LoadedExtractor, Registry};
use mediaparse_store::{Charge, KeyRecord, Store};
pub use plan::PlatformPlan;
use redact::redact_media;
pub use rounds::{Capture, Captured, Outbound, Rounds, extract};
pub use route::route;

/// What a parse needs, named: the layers below it, never the HTTP state.
pub struct Services {
    pub store: Store,
    pub registry: Arc<Registry>,
    /// The upstream requests ([`mediaparse_fetch::Fetcher`] in the service).
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
    /// Every platform's health and circuit breaker (`health/`).
    pub health: health::PlatformHealth,
    /// Where failing parses are kept as fixture cases (`failures.rs`);
    /// `None`: not kept.
    pub failures: Option<Arc<dyn failures::FailureSink>>,
}

/// A successful parse (possibly without media: SPEC code 304).
pub struct Parsed {
    pub platform: String,
    pub media: sdk::Media,
    /// Sanitized and redacted, for a parse through a platform endpoint (the
    /// only answer that shows platform data); `None` for the others.
    pub platform_data: Option<PlatformData>,
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

/// Who a parse is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Purpose {
    /// A caller's parse: pre-checked, charged, counted in the health window.
    #[default]
    Customer,
    /// The service's own canary (`canary/`): never charged (no balance
    /// check, no ledger row); its runner counts it in the health itself,
    /// against the canary's expectation.
    Canary,
}

/// One parse to run for the holder of `key`.
#[derive(Clone, Copy)]
pub struct ParseRequest<'a> {
    pub key: &'a KeyRecord,
    /// The URL or share text.
    pub input: &'a str,
    /// The platform endpoint's path segment (already checked to be a
    /// platform id), if the parse came through one.
    pub platform: Option<&'a str>,
    /// The server-minted ledger id the parse is charged under.
    pub request_id: &'a str,
    pub cache: CacheUse,
    pub purpose: Purpose,
    /// The credit hold set aside for this parse before it ran (a batch
    /// item's, `store::holds`): it stands in for the balance pre-check and
    /// becomes the charge. The caller releases it when nothing was charged.
    pub hold: Option<&'a str>,
}

/// What a parse of an input would cost, known before it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quote {
    pub platform: String,
    pub price: i64,
}

/// The price a parse of `input` (as `platform`, if given) would cost the
/// holder of `key`; `None` when the parse will be refused before any charge
/// (no platform claims the input, the platform is switched off or the key
/// may not parse it): such a parse costs nothing and needs nothing set aside.
pub fn quote(
    services: &Services,
    key: &KeyRecord,
    input: &str,
    platform: Option<&str>,
) -> Option<Quote> {
    let probe = ParseRequest {
        key,
        input,
        platform,
        request_id: "",
        cache: CacheUse::Allowed,
        purpose: Purpose::Customer,
        hold: None,
    };
    let ext = routed(services, &probe).ok()?;
    let platform = ext.platform().to_string();
    let config = services.config.load();
    if !config.enabled(&platform) || mediaparse_auth::check_platform(key, &platform).is_err() {
        return None;
    }
    let price = mediaparse_billing::price(&ext.manifest, config.price_override(&platform));
    Some(Quote { platform, price })
}

/// Parse `request.input` for the holder of `request.key`: counted in the
/// metrics; configured secrets never leave in an error.
pub async fn parse(services: &Services, request: &ParseRequest<'_>) -> Result<Parsed, ParseError> {
    let started = Instant::now();
    let (platform, result) = match routed(services, request) {
        Ok(ext) => {
            let platform = ext.platform().to_string();
            // One snapshot of the operator configuration for the whole parse.
            let config = services.config.load_full();
            let capture = services.failures.as_ref().map(|_| Capture::default());
            let result = planned(services, &config, request, &ext, started, capture.as_ref()).await;
            if request.purpose == Purpose::Customer {
                let policy = config.health_policy(&platform);
                services.health.record(
                    &platform,
                    &policy,
                    health::Verdict::of(&result),
                    Instant::now(),
                    mediaparse_core::clock::unix_now_s(),
                );
            }
            if let (Some(capture), Err(e)) = (&capture, &result) {
                failures::keep(services, &config, request, &platform, e, capture);
            }
            (platform, result)
        }
        Err(e) => {
            let platform = match &e {
                ParseError::ExtractorUnavailable(p) => p.clone(),
                _ => request.platform.unwrap_or("unknown").to_string(),
            };
            (platform, Err(e))
        }
    };
    let (outcome, charged) = match &result {
        Ok(p) if p.media.is_empty() => ("no_media", 0),
        Ok(p) => ("ok", p.charged),
        Err(e) => (e.outcome(), 0),
    };
    mediaparse_metrics::global().parse(
        &platform,
        outcome,
        started.elapsed().as_secs_f64(),
        charged,
    );
    result
}

/// The input's extractor: bounded input, a platform that claims its URL.
fn routed(
    services: &Services,
    request: &ParseRequest<'_>,
) -> Result<Arc<LoadedExtractor>, ParseError> {
    if request.input.len() > services.limits.max_input_bytes {
        return Err(ParseError::Unsupported(format!(
            "input longer than {} bytes",
            services.limits.max_input_bytes
        )));
    }
    route(&services.registry, request.input, request.platform)
}

/// A routed parse: its plan (switch, permission, price — before any
/// instance exists), the balance pre-check, admission, detect, the rounds,
/// and the charge of a result that holds media. Errors leave redacted.
///
/// The service deadline bounds everything up to the charge (queueing
/// included); the charge itself is never cut short, or a committed charge
/// could answer a timeout: a parse past its deadline is not charged.
async fn planned(
    services: &Services,
    config: &Arc<OperatorConfig>,
    request: &ParseRequest<'_>,
    ext: &Arc<LoadedExtractor>,
    started: Instant,
    capture: Option<&Capture>,
) -> Result<Parsed, ParseError> {
    let plan = PlatformPlan::of(services, config, ext, request.key)?;
    let deadline = tokio::time::Instant::from_std(started) + services.limits.deadline;
    let routed = Routed {
        services,
        ext,
        plan: &plan,
        capture,
    };
    let extracted = extract_admitted(routed, request, deadline).await;
    // Cookies rotated during this parse are secrets too.
    let secrets = plan.secrets_now(services, !plan.sessions.is_empty());
    let Extracted {
        mut media,
        platform_data,
        cache,
        egress,
    } = extracted.map_err(|e| e.redact(&secrets))?;
    if tokio::time::Instant::now() >= deadline {
        return Err(ParseError::UpstreamTimeout);
    }
    redact_media(&secrets, &mut media);
    // Before the charge: data that cannot be shown fails the parse uncharged.
    let platform_data = match request.platform {
        Some(_) => Some(shown(&plan.platform, &platform_data)?.redacted(&secrets)),
        None => None,
    };
    let charged = if media.is_empty() || request.purpose == Purpose::Canary {
        0
    } else {
        charge(services, request, &plan).await?
    };
    Ok(Parsed {
        platform: plan.platform,
        media,
        platform_data,
        charged,
        cache,
        egress,
    })
}

/// The guest's platform data, sanitized for an answer that shows it.
fn shown(platform: &str, data: &GuestPlatformData) -> Result<PlatformData, ParseError> {
    data.sanitized().map_err(|e| {
        ParseError::ExtractorFailed(match e {
            SanitizeError::NotJson(e) => format!("{platform} platform data is not JSON: {e}"),
            SanitizeError::NotAnObject => format!("{platform} platform data is not an object"),
            SanitizeError::TooDeep => format!("{platform} platform data is {e}"),
        })
    })
}

/// Take the plan's price for a result with media: the price, or why not.
async fn charge(
    services: &Services,
    request: &ParseRequest<'_>,
    plan: &PlatformPlan,
) -> Result<i64, ParseError> {
    let bill = Bill {
        account: request.key.account_id.clone(),
        key_id: request.key.id.clone(),
        platform: plan.platform.clone(),
        price: plan.price,
        request_id: request.request_id.to_string(),
    };
    let now = mediaparse_core::clock::unix_now_s();
    let charge = match request.hold {
        Some(hold) => {
            mediaparse_billing::charge_held_settled(&services.store, hold, bill, now).await
        }
        None => mediaparse_billing::charge_settled(&services.store, bill, now).await,
    }
    .map_err(ParseError::from)?;
    match charge {
        Charge::Charged { .. } => Ok(plan.price),
        Charge::InsufficientCredits { balance } => Err(ParseError::InsufficientCredits {
            platform: plan.platform.clone(),
            price: plan.price,
            balance,
        }),
    }
}

/// What the rounds give the charge step.
struct Extracted {
    media: sdk::Media,
    platform_data: GuestPlatformData,
    cache: CacheOutcome,
    /// The exit's label.
    egress: String,
}

impl Extracted {
    fn cached(cached: &CachedParse, cache: CacheOutcome) -> Extracted {
        Extracted {
            media: cached.media.clone(),
            platform_data: cached.platform_data.clone(),
            cache,
            // The exit the shared extraction left through: its media may be bound to it.
            egress: cached.egress.clone(),
        }
    }
}

/// A routed parse's fixed parts: the services, the extractor and the plan.
#[derive(Clone, Copy)]
struct Routed<'a> {
    services: &'a Services,
    ext: &'a Arc<LoadedExtractor>,
    plan: &'a PlatformPlan,
    /// Where the rounds leave their exchanges if the parse fails.
    capture: Option<&'a Capture>,
}

/// How long a parse result is kept when the operator declared no TTL.
const DEFAULT_CACHE_TTL: std::time::Duration = std::time::Duration::from_secs(60);

/// Wait for an admission slot, then detect and extract holding it, within
/// the service deadline and the platform's parse timeout.
async fn extract_admitted(
    routed: Routed<'_>,
    request: &ParseRequest<'_>,
    deadline: tokio::time::Instant,
) -> Result<Extracted, ParseError> {
    let Routed { services, plan, .. } = routed;
    let slot = tokio::time::timeout_at(deadline, services.admission.admit(&request.key.account_id))
        .await
        .map_err(|_| ParseError::UpstreamTimeout)??;
    let rounds_deadline = deadline.min(tokio::time::Instant::now() + plan.limits.parse_timeout);
    let work = async {
        let (funds, guest, target) = detect(routed, request).await?;
        // A post the extractor claims, for an account that cannot pay for it:
        // refused before any upstream request.
        if let Funds::Short { balance } = funds {
            return Err(ParseError::InsufficientCredits {
                platform: plan.platform.clone(),
                price: plan.price,
                balance,
            });
        }
        cached_or_extracted(routed, request.cache, &guest, target).await
    };
    Slot::hold(slot, tokio::time::timeout_at(rounds_deadline, work))
        .await
        .map_err(|_| ParseError::UpstreamTimeout)?
}

/// The balance pre-check (before any instance exists), then a fresh
/// instance and its `detect`, which must name the routed platform.
async fn detect(
    routed: Routed<'_>,
    request: &ParseRequest<'_>,
) -> Result<(Funds, Guest, sdk::Target), ParseError> {
    let Routed {
        services,
        ext,
        plan,
        ..
    } = routed;
    // A canary is charged to no one; credits set aside for this parse cover it.
    let funds = if request.purpose == Purpose::Canary || request.hold.is_some() {
        Funds::Covered
    } else {
        mediaparse_billing::precheck(&services.store, &request.key.account_id, plan.price).await?
    };
    let guest = Guest::new(&services.registry, ext, plan);
    let detected = guest.detect(request.input).await?;
    let mut target = detected.map_err(ParseError::Failure)?;
    if target.platform != plan.platform {
        return Err(ParseError::ExtractorFailed(format!(
            "{} extractor detected platform {:?}",
            plan.platform, target.platform
        )));
    }
    target.input = request.input.to_string();
    Ok((funds, guest, target))
}

/// The same post's kept result, the extraction another parse runs for it,
/// or this parse's own extraction (then offered to the cache).
async fn cached_or_extracted(
    routed: Routed<'_>,
    cache_use: CacheUse,
    guest: &Guest,
    target: sdk::Target,
) -> Result<Extracted, ParseError> {
    let Routed {
        services,
        ext,
        plan,
        ..
    } = routed;
    // The component's hash too: a swapped extractor never serves what its
    // predecessor extracted.
    let key = (cache_use == CacheUse::Allowed).then(|| {
        format!(
            "{}\n{}\n{}\n{}",
            plan.platform, ext.sha256, target.id, target.canonical_url
        )
    });
    let keep = |parsed: &CachedParse| {
        if parsed.media.is_empty() {
            return None;
        }
        cache::keep_for(
            &parsed.media,
            plan.limits.parse_cache_ttl,
            DEFAULT_CACHE_TTL,
            services.clock.parse_now_ms() / 1000,
        )
    };
    let (parsed, outcome) = services
        .cache
        .run(key.as_deref(), keep, || async {
            let egress = Egress::lease(services, plan)?;
            let (media, platform_data) = extract_through(routed, &egress, guest, target).await?;
            Ok::<_, ParseError>(CachedParse {
                media,
                platform_data,
                egress: egress.exit.label,
            })
        })
        .await?;
    Ok(Extracted::cached(&parsed, outcome))
}

/// The rounds, through the leased session and exit, settled with their outcome.
async fn extract_through(
    routed: Routed<'_>,
    egress: &Egress,
    guest: &Guest,
    target: sdk::Target,
) -> Result<(sdk::Media, GuestPlatformData), ParseError> {
    let Routed {
        services,
        ext,
        plan,
        ..
    } = routed;
    let ctx = sdk::Context {
        now_unix_ms: services.clock.parse_now_ms(),
        config: egress.extractor_config(services, plan),
        // Filled from the registry's memos by `extract`.
        remembered: Vec::new(),
    };
    let outbound = Outbound {
        limits: &plan.limits,
        exit: &egress.exit,
        exits: &services.exits,
        session: egress.session.as_ref(),
        sessions: &services.sessions,
        pacer: &services.pacer,
        deadline: Instant::now() + plan.limits.parse_timeout,
    };
    let rounds = Rounds {
        fetcher: services.fetcher.as_ref(),
        limits: &services.limits,
        ext,
        outbound: &outbound,
        memos: services.registry.memos(),
        capture: routed.capture,
    };
    let extracted = extract(&rounds, guest, target, ctx).await;
    egress.settle(services, plan, &extracted);
    extracted
}

#[cfg(test)]
mod tests;
