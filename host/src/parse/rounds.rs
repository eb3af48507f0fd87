//! The plan/fetch rounds with one extractor session, and the map call.

use std::sync::Arc;

use mediaparse_sdk as sdk;
use serde_json::Value;

use super::{ParseError, ParseLimits, blocking};
use crate::config::PlatformLimits;
use crate::core::sanitize;
use crate::fetch::{
    ExitLease, ExitPools, FetchError, Outcome, Pacer, SessionLease, Sessions, Upstream,
};
use crate::registry::{LoadedExtractor, Session};

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
    /// Tell the exit pool what one request met.
    fn record(&self, api_hosts: &[String], answer: &Result<sdk::HttpResponse, FetchError>) {
        if let (Some(session), Ok(response)) = (self.session, answer) {
            self.sessions.absorb(session, api_hosts, response);
        }
        let outcome = match answer {
            Ok(response) => Outcome::of_status(response.status),
            Err(FetchError::Connect(_)) => Outcome::ConnectError,
            Err(_) => return,
        };
        self.exits.record(self.exit, outcome, &self.limits.cooling);
    }
}

/// The plan/fetch rounds and the map call (also `mediaparse record`).
pub async fn extract(
    fetcher: &dyn Upstream,
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
                            .fetch(
                                platform,
                                &ext.info.api_hosts,
                                r,
                                &outbound.limits.fetch,
                                outbound.exit.url.as_deref(),
                            )
                            .await,
                    )
                }))
                .await
                .into_iter()
                .collect::<Result<Vec<_>, ParseError>>()?;
                let mut next = Vec::clone(&done);
                for answer in &answers {
                    outbound.record(&ext.info.api_hosts, answer);
                }
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
pub(super) async fn call<T: Send + 'static>(
    mut session: Session,
    f: impl FnOnce(&mut Session) -> T + Send + 'static,
) -> Result<(Session, T), ParseError> {
    blocking(move || {
        let out = f(&mut session);
        (session, out)
    })
    .await
}
