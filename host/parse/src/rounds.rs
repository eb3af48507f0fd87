//! The step/fetch rounds with one extractor session.

use std::sync::Arc;

use mediaparse_sdk as sdk;

use super::guest::Guest;
use super::{ParseError, ParseLimits};
use mediaparse_config::PlatformLimits;
use mediaparse_core::GuestPlatformData;
use mediaparse_fetch::{
    ExitLease, ExitPools, FetchError, Outcome, Pacer, SessionLease, Sessions, Upstream,
};
use mediaparse_registry::{LoadedExtractor, Memos, Next};

/// Where and how a parse's upstream requests go: the platform's limits and
/// the exit this parse holds, whose health every answer updates.
pub struct Outbound<'a> {
    pub limits: &'a PlatformLimits,
    pub exit: &'a ExitLease,
    pub exits: &'a ExitPools,
    /// The operator session this parse holds, if the platform has a pool.
    pub session: Option<&'a SessionLease>,
    pub sessions: &'a Sessions,
    /// Requests per second and in flight per exit.
    pub pacer: &'a Pacer,
    /// When the parse must be done: a request that cannot start before is refused.
    pub deadline: std::time::Instant,
}

impl Outbound<'_> {
    /// Merge the `Set-Cookie` of one answer (a redirect hop or the final
    /// answer) from the platform's hosts into the session this parse holds.
    fn absorb(&self, api_hosts: &[String], url: &str, headers: &[sdk::Header]) {
        if let Some(session) = self.session {
            self.sessions.absorb_hop(session, api_hosts, url, headers);
        }
    }

    /// Tell the exit pool what one request met.
    fn record(&self, answer: &Result<sdk::HttpResponse, FetchError>) {
        let outcome = match answer {
            Ok(response) => Outcome::of_status(response.status),
            Err(FetchError::Connect(_)) => Outcome::ConnectError,
            Err(_) => return,
        };
        self.exits.record(self.exit, outcome, &self.limits.cooling);
    }
}

/// What the rounds of one parse run with (also `mediaparse record`).
pub struct Rounds<'a> {
    pub fetcher: &'a dyn Upstream,
    pub limits: &'a ParseLimits,
    pub ext: &'a LoadedExtractor,
    pub outbound: &'a Outbound<'a>,
    /// The platforms' remembered values.
    pub memos: &'a Memos,
    /// Where a failed parse leaves its exchanges (`None`: nobody keeps them).
    pub capture: Option<&'a Capture>,
}

/// The exchanges of a parse that failed, for keeping it as a fixture case
/// (`authoring/failures.rs`). The rounds hold every exchange for the guest
/// anyway: a failure hands that list over, nothing is copied, and a parse
/// that succeeds leaves nothing here.
#[derive(Default)]
pub struct Capture(std::sync::Mutex<Option<Captured>>);

/// What a failed parse's extractor saw.
pub struct Captured {
    pub exchanges: Arc<Vec<sdk::Exchange>>,
    pub now_unix_ms: u64,
    /// `context.config`.
    pub config: Vec<sdk::Header>,
}

impl Capture {
    fn put(&self, captured: Captured) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(captured);
    }

    /// The failed parse's exchanges, if it failed after its rounds began.
    pub fn take(&self) -> Option<Captured> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// The rounds of one parse: each round one guest `step` (a 1.0 component:
/// `plan`, then `map` when ready) and the requests it asks for. The
/// platform's remembered values go in with the context; what the extractor
/// asks to remember is kept, whether the parse succeeds or not.
pub async fn extract(
    rounds: &Rounds<'_>,
    guest: &Guest,
    target: sdk::Target,
    mut ctx: sdk::Context,
) -> Result<(sdk::Media, GuestPlatformData), ParseError> {
    ctx.remembered = rounds
        .memos
        .remembered(rounds.ext.platform(), ctx.now_unix_ms / 1000);
    let ctx = Arc::new(ctx);
    let mut done: Arc<Vec<sdk::Exchange>> = Arc::new(Vec::new());
    let result = run_rounds(rounds, guest, target, ctx.clone(), &mut done).await;
    if result.is_err()
        && let Some(capture) = rounds.capture
    {
        // Only a failed parse copies anything: its context's settings.
        capture.put(Captured {
            exchanges: done,
            now_unix_ms: ctx.now_unix_ms,
            config: ctx.config.clone(),
        });
    }
    result
}

/// [`extract`]'s rounds; every exchange is appended to `done`.
async fn run_rounds(
    rounds: &Rounds<'_>,
    guest: &Guest,
    target: sdk::Target,
    ctx: Arc<sdk::Context>,
    done: &mut Arc<Vec<sdk::Exchange>>,
) -> Result<(sdk::Media, GuestPlatformData), ParseError> {
    let Rounds {
        fetcher,
        limits,
        ext,
        outbound,
        memos,
        capture: _,
    } = *rounds;
    let platform = ext.platform();
    let now_s = ctx.now_unix_ms / 1000;
    let target = Arc::new(target);
    for round_no in 0..limits.max_rounds {
        let (wit, stepped) = guest.step(&target, &ctx, done).await?;
        let round = stepped.map_err(ParseError::Failure)?;
        memos.remember(platform, &round.remember, now_s);
        match round.next {
            Next::Done(media, data) => {
                tracing::debug!(platform, wit, rounds = round_no + 1, "extracted");
                return finish(platform, media, data);
            }
            Next::Fetch(requests) => {
                if requests.is_empty() || requests.len() > limits.max_requests_per_round {
                    return Err(ParseError::ExtractorFailed(format!(
                        "planned {} requests in one round",
                        requests.len()
                    )));
                }
                let platform = ext.platform();
                let api_hosts = &ext.info.api_hosts;
                let absorb = |url: &str, headers: &[sdk::Header]| {
                    outbound.absorb(api_hosts, url, headers);
                };
                let answers = futures::future::join_all(requests.iter().map(|r| async {
                    let _slot = outbound
                        .pacer
                        .slot(
                            platform,
                            &outbound.exit.label,
                            outbound.limits.pace,
                            outbound.deadline,
                        )
                        .await?;
                    Ok::<_, ParseError>(
                        fetcher
                            .fetch_observed(
                                platform,
                                api_hosts,
                                r,
                                &outbound.limits.fetch,
                                outbound.exit.url.as_deref(),
                                &absorb,
                            )
                            .await,
                    )
                }))
                .await
                .into_iter()
                .collect::<Result<Vec<_>, ParseError>>()?;
                for answer in &answers {
                    outbound.record(answer);
                }
                // The guest call's clone of `done` ended with the call: the
                // answers are appended in place, earlier exchanges never copied.
                let exchanges = Arc::make_mut(done);
                for (request, answer) in requests.into_iter().zip(answers) {
                    let response = answer.map_err(fetch_error)?;
                    exchanges.push(sdk::Exchange { request, response });
                }
            }
        }
    }
    Err(ParseError::ExtractorFailed(format!(
        "more than {} plan rounds",
        limits.max_rounds
    )))
}

/// Check the media; keep the platform data as the guest wrote it (it is
/// sanitized only for an answer that shows it).
fn finish(
    platform: &str,
    media: sdk::Media,
    data: String,
) -> Result<(sdk::Media, GuestPlatformData), ParseError> {
    sdk::spec::validate_media(&media).map_err(|e| {
        ParseError::ExtractorFailed(format!("{platform} extractor returned invalid media: {e}"))
    })?;
    Ok((media, GuestPlatformData::new(data)))
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
