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
        Info {
            platform: PLATFORM.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            url_hosts: vec!["*.x.com".into(), "*.twitter.com".into()],
            api_hosts: vec![requests::API_HOST.into(), requests::SYNDICATION_HOST.into()],
            url_shapes: vec![
                "/{user}/status/{id}".into(),
                "/{user}/status/{id}/video/{n}".into(),
                "/{user}/status/{id}/photo/{n}".into(),
                "/i/status/{id}".into(),
                "/i/web/status/{id}".into(),
                "/u/{user}/{id}".into(),
            ],
        }
    }

    fn detect(input: &str) -> Result<Target> {
        urls::detect(input)
    }

    fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
        flow::step(target, ctx, done)
    }
}

mediaparse_sdk::export_extractor!(Twitter);
