//! What one parse says about its platform: it worked, it failed on the
//! platform's side, or it says nothing (the caller's own mistake, the
//! service's own limits, a result served from the cache).

use mediaparse_sdk::Failure;

use crate::cache::CacheOutcome;
use crate::{ParseError, Parsed};

/// The longest failure message kept for the admin view.
const MAX_MESSAGE_CHARS: usize = 300;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The platform answered (with media or without).
    Success,
    /// The platform (or its extractor) failed: the code, and the message
    /// with configured secrets already scrubbed.
    Failure { code: &'static str, message: String },
    /// Nothing about the platform: not counted.
    Ignored,
}

impl Verdict {
    /// The verdict of a finished parse.
    pub fn of(result: &Result<Parsed, ParseError>) -> Verdict {
        match result {
            // Served without asking the platform: says nothing about it now.
            Ok(p) if matches!(p.cache, CacheOutcome::Hit | CacheOutcome::Shared) => {
                Verdict::Ignored
            }
            Ok(_) => Verdict::Success,
            Err(e) => match platform_side(e) {
                Some(code) => Verdict::Failure {
                    code,
                    message: e.to_string().chars().take(MAX_MESSAGE_CHARS).collect(),
                },
                None => Verdict::Ignored,
            },
        }
    }
}

/// The code of a failure on the platform's side; `None` for everything
/// else: the caller's (a bad URL, content that is gone, credits, permission,
/// the key's rate limit, a bad request), the service's (overload, the
/// database, a switched-off platform, its own pacing, an open breaker).
pub fn platform_side(e: &ParseError) -> Option<&'static str> {
    match e {
        ParseError::Failure(Failure::UpstreamChanged(_)) => Some("upstream_changed"),
        ParseError::Failure(
            Failure::UpstreamError(_) | Failure::LoginRequired(_) | Failure::RateLimited(_),
        )
        | ParseError::ExtractorFailed(_)
        | ParseError::UpstreamTimeout
        | ParseError::Upstream(_)
        // Every exit cooling off: the platform refused them all.
        | ParseError::ExitsCooling(_) => Some(e.outcome()),
        ParseError::Failure(Failure::UnsupportedUrl(_) | Failure::Unavailable(_))
        | ParseError::Unsupported(_)
        | ParseError::Auth(_)
        | ParseError::InsufficientCredits { .. }
        | ParseError::ExtractorUnavailable(_)
        | ParseError::Paced(_)
        | ParseError::Internal(_)
        | ParseError::Overloaded(_)
        | ParseError::StoreBusy
        | ParseError::DatabaseUnavailable(_)
        | ParseError::PlatformUnavailable { .. } => None,
    }
}
