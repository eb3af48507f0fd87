//! X / Twitter: guest-token GraphQL `TweetResultByRestId` (primary), the
//! syndication `tweet-result` endpoint (fallback), and the operator's
//! session cookie for sensitive media only. See `docs/platforms/twitter.md`.
//!
//! `urls` recognises inputs, `flow` makes the requests (`requests` builds
//! them, `token` signs syndication), `map` reads the answers.

mod flow;
mod map;
mod requests;
mod token;
pub mod urls;

use mediaparse_sdk::{Context, Exchange, Extractor, Info, Result, Step, Target};

pub const PLATFORM: &str = "twitter";

pub struct Twitter;

impl Extractor for Twitter {
    fn info() -> Info {
        Info::new(
            PLATFORM,
            env!("CARGO_PKG_VERSION"),
            &["*.x.com", "*.twitter.com"],
            &[requests::API_HOST, requests::SYNDICATION_HOST],
            &[
                "/{user}/status/{id}",
                "/{user}/status/{id}/video/{n}",
                "/{user}/status/{id}/photo/{n}",
                "/i/status/{id}",
                "/i/web/status/{id}",
                "/u/{user}/{id}",
            ],
        )
    }

    fn detect(input: &str) -> Result<Target> {
        urls::detect(input)
    }

    fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
        flow::step(target, ctx, done)
    }
}

mediaparse_sdk::export_extractor!(Twitter);
